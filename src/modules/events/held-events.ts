import { sql } from 'kysely';
import type { DialectName, Executor } from '../../db/index.js';
import { DATA_CELLS_VALUE, encodeEvents, Form, ROW_CELLS_VALUE, type EncodedEvents } from './event-cells.js';
import { EVENTS_COMMIT_LOCK, eventColumns, storedRow, storedRowData } from './events.repository.js';
import type { NewChangeEvent, RowDataItem } from './events.types.js';

/**
 * Held events: a write made of many transactions (a CSV/XLSX import) stores each batch's change events
 * under a hold id in `held_event_batches` (one row per batch) instead of the outbox, so no consumer (webhooks, rules, live
 * clients) sees part of it. `releaseHeldEvents` moves them into `events` in one transaction when the
 * whole write is done; `discardHeldEvents` drops them when it failed (the writer undoes its rows).
 */

/**
 * Stores a write's events under `holdId` (in the write's transaction, as appendEvents would): the whole
 * batch as ONE row of `held_event_batches` (migration 0035), its events a JSON array in the shape
 * `releaseHeldEvents` expands in SQL. A batch costs one small insert instead of one indexed row per
 * event, and the release deletes one row per batch instead of one per event.
 */
export async function holdEvents(trx: Executor, dialect: DialectName, events: NewChangeEvent[], now: number, writeId: string, holdId: string): Promise<void> {
  if (events.length === 0) return;
  const encoded = encodeEvents(events);
  for (const c of encoded.columns) {
    await trx.insertInto('held_event_columns').values({ hold_id: holdId, write_id: writeId, table_id: c.tableId, columns: c.columns, created_at: now }).execute();
  }
  const records = events.map((e, i) => ({
    ...eventColumns(e),
    // PostgreSQL's json keeps a value's text as written (the release casts it to text, as appendEvents
    // does); SQLite's json_extract re-serializes objects, so there the stored texts go as strings.
    row_data: dialect === 'postgres' ? postgresRowData(e, encoded, i) : storedRowData(e, encoded, i),
    row: dialect === 'postgres' ? postgresRow(e, encoded, i) : storedRow(e, encoded, i),
  }));
  await trx.insertInto('held_event_batches').values({ hold_id: holdId, write_id: writeId, created_at: now, events: JSON.stringify(records) }).execute();
}

function postgresRowData(e: NewChangeEvent, encoded: EncodedEvents, i: number): unknown {
  return encoded.form[i] === Form.Full ? e.rowData : encoded.form[i] === Form.RowCells ? ROW_CELLS_VALUE : DATA_CELLS_VALUE;
}

function postgresRow(e: NewChangeEvent, encoded: EncodedEvents, i: number): unknown {
  return encoded.form[i] === Form.DataCells ? encoded.data[i] : e.row;
}

const COLUMNS = sql.raw('base_id, base_uuid, table_id, table_name, row_id, row_name, op_type, op_user, op_app, op_time, row_data, row, created_at, write_id');

/**
 * Moves the held events into the outbox in the order they were written; call it as the LAST work of
 * its transaction (like appendEvents: on PostgreSQL it takes the commit-order lock, so the moved events
 * get ids above every event committed before and below every one committed after). Returns how many.
 */
export async function releaseHeldEvents(trx: Executor, dialect: DialectName, holdId: string, step = RELEASE_STEP): Promise<number> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${EVENTS_COMMIT_LOCK})`.execute(trx);
  await sql`insert into event_columns (write_id, table_id, columns, created_at)
            select write_id, table_id, columns, created_at from held_event_columns where hold_id = ${holdId}`.execute(trx);
  // The batches, expanded in SQL in batch and event order (ids are drawn in that order), `step`
  // batches per statement: a million held events in one INSERT outlast PostgreSQL's statement timeout
  // on a busy machine. Holds in `held_events` (one row per event, before migration 0035) are never
  // released: only the process that made a hold releases it, and a process of an older version that
  // died is undone at start-up.
  const batchIds = (await trx.selectFrom('held_event_batches').select('id').where('hold_id', '=', holdId).orderBy('id').execute()).map((b) => Number(b.id));
  let moved = 0;
  for (let i = 0; i < batchIds.length; i += step) {
    const [first, last] = [batchIds[i]!, batchIds[Math.min(i + step, batchIds.length) - 1]!];
    moved += await releaseBatches(trx, dialect, holdId, first, last);
  }
  await discardHeldEvents(trx, holdId);
  return moved;
}

/** Held batches per INSERT of the release (each at most 1,000 events: the rows API's largest change). */
const RELEASE_STEP = 20;

/** Expands the hold's batches with ids `first`..`last` into `events`, in batch and event order. */
async function releaseBatches(trx: Executor, dialect: DialectName, holdId: string, first: number, last: number): Promise<number> {
  const moved =
    dialect === 'postgres'
      ? await sql`insert into events (${COLUMNS})
          select e.base_id, e.base_uuid, e.table_id, e.table_name, e.row_id, e.row_name, e.op_type, e.op_user, e.op_app, e.op_time,
                 CAST(e.row_data AS text), CAST(e.row AS text), b.created_at, b.write_id
            from held_event_batches b
           cross join lateral ROWS FROM (json_to_recordset(CAST(b.events AS json)) AS (base_id bigint, base_uuid text, table_id text,
                 table_name text, row_id text, row_name text, op_type text, op_user text, op_app text, op_time bigint, row_data json, row json))
                 WITH ORDINALITY AS e(base_id, base_uuid, table_id, table_name, row_id, row_name, op_type, op_user, op_app, op_time, row_data, row, n)
           where b.hold_id = ${holdId} and b.id between ${first} and ${last}
           order by b.id, e.n`.execute(trx)
      : await sql`insert into events (${COLUMNS})
          select json_extract(e.value, '$.base_id'), json_extract(e.value, '$.base_uuid'), json_extract(e.value, '$.table_id'),
                 json_extract(e.value, '$.table_name'), json_extract(e.value, '$.row_id'), json_extract(e.value, '$.row_name'),
                 json_extract(e.value, '$.op_type'), json_extract(e.value, '$.op_user'), json_extract(e.value, '$.op_app'),
                 json_extract(e.value, '$.op_time'), json_extract(e.value, '$.row_data'), json_extract(e.value, '$.row'), b.created_at, b.write_id
            from held_event_batches b, json_each(b.events) e
           where b.hold_id = ${holdId} and b.id between ${first} and ${last}
           order by b.id, e.key`.execute(trx);
  return Number(moved.numAffectedRows ?? 0);
}

/** Drops a hold's events (the write they describe was undone). */
export async function discardHeldEvents(trx: Executor, holdId: string): Promise<void> {
  await trx.deleteFrom('held_event_batches').where('hold_id', '=', holdId).execute();
  await trx.deleteFrom('held_events').where('hold_id', '=', holdId).execute();
  await trx.deleteFrom('held_event_columns').where('hold_id', '=', holdId).execute();
}

/** The ids of the rows a hold inserted, as a subquery (to delete them when the write is undone): holds of the format before 0035 only. */
export function heldInsertedRowIds(db: Executor, holdId: string) {
  return db.selectFrom('held_events').select('row_id').where('hold_id', '=', holdId).where('op_type', '=', 'insert_row');
}

/** A hold's row modifications (held before migration 0035; later ones are kept as held_updates and never applied before the release), latest first, `limit` before the held event `before`: the cells' values before each. */
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
