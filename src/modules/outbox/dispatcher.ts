import { setImmediate as nextTurn } from 'node:timers/promises';
import type { DialectName, Db, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { LoopTimer } from '../../shared/loop-timer.js';
import { OutsideLane } from './outside-lane.js';
import {
  advanceConsumer,
  ensureConsumer,
  eventHeadsAfter,
  eventsAfter,
  eventsOfBases,
  lockConsumer,
  pruneEvents,
  type BatchContext,
  type ChangeEvent,
  type OutboxConsumer,
} from '../events/index.js';

export interface DispatcherOptions {
  /** Events handed to a consumer per transaction (a consumer's own `options.batchSize` may lower it). */
  batchSize?: number;
  /** How often a started dispatcher looks for events committed by other instances. */
  pollIntervalMs?: number;
  log?: { error(obj: object, msg: string): void };
  /** Backoff of an `outside` consumer after a failure: first retry after this many ms (default 1000), doubling. */
  outsideMinBackoffMs?: number;
  /** The longest an `outside` consumer rests after failures (default 60000). */
  outsideMaxBackoffMs?: number;
}

export interface DispatchReport {
  /** Events acknowledged by consumers in this run (summed over consumers). */
  handed: number;
  /** Consumers whose `handle` threw; their events stay pending and are handed over again. */
  failed: Array<{ consumer: string; error: unknown }>;
}

/** One batch's outcome: events acknowledged, and whether more may be pending. */
interface BatchOutcome {
  acknowledged: number;
  more: boolean;
}

/**
 * Hands committed change events, in id order and at least once, to every registered consumer
 * (`OutboxConsumer`: webhooks, notification rules, the live channel, …). Each batch runs in one
 * transaction with the consumer's progress row locked (FOR UPDATE SKIP LOCKED on PostgreSQL, so two
 * instances never run the same consumer at once) and advanced in that same transaction: a consumer
 * never sees an event again once it returned normally for it.
 *
 * Between batches the dispatcher yields to the event loop: on SQLite every statement runs on the
 * process's thread, and a long run of batches would otherwise hold requests back until it ends.
 *
 * Consumers must do their database work through the `trx` they get: on SQLite the single connection
 * is held by that transaction.
 */
export class Dispatcher {
  private readonly consumers = new Map<string, OutboxConsumer>();
  /** Consumers with `options.outside` (a broker publisher), each run in a lane of its own. */
  private readonly lanes = new Map<string, OutsideLane>();
  private readonly known = new Set<string>();
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private readonly loop = new LoopTimer(() => this.tick());
  private current: Promise<DispatchReport> | null = null;
  private rerun = false;

  constructor(
    private readonly db: Db,
    private readonly dialect: DialectName,
    private readonly clock: Clock,
    private readonly options: DispatcherOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
  }

  /** Consumers run in registration order; one with `catchUpFirst` also catches up again after each later one. */
  register(consumer: OutboxConsumer): void {
    if (this.consumers.has(consumer.name)) throw new Error(`event consumer ${consumer.name} is already registered`);
    this.consumers.set(consumer.name, consumer);
    if (consumer.options?.outside) {
      const batchSize = Math.min(this.batchSize, consumer.options.batchSize ?? this.batchSize);
      this.lanes.set(
        consumer.name,
        new OutsideLane(consumer, batchSize, {
          db: this.db,
          dialect: this.dialect,
          clock: this.clock,
          ensureKnown: (c) => this.ensureKnown(c),
          readBatch: (executor, c, position, size) => this.batchFor(executor, c, position, size),
          checkedThrough: (c, batch, through) => this.checkedThrough(c, batch, through),
          ...(this.options.outsideMinBackoffMs !== undefined ? { minBackoffMs: this.options.outsideMinBackoffMs } : {}),
          ...(this.options.outsideMaxBackoffMs !== undefined ? { maxBackoffMs: this.options.outsideMaxBackoffMs } : {}),
        }),
      );
    }
  }

  /** Where consumer failures are logged (the server passes its pino logger). */
  useLogger(log: NonNullable<DispatcherOptions['log']>): void {
    this.options.log = log;
  }

  consumerNames(): string[] {
    return [...this.consumers.keys()];
  }

  /** Called after a write committed: dispatch soon instead of at the next poll. No-op unless started. */
  wake(): void {
    if (!this.loop.started) return;
    if (this.current) {
      this.rerun = true;
      return;
    }
    this.loop.schedule(0);
  }

  start(): void {
    this.loop.start();
  }

  /** Stops polling and waits for the batch in flight (and the outside lanes' runs). */
  async stop(): Promise<void> {
    await this.loop.stop(this.current);
    for (const lane of this.lanes.values()) await lane.settled();
  }

  /**
   * Run every consumer until it has caught up (the outside lanes too, unless resting after a failure).
   * Concurrent calls share one run.
   */
  runOnce(): Promise<DispatchReport> {
    return this.runShared(true);
  }

  /** `waitOutside` false (the loop's ticks): the outside lanes are started, not waited for. */
  private runShared(waitOutside: boolean): Promise<DispatchReport> {
    if (this.current) {
      // A run is in flight: it may have read before the caller's commit, so run again after it.
      return this.current.then(() => this.runShared(waitOutside));
    }
    const run = this.runAll(waitOutside).finally(() => {
      this.current = null;
    });
    this.current = run;
    return run;
  }

  /** Delete acknowledged events older than `retentionMs`. */
  prune(retentionMs: number): Promise<number> {
    return pruneEvents(this.db, this.consumerNames(), this.clock.now() - retentionMs);
  }

  private tick(): void {
    void this.runShared(false)
      .catch((error: unknown) => this.options.log?.error({ err: error }, 'event dispatch failed'))
      .finally(() => {
        const again = this.rerun;
        this.rerun = false;
        this.loop.schedule(again ? 0 : this.pollIntervalMs);
      });
  }

  private async runAll(waitOutside: boolean): Promise<DispatchReport> {
    const report: DispatchReport = { handed: 0, failed: [] };
    const outside = [...this.lanes.values()].map((lane) =>
      lane.run().then(
        (handed) => void (report.handed += handed),
        (error: unknown) => {
          report.failed.push({ consumer: lane.consumer.name, error });
          this.options.log?.error({ err: error, consumer: lane.consumer.name, failures: lane.failing }, 'event consumer failed; its events stay pending, retried with backoff');
        },
      ),
    );
    const run = async (consumer: OutboxConsumer) => {
      try {
        report.handed += await this.runConsumer(consumer);
      } catch (error) {
        report.failed.push({ consumer: consumer.name, error });
        this.options.log?.error({ err: error, consumer: consumer.name }, 'event consumer failed; its events stay pending');
      }
    };
    const consumers = [...this.consumers.values()].filter((consumer) => !consumer.options?.outside);
    const first = consumers.filter((consumer) => consumer.options?.catchUpFirst);
    for (const [index, consumer] of consumers.entries()) {
      if (index > 0) await nextTurn(); // requests first, between consumers as between batches
      await run(consumer);
      // A commit came in meanwhile: the latency-first consumers (the webhooks: their latency is what
      // users feel) catch up before the later ones go on; the whole run repeats after.
      if (this.rerun && !first.includes(consumer)) for (const urgent of first) await run(urgent);
    }
    if (waitOutside) await Promise.all(outside);
    return report;
  }

  private async ensureKnown(consumer: OutboxConsumer): Promise<void> {
    if (this.known.has(consumer.name)) return;
    await ensureConsumer(this.db, consumer.name, this.clock.now());
    this.known.add(consumer.name);
  }

  private async runConsumer(consumer: OutboxConsumer): Promise<number> {
    await this.ensureKnown(consumer);
    const batchSize = Math.min(this.batchSize, consumer.options?.batchSize ?? this.batchSize);
    let total = 0;
    for (;;) {
      const outcome = await this.runBatch(consumer, batchSize);
      total += outcome.acknowledged;
      if (!outcome.more) return total;
      // Let requests waiting on the event loop (and, on SQLite, on the connection) in before the next batch.
      await nextTurn();
    }
  }

  /** One transaction: lock the consumer's position, hand it the next batch, advance the position. */
  private async runBatch(consumer: OutboxConsumer, batchSize: number): Promise<BatchOutcome> {
    const committed: Array<() => void> = [];
    const rolledBack: Array<() => void> = [];
    // afterRollback: undo in-memory reservations (the webhook hand-off's slots) when the batch does not commit.
    const context: BatchContext = { afterCommit: (fn) => committed.push(fn), afterRollback: (fn) => rolledBack.push(fn) };
    let outcome: BatchOutcome;
    try {
      outcome = await this.db.transaction().execute(async (trx) => {
        const position = await lockConsumer(trx, this.dialect, consumer.name);
        if (position === null) return { acknowledged: 0, more: false }; // another instance is running this consumer
        const batch = await this.batchFor(trx, consumer, position, batchSize);
        if (batch === null) return { acknowledged: 0, more: false };
        const result = batch.list.length > 0 ? await consumer.handle(trx, batch.list, context) : undefined;
        const through = result ? this.checkedThrough(consumer, batch, result.through) : batch.lastId;
        await advanceConsumer(trx, consumer.name, through, this.clock.now());
        if (through === batch.lastId) return { acknowledged: batch.count, more: batch.count >= batchSize };
        return { acknowledged: batch.list.filter((event) => event.id <= through).length, more: true };
      });
    } catch (error) {
      for (const fn of rolledBack) fn();
      throw error;
    }
    // Only now are the consumer's writes visible to other connections (issue 19: wake after commit).
    for (const fn of committed) fn();
    return outcome;
  }

  /** A partial acknowledgement must name an event of the batch: anything else would lose or stall events. */
  private checkedThrough(consumer: OutboxConsumer, batch: { list: ChangeEvent[] }, through: number): number {
    if (!batch.list.some((event) => event.id === through)) {
      throw new Error(`event consumer ${consumer.name} acknowledged through ${through}, which is not an event of its batch`);
    }
    return through;
  }

  /**
   * The consumer's next batch: null when nothing is pending. A consumer that filters by base gets
   * only the events of bases it listens to; the others are acknowledged without being read.
   */
  private async batchFor(
    trx: Executor,
    consumer: OutboxConsumer,
    position: number,
    batchSize: number,
  ): Promise<{ list: ChangeEvent[]; lastId: number; count: number } | null> {
    if (!consumer.basesOfInterest) {
      const list = await eventsAfter(trx, position, batchSize);
      return list.length === 0 ? null : { list, lastId: list[list.length - 1]!.id, count: list.length };
    }
    const heads = await eventHeadsAfter(trx, position, batchSize);
    if (heads.length === 0) return null;
    const lastId = heads[heads.length - 1]!.id;
    const bases = await consumer.basesOfInterest(trx, [...new Set(heads.map((h) => h.baseId))]);
    const list = await eventsOfBases(trx, position, lastId, bases);
    return { list, lastId, count: heads.length };
  }
}
