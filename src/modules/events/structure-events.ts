import { sql } from 'kysely';
import type { DialectName, Executor } from '../../db/index.js';
import { EVENTS_COMMIT_LOCK } from './events.repository.js';

/** A committed structure change of a base, for the live channel. */
export interface StructureEvent {
  id: number;
  baseId: number;
  baseUuid: string;
  afterEventId: number;
  op: { op_type: string } & Record<string, unknown>;
  opUser: string;
  opApp: string | null;
  opTime: number;
}

export type NewStructureEvent = Omit<StructureEvent, 'id' | 'afterEventId'>;

/**
 * Append structure changes inside the write's transaction, BEFORE its row events (appendEvents).
 * Under the same PostgreSQL advisory lock that orders event commits, the highest event id is final:
 * every event at or below it has committed and every later one (this write's included) comes after.
 */
export async function appendStructureEvents(trx: Executor, dialect: DialectName, events: NewStructureEvent[], now: number): Promise<void> {
  if (events.length === 0) return;
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${EVENTS_COMMIT_LOCK})`.execute(trx);
  const last = await trx.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst();
  const afterEventId = Number(last?.id ?? 0);
  await trx
    .insertInto('structure_events')
    .values(
      events.map((e) => ({
        base_id: e.baseId,
        base_uuid: e.baseUuid,
        after_event_id: afterEventId,
        op: JSON.stringify(e.op),
        op_user: e.opUser,
        op_app: e.opApp,
        op_time: e.opTime,
        created_at: now,
      })),
    )
    .execute();
}

export async function structureEventsAfter(db: Executor, afterId: number, limit: number, baseId?: number): Promise<StructureEvent[]> {
  let query = db.selectFrom('structure_events').selectAll().where('id', '>', afterId);
  if (baseId !== undefined) query = query.where('base_id', '=', baseId);
  const rows = await query.orderBy('id').limit(limit).execute();
  return rows.map(toStructureEvent);
}

function toStructureEvent(r: { id: unknown; base_id: unknown; base_uuid: string; after_event_id: unknown; op: string; op_user: string; op_app: string | null; op_time: unknown }): StructureEvent {
  return {
    id: Number(r.id),
    baseId: Number(r.base_id),
    baseUuid: r.base_uuid,
    afterEventId: Number(r.after_event_id),
    op: JSON.parse(r.op) as StructureEvent['op'],
    opUser: r.op_user,
    opApp: r.op_app,
    opTime: Number(r.op_time),
  };
}

/**
 * The structure changes of bases `baseIds` committed after row event `eventId` or later (`after_event_id
 * >= eventId`: placed after it), in commit order, at most `limit`.
 */
export async function structureEventsSince(db: Executor, baseIds: readonly number[], eventId: number, limit: number): Promise<StructureEvent[]> {
  if (baseIds.length === 0) return [];
  const rows = await db
    .selectFrom('structure_events')
    .selectAll()
    .where('base_id', 'in', [...baseIds])
    .where('after_event_id', '>=', eventId)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map(toStructureEvent);
}

export async function pruneStructureEvents(db: Executor, upToId: number, before: number): Promise<void> {
  await db.deleteFrom('structure_events').where('id', '<=', upToId).where('created_at', '<', before).execute();
}
