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
  structureEventsSince,
  eventsOfWrite,
  eventHeadsAfter,
  eventsOfBases,
  type ChangeEvent,
  type BatchContext,
  type OutboxConsumer,
  type StructureEvent,
} from '../events/index.js';
import { anchorOf } from './anchors.js';
import { groupWrites, isInsertGroup, toOperation, together, type ChangeGroup } from './operations.js';
import { targetsOf, viewAudiences, type ViewAudience, type ViewTarget } from './view-audiences.js';
import { viewAsOf } from './view-as-of.js';
import { lensOf, viewOperation, type ViewLens } from './view-operations.js';
import { presentBases } from './presence.js';
import { baseRoom } from './rooms.js';
import { comparePositions, type Position } from './positions.js';

const NAME = 'realtime';
/** Progress through `structure_events`, kept beside the consumer's own. */
const STRUCTURE = 'realtime-structure';
const STRUCTURE_BATCH = 1000;
/** Events one write may have past a batch's end (a 1,000-row write with links on both sides is far less). */
const MAX_WRITE_EVENTS = 100_000;
/** Events per transaction of `catchUp` (as the dispatcher's batches). */
const OWN_BATCH = 500;
/**
 * Structure changes read to judge a batch's row changes with their views as they were (`viewAsOf`):
 * those committed after the batch's first row change. Beyond this many (never seen: views change
 * rarely), the later ones are not undone.
 */
const LATER_STRUCTURE = 10_000;

/** One `update-dtable` message: its room, the operation as JSON, its version (event id), its place in the stream. */
export interface Outgoing {
  /** A base's room, or the rooms of a view share's holders (view-audiences.ts). */
  room: string | string[];
  op: string;
  version: number;
  position: Position;
  /** The socket that sent the operation itself (it applied it already): left out. */
  except?: string;
  /** Sent as `dtable-changed` (`op` is its payload): a view's holders are told to re-read, not given the change. */
  hint?: boolean;
}

/** Writes of live clients whose echo is still to be sent (bounded: a write that never commits ages out). */
const MAX_ORIGINS = 10_000;

/** The event that stands in for an operation too large to send: re-read the base (docs/realtime.md). */
export const CHANGED_EVENT = 'dtable-changed';

export interface ConsumerOptions {
  /** An operation longer than this (JSON characters) is sent as a small `dtable-changed` instead. */
  maxOperationBytes: number;
  /** Emits with the offset naming `position` (the in-memory session adapter's; without it, plainly). */
  at(position: Position, emit: () => void): void;
  /** TIME_ZONE: the zone views' relative date filters read (default UTC). */
  timeZone?: string;
}

/** Sends one message (to a room or a socket), the too-large ones as the small re-read hint. */
export function emitOutgoing(target: { emit(event: string, ...args: unknown[]): unknown }, message: Outgoing, maxBytes: number): void {
  if (message.hint) {
    target.emit(CHANGED_EVENT, message.op, message.version);
    return;
  }
  if (message.op.length <= maxBytes) {
    target.emit('update-dtable', message.op, message.version);
    return;
  }
  const { op_type, table_id } = JSON.parse(message.op) as { op_type?: string; table_id?: string };
  target.emit(CHANGED_EVENT, JSON.stringify({ version: message.version, op_type, table_id, reason: 'too-large' }), message.version);
}

/**
 * The outbox consumer behind `update-dtable`: the committed row changes (`events`, one operation per
 * write, kind and table: operations.ts) and structure changes (`structure_events`), merged in commit
 * order, each to its base's room. The dispatcher runs
 * a consumer on one instance at a time and the adapter carries each message to every instance's
 * sockets, so each change is emitted once. A structure change is emitted once every row event before it
 * (`after_event_id`) has been; `flushStructure` sends those of writes without row events.
 * Changes older than `maxAgeMs` (a first start, a long outage) are skipped: no client could still be
 * waiting for them, and a reconnecting one reloads the base.
 */
export class RealtimeConsumer implements OutboxConsumer {
  readonly name = NAME;
  private started = false;
  /** Set once the dispatcher runs this consumer here: only then does `catchUp` run it too. */
  private dispatched = false;
  /** The highest event id already sent (a write read ahead past the dispatcher's batch). */
  private sentThrough = 0;
  /** Write id → the socket that sent it over the live channel (`noteOrigin`). */
  private readonly origins = new Map<string, string>();

  constructor(
    private readonly db: Db,
    private readonly dialect: DialectName,
    private readonly io: Server,
    private readonly clock: Clock,
    private readonly maxAgeMs: number,
    private readonly afterBatch: () => void,
    private readonly sendOptions: ConsumerOptions = { maxOperationBytes: Infinity, at: (_position, emit) => emit() },
  ) {}

  /**
   * The bases some instance has sockets joined to, or had within the reconnection window (so a client
   * that reconnects still recovers what it missed): `realtime_presence`, by primary key.
   */
  async basesOfInterest(trx: Executor, baseIds: number[]): Promise<number[]> {
    this.dispatched = true;
    return presentBases(trx, baseIds, this.clock.now());
  }

  /**
   * Runs this consumer itself right after a commit here (`wake` → Poller), instead of waiting for the
   * dispatcher's next turn behind the other consumers; the dispatcher still runs it too (other instances'
   * commits, and it keeps the consumer's position for pruning). Both take the consumer's lock, so a batch
   * is handled once. Only on an instance whose dispatcher runs this consumer (worker role).
   */
  async catchUp(): Promise<void> {
    if (!this.dispatched) return;
    await this.ensureStarted(this.db);
    for (;;) {
      const committed: Array<() => void> = [];
      const handed = await this.db.transaction().execute(async (trx) => {
        const position = await lockConsumer(trx, this.dialect, NAME);
        if (position === null) return 0; // the dispatcher (here or elsewhere) is on it
        const heads = await eventHeadsAfter(trx, position, OWN_BATCH);
        if (heads.length === 0) return 0;
        const lastId = heads[heads.length - 1]!.id;
        const bases = await presentBases(trx, [...new Set(heads.map((head) => head.baseId))], this.clock.now());
        const list = await eventsOfBases(trx, position, lastId, bases);
        if (list.length > 0) await this.handle(trx, list, { afterCommit: (fn) => committed.push(fn) });
        await advanceConsumer(trx, NAME, lastId, this.clock.now());
        return heads.length;
      });
      for (const fn of committed) fn();
      if (handed < OWN_BATCH) return;
    }
  }

  async handle(trx: Executor, events: ChangeEvent[], context?: BatchContext): Promise<void> {
    await this.ensureStarted(trx);
    this.dispatched = true;
    // Events of a write whose operation went out already with an earlier batch (read ahead, below).
    const fresh = events.filter((event) => event.id > this.sentThrough);
    const groups = groupWrites(fresh);
    const lastGroup = groups[groups.length - 1];
    let through = events[events.length - 1]!.id;
    // A write split by the dispatcher's batch: the rest of it joins its group, so it stays one operation.
    const writeId = lastGroup?.[lastGroup.length - 1]!.writeId;
    if (lastGroup && writeId) {
      const rest = await eventsOfWrite(trx, through, writeId, MAX_WRITE_EVENTS);
      for (const event of rest) {
        if (together(lastGroup[lastGroup.length - 1]!, event)) lastGroup.push(event);
        else groups.push([event]);
      }
      if (rest.length > 0) through = rest[rest.length - 1]!.id;
    }
    const pending = await this.pendingStructure(trx, through);
    const oldest = this.oldest();
    const out: Outgoing[] = [];
    const sent: Array<{ group: ChangeGroup; version: number }> = [];
    let next = 0;
    for (const group of groups) {
      const first = group[0]!;
      while (next < pending.length && pending[next]!.afterEventId < first.id) this.structureMessage(pending[next++]!, oldest, out);
      if (first.opTime < oldest) continue;
      const op = toOperation(group, isInsertGroup(group) ? await anchorOf(trx, this.dialect, group) : '');
      const except = first.writeId ? this.origins.get(first.writeId) : undefined;
      if (op) out.push(rowMessage(first.baseUuid, JSON.stringify(op), group[group.length - 1]!.id, except));
      if (op) sent.push({ group, version: group[group.length - 1]!.id });
    }
    while (next < pending.length) this.structureMessage(pending[next++]!, oldest, out);
    const views = await this.viewMessages(trx, sent, pending.filter((change) => change.opTime >= oldest));
    if (views.length > 0) {
      // Each view's message beside its base's (same position), the stream kept in order (a stable sort).
      out.push(...views);
      out.sort((a, b) => comparePositions(a.position, b.position));
    }
    await this.advanceStructure(trx, pending);
    // Sent once the consumer's progress is committed: a batch rolled back and handed over again is not sent twice.
    const send = () => {
      this.sentThrough = Math.max(this.sentThrough, through);
      this.send(out);
      this.afterBatch();
    };
    if (context) context.afterCommit(send);
    else send();
  }

  /**
   * What the holders of view shares of these bases get: each row change filtered per shared view (its rows
   * before or after, its visible cells: view-operations.ts) to its holders' rooms, and a `dtable-changed`
   * hint for a structure change of the view's table. Each change is judged with the view as it was when
   * the change was made: the view now with the structure changes committed after it undone
   * (view-as-of.ts), so a filter changed between the write and the send does not decide. One query when
   * no base has view shares.
   */
  private async viewMessages(trx: Executor, groups: Array<{ group: ChangeGroup; version: number }>, structure: StructureEvent[]): Promise<Outgoing[]> {
    const bases = new Map<number, string>();
    for (const { group } of groups) bases.set(group[0]!.baseId, group[0]!.baseUuid);
    for (const change of structure) bases.set(change.baseId, change.baseUuid);
    if (bases.size === 0) return [];
    // (The views are read before the later changes: a change committed in between is undone too, which sets what the view had.)
    const audiences = await viewAudiences(trx, [...bases].map(([id, uuid]) => ({ id, uuid })));
    if (audiences.size === 0) return [];
    const watched = groups.filter(({ group }) => audiences.has(group[0]!.baseId));
    const earliest = watched.reduce((min, { group }) => Math.min(min, group[0]!.id), Infinity);
    const later = watched.length === 0 ? [] : await structureEventsSince(trx, [...audiences.keys()], earliest, LATER_STRUCTURE);
    const ctx = { now: this.clock.now(), timeZone: this.sendOptions.timeZone ?? 'UTC' };
    const asOf = new ViewsAsOf();
    const out: Outgoing[] = [];
    for (const { group, version } of watched) {
      const first = group[0]!;
      const undo = later.filter((change) => change.baseId === first.baseId && change.afterEventId >= first.id);
      for (const audience of audiences.get(first.baseId)!) {
        const then = asOf.get(audience, undo);
        if (!then) continue;
        for (const target of then.targets) {
          const op = viewOperation(group, then.lens, { ...ctx, currentUser: target.currentUser });
          if (op) out.push({ room: target.rooms, op: JSON.stringify(op), version, position: { event: version, structure: 0 } });
        }
      }
    }
    for (const change of structure) {
      const tableId = (change.op as { table_id?: unknown }).table_id;
      for (const audience of audiences.get(change.baseId) ?? []) {
        if (tableId !== audience.lens.table._id) continue;
        const hint = JSON.stringify({ version: change.afterEventId, op_type: change.op.op_type, table_id: tableId, reason: 'structure' });
        const rooms = audience.holders.map((holder) => holder.room);
        out.push({ room: rooms, op: hint, version: change.afterEventId, position: { event: change.afterEventId, structure: change.id }, hint: true });
      }
    }
    return out;
  }

  /** Sends the structure changes whose preceding row events are all sent (writes without row events). */
  async flushStructure(): Promise<void> {
    await this.ensureStarted(this.db);
    const out: Outgoing[] = [];
    await this.db.transaction().execute(async (trx) => {
      const position = await lockConsumer(trx, this.dialect, NAME);
      if (position === null) return; // another instance holds the consumer
      const pending = await this.pendingStructure(trx, position);
      const oldest = this.oldest();
      for (const change of pending) this.structureMessage(change, oldest, out);
      out.push(...(await this.viewMessages(trx, [], pending.filter((change) => change.opTime >= oldest))));
      await this.advanceStructure(trx, pending);
    });
    this.send(out);
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

  private structureMessage(change: StructureEvent, oldest: number, out: Outgoing[]): void {
    if (change.opTime < oldest) return;
    const op = { ...change.op, op_user: change.opUser, op_app: change.opApp, op_time: change.opTime };
    out.push({ room: baseRoom(change.baseUuid), op: JSON.stringify(op), version: change.afterEventId, position: { event: change.afterEventId, structure: change.id } });
  }

  /**
   * What a client of base `baseId` that last saw `from` missed among the changes already sent (the
   * consumers' committed positions), in order, built as they were sent; null when more than `limit`
   * events or a change older than `windowMs` would be needed (the client reloads the base instead).
   */
  async missed(baseId: number, from: Position, limit: number, windowMs: number): Promise<Outgoing[] | null> {
    const through = (await consumerPosition(this.db, NAME)) ?? 0;
    const structureThrough = (await consumerPosition(this.db, STRUCTURE)) ?? 0;
    const events = await eventsOfBases(this.db, from.event, through, [baseId], limit + 1);
    if (events.length > limit) return null;
    const groups = groupWrites(events);
    const lastGroup = groups[groups.length - 1];
    const writeId = lastGroup?.[lastGroup.length - 1]!.writeId;
    // (The consumer reads the rest of a write past its batch's end: so does the replay.)
    if (lastGroup && writeId) {
      for (const event of await eventsOfWrite(this.db, events[events.length - 1]!.id, writeId, MAX_WRITE_EVENTS)) {
        if (together(lastGroup[lastGroup.length - 1]!, event)) lastGroup.push(event);
        else groups.push([event]);
      }
    }
    const structure = await structureEventsAfter(this.db, 0, STRUCTURE_BATCH);
    if (structure.length === STRUCTURE_BATCH) return null;
    const out: Outgoing[] = [];
    for (const change of structure) {
      const position = { event: change.afterEventId, structure: change.id };
      if (change.baseId === baseId && change.id <= structureThrough && comparePositions(position, from) > 0) this.structureMessage(change, 0, out);
    }
    for (const group of groups) {
      const first = group[0]!;
      const op = toOperation(group, isInsertGroup(group) ? await anchorOf(this.db, this.dialect, group) : '');
      if (op) out.push(rowMessage(first.baseUuid, JSON.stringify(op), group[group.length - 1]!.id));
    }
    out.sort((a, b) => comparePositions(a.position, b.position));
    const oldest = events[0]?.opTime ?? structure.find((c) => c.baseId === baseId && c.id <= structureThrough && comparePositions({ event: c.afterEventId, structure: c.id }, from) > 0)?.opTime;
    if (oldest !== undefined && oldest < this.clock.now() - windowMs) return null;
    return out;
  }

  /** Emits one message to `target` with its position as its offset. */
  emitTo(target: { emit(event: string, ...args: unknown[]): unknown }, message: Outgoing): void {
    this.sendOptions.at(message.position, () => emitOutgoing(target, message, this.sendOptions.maxOperationBytes));
  }

  /**
   * Write `writeId` comes from live socket `socketId`, which applied it itself: its operation goes to the
   * others only, as the original sends a client's operation. (Known to this instance only: the consumer
   * that sends the write runs here right after the commit, `catchUp`, while sockets here watch the base.)
   */
  noteOrigin(writeId: string, socketId: string): void {
    if (this.origins.size >= MAX_ORIGINS) this.origins.delete(this.origins.keys().next().value!);
    this.origins.set(writeId, socketId);
  }

  forgetOrigin(writeId: string): void {
    this.origins.delete(writeId);
  }

  /** Each message serialized once, whatever the number of sockets in its room (and instances). */
  private send(out: Outgoing[]): void {
    for (const message of out) {
      const room = this.io.to(message.room);
      this.emitTo(message.except ? room.except(message.except) : room, message);
    }
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

function rowMessage(baseUuid: string, op: string, version: number, except?: string): Outgoing {
  return { room: baseRoom(baseUuid), op, version, position: { event: version, structure: 0 }, ...(except ? { except } : {}) };
}

/**
 * A batch's shared views as they were at its row changes, each worked out once: the changes to undo for
 * a row change are the base's later structure changes from some point on, so their count names them.
 */
class ViewsAsOf {
  private readonly known = new Map<ViewAudience, Map<number, { lens: ViewLens; targets: ViewTarget[] } | null>>();

  get(audience: ViewAudience, undo: readonly StructureEvent[]): { lens: ViewLens; targets: ViewTarget[] } | null {
    let byCount = this.known.get(audience);
    if (!byCount) this.known.set(audience, (byCount = new Map()));
    if (byCount.has(undo.length)) return byCount.get(undo.length)!;
    const { table, view } = audience.lens;
    const touched = undo.filter((change) => change.op.table_id === table._id);
    const then = touched.length === 0 ? { table, view } : viewAsOf(table, table._id, view._id, touched);
    const lens = then && (touched.length === 0 ? audience.lens : lensOf(then.table, then.view));
    const result = lens && { lens, targets: targetsOf(lens, audience.holders) };
    byCount.set(undo.length, result);
    return result;
  }
}
