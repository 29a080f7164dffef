import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { SQLITE_TICK_FUNCTION } from '../../db/index.js';
import { READER_THREAD_SOURCE } from './reader-thread.js';

const require = createRequire(import.meta.url);

/** Heap of one SQL thread. */
export const THREAD_HEAP_MB = 256;

export interface StatementCost {
  terms: number;
  inValues: number;
}

export interface ThreadParse {
  cost: StatementCost;
  json: string | null;
}

/** A job over its time limit; the caller turns it into a 400 naming the limit. */
export class SqlTimeoutError extends Error {
  constructor(readonly limitMs: number) {
    super(`timed out after ${limitMs} ms`);
    this.name = 'SqlTimeoutError';
  }
}

type Job = { kind: 'parse'; text: string; options: unknown; maxTerms: number; maxInValues: number } | { kind: 'query'; sql: string; parameters: readonly unknown[]; snapshot?: Buffer };

/** Whose job it is (the base): no owner holds more than its share of the threads. */
export type ThreadOwner = string | number;

interface Pending {
  job: Job;
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

export interface SqlThreadsOptions {
  threads: number;
  timeoutMs: number;
  /** The SQLite file the threads read (null: no queries off the main thread, e.g. an in-memory database). */
  sqliteFile: () => Promise<string | null>;
  /**
   * A SQLite database in memory (no file to open): a copy of it, taken when a query is asked for and
   * sent along, so its SELECTs also run on a thread under the time limit (DbHandle.snapshot).
   */
  sqliteSnapshot?: () => Buffer;
}

/**
 * A small fixed pool of threads for the CPU-heavy parts of a SQL request. Every job has a time limit
 * that includes its wait for a free thread. A job over its limit is answered at once and its thread
 * terminated; SELECTs call back once per row (interruptible.ts), so the thread stops at the next row
 * and the slot is reused once it has exited — stuck work never piles up beyond the pool size. Jobs
 * name their owner (the base): one owner holds at most half the threads (at least one), so a base
 * whose statements run to the limit cannot keep the others' statements waiting.
 */
export class SqlThreads {
  private readonly slots: Slot[];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private readonly byId = new Map<number, Pending>();
  private file: Promise<string | null> | null = null;
  private closed = false;

  constructor(private readonly options: SqlThreadsOptions) {
    this.slots = Array.from({ length: options.threads }, () => ({ worker: null, busy: null, owner: undefined, dying: false }));
  }

  /** Threads one owner may hold at once. */
  get sharePerOwner(): number {
    return Math.max(1, Math.ceil(this.slots.length / 2));
  }

  get enabled(): boolean {
    return this.slots.length > 0 && !this.closed;
  }

  /** Whether compiled SELECTs can run off the main thread (SQLite on a file, or in memory with snapshots). */
  async canQuery(): Promise<boolean> {
    if (!this.enabled) return false;
    this.file ??= this.options.sqliteFile();
    return (await this.file) !== null || this.options.sqliteSnapshot !== undefined;
  }

  /** Parse on a thread; the tree comes back (as JSON text) only when its cost is within the limits. */
  parse(text: string, options: unknown, limits: { maxTerms: number; maxInValues: number }, owner?: ThreadOwner): Promise<ThreadParse> {
    return this.run({ kind: 'parse', text, options, ...limits }, owner) as Promise<ThreadParse>;
  }

  async query(sql: string, parameters: readonly unknown[], owner?: ThreadOwner): Promise<Array<Record<string, unknown>>> {
    this.file ??= this.options.sqliteFile();
    // Taken now, so the query sees every write committed before it was asked for.
    const snapshot = (await this.file) === null ? this.options.sqliteSnapshot?.() : undefined;
    return this.run({ kind: 'query', sql, parameters, snapshot }, owner) as Promise<Array<Record<string, unknown>>>;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) this.fail(pending, new Error('SQL threads closed'));
    await Promise.all(this.slots.map((slot) => slot.worker?.terminate()));
  }

  private run(job: Job, owner: ThreadOwner | undefined): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const pending: Pending = {
        job,
        owner,
        resolve,
        reject,
        timer: setTimeout(() => this.timeOut(pending), this.options.timeoutMs),
      };
      this.queue.push(pending);
      this.pump();
    });
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
    this.file ??= this.options.sqliteFile();
    const sqliteFile = await this.file;
    const worker = new Worker(READER_THREAD_SOURCE, {
      eval: true,
      workerData: { parserPath: require.resolve('node-sql-parser/build/mysql'), sqlitePath: require.resolve('better-sqlite3'), sqliteFile, tickFunction: SQLITE_TICK_FUNCTION },
      // A statement nested deeply enough to exhaust this stack is a RangeError ("nested too deeply"), as on the main thread.
      // A heap of its own: a statement that needs more memory fails alone instead of the process.
      resourceLimits: { stackSizeMb: 4, maxOldGenerationSizeMb: THREAD_HEAP_MB },
    });
    worker.unref();
    worker.on('message', (message: { id: number; ok: boolean; result?: unknown; error?: Record<string, unknown> }) => {
      const pending = this.byId.get(message.id);
      if (!pending) return;
      this.byId.delete(message.id);
      slot.busy = null;
      slot.owner = undefined;
      clearTimeout(pending.timer);
      if (message.ok) pending.resolve(message.result);
      else pending.reject(rebuildError(message.error ?? {}));
      this.pump();
    });
    worker.on('error', (error) => this.lose(slot, error));
    worker.on('exit', () => this.lose(slot, new Error('SQL thread exited')));
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

  private timeOut(pending: Pending): void {
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
    pending.reject(new SqlTimeoutError(this.options.timeoutMs));
  }

  private fail(pending: Pending, error: unknown): void {
    clearTimeout(pending.timer);
    pending.reject(error);
  }
}

function rebuildError(fields: Record<string, unknown>): Error {
  const message = typeof fields.message === 'string' ? fields.message : 'SQL thread error';
  const error = fields.name === 'RangeError' ? new RangeError(message) : new Error(message);
  if (fields.code !== undefined) Object.assign(error, { code: fields.code });
  if (fields.location !== undefined) Object.assign(error, { location: fields.location });
  return error;
}
