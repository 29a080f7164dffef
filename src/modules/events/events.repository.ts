import { randomUUID } from 'node:crypto';
import { CompiledQuery, PostgresAdapter, sql, type RawBuilder, type Selectable } from 'kysely';
import { RecordSet, WriteStatement, type DialectName, type Executor } from '../../db/index.js';
import type { ChangeEvent, NewChangeEvent, OpType } from './events.types.js';
import type { EventsTable } from './events.table.js';
import { DATA_CELLS, encodeEvents, Form, parseColumns, rowFromColumns, rowFromData, ROW_CELLS, ROW_CELLS_VALUE, DATA_CELLS_VALUE, type EncodedEvents, type StoredColumns } from './event-cells.js';

/** Arbitrary constant naming the PostgreSQL advisory lock that orders event commits. */
export const EVENTS_COMMIT_LOCK = 4_471_002;
/** Rows per INSERT: 13 parameters each stays under both engines' limits; a 1,000-row append is one statement. */
const INSERT_CHUNK = 2000;

/**
 * Append events inside the caller's transaction; call it as the LAST statement before commit.
 *
 * Consumers read events by increasing id and remember the highest id they acknowledged, so an event
 * must never become visible after one with a higher id. On PostgreSQL two transactions could take ids
 * 10 and 11 and commit 11 first; the transaction-scoped advisory lock taken here serializes the short
 * "insert events → commit" tail, so ids are handed out in commit order. SQLite has a single writer.
 */
export async function appendEvents(trx: Executor, dialect: DialectName, events: NewChangeEvent[], now: number, writeId: string = randomUUID()): Promise<void> {
  if (events.length === 0) return;
  // One id for the whole write: the live channel sends a batch as one operation (and knows its sender by it).
  // Insert events' cells are stored once, in `row` (see event-cells.ts).
  const encoded = encodeEvents(events);
  if (dialect === 'postgres') return appendPostgres(trx, events, encoded, now, writeId);
  for (const c of encoded.columns) {
    await trx.executeQuery(CompiledQuery.raw(EVENT_COLUMNS_INSERT, [writeId, c.tableId, c.columns, now]));
  }
  // SQL text written directly (kept per row count, so SQLite reuses the prepared statement): building
  // and compiling a query tree of 13 values per event cost more than the insert itself.
  for (let i = 0; i < events.length; i += INSERT_CHUNK) {
    const count = Math.min(INSERT_CHUNK, events.length - i);
    const parameters: unknown[] = new Array(count * EVENT_COLUMNS.length);
    let p = 0;
    for (let j = i; j < i + count; j++) {
      const e = events[j]!;
      parameters[p++] = e.baseId;
      parameters[p++] = e.baseUuid;
      parameters[p++] = e.tableId;
      parameters[p++] = e.tableName;
      parameters[p++] = e.rowId;
      parameters[p++] = e.rowName;
      parameters[p++] = e.opType;
      parameters[p++] = e.opUser;
      parameters[p++] = e.opApp;
      parameters[p++] = e.opTime;
      parameters[p++] = storedRowData(e, encoded, j);
      parameters[p++] = storedRow(e, encoded, j);
      parameters[p++] = now;
      parameters[p++] = writeId;
    }
    await trx.executeQuery(CompiledQuery.raw(sqliteInsertText(count), parameters));
  }
}

/** `events.row_data` of the `j`th encoded event as stored (its cells, or the compact markers). */
export function storedRowData(e: NewChangeEvent, encoded: EncodedEvents, j: number): string {
  const form = encoded.form[j];
  return form === Form.Full ? JSON.stringify(e.rowData) : form === Form.RowCells ? ROW_CELLS : DATA_CELLS;
}

/** `events.row` of the `j`th encoded event as stored. */
export function storedRow(e: NewChangeEvent, encoded: EncodedEvents, j: number): string | null {
  return encoded.form[j] === Form.DataCells ? (encoded.text[j] ?? JSON.stringify(encoded.data[j])) : e.row === null ? null : JSON.stringify(e.row);
}

const EVENT_COLUMNS_INSERT = 'insert into "event_columns" ("write_id", "table_id", "columns", "created_at") values (?, ?, ?, ?)';
const EVENT_COLUMNS = ['base_id', 'base_uuid', 'table_id', 'table_name', 'row_id', 'row_name', 'op_type', 'op_user', 'op_app', 'op_time', 'row_data', 'row', 'created_at', 'write_id'];
const sqliteInsertTexts = new Map<string, string>();

/** `INSERT INTO <table> (…) VALUES (?, …), …` for `count` rows, kept per table and count (SQLite reuses the prepared statement). */
export function sqliteInsertText(count: number, table = 'events', columns: readonly string[] = EVENT_COLUMNS): string {
  const key = `${table}:${count}`;
  let text = sqliteInsertTexts.get(key);
  if (text === undefined) {
    const row = `(${columns.map(() => '?').join(', ')})`;
    text = `insert into "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: count }, () => row).join(', ')}`;
    if (sqliteInsertTexts.size > 64) sqliteInsertTexts.clear();
    sqliteInsertTexts.set(key, text);
  }
  return text;
}

/**
 * PostgreSQL: the advisory lock and every event in ONE statement (one round trip while the base's
 * lock is held), all events in one JSON parameter whatever their number: PostgreSQL parses it (and
 * keeps each `json` value's text as written, so `row_data` and `row` are stored as JSON.stringify
 * wrote them), where text[] parameters had every element escaped in JavaScript first. Each inserted
 * row needs the `commit_order` row, so the lock is taken before the first id is drawn.
 */
async function appendPostgres(trx: Executor, events: NewChangeEvent[], encoded: EncodedEvents, now: number, writeId: string): Promise<void> {
  const statement = new WriteStatement();
  addEventParts(statement, events, encoded, now, writeId);
  await statement.execute(trx);
}

/**
 * Appends the events as parts of a write's one statement (PostgreSQL; see BaseWriter): written only when
 * its gate passes, with the same lock and order as `appendEvents`. Nothing is added for no events.
 */
export function appendEventsTo(statement: WriteStatement, events: NewChangeEvent[], now: number, writeId: string): void {
  if (events.length > 0) addEventParts(statement, events, encodeEvents(events), now, writeId);
}

/**
 * The events of the writes a statement carries (WriteStatement), in one part: the commit-order lock,
 * then each write's event columns and events, writes in order and each write's events in order. A
 * write's record holds what its events share (when they share it: one table, operation and author)
 * and its events, an event's own fields only where they are not shared.
 */
const eventWritesFrom = (from: RawBuilder<unknown>, records: RawBuilder<unknown>) => sql`
      SELECT w.* FROM ${from},
             ROWS FROM (json_to_recordset(${records}) AS (write_id text, created_at bigint, columns json, base_id bigint, base_uuid text,
               table_id text, table_name text, op_type text, op_user text, op_app text, op_time bigint, events json))
               WITH ORDINALITY AS w(write_id, created_at, columns, base_id, base_uuid, table_id, table_name, op_type, op_user, op_app, op_time, events, n)`;
const EVENT_VALUES = sql`COALESCE(e.base_id, w.base_id), COALESCE(e.base_uuid, w.base_uuid), COALESCE(e.table_id, w.table_id), COALESCE(e.table_name, w.table_name),
             e.row_id, e.row_name, COALESCE(e.op_type, w.op_type), COALESCE(e.op_user, w.op_user), COALESCE(e.op_app, w.op_app),
             COALESCE(e.op_time, w.op_time), CAST(e.row_data AS text), CAST(e.row AS text), w.created_at, w.write_id`;
const EVENTS_OF_WRITES = sql`LATERAL ROWS FROM (json_to_recordset(w.events) AS (base_id bigint, base_uuid text, table_id text, table_name text, row_id text,
               row_name text, op_type text, op_user text, op_app text, op_time bigint, row_data json, row json))
               WITH ORDINALITY AS e(base_id, base_uuid, table_id, table_name, row_id, row_name, op_type, op_user, op_app, op_time, row_data, row, n)`;

const NEW_EVENTS = new RecordSet(
  (gate, records) => sql`event_order AS (SELECT pg_advisory_xact_lock(${sql.lit(EVENTS_COMMIT_LOCK)}) AS locked FROM ${gate}),
    event_writes AS (${eventWritesFrom(sql`event_order`, records)}),
    new_event_columns AS (
      INSERT INTO event_columns (write_id, table_id, columns, created_at)
      SELECT w.write_id, c.table_id, c.columns, w.created_at FROM event_writes AS w, json_to_recordset(w.columns) AS c(table_id text, columns text)),
    new_events AS (
      INSERT INTO events (base_id, base_uuid, table_id, table_name, row_id, row_name, op_type, op_user, op_app, op_time, row_data, row, created_at, write_id)
      SELECT ${EVENT_VALUES}
        FROM event_writes AS w, ${EVENTS_OF_WRITES}
       ORDER BY w.n, e.n)`,
);

/**
 * The events of concurrent appends (PostgreSQL, PG_CONCURRENT_APPENDS): the commit-order lock taken
 * SHARED (appends of any base commit side by side; serialized writers still take it exclusively), and
 * the statement's events numbered from ONE block of ids drawn by `basegate_event_draw` (migration
 * 0048), which holds the block's id lock to the commit, so readers stop below it (`eventHorizon`)
 * until it commits or rolls back. A write's events stay consecutive, in the order added.
 */
const NEW_CONCURRENT_EVENTS = new RecordSet(
  (gate, records) => sql`cevent_order AS (SELECT pg_advisory_xact_lock_shared(${sql.lit(EVENTS_COMMIT_LOCK)}) AS locked FROM ${gate}),
    cevent_writes AS (${eventWritesFrom(sql`cevent_order`, records)}),
    cevent_block AS (SELECT basegate_event_draw((SELECT sum(json_array_length(w.events)) FROM cevent_writes AS w)::bigint) AS first FROM cevent_order),
    cnew_event_columns AS (
      INSERT INTO event_columns (write_id, table_id, columns, created_at)
      SELECT w.write_id, c.table_id, c.columns, w.created_at FROM cevent_writes AS w, json_to_recordset(w.columns) AS c(table_id text, columns text)),
    cnew_events AS (
      INSERT INTO events (id, base_id, base_uuid, table_id, table_name, row_id, row_name, op_type, op_user, op_app, op_time, row_data, row, created_at, write_id)
      SELECT b.first + row_number() OVER (ORDER BY w.n, e.n) - 1, ${EVENT_VALUES}
        FROM cevent_block AS b, cevent_writes AS w, ${EVENTS_OF_WRITES})`,
);

function addEventParts(statement: WriteStatement, events: NewChangeEvent[], encoded: EncodedEvents, now: number, writeId: string): void {
  const rowData = (e: NewChangeEvent, i: number) => (encoded.form[i] === Form.Full ? e.rowData : encoded.form[i] === Form.RowCells ? ROW_CELLS_VALUE : DATA_CELLS_VALUE);
  const row = (e: NewChangeEvent, i: number) => (encoded.form[i] === Form.DataCells ? encoded.data[i] : e.row);
  const columns = encoded.columns.length > 0 ? encoded.columns.map((c) => ({ table_id: c.tableId, columns: c.columns })) : null;
  const first = events[0]!;
  // One table, one operation, one author (a batch append, update or delete): the shared fields are
  // sent once, each event holds only what differs.
  const shared = events.every((e) => sameWrite(e, first));
  const write = { write_id: writeId, created_at: now, columns, ...(shared ? sharedColumns(first) : {}) };
  const records = shared
    ? events.map((e, i) => ({ row_id: e.rowId, row_name: e.rowName, row_data: rowData(e, i), row: row(e, i) }))
    : events.map((e, i) => ({ ...eventColumns(e), row_data: rowData(e, i), row: row(e, i) }));
  statement.addRecord(statement.concurrent ? NEW_CONCURRENT_EVENTS : NEW_EVENTS, JSON.stringify({ ...write, events: records }));
}

/** What the events of one write share, as a write's record of NEW_EVENTS holds it. */
function sharedColumns(e: NewChangeEvent) {
  return { base_id: e.baseId, base_uuid: e.baseUuid, table_id: e.tableId, table_name: e.tableName, op_type: e.opType, op_user: e.opUser, op_app: e.opApp, op_time: e.opTime };
}

function sameWrite(e: NewChangeEvent, first: NewChangeEvent): boolean {
  return (
    e.baseId === first.baseId &&
    e.baseUuid === first.baseUuid &&
    e.tableId === first.tableId &&
    e.tableName === first.tableName &&
    e.opType === first.opType &&
    e.opUser === first.opUser &&
    e.opApp === first.opApp &&
    e.opTime === first.opTime
  );
}

/**
 * How readers bound their reads on PostgreSQL: `horizon` (always, outside tests) or `max`, the highest
 * committed id, which is safe only while event ids are handed out in commit order (a test shows that it
 * loses events of concurrent appends).
 */
export const eventReadBound: { mode: 'horizon' | 'max' } = { mode: 'horizon' };

const isPostgres = (db: Executor) => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * The event horizon as a SQL expression: the highest id H such that every event with id <= H has
 * committed or never will (0 when none). Consumers read `id > position AND id <= H` in a LATER
 * statement (a new snapshot, which sees every commit up to H), so none is ever skipped.
 *
 * On PostgreSQL, appends that commit concurrently (PG_CONCURRENT_APPENDS) hand out ids out of commit
 * order, and `max(id)` could pass an id still in flight: migration 0048's `basegate_event_horizon()`
 * stops below the lowest block of ids still in flight (and is `max(id)` while a serialized writer holds
 * the commit-order lock exclusively). It is used whatever the setting, so instances that differ in it
 * still lose nothing. SQLite has one writer: the highest id.
 */
export function eventHorizonSql(db: Executor): RawBuilder<number> {
  return isPostgres(db) && eventReadBound.mode === 'horizon'
    ? sql<number>`(SELECT basegate_event_horizon())`
    : sql<number>`(SELECT coalesce(max(id), 0) FROM events)`;
}

/** The event horizon (see eventHorizonSql): the highest id a reader may read up to now. */
export async function eventHorizon(db: Executor): Promise<number> {
  const { rows } = await sql<{ h: string | number }>`SELECT ${eventHorizonSql(db)} AS h`.execute(db);
  return Number(rows[0]?.h ?? 0);
}

/**
 * The outbox position: the event horizon (see eventHorizonSql), as an expression to use inside an
 * INSERT of a new subscription, so it is read in the same statement: every event committed later has
 * a higher id.
 */
export function outboxPosition(db: Executor): RawBuilder<number> {
  return eventHorizonSql(db);
}

/**
 * The ids of one base's events committed from `from` through `to` (ms, both included), after
 * `afterId`, in id order, the first `limit` (by commit time itself: a clock set back may break
 * the agreement of time and id order).
 */
export async function eventIdsBetween(db: Executor, baseId: number, from: number, to: number, afterId: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('events')
    .select('id')
    .where('base_id', '=', baseId)
    .where('id', '>', afterId)
    .where('created_at', '>=', from)
    .where('created_at', '<=', to)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.id));
}

/** How many events were parsed (read back with their cells) by this process: a test and metrics probe. */
export const outboxStats = { parsed: 0 };

/** Ids and bases of the next events after `afterId` (no cells: nothing to parse). */
export async function eventHeadsAfter(db: Executor, afterId: number, limit: number): Promise<Array<{ id: number; baseId: number }>> {
  const horizon = await eventHorizon(db);
  if (horizon <= afterId) return [];
  const rows = await db.selectFrom('events').select(['id', 'base_id']).where('id', '>', afterId).where('id', '<=', horizon).orderBy('id').limit(limit).execute();
  return rows.map((r) => ({ id: Number(r.id), baseId: Number(r.base_id) }));
}

/** Events with `afterId < id <= throughId` of these bases only, in id order, parsed (the first `limit`, when given). */
export async function eventsOfBases(db: Executor, afterId: number, throughId: number, baseIds: number[], limit?: number): Promise<ChangeEvent[]> {
  if (baseIds.length === 0) return [];
  let query = db
    .selectFrom('events')
    .selectAll()
    .where('id', '>', afterId)
    .where('id', '<=', throughId)
    .where('base_id', 'in', baseIds)
    .orderBy('id');
  if (limit !== undefined) query = query.limit(limit);
  const rows = await query.execute();
  return parseEvents(db, rows);
}

/** Events after `afterId` written by the same write as it (a write's events are consecutive), parsed. */
export async function eventsOfWrite(db: Executor, afterId: number, writeId: string, limit: number): Promise<ChangeEvent[]> {
  const rows = await db
    .selectFrom('events')
    .selectAll()
    .where('id', '>', afterId)
    .where('id', '<=', afterId + limit)
    .where('write_id', '=', writeId)
    .orderBy('id')
    .execute();
  return parseEvents(db, rows);
}

/** The next `limit` events of one base after `afterId`, in id (commit) order, parsed: the change feed's page. */
export async function eventsOfBaseAfter(db: Executor, baseId: number, afterId: number, limit: number): Promise<ChangeEvent[]> {
  const horizon = await eventHorizon(db);
  if (horizon <= afterId) return [];
  const rows = await db.selectFrom('events').selectAll().where('base_id', '=', baseId).where('id', '>', afterId).where('id', '<=', horizon).orderBy('id').limit(limit).execute();
  return parseEvents(db, rows);
}

/** The next `limit` events after `afterId` up to the event horizon, in id order, parsed. */
export async function eventsAfter(db: Executor, afterId: number, limit: number): Promise<ChangeEvent[]> {
  const horizon = await eventHorizon(db);
  if (horizon <= afterId) return [];
  const rows = await db.selectFrom('events').selectAll().where('id', '>', afterId).where('id', '<=', horizon).orderBy('id').limit(limit).execute();
  return parseEvents(db, rows);
}

/** Stored events as consumers receive them; compact insert events get their cells back from their row. */
async function parseEvents(db: Executor, rows: Selectable<EventsTable>[]): Promise<ChangeEvent[]> {
  const writes = new Set<string>();
  for (const r of rows) if ((r.row_data === ROW_CELLS || r.row_data === DATA_CELLS) && r.write_id) writes.add(r.write_id);
  const columns = new Map<string, StoredColumns>();
  if (writes.size > 0) {
    const stored = await db.selectFrom('event_columns').select(['write_id', 'table_id', 'columns']).where('write_id', 'in', [...writes]).execute();
    for (const c of stored) columns.set(`${c.write_id}\u0000${c.table_id}`, parseColumns(c.columns));
  }
  return rows.map((r) => parseEvent(r, columns));
}

function parseEvent(r: Selectable<EventsTable>, columns: Map<string, StoredColumns>): ChangeEvent {
  outboxStats.parsed++;
  const parsed = r.row === null ? null : (JSON.parse(r.row) as Record<string, unknown>);
  const row = r.row_data === DATA_CELLS && parsed !== null ? rowFromData(parsed, r.row_id, Number(r.op_time), r.op_user) : parsed;
  let rowData: ChangeEvent['rowData'];
  if (r.row_data === ROW_CELLS || r.row_data === DATA_CELLS) {
    const stored = columns.get(`${r.write_id}\u0000${r.table_id}`);
    if (!stored || row === null) throw new Error(`event ${r.id}: the columns of its cells are missing`);
    rowData = rowFromColumns(stored, row);
  } else {
    rowData = JSON.parse(r.row_data) as ChangeEvent['rowData'];
  }
  return {
    id: Number(r.id),
    baseId: Number(r.base_id),
    baseUuid: r.base_uuid,
    tableId: r.table_id,
    tableName: r.table_name,
    rowId: r.row_id,
    rowName: r.row_name,
    opType: r.op_type as OpType,
    opUser: r.op_user,
    opApp: r.op_app,
    opTime: Number(r.op_time),
    rowData,
    row,
    writeId: r.write_id ?? null,
  };
}

export async function ensureConsumer(db: Executor, name: string, now: number): Promise<void> {
  await db
    .insertInto('event_consumers')
    .values({ name, last_event_id: 0, updated_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
}

/**
 * The consumer's acknowledged position, locked for this transaction. On PostgreSQL a consumer already
 * being run by another instance is skipped (null) rather than waited for.
 */
export async function lockConsumer(trx: Executor, dialect: DialectName, name: string): Promise<number | null> {
  let query = trx.selectFrom('event_consumers').select('last_event_id').where('name', '=', name);
  if (dialect === 'postgres') query = query.forUpdate().skipLocked();
  const row = await query.executeTakeFirst();
  return row ? Number(row.last_event_id) : null;
}

export async function advanceConsumer(trx: Executor, name: string, lastEventId: number, now: number): Promise<void> {
  await trx.updateTable('event_consumers').set({ last_event_id: lastEventId, updated_at: now }).where('name', '=', name).execute();
}

export async function consumerPosition(db: Executor, name: string): Promise<number | null> {
  const row = await db.selectFrom('event_consumers').select('last_event_id').where('name', '=', name).executeTakeFirst();
  return row ? Number(row.last_event_id) : null;
}

/**
 * How far a consumer is behind: committed events after its position (the highest id minus the
 * position, up to the event horizon: only a rolled-back write leaves a gap and overcounts)
 * and when the oldest of them was committed (null when none is pending).
 */
export async function consumerLag(db: Executor, name: string): Promise<{ events: number; oldestCreatedAt: number | null }> {
  const position = (await consumerPosition(db, name)) ?? 0;
  const last = await eventHorizon(db);
  if (last <= position) return { events: 0, oldestCreatedAt: null };
  const oldest = await db.selectFrom('events').select('created_at').where('id', '>', position).orderBy('id').limit(1).executeTakeFirst();
  return { events: last - position, oldestCreatedAt: oldest ? Number(oldest.created_at) : null };
}

/**
 * Delete events older than `before` (ms) that every registered consumer has acknowledged.
 * Returns how many were deleted.
 */
export async function pruneEvents(db: Executor, consumerNames: string[], before: number): Promise<number> {
  if (consumerNames.length === 0) return 0;
  const positions = await db
    .selectFrom('event_consumers')
    .select('last_event_id')
    .where('name', 'in', consumerNames)
    .execute();
  if (positions.length < consumerNames.length) return 0; // a consumer has not started yet: keep everything
  const safe = Math.min(...positions.map((p) => Number(p.last_event_id)));
  const result = await db.deleteFrom('events').where('id', '<=', safe).where('created_at', '<', before).executeTakeFirst();
  // The columns of compact insert events: a write's events share its created_at, so while any of them
  // is kept the oldest kept event is no younger than its columns.
  await db
    .deleteFrom('event_columns')
    .where('created_at', '<', before)
    .where('created_at', '<', sql<number>`coalesce((select min(created_at) from events), ${before})`)
    .execute();
  return Number(result.numDeletedRows);
}

/** An event's stored columns other than its row data (the outbox and held batches store them alike). */
export function eventColumns(e: NewChangeEvent) {
  return {
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
  };
}
