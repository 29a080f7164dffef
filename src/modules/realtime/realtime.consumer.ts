import type { Server } from 'socket.io';
import type { DialectName, Db, Executor } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import {
  advanceConsumer,
  consumerPosition,
  ensureConsumer,
  lockConsumer,
  pruneStructureEvents,
  structureEventsAfter,
  type ChangeEvent,
  type EventConsumer,
  type StructureEvent,
} from '../events/index.js';
import { toOperation } from './operations.js';
import { presentBases } from './presence.js';
import { baseRoom } from './rooms.js';

const NAME = 'realtime';
/** Progress through `structure_events`, kept beside the consumer's own. */
const STRUCTURE = 'realtime-structure';
const STRUCTURE_BATCH = 1000;

/**
 * The outbox consumer behind `update-dtable`: each committed row change (`events`) and structure change
 * (`structure_events`), merged in commit order, as one operation to its base's room. The dispatcher runs
 * a consumer on one instance at a time and the adapter carries each message to every instance's
 * sockets, so each change is emitted once. A structure change is emitted once every row event before it
 * (`after_event_id`) has been; `flushStructure` sends those of writes without row events.
 * Changes older than `maxAgeMs` (a first start, a long outage) are skipped: no client could still be
 * waiting for them, and a reconnecting one reloads the base.
 */
export class RealtimeConsumer implements EventConsumer {
  readonly name = NAME;
  private started = false;

  constructor(
    private readonly db: Db,
    private readonly dialect: DialectName,
    private readonly io: Server,
    private readonly clock: Clock,
    private readonly maxAgeMs: number,
    private readonly afterBatch: () => void,
  ) {}

  /**
   * The bases some instance has sockets joined to, or had within the reconnection window (so a client
   * that reconnects still recovers what it missed): `realtime_presence`, by primary key.
   */
  async basesOfInterest(trx: Executor, baseIds: number[]): Promise<number[]> {
    return presentBases(trx, baseIds, this.clock.now());
  }

  async handle(trx: Executor, events: ChangeEvent[]): Promise<void> {
    await this.ensureStarted(trx);
    const last = events[events.length - 1]!.id;
    const pending = await this.pendingStructure(trx, last);
    let next = 0;
    const oldest = this.oldest();
    for (const event of events) {
      while (next < pending.length && pending[next]!.afterEventId < event.id) this.emitStructure(pending[next++]!, oldest);
      if (event.opTime < oldest) continue;
      const op = toOperation(event);
      if (op) this.io.to(baseRoom(event.baseUuid)).emit('update-dtable', JSON.stringify(op), event.id);
    }
    while (next < pending.length) this.emitStructure(pending[next++]!, oldest);
    await this.advanceStructure(trx, pending);
    this.afterBatch();
  }

  /** Sends the structure changes whose preceding row events are all sent (writes without row events). */
  async flushStructure(): Promise<void> {
    await this.ensureStarted(this.db);
    await this.db.transaction().execute(async (trx) => {
      const position = await lockConsumer(trx, this.dialect, NAME);
      if (position === null) return; // another instance holds the consumer
      const pending = await this.pendingStructure(trx, position);
      const oldest = this.oldest();
      for (const change of pending) this.emitStructure(change, oldest);
      await this.advanceStructure(trx, pending);
    });
  }

  /** Structure changes not sent yet that belong at or before row event `upTo`, in commit order. */
  private async pendingStructure(trx: Executor, upTo: number): Promise<StructureEvent[]> {
    const from = (await consumerPosition(trx, STRUCTURE)) ?? 0;
    const changes = await structureEventsAfter(trx, from, STRUCTURE_BATCH);
    const ready: StructureEvent[] = [];
    for (const change of changes) {
      if (change.afterEventId > upTo) break; // later ones (by id) come after it too
      ready.push(change);
    }
    return ready;
  }

  private async advanceStructure(trx: Executor, sent: StructureEvent[]): Promise<void> {
    if (sent.length === 0) return;
    const last = sent[sent.length - 1]!.id;
    await advanceConsumer(trx, STRUCTURE, last, this.clock.now());
    await pruneStructureEvents(trx, last, this.oldest());
  }

  private emitStructure(change: StructureEvent, oldest: number): void {
    if (change.opTime < oldest) return;
    const op = { ...change.op, op_user: change.opUser, op_app: change.opApp, op_time: change.opTime };
    this.io.to(baseRoom(change.baseUuid)).emit('update-dtable', JSON.stringify(op), change.afterEventId);
  }

  private oldest(): number {
    return this.clock.now() - this.maxAgeMs;
  }

  /** (Inside `handle`, through its transaction: on SQLite it holds the only connection.) */
  private async ensureStarted(db: Executor): Promise<void> {
    if (this.started) return;
    await ensureConsumer(db, NAME, this.clock.now());
    await ensureConsumer(db, STRUCTURE, this.clock.now());
    this.started = true;
  }
}
