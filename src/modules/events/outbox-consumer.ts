import type { Executor } from '../../db/index.js';
import type { ChangeEvent } from './events.types.js';

/** What a consumer's `handle` may ask of the transaction that acknowledges its batch. */
export interface BatchContext {
  /** Run `fn` once the transaction that acknowledges these events has committed (never on rollback). */
  afterCommit(fn: () => void): void;
  /** Run `fn` if that transaction rolls back (undo in-memory reservations). Absent outside the dispatcher. */
  afterRollback?(fn: () => void): void;
}

/** What `handle` may return: acknowledge the batch only through event `through` (an id of the batch). */
export interface PartialBatch {
  through: number;
}

export interface OutboxConsumerOptions {
  /** Events read per transaction, at most; the dispatcher's own batch size when absent or larger. */
  batchSize?: number;
  /**
   * Latency matters most for this consumer (the webhooks): when a commit arrives while the consumers
   * after it run, it catches up again before they go on.
   */
  catchUpFirst?: boolean;
  /**
   * `handle` talks to a system outside the database (a message broker): it runs with no transaction
   * held (`trx` is the database itself), in a lane of its own that never holds back the other
   * consumers; the position advances after `handle` returned, only if no one moved it meanwhile; a
   * failure is retried with backoff (src/modules/outbox/outside-lane.ts). The consumer must make a
   * repeat harmless (the broker de-duplicates by the event's id).
   */
  outside?: boolean;
}

/**
 * A module that reacts to the outbox's committed changes, in id order, from a position of its own
 * (`event_consumers`, under `name`). It registers with the dispatcher (src/modules/outbox) in the
 * composition root; the dispatcher knows nothing else about it.
 *
 * `handle` runs inside the transaction that also records the consumer's progress: throw to have the
 * same events handed over again later (at-least-once); return normally and they are never handed to
 * this consumer again — or return `{ through }` to acknowledge only the events up to that id (a batch
 * too costly to handle at once); the rest come again in the next batch.
 */
export interface OutboxConsumer {
  /** Stable name: progress is stored under it, so renaming replays every retained event. */
  readonly name: string;
  readonly options?: OutboxConsumerOptions;
  handle(trx: Executor, events: ChangeEvent[], context?: BatchContext): Promise<void | PartialBatch>;
  /**
   * Optional filter: which of these bases have anything subscribed (one indexed lookup). Events of
   * other bases are skipped unread (never parsed) and acknowledged. Without it, every event is handed over.
   */
  basesOfInterest?(trx: Executor, baseIds: number[]): Promise<number[]>;
}
