import { WriteStatement, outsideCommitScope, type Db } from '../../db/index.js';
import { announceRevision, concurrentAppendGate, revisionBump } from './metadata.repository.js';
import type { Slots } from './write-slots.js';

/** What became of an append handed to the batches: committed, or to be redone in a transaction (nothing written). */
export type BatchOutcome = 'written' | 'redo';

/**
 * Bounds of one shared statement (appends, and their new rows, and so its size), and how many
 * statements of one base may be in flight at once. One: on the shared 2-core machine a second one in
 * flight (see the class) made no more appends a second (bench/pg-writes.bench.ts, "two in flight"),
 * and its smaller commits cost more CPU per append in both processes.
 */
export const APPEND_BATCH_LIMITS = { members: 32, rows: 1_000, inFlight: 1 };

interface Pending {
  version: number;
  statement: WriteStatement;
  rows: number;
  /** It carries an audit row (its writer count): at most one such append goes in a statement. */
  audited: boolean;
  settle: (outcome: BatchOutcome) => void;
  fail: (error: unknown) => void;
}

/** A base's appends waiting to be sent, and its statements on their way (each sender has one). */
interface BaseQueue {
  waiting: Pending[];
  /** Senders started: waiting for a slot, or with a statement in flight. */
  senders: number;
  /** The appends of each statement in flight. */
  inFlight: number[];
}

/**
 * Group commit of PostgreSQL one-statement appends within this process. An append of a base goes out
 * at once when no statement of that base is in flight; those that arrive meanwhile wait (no timer:
 * the wait is a commit, and they would wait for the base's row lock anyway) and then go together as
 * ONE statement under ONE revision bump gated on the metadata version they were prepared on, so one
 * commit's flush serves them all. A second statement goes out while one is in flight (up to
 * `inFlight`) once as many appends wait as the one in flight carries: it waits for the base's row
 * lock inside PostgreSQL, already parsed and planned, and runs the moment the first commits, instead
 * of being sent only once this process has read the first's answer (on a busy process, that hop was
 * as long as the commit's own flush); sent any earlier, it would split the waiting appends into more,
 * smaller commits, each with its own cost in both processes. Each append was prepared and
 * validated alone (its work ran before it got here), so what can still fail is the database's: a
 * shared statement that fails sends each of its appends to its own transaction (nothing was written),
 * where only a bad one fails again; an append sent alone gets its error. Instances on one database
 * each batch their own appends; the gate and the row lock order them as before.
 */
export class AppendBatches {
  private readonly bases = new Map<number, BaseQueue>();
  /** Shared statements sent and the appends they carried (tests, the bench). */
  readonly stats = { statements: 0, appends: 0, largest: 0, failedShared: 0 };

  /**
   * Concurrent appends (PostgreSQL, PG_CONCURRENT_APPENDS; BaseWriter sets it): a statement gates on
   * the metadata row `FOR KEY SHARE` and bumps a revision stripe (`concurrentAppendGate`), so
   * statements of one base commit side by side: a further one is sent whenever appends wait (up to
   * `limits.inFlight`); after each commit the revision is announced (`announceRevision`) before its
   * appends are answered.
   */
  concurrent = false;

  constructor(
    private readonly db: Db,
    /** The writer's slots: a statement takes one while it is sent (the appends waiting hold none). */
    private readonly slots: Slots,
    /** Copied: a benchmark or test sets `inFlight` to compare. */
    readonly limits = { ...APPEND_BATCH_LIMITS },
  ) {}

  /** Appends of the base handed over and not yet answered: queued or in flight (tests). */
  unsettled(baseId: number): number {
    return this.open.get(baseId) ?? 0;
  }

  private readonly open = new Map<number, number>();

  /** Sends `statement` (made with a shared gate) with the others of `baseId` prepared on `version`. */
  submit(baseId: number, version: number, statement: WriteStatement, rows: number, audited = false): Promise<BatchOutcome> {
    this.open.set(baseId, this.unsettled(baseId) + 1);
    const answered = () => {
      const left = this.unsettled(baseId) - 1;
      if (left > 0) this.open.set(baseId, left);
      else this.open.delete(baseId);
    };
    return new Promise<BatchOutcome>((resolve, reject) => {
      const settle = (outcome: BatchOutcome) => (answered(), resolve(outcome));
      const fail = (error: unknown) => (answered(), reject(error));
      let queue = this.bases.get(baseId);
      if (queue === undefined) this.bases.set(baseId, (queue = { waiting: [], senders: 0, inFlight: [] }));
      queue.waiting.push({ version, statement, rows, audited, settle, fail });
      this.pump(baseId, queue);
    });
  }

  /** Starts a sender when the base has none, or another when as many appends wait as the one in flight carries (see the class). */
  private pump(baseId: number, queue: BaseQueue): void {
    const { waiting, senders, inFlight } = queue;
    if (waiting.length === 0) {
      if (senders === 0) this.bases.delete(baseId);
      return;
    }
    const another =
      senders > 0 && senders < this.limits.inFlight && inFlight.length === senders && (this.concurrent || waiting.length >= Math.max(...inFlight));
    if (senders > 0 && !another) return;
    queue.senders++;
    // The batches are everyone's: their statements never carry the appendix (the audit row) of the
    // request that happened to start them (BaseWriter sends a request with one alone).
    void outsideCommitScope(() => this.sendNext(baseId, queue));
  }

  /** One sender: sends the next batch of the base's waiting appends (it never throws: `send` settles every append), then pumps again. */
  private async sendNext(baseId: number, queue: BaseQueue): Promise<void> {
    const { waiting, inFlight } = queue;
    const free = await this.slots.acquire();
    // Another sender may have taken them while this one waited for a slot.
    if (waiting.length > 0) {
      const batch = this.take(waiting);
      inFlight.push(batch.length);
      const outcome = await this.send(baseId, batch).finally(free);
      inFlight.splice(inFlight.indexOf(batch.length), 1);
      if (outcome === 'stale') {
        // The version moved: every append prepared on it (or before) would find the gate closed too.
        const stale = batch[0]!.version;
        for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i]!.version <= stale) waiting.splice(i, 1)[0]!.settle('redo');
      }
    } else {
      free();
    }
    queue.senders--;
    this.pump(baseId, queue);
  }

  /**
   * The first queued append and the following ones of its version, within the limits, in arrival
   * order; at most one audited append (two would update this instance's audit writer row twice in one
   * statement, which PostgreSQL refuses).
   */
  private take(queue: Pending[]): Pending[] {
    const version = queue[0]!.version;
    const batch: Pending[] = [];
    let rows = 0;
    let audited = false;
    for (let i = 0; i < queue.length && batch.length < this.limits.members; ) {
      const next = queue[i]!;
      if (next.version !== version || (batch.length > 0 && rows + next.rows > this.limits.rows) || (audited && next.audited)) {
        i++;
        continue;
      }
      batch.push(next);
      rows += next.rows;
      audited ||= next.audited;
      queue.splice(i, 1);
    }
    return batch;
  }

  private async send(baseId: number, batch: Pending[]): Promise<'written' | 'stale' | 'failed'> {
    try {
      const version = batch[0]!.version;
      const gate = this.concurrent ? concurrentAppendGate(baseId, version) : revisionBump(baseId, version);
      const passed = await WriteStatement.together(this.db, gate, batch.map((p) => p.statement));
      // Committed: other instances hear of it before any of its appends is answered (read-after-write).
      if (passed && this.concurrent) await announceRevision(this.db, baseId).catch(() => undefined);
      this.stats.statements++;
      this.stats.appends += batch.length;
      this.stats.largest = Math.max(this.stats.largest, batch.length);
      for (const p of batch) p.settle(passed ? 'written' : 'redo');
      return passed ? 'written' : 'stale';
    } catch (error) {
      if (batch.length === 1) batch[0]!.fail(error);
      else {
        this.stats.failedShared++;
        for (const p of batch) p.settle('redo');
      }
      return 'failed';
    }
  }
}
