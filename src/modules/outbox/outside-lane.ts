import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Db, DialectName, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { advanceConsumer, consumerPosition, lockConsumer, type ChangeEvent, type OutboxConsumer } from '../events/index.js';

/** A batch as the dispatcher reads it (see Dispatcher.batchFor). */
export interface LaneBatch {
  list: ChangeEvent[];
  lastId: number;
  count: number;
}

export interface OutsideLaneDeps {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  /** Create the consumer's position row if missing. */
  ensureKnown(consumer: OutboxConsumer): Promise<void>;
  readBatch(executor: Executor, consumer: OutboxConsumer, position: number, batchSize: number): Promise<LaneBatch | null>;
  checkedThrough(consumer: OutboxConsumer, batch: LaneBatch, through: number): number;
  /** First retry after this many ms, doubling per failure up to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Monotonic milliseconds (backoff is about real time even under a test's manual clock). */
  now?: () => number;
}

/**
 * Runs one `outside` consumer (a broker publisher) apart from the others: no transaction is held while
 * `handle` waits on the broker (on SQLite the one connection would be held with it), and the dispatcher
 * never waits for it between its other consumers. After a failure the lane rests (1 s doubling to 60 s,
 * with jitter) and each wake meanwhile is a no-op: a broker that is down costs one failure per backoff,
 * not one per commit. Events stay pending in the outbox meanwhile: nothing is lost.
 */
export class OutsideLane {
  private running: Promise<number> | null = null;
  private again = false;
  private failures = 0;
  private retryAt = 0;
  private readonly now: () => number;

  constructor(
    readonly consumer: OutboxConsumer,
    private readonly batchSize: number,
    private readonly deps: OutsideLaneDeps,
  ) {
    this.now = deps.now ?? (() => performance.now());
  }

  /** Consecutive failures so far (0 once a run succeeds). */
  get failing(): number {
    return this.failures;
  }

  /**
   * Catch up unless resting after a failure. A call while a run is in flight makes that run go round
   * once more and returns it. Resolves to the number of events acknowledged; rejects with the failure.
   */
  run(): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    if (this.now() < this.retryAt) return Promise.resolve(0);
    const run = this.loop().finally(() => {
      this.running = null;
    });
    this.running = run;
    return run;
  }

  /** Wait for the run in flight, if any (a stop). */
  async settled(): Promise<void> {
    if (this.running) await this.running.catch(() => undefined);
  }

  private async loop(): Promise<number> {
    let total = 0;
    try {
      do {
        this.again = false;
        for (;;) {
          const { acknowledged, more } = await this.batch();
          total += acknowledged;
          if (!more) break;
          await nextTurn();
        }
      } while (this.again);
      this.failures = 0;
      this.retryAt = 0;
      return total;
    } catch (error) {
      this.failures++;
      const min = this.deps.minBackoffMs ?? 1000;
      const max = this.deps.maxBackoffMs ?? 60_000;
      const delay = Math.min(max, min * 2 ** (this.failures - 1));
      this.retryAt = this.now() + delay * (0.8 + Math.random() * 0.4);
      throw error;
    }
  }

  /** Read the next batch, hand it over outside any transaction, then advance the position if it did not move. */
  private async batch(): Promise<{ acknowledged: number; more: boolean }> {
    const { db, dialect, clock } = this.deps;
    const name = this.consumer.name;
    await this.deps.ensureKnown(this.consumer);
    const position = await consumerPosition(db, name);
    if (position === null) return { acknowledged: 0, more: false };
    const batch = await this.deps.readBatch(db, this.consumer, position, this.batchSize);
    if (batch === null) return { acknowledged: 0, more: false };
    const result = batch.list.length > 0 ? await this.consumer.handle(db, batch.list) : undefined;
    const through = result ? this.deps.checkedThrough(this.consumer, batch, result.through) : batch.lastId;
    const advanced = await db.transaction().execute(async (trx) => {
      // Another instance (PostgreSQL) ran the same events meanwhile: its position stands; our repeats were de-duplicated.
      if ((await lockConsumer(trx, dialect, name)) !== position) return false;
      await advanceConsumer(trx, name, through, clock.now());
      return true;
    });
    if (!advanced) return { acknowledged: 0, more: false };
    if (through === batch.lastId) return { acknowledged: batch.count, more: batch.count >= this.batchSize };
    return { acknowledged: batch.list.filter((event) => event.id <= through).length, more: true };
  }
}
