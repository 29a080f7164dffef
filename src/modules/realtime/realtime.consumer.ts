import type { Server } from 'socket.io';
import type { Clock } from '../../shared/clock.js';
import type { ChangeEvent, EventConsumer } from '../events/index.js';
import { toOperation } from './operations.js';
import { baseRoom } from './rooms.js';

/**
 * The outbox consumer behind `update-dtable`: each committed change event, in id (= commit) order, as
 * one operation to its base's room. The dispatcher runs a consumer on one instance at a time, and the
 * adapter carries the message to the sockets of every instance, so each change is emitted once.
 * Events older than `maxAgeMs` (a first start, or a long outage) are skipped: no client could still
 * be waiting for them, and a reconnecting one reloads the base.
 */
export class RealtimeConsumer implements EventConsumer {
  readonly name = 'realtime';
  /** Also hand over structure events (tables, columns, views, options). */
  readonly wantsStructure = true;

  constructor(
    private readonly io: Server,
    private readonly clock: Clock,
    private readonly maxAgeMs: number,
    private readonly afterBatch: () => void,
  ) {}

  handle(_trx: unknown, events: ChangeEvent[]): Promise<void> {
    const oldest = this.clock.now() - this.maxAgeMs;
    for (const event of events) {
      if (event.opTime < oldest) continue;
      const op = toOperation(event);
      if (op) this.io.to(baseRoom(event.baseUuid)).emit('update-dtable', JSON.stringify(op), event.id);
    }
    this.afterBatch();
    return Promise.resolve();
  }
}
