import type { DialectName, Db, Executor } from '../db/index.js';
import type { Clock } from '../shared/clock.js';
import {
  advanceConsumer,
  ensureConsumer,
  eventHeadsAfter,
  eventsAfter,
  eventsOfBases,
  lockConsumer,
  pruneEvents,
  type ChangeEvent,
  type EventConsumer,
} from '../modules/events/index.js';
import { LoopTimer } from './loop-timer.js';

export interface DispatcherOptions {
  /** Events handed to a consumer per transaction. */
  batchSize?: number;
  /** How often a started dispatcher looks for events committed by other instances. */
  pollIntervalMs?: number;
  log?: { error(obj: object, msg: string): void };
}

export interface DispatchReport {
  /** Events acknowledged by consumers in this run (summed over consumers). */
  handed: number;
  /** Consumers whose `handle` threw; their events stay pending and are handed over again. */
  failed: Array<{ consumer: string; error: unknown }>;
}

/**
 * Hands committed change events, in id order and at least once, to every registered consumer.
 * Each batch runs in one transaction with the consumer's progress row locked (FOR UPDATE SKIP LOCKED on
 * PostgreSQL, so two instances never run the same consumer at once) and advanced in that same
 * transaction: a consumer never sees an event again once it returned normally for it.
 *
 * Consumers must do their database work through the `trx` they get: on SQLite the single connection
 * is held by that transaction.
 */
export class Dispatcher {
  private readonly consumers = new Map<string, EventConsumer>();
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

  register(consumer: EventConsumer): void {
    if (this.consumers.has(consumer.name)) throw new Error(`event consumer ${consumer.name} is already registered`);
    this.consumers.set(consumer.name, consumer);
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

  /** Stops polling and waits for the batch in flight. */
  stop(): Promise<void> {
    return this.loop.stop(this.current);
  }

  /** Run every consumer until it has caught up. Concurrent calls share one run. */
  runOnce(): Promise<DispatchReport> {
    if (this.current) {
      // A run is in flight: it may have read before the caller's commit, so run again after it.
      return this.current.then(() => this.runOnce());
    }
    const run = this.runAll().finally(() => {
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
    void this.runOnce()
      .catch((error: unknown) => this.options.log?.error({ err: error }, 'event dispatch failed'))
      .finally(() => {
        const again = this.rerun;
        this.rerun = false;
        this.loop.schedule(again ? 0 : this.pollIntervalMs);
      });
  }

  private async runAll(): Promise<DispatchReport> {
    const report: DispatchReport = { handed: 0, failed: [] };
    const run = async (consumer: EventConsumer) => {
      try {
        report.handed += await this.runConsumer(consumer);
      } catch (error) {
        report.failed.push({ consumer: consumer.name, error });
        this.options.log?.error({ err: error, consumer: consumer.name }, 'event consumer failed; its events stay pending');
      }
    };
    const consumers = [...this.consumers.values()];
    for (const [index, consumer] of consumers.entries()) {
      await run(consumer);
      // A commit came in meanwhile: the first consumer (the webhooks, registered first because their
      // latency is what users feel) catches up before the later ones go on; the whole run repeats after.
      if (index > 0 && this.rerun) await run(consumers[0]!);
    }
    return report;
  }

  private async runConsumer(consumer: EventConsumer): Promise<number> {
    if (!this.known.has(consumer.name)) {
      await ensureConsumer(this.db, consumer.name, this.clock.now());
      this.known.add(consumer.name);
    }
    let total = 0;
    for (;;) {
      const committed: Array<() => void> = [];
      const rolledBack: Array<() => void> = [];
      // afterRollback: undo in-memory reservations (the webhook hand-off's slots) when the batch does not commit.
      const context = { afterCommit: (fn: () => void) => committed.push(fn), afterRollback: (fn: () => void) => rolledBack.push(fn) };
      let handed: number;
      try {
        handed = await this.db.transaction().execute(async (trx) => {
          const position = await lockConsumer(trx, this.dialect, consumer.name);
          if (position === null) return 0; // another instance is running this consumer
          const events = await this.batchFor(trx, consumer, position);
          if (events === null) return 0;
          if (events.list.length > 0) await consumer.handle(trx, events.list, context);
          await advanceConsumer(trx, consumer.name, events.lastId, this.clock.now());
          return events.count;
        });
      } catch (error) {
        for (const fn of rolledBack) fn();
        throw error;
      }
      // Only now are the consumer's writes visible to other connections (issue 19: wake after commit).
      for (const fn of committed) fn();
      total += handed;
      if (handed < this.batchSize) return total;
    }
  }

  /**
   * The consumer's next batch: null when nothing is pending. A consumer that filters by base gets
   * only the events of bases it listens to; the others are acknowledged without being read.
   */
  private async batchFor(
    trx: Executor,
    consumer: EventConsumer,
    position: number,
  ): Promise<{ list: ChangeEvent[]; lastId: number; count: number } | null> {
    if (!consumer.basesOfInterest) {
      const list = await eventsAfter(trx, position, this.batchSize);
      return list.length === 0 ? null : { list, lastId: list[list.length - 1]!.id, count: list.length };
    }
    const heads = await eventHeadsAfter(trx, position, this.batchSize);
    if (heads.length === 0) return null;
    const lastId = heads[heads.length - 1]!.id;
    const bases = await consumer.basesOfInterest(trx, [...new Set(heads.map((h) => h.baseId))]);
    const list = await eventsOfBases(trx, position, lastId, bases);
    return { list, lastId, count: heads.length };
  }
}
