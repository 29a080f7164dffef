import type { Worker } from 'node:worker_threads';

/** Longest `close()` waits for its threads to exit. */
const CLOSE_WAIT_MS = 2_000;

/** Whose job it is (the base): no owner holds more than its share of the threads. */
export type ThreadOwner = string | number;

/** A job over its time limit; its thread was terminated and is replaced for the next job. */
export class ThreadTimeoutError extends Error {
  constructor(readonly limitMs: number) {
    super(`timed out after ${limitMs} ms`);
    this.name = 'ThreadTimeoutError';
  }
}

/** The error fields a thread sends back for a job that threw (`{ id, ok: false, error }`). */
export type ThreadErrorFields = Record<string, unknown>;

export interface ThreadPoolOptions {
  threads: number;
  /** A new thread; it answers each `{ id, ...job }` message with `{ id, ok, result?, error? }`. */
  start(): Promise<Worker> | Worker;
  /** The error a job gets for a thread's `error` fields. */
  rebuildError(fields: ThreadErrorFields): Error;
  /** What the threads are called in errors ("SQL thread"). */
  name: string;
}

interface Pending {
  job: object;
  owner: ThreadOwner | undefined;
  resolve(value: unknown): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
  slot?: Slot;
}

interface Slot {
  worker: Worker | null;
  busy: Pending | null;
  /** The owner of the job running or, while `dying`, of the job that timed out (it still holds the slot). */
  owner: ThreadOwner | undefined;
  /** A terminated thread still finishing native work: the slot stays taken until it exits. */
  dying: boolean;
}

/**
 * A small fixed pool of threads for CPU-heavy jobs (SQL parsing and SQLite SELECTs, large formula
 * batches). Every job has a time limit that includes its wait for a free thread. A job over its limit
 * is answered at once (ThreadTimeoutError) and its thread terminated; the slot is reused once the thread
 * has exited, so stuck work never piles up beyond the pool size. Jobs name their owner (the base): one
 * owner holds at most half the threads (at least one), so a base whose jobs run to the limit cannot
 * keep the others' jobs waiting.
 */
export class ThreadPool {
  private readonly slots: Slot[];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private readonly byId = new Map<number, Pending>();
  private closed = false;

  constructor(private readonly options: ThreadPoolOptions) {
    this.slots = Array.from({ length: options.threads }, () => ({ worker: null, busy: null, owner: undefined, dying: false }));
  }

  /** Threads one owner may hold at once. */
  get sharePerOwner(): number {
    return Math.max(1, Math.ceil(this.slots.length / 2));
  }

  get enabled(): boolean {
    return this.slots.length > 0 && !this.closed;
  }

  /** Run `job` on a thread within `timeoutMs` (waiting for a thread included). */
  run(job: object, timeoutMs: number, owner?: ThreadOwner): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error(`${this.options.name}s closed`));
      const pending: Pending = { job, owner, resolve, reject, timer: setTimeout(() => this.timeOut(pending, timeoutMs), timeoutMs) };
      this.queue.push(pending);
      this.pump();
    });
  }

  /**
   * Terminate every thread. A thread inside a native call (a long SQLite statement) only exits when that
   * call returns, so wait at most CLOSE_WAIT_MS for them: the threads are unref'd and end with the process.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) this.fail(pending, new Error(`${this.options.name}s closed`));
    const exits = Promise.all(this.slots.map((slot) => slot.worker?.terminate()));
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CLOSE_WAIT_MS);
      timer.unref();
    });
    await Promise.race([exits, bound]);
    clearTimeout(timer);
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (slot.busy || slot.dying) continue;
      const next = this.queue.findIndex((p) => this.withinShare(p.owner));
      if (next < 0) return;
      const pending = this.queue.splice(next, 1)[0]!;
      const id = this.nextId++;
      slot.busy = pending;
      slot.owner = pending.owner;
      pending.slot = slot;
      this.byId.set(id, pending);
      void this.post(slot, id, pending);
    }
  }

  private async post(slot: Slot, id: number, pending: Pending): Promise<void> {
    try {
      const worker = await this.workerOf(slot);
      if (slot.busy !== pending) return;
      worker.postMessage({ id, ...pending.job });
    } catch (error) {
      this.byId.delete(id);
      slot.busy = null;
      slot.owner = undefined;
      this.fail(pending, error);
      this.pump();
    }
  }

  private async workerOf(slot: Slot): Promise<Worker> {
    if (slot.worker) return slot.worker;
    const worker = await this.options.start();
    worker.unref();
    worker.on('message', (message: { id: number; ok: boolean; result?: unknown; error?: ThreadErrorFields }) => {
      const pending = this.byId.get(message.id);
      if (!pending) return;
      this.byId.delete(message.id);
      slot.busy = null;
      slot.owner = undefined;
      clearTimeout(pending.timer);
      if (message.ok) pending.resolve(message.result);
      else pending.reject(this.options.rebuildError(message.error ?? {}));
      this.pump();
    });
    worker.on('error', (error) => this.lose(slot, error));
    worker.on('exit', () => this.lose(slot, new Error(`${this.options.name} exited`)));
    slot.worker = worker;
    return worker;
  }

  /** Whether a job of `owner` may take a thread now (jobs without an owner always may). */
  private withinShare(owner: ThreadOwner | undefined): boolean {
    if (owner === undefined) return true;
    let held = 0;
    for (const slot of this.slots) if ((slot.busy || slot.dying) && slot.owner === owner) held++;
    return held < this.sharePerOwner;
  }

  /** The thread is gone (terminated, crashed): fail its job, free the slot, serve the queue. */
  private lose(slot: Slot, error: unknown): void {
    slot.worker = null;
    slot.dying = false;
    slot.owner = undefined;
    const pending = slot.busy;
    slot.busy = null;
    if (pending) {
      for (const [id, p] of this.byId) if (p === pending) this.byId.delete(id);
      this.fail(pending, error);
    }
    this.pump();
  }

  private timeOut(pending: Pending, timeoutMs: number): void {
    const queued = this.queue.indexOf(pending);
    if (queued >= 0) this.queue.splice(queued, 1);
    const slot = pending.slot;
    if (slot && slot.busy === pending) {
      // Answer now; the thread may be inside a native call that only ends on its own, so the slot waits for its exit.
      slot.busy = null;
      for (const [id, p] of this.byId) if (p === pending) this.byId.delete(id);
      if (slot.worker) {
        slot.dying = true;
        void slot.worker.terminate();
      } else slot.owner = undefined;
    }
    pending.reject(new ThreadTimeoutError(timeoutMs));
  }

  private fail(pending: Pending, error: unknown): void {
    clearTimeout(pending.timer);
    pending.reject(error);
  }
}
