import { CompiledQuery, sql } from 'kysely';
import type { DialectName, Executor } from '../../db/index.js';
import { encodeEvents } from './event-cells.js';
import { EVENTS_COMMIT_LOCK, sqliteInsertText, storedRow, storedRowData } from './events.repository.js';
import type { NewChangeEvent, RowDataItem } from './events.types.js';

/**
 * Held events: a write made of many transactions (a CSV/XLSX import) stores each batch's change events
 * under a hold id in `held_events` instead of the outbox, so no consumer (webhooks, rules, live
 * clients) sees part of it. `releaseHeldEvents` moves them into `events` in one transaction when the
 * whole write is done; `discardHeldEvents` drops them when it failed (the writer undoes its rows).
 */

/** Rows per INSERT: 15 parameters each stays under SQLite's 32,766 and PostgreSQL's 65,535. */
const CHUNK = 1000;

/** Stores a write's events under `holdId` (in the write's transaction, as appendEvents would). */
export async function holdEvents(trx: Executor, dialect: DialectName, events: NewChangeEvent[], now: number, writeId: string, holdId: string): Promise<void> {
  if (events.length === 0) return;
  const encoded = encodeEvents(events);
  for (const c of encoded.columns) {
    await trx.insertInto('held_event_columns').values({ hold_id: holdId, write_id: writeId, table_id: c.tableId, columns: c.columns, created_at: now }).execute();
  }
  for (let i = 0; i < events.length; i += CHUNK) {
    const values = events.slice(i, i + CHUNK).map((e, k) => ({
      hold_id: holdId,
      base_id: e.baseId,
      base_uuid: e.baseUuid,
      table_id: e.tableId,
      table_name: e.tableName,
      row_id: e.rowId,
      row_name: e.rowName,
      op_type: e.opType,
      op_user: e.opUser,
      op_app: e.opApp,
      op_time: e.opTime,
      row_data: storedRowData(e, encoded, i + k),
      row: storedRow(e, encoded, i + k),
      created_at: now,
      write_id: writeId,
    }));
    if (dialect === 'sqlite') {
      // SQL text kept per row count (SQLite reuses the prepared statement), as appendEvents does.
      await trx.executeQuery(CompiledQuery.raw(sqliteInsertText(values.length, 'held_events', HELD_COLUMNS), values.flatMap((v) => HELD_COLUMNS.map((c) => v[c]))));
    } else {
      await trx.insertInto('held_events').values(values).execute();
    }
  }
}

const HELD_COLUMNS = ['hold_id', 'base_id', 'base_uuid', 'table_id', 'table_name', 'row_id', 'row_name', 'op_type', 'op_user', 'op_app', 'op_time', 'row_data', 'row', 'created_at', 'write_id'] as const;
const COLUMNS = sql.raw('base_id, base_uuid, table_id, table_name, row_id, row_name, op_type, op_user, op_app, op_time, row_data, row, created_at, write_id');

/**
 * Moves the held events into the outbox in the order they were written; call it as the LAST work of
 * its transaction (like appendEvents: on PostgreSQL it takes the commit-order lock, so the moved events
 * get ids above every event committed before and below every one committed after). Returns how many.
 */
export async function releaseHeldEvents(trx: Executor, dialect: DialectName, holdId: string): Promise<number> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${EVENTS_COMMIT_LOCK})`.execute(trx);
  await sql`insert into event_columns (write_id, table_id, columns, created_at)
            select write_id, table_id, columns, created_at from held_event_columns where hold_id = ${holdId}`.execute(trx);
  const moved = await sql`insert into events (${COLUMNS}) select ${COLUMNS} from held_events where hold_id = ${holdId} order by id`.execute(trx);
  await discardHeldEvents(trx, holdId);
  return Number(moved.numAffectedRows ?? 0);
}

/** Drops a hold's events (the write they describe was undone). */
export async function discardHeldEvents(trx: Executor, holdId: string): Promise<void> {
  await trx.deleteFrom('held_events').where('hold_id', '=', holdId).execute();
  await trx.deleteFrom('held_event_columns').where('hold_id', '=', holdId).execute();
}

/** The ids of the rows a hold inserted, as a subquery (to delete them when the write is undone). */
export function heldInsertedRowIds(db: Executor, holdId: string) {
  return db.selectFrom('held_events').select('row_id').where('hold_id', '=', holdId).where('op_type', '=', 'insert_row');
}

/** A hold's row modifications, latest first, `limit` before the held event `before`: the cells' values before each. */
export async function heldModifications(db: Executor, holdId: string, before: number, limit: number): Promise<Array<{ id: number; tableId: string; rowId: string; before: Array<Pick<RowDataItem, 'column_key' | 'old_value'>> }>> {
  const rows = await db
    .selectFrom('held_events')
    .select(['id', 'table_id', 'row_id', 'row_data'])
    .where('hold_id', '=', holdId)
    .where('op_type', '=', 'modify_row')
    .where('id', '<', before)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: Number(r.id), tableId: r.table_id, rowId: r.row_id, before: JSON.parse(r.row_data) as RowDataItem[] }));
}
