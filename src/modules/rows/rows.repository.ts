import { CompiledQuery, PostgresAdapter, sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { RecordSet, type DialectName, type Executor, type WriteStatement } from '../../db/index.js';
import type { StoredRow } from './present.js';
import { postgresSearchCondition, sqliteSearchIds } from './search-index.js';

const CHUNK = 500;
/** Rows per INSERT (8 parameters each, under both engines' limits): a 1,000-row append is one statement. */
const INSERT_CHUNK = 2000;

/** A `base_rows` record as either engine returns it (selected columns, raw values). */
export interface RowRecord {
  row_id?: unknown;
  data?: unknown;
  ctime?: unknown;
  mtime?: unknown;
  creator?: unknown;
  last_modifier?: unknown;
}

/** A `base_rows` record as the in-memory StoredRow (the one place that knows both engines' shapes). */
export function toStored(r: RowRecord): StoredRow {
  return {
    _id: String(r.row_id),
    _ctime: Number(r.ctime),
    _mtime: Number(r.mtime),
    _creator: String(r.creator ?? ''),
    _last_modifier: String(r.last_modifier ?? ''),
    // SQLite hands back the JSON text; PostgreSQL parses JSONB itself.
    data: (typeof r.data === 'string' ? JSON.parse(r.data) : (r.data ?? {})) as Record<string, unknown>,
  };
}

const ROW_COLUMNS = ['row_id', 'data', 'ctime', 'mtime', 'creator', 'last_modifier'] as const;

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** A StoredRow as the `base_rows` record to insert (the inverse of `toStored`). */
export function toRecord(baseId: number, tableId: string, r: StoredRow) {
  return {
    base_id: baseId,
    table_id: tableId,
    row_id: r._id,
    data: JSON.stringify(r.data),
    ctime: r._ctime,
    mtime: r._mtime,
    creator: r._creator,
    last_modifier: r._last_modifier,
  };
}

/**
 * Insert rows in order (their ids follow it: listings keep the insertion order). Written as SQL text
 * directly, without building and compiling a query tree of 8 values per row each time (that cost
 * more than the insert itself): on PostgreSQL one statement with all rows in one JSON parameter,
 * on SQLite one multi-row INSERT per chunk whose text is reused (and its prepared statement with it).
 * `dataTexts` (SQLite): each row's `data` already as JSON text.
 */
export async function insertRows(trx: Executor, baseId: number, tableId: string, rows: StoredRow[], dataTexts?: string[]): Promise<void> {
  if (rows.length === 0) return;
  if (trx.getExecutor().adapter instanceof PostgresAdapter) return insertRowsPostgres(trx, baseId, tableId, rows);
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const count = Math.min(INSERT_CHUNK, rows.length - i);
    const parameters: unknown[] = [];
    for (let j = i; j < i + count; j++) {
      const r = rows[j]!;
      parameters.push(baseId, tableId, r._id, dataTexts?.[j] ?? JSON.stringify(r.data), r._ctime, r._mtime, r._creator, r._last_modifier);
    }
    await trx.executeQuery(CompiledQuery.raw(sqliteInsertText(count), parameters));
  }
}

/** PostgreSQL: all rows in one JSON parameter, parsed by PostgreSQL (text[] parameters had each element escaped in JavaScript). */
async function insertRowsPostgres(trx: Executor, baseId: number, tableId: string, rows: StoredRow[]): Promise<void> {
  await insertRowsStatement(baseId, tableId, rows).execute(trx);
}

/** The PostgreSQL INSERT of new rows in order. */
function insertRowsStatement(baseId: number, tableId: string, rows: StoredRow[]): RawBuilder<unknown> {
  const first = rows[0]!;
  if (rows.every((r) => r._ctime === first._ctime && r._mtime === first._mtime && r._creator === first._creator && r._last_modifier === first._last_modifier)) {
    // New rows of one write share their times and author: sent once, not per row.
    const records = rows.map((r) => ({ row_id: r._id, data: r.data }));
    return sql`
      INSERT INTO base_rows (base_id, table_id, row_id, data, ctime, mtime, creator, last_modifier)
      SELECT CAST(${baseId} AS bigint), CAST(${tableId} AS text), r.row_id, r.data, CAST(${first._ctime} AS bigint), CAST(${first._mtime} AS bigint),
             CAST(${first._creator} AS text), CAST(${first._last_modifier} AS text)
        FROM ROWS FROM (json_to_recordset(CAST(${JSON.stringify(records)} AS json)) AS (row_id text, data jsonb))
             WITH ORDINALITY AS r(row_id, data, n)
       ORDER BY r.n`;
  }
  const records = rows.map((r) => ({ row_id: r._id, data: r.data, ctime: r._ctime, mtime: r._mtime, creator: r._creator, last_modifier: r._last_modifier }));
  return sql`
    INSERT INTO base_rows (base_id, table_id, row_id, data, ctime, mtime, creator, last_modifier)
    SELECT CAST(${baseId} AS bigint), CAST(${tableId} AS text), r.row_id, r.data, r.ctime, r.mtime, r.creator, r.last_modifier
      FROM ROWS FROM (json_to_recordset(CAST(${JSON.stringify(records)} AS json))
             AS (row_id text, data jsonb, ctime bigint, mtime bigint, creator text, last_modifier text))
           WITH ORDINALITY AS r(row_id, data, ctime, mtime, creator, last_modifier, n)
     ORDER BY r.n`;
}

/**
 * New rows of the writes a statement carries (WriteStatement), one INSERT for all of them: each
 * write's record holds what its rows share (base, table, times, author) and its rows in order, a
 * row's own times and author only where they differ.
 */
const NEW_ROWS = new RecordSet(
  (gate, records) => sql`new_rows AS (
    INSERT INTO base_rows (base_id, table_id, row_id, data, ctime, mtime, creator, last_modifier)
    SELECT w.base_id, w.table_id, r.row_id, r.data, COALESCE(r.ctime, w.ctime), COALESCE(r.mtime, w.mtime),
           COALESCE(r.creator, w.creator), COALESCE(r.last_modifier, w.last_modifier)
      FROM ${gate},
           ROWS FROM (json_to_recordset(${records}) AS (base_id bigint, table_id text, ctime bigint, mtime bigint, creator text, last_modifier text, rows json))
             WITH ORDINALITY AS w(base_id, table_id, ctime, mtime, creator, last_modifier, rows, n),
           LATERAL ROWS FROM (json_to_recordset(w.rows) AS (row_id text, data jsonb, ctime bigint, mtime bigint, creator text, last_modifier text))
             WITH ORDINALITY AS r(row_id, data, ctime, mtime, creator, last_modifier, n)
     ORDER BY w.n, r.n)`,
);

/** Adds new rows, in order, to a write's one statement (PostgreSQL): written when its gate passes. */
export function addNewRows(statement: WriteStatement, baseId: number, tableId: string, rows: StoredRow[]): void {
  if (rows.length === 0) return;
  const first = rows[0]!;
  const records = rows.map((r) => {
    const record: Record<string, unknown> = { row_id: r._id, data: r.data };
    if (r._ctime !== first._ctime) record.ctime = r._ctime;
    if (r._mtime !== first._mtime) record.mtime = r._mtime;
    if (r._creator !== first._creator) record.creator = r._creator;
    if (r._last_modifier !== first._last_modifier) record.last_modifier = r._last_modifier;
    return record;
  });
  statement.addRecord(
    NEW_ROWS,
    JSON.stringify({ base_id: baseId, table_id: tableId, ctime: first._ctime, mtime: first._mtime, creator: first._creator, last_modifier: first._last_modifier, rows: records }),
  );
}

const sqliteInsertTexts = new Map<number, string>();

/** `INSERT INTO base_rows (…) VALUES (?, …), …` for `count` rows, kept per count. */
function sqliteInsertText(count: number): string {
  let text = sqliteInsertTexts.get(count);
  if (text === undefined) {
    const columns = ['base_id', 'table_id', 'row_id', 'data', 'ctime', 'mtime', 'creator', 'last_modifier'];
    const row = `(${columns.map(() => '?').join(', ')})`;
    text = `insert into "base_rows" (${columns.map((c) => `"${c}"`).join(', ')}) values ${Array.from({ length: count }, () => row).join(', ')}`;
    if (sqliteInsertTexts.size > 64) sqliteInsertTexts.clear();
    sqliteInsertTexts.set(count, text);
  }
  return text;
}

/** The rows of `tableId` among `rowIds` (unknown ids are left out). */
export async function findRows(db: Executor, baseId: number, tableId: string, rowIds: string[]): Promise<Map<string, StoredRow>> {
  const found = new Map<string, StoredRow>();
  for (const part of chunks([...new Set(rowIds)])) {
    const rows = await db
      .selectFrom('base_rows')
      .select(ROW_COLUMNS)
      .where('base_id', '=', baseId)
      .where('table_id', '=', tableId)
      .where('row_id', 'in', part)
      .execute();
    for (const r of rows) found.set(r.row_id, toStored(r));
  }
  return found;
}

/** Rows of any table of the base among `rowIds`, with their table id. */
export async function findRowsInBase(db: Executor, baseId: number, rowIds: string[]): Promise<Map<string, StoredRow & { tableId: string }>> {
  const found = new Map<string, StoredRow & { tableId: string }>();
  for (const part of chunks([...new Set(rowIds)])) {
    const rows = await db
      .selectFrom('base_rows')
      .select([...ROW_COLUMNS, 'table_id'])
      .where('base_id', '=', baseId)
      .where('row_id', 'in', part)
      .execute();
    for (const r of rows) found.set(r.row_id, { ...toStored(r), tableId: r.table_id });
  }
  return found;
}

const TABLE_ID = /^[A-Za-z0-9_-]{1,8}$/;

/**
 * `base_id = 12 and table_id = 'abcd'` with the base and table as literals, the form in which both
 * planners match the condition of a table's partial row indexes (row-indexes.ts); bound parameters
 * for a table id of another shape (never indexed).
 */
export function tableScope(baseId: number, tableId: string): Expression<SqlBool> {
  return Number.isSafeInteger(baseId) && TABLE_ID.test(tableId)
    ? sql<SqlBool>`(base_rows.base_id = ${sql.lit(baseId)} and base_rows.table_id = ${sql.lit(tableId)})`
    : sql<SqlBool>`(base_rows.base_id = ${baseId} and base_rows.table_id = ${tableId})`;
}

/** True when a table id can be written into SQL as a literal (tableScope) and so be indexed. */
export function scopableTableId(tableId: string): boolean {
  return TABLE_ID.test(tableId);
}

export interface ListQuery {
  baseId: number;
  tableId: string;
  where?: Expression<SqlBool>;
  /** ORDER BY terms (raw fragments); the insertion order breaks ties. */
  orderBy: Expression<unknown>[];
  offset: number;
  limit: number;
}

/** One page of a table's rows, filtered and sorted by the database. */
export async function listRows(db: Executor, q: ListQuery): Promise<StoredRow[]> {
  let query = db
    .selectFrom('base_rows')
    .select(ROW_COLUMNS)
    .where(tableScope(q.baseId, q.tableId));
  if (q.where) query = query.where(q.where);
  for (const term of q.orderBy) query = query.orderBy(term);
  const rows = await query.orderBy('base_rows.id').limit(q.limit).offset(q.offset).execute();
  return rows.map(toStored);
}

/**
 * A row as one text (row-fragments.ts): `[row_id, ctime, mtime, creator, last_modifier]` as JSON, U+0001,
 * the cells' JSON. One string per row is far cheaper for the driver than six values (SQLite), and the
 * text is what presented rows are kept under.
 */
export function rowTextSql(dialect: DialectName) {
  return dialect === 'postgres'
    ? sql<string>`json_build_array(base_rows.row_id, base_rows.ctime, base_rows.mtime, base_rows.creator, base_rows.last_modifier)::text || chr(1) || base_rows.data::text`
    : sql<string>`json_array(base_rows.row_id, base_rows.ctime, base_rows.mtime, base_rows.creator, base_rows.last_modifier) || char(1) || base_rows.data`;
}

/** `listRows` answering each row as its row text (see `rowTextSql`). */
export async function listRowTexts(db: Executor, dialect: DialectName, q: ListQuery & { indexedBy?: string }): Promise<string[]> {
  const rows = await executeIndexed(db, listRowTextsQuery(db, dialect, q).compile(), q.indexedBy);
  return rows.map((r) => r.r);
}

/**
 * The hint that says "the filter matches many rows: read the table in the listing's own order and stop at
 * the page" (PostgreSQL; RowIndexes.hint). Its planner does not use a partial index's statistics, takes
 * such a filter for a handful of rows and would read all of them through the row index and sort them.
 */
export const ORDERED_SCAN = '*ordered';

/**
 * Runs a compiled `base_rows` query with a row-index hint (RowIndexes.hint), or none.
 * SQLite: `INDEXED BY` the given row index — its planner, without statistics worth the name, takes the
 * table's (base, table) index for a handful of rows and never a partial expression index; the rows module
 * picks the index instead. A table's partial index is always usable by its listings (they carry its
 * condition). PostgreSQL: `ORDERED_SCAN` runs the query with sorts disabled for it (`enable_sort = off`,
 * transaction-local), so the planner reads an index in the query's order and stops at the LIMIT.
 */
export async function executeIndexed<R>(db: Executor, compiled: CompiledQuery<R>, indexedBy: string | undefined): Promise<R[]> {
  if (!indexedBy) return (await db.executeQuery(compiled)).rows;
  if (indexedBy === ORDERED_SCAN) {
    if (!isPostgres(db)) return (await db.executeQuery(compiled)).rows;
    return withPlannerSettings(db, { enable_sort: 'off' }, async (e) => (await e.executeQuery(compiled)).rows);
  }
  const text = compiled.sql.replace('from "base_rows"', `from "base_rows" indexed by "${indexedBy.replace(/"/g, '')}"`);
  try {
    return (await db.executeQuery(CompiledQuery.raw(text, [...compiled.parameters]))).rows as R[];
  } catch (error) {
    // The index went after it was picked (another process's or instance's reconcile dropped it, or this
    // one's meanwhile): SQLite refuses the statement at prepare time, nothing was read. Read without it.
    if (!isMissingRowIndex(error)) throw error;
    for (const listener of [...indexGoneListeners]) {
      const indexes = listener.deref();
      if (indexes) indexes.forget(indexedBy);
      else indexGoneListeners.delete(listener);
    }
    return (await db.executeQuery(compiled)).rows;
  }
}

/** SQLite's refusal of an `INDEXED BY` naming an index that does not exist (SQLITE_ERROR, so not a database fault). */
export function isMissingRowIndex(error: unknown): boolean {
  return /no such index/i.test(String((error as { message?: unknown } | null)?.message ?? ''));
}

/** The row-index registries of this process, told when an index they handed out is gone (RowIndexes.forget). */
const indexGoneListeners = new Set<WeakRef<{ forget(name: string): void }>>();
export function onRowIndexGone(indexes: { forget(name: string): void }): void {
  indexGoneListeners.add(new WeakRef(indexes));
}

function isPostgres(db: Executor): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * PostgreSQL: runs `run` with planner settings changed for it only — in a transaction of its own
 * (`set_config(…, true)` ends with it), or inside the caller's transaction with the old values restored.
 */
async function withPlannerSettings<T>(db: Executor, settings: Record<string, 'on' | 'off'>, run: (e: Executor) => Promise<T>): Promise<T> {
  const names = Object.keys(settings);
  const apply = async (e: Executor) => {
    const previous: string[] = [];
    for (const name of names) {
      const { rows } = await sql<{ was: string }>`select current_setting(${name}) as was, set_config(${name}, ${settings[name]}, true)`.execute(e);
      previous.push(rows[0]!.was);
    }
    return previous;
  };
  if (!db.isTransaction) return db.transaction().execute(async (trx) => (await apply(trx), run(trx)));
  const previous = await apply(db);
  try {
    return await run(db);
  } finally {
    for (const [i, name] of names.entries()) await sql`select set_config(${name}, ${previous[i]!}, true)`.execute(db);
  }
}

/**
 * How many rows of a table satisfy `where` through the row index `indexName`, counting no further than
 * `cap` (reads at most about that many index entries): whether the index narrows a listing enough to use.
 * On PostgreSQL through a plain index scan (a bitmap scan would read every matching index entry first).
 */
export async function countThroughIndex(db: Executor, baseId: number, tableId: string, indexName: string, where: Expression<SqlBool>, cap: number): Promise<number> {
  const inner = db.selectFrom('base_rows').select(sql<number>`1`.as('one')).where(tableScope(baseId, tableId)).where(where).limit(cap).compile();
  if (isPostgres(db)) return withPlannerSettings(db, { enable_bitmapscan: 'off' }, async (e) => (await e.executeQuery(inner)).rows.length);
  const rows = await executeIndexed(db, inner, indexName);
  return rows.length;
}

function listRowTextsQuery(db: Executor, dialect: DialectName, q: ListQuery) {
  let query = db
    .selectFrom('base_rows')
    .select(rowTextSql(dialect).as('r'))
    .where(tableScope(q.baseId, q.tableId));
  if (q.where) query = query.where(q.where);
  for (const term of q.orderBy) query = query.orderBy(term);
  return query.orderBy('base_rows.id').limit(q.limit).offset(q.offset);
}

/**
 * A page of a sorted listing in keyset order: the rows after the row `after` (its sort values and id, as
 * this function selected them for an earlier page) in the listing's order, then `offset` more skipped;
 * each as its row text with its id and sort values. `keys` are the listing's sort values (sort-sql.ts
 * `sortKeys`), `keyset` their condition for "after that row" (`keysetAfter`).
 */
export async function listSortedRowTexts(
  db: Executor,
  dialect: DialectName,
  q: ListQuery & { keys: Array<Expression<unknown>>; keyset?: Expression<SqlBool>; indexedBy?: string },
): Promise<Array<{ id: number; r: string; values: unknown[] }>> {
  let query = listRowTextsQuery(db, dialect, q).select('base_rows.id');
  for (const [i, key] of q.keys.entries()) query = query.select(sql`${key}`.as(`k${i}`));
  if (q.keyset) query = query.where(q.keyset);
  const rows = (await executeIndexed(db, query.compile(), q.indexedBy)) as Array<Record<string, unknown>>;
  return rows.map((row) => ({ id: Number(row.id), r: String(row.r), values: q.keys.map((_, i) => row[`k${i}`]) }));
}

/**
 * `listSortedRowTexts` after a row, read as the index ranges of `ranges` (sort-sql.ts `keysetRanges`), one
 * after the other in the listing's order (each without the order terms constant in it): `offset` rows
 * skipped across them, `limit` rows answered.
 */
export async function listSortedRowTextsInRanges(
  db: Executor,
  dialect: DialectName,
  q: ListQuery & { keys: Array<Expression<unknown>>; ranges: Array<{ where: Expression<SqlBool>; constantTerms: number }>; indexedBy?: string },
): Promise<Array<{ id: number; r: string; values: unknown[] }>> {
  const out: Array<{ id: number; r: string; values: unknown[] }> = [];
  let skip = q.offset;
  for (const range of q.ranges) {
    const rows = await listSortedRowTexts(db, dialect, { ...q, orderBy: q.orderBy.slice(range.constantTerms), keyset: range.where, offset: skip, limit: q.limit - out.length });
    out.push(...rows);
    if (out.length >= q.limit) break;
    // The range ended within the page: the skip is used up, or (nothing answered) how many it held is counted.
    if (rows.length > 0) skip = 0;
    else if (skip > 0) skip -= await countInRange(db, q, range.where, skip);
  }
  return out;
}

/** Rows of a listing in a range, counting no further than `cap`. */
async function countInRange(db: Executor, q: ListQuery & { indexedBy?: string }, range: Expression<SqlBool>, cap: number): Promise<number> {
  let query = db.selectFrom('base_rows').select(sql<number>`1`.as('one')).where(tableScope(q.baseId, q.tableId)).where(range);
  if (q.where) query = query.where(q.where);
  return (await executeIndexed(db, query.limit(cap).compile(), q.indexedBy)).length;
}

/** The sort values (`keys`, as `listSortedRowTexts` selects them) of the row with internal id `id` in a table, or undefined when it is gone. */
export async function sortValuesOf(db: Executor, baseId: number, tableId: string, keys: Array<Expression<unknown>>, id: number): Promise<unknown[] | undefined> {
  let query = db.selectFrom('base_rows').select('base_rows.id').where(tableScope(baseId, tableId)).where('base_rows.id', '=', id);
  for (const [i, key] of keys.entries()) query = query.select(sql`${key}`.as(`k${i}`));
  const row = (await query.executeTakeFirst()) as Record<string, unknown> | undefined;
  return row && keys.map((_, i) => row[`k${i}`]);
}

/** The planner's plan of a `listRowTexts` query, as text (SQLite: EXPLAIN QUERY PLAN; PostgreSQL: EXPLAIN). */
export async function explainListRowTexts(db: Executor, dialect: DialectName, q: ListQuery & { indexedBy?: string; positions?: PositionJump; narrowing?: Expression<SqlBool> }): Promise<string> {
  // An unsorted listing is read as listRowTextsAfter reads it (from the start of the table).
  const compiled = (q.orderBy.length === 0 ? listRowTextsAfterQuery(db, dialect, { ...q, afterId: 0 }) : listRowTextsQuery(db, dialect, q)).compile();
  const prefix = dialect === 'postgres' ? 'explain ' : 'explain query plan ';
  const rows = await executeIndexed(db, CompiledQuery.raw(prefix + compiled.sql, [...compiled.parameters]), q.indexedBy);
  return (rows as Array<Record<string, unknown>>).map((r) => String(r.detail ?? r['QUERY PLAN'] ?? '')).join('\n');
}

/**
 * A page of an unsorted listing in keyset order: the rows after the row with id `afterId`, by id (the
 * order `listRowTexts` has without sort terms), each as its row text with its id. Costs the same at
 * any depth, where an offset reads and skips every row before the page.
 *
 * `narrowing` (SQLite, with `indexedBy` the index of that filter term, which matches fewer than `probeCap`
 * rows: RowIndexes.hintTerm): the ids the term matches are taken from its index alone (a covering read of
 * value and id), and the rows are opened in id order from them only until the page is full, the whole
 * filter checked on each. Read `INDEXED BY` with the filter in the outer query, SQLite opened every
 * matching row to check the rest of the filter (the "not archived" term needs the row) and sorted them
 * all by id: 1,000 matches of 10,000,000 rows, 14–38 ms against 3–10 ms.
 */
export async function listRowTextsAfter(
  db: Executor,
  dialect: DialectName,
  q: Omit<ListQuery, 'orderBy' | 'offset'> & { afterId: number; offset?: number; indexedBy?: string; positions?: PositionJump; narrowing?: Expression<SqlBool>; search?: SearchRead },
): Promise<Array<{ id: number; r: string }>> {
  const rows = await executeIndexed(db, listRowTextsAfterQuery(db, dialect, q).compile(), q.indexedBy);
  return rows.map((r) => ({ id: Number(r.id), r: r.r }));
}

function listRowTextsAfterQuery(
  db: Executor,
  dialect: DialectName,
  q: Omit<ListQuery, 'orderBy' | 'offset'> & { afterId: number; offset?: number; positions?: PositionJump; indexedBy?: string; narrowing?: Expression<SqlBool>; search?: SearchRead },
) {
  const offset = q.offset ?? 0;
  if (q.search && !q.narrowing && !(q.positions && offset > 0)) {
    const checked = [tableScope(q.baseId, q.tableId), sql<SqlBool>`base_rows.id > ${q.afterId}`, ...(q.where ? [q.where] : [])];
    // SQLite: the ids the trigram index gives, in order, each row opened by id; the rest of the conditions
    // behind a unary `+`, so no other index is read instead. PostgreSQL: the LIKE its planner weighs.
    const narrowed = dialect === 'sqlite' ? [sqliteSearchIds(q.search.index, q.search.terms, q.afterId), sql<SqlBool>`+(${sql.join(checked, sql` and `)})`] : [...checked, postgresSearchCondition(q.search.terms)];
    let query = db.selectFrom('base_rows').select(['base_rows.id', rowTextSql(dialect).as('r')]);
    for (const condition of narrowed) query = query.where(condition);
    return query.orderBy('base_rows.id').limit(q.limit).offset(offset);
  }
  if (q.narrowing && q.indexedBy && dialect === 'sqlite' && !(q.positions && offset > 0)) {
    // The narrowing term's ids first: its `from "base_rows"` is the statement's first, so `executeIndexed`
    // names its index there; the rows are then looked up by id in the list's (ascending) order. The rest of
    // the conditions sit behind a unary `+`, which keeps SQLite from reading the rows through any other
    // index (a jump index covers the same filter) instead of by id from the list.
    const narrowing = q.narrowing;
    const checked = [tableScope(q.baseId, q.tableId), sql<SqlBool>`base_rows.id > ${q.afterId}`, ...(q.where ? [q.where] : [])];
    return db
      .with('narrowed', (w) => w.selectFrom('base_rows').select('base_rows.id').where(tableScope(q.baseId, q.tableId)).where('base_rows.id', '>', q.afterId).where(narrowing))
      .selectFrom('base_rows')
      .select(['base_rows.id', rowTextSql(dialect).as('r')])
      .where('base_rows.id', 'in', (eb) => eb.selectFrom('narrowed').select('narrowed.id'))
      .where(sql<SqlBool>`+(${sql.join(checked, sql` and `)})`)
      .orderBy('base_rows.id')
      .limit(q.limit)
      .offset(offset);
  }
  let query = db.selectFrom('base_rows').select(['base_rows.id', rowTextSql(dialect).as('r')]).where(tableScope(q.baseId, q.tableId));
  const jump = q.positions && offset > 0;
  if (jump) {
    // The first row of the page found by counting through the position index (ids only, no row read),
    // then the page itself from there: the rows before it are counted, not read and skipped.
    query = query.where('base_rows.id', '>=', firstIdAt(dialect, q.baseId, q.tableId, q.positions!, q.afterId, offset));
  } else {
    query = query.where('base_rows.id', '>', q.afterId);
  }
  if (q.where) query = query.where(q.where);
  return query.orderBy('base_rows.id').limit(q.limit).offset(jump ? 0 : offset);
}

/** A read narrowed by a table's trigram index (search-index.ts): its name and the folded `contains` terms. */
export interface SearchRead {
  index: string;
  terms: readonly string[];
}

/** The condition a read narrowed by a trigram index adds (in any order of the rows; `listRowTextsAfter` writes its own). */
export function searchCondition(dialect: DialectName, search: SearchRead): RawBuilder<SqlBool> {
  return dialect === 'sqlite' ? sqliteSearchIds(search.index, search.terms, 0) : postgresSearchCondition(search.terms);
}

/** The id of a table's first row after `afterId` (listed or not), or undefined when there is none. */
export async function nextRowId(db: Executor, baseId: number, tableId: string, afterId: number): Promise<number | undefined> {
  const row = await db.selectFrom('base_rows').select('base_rows.id').where(tableScope(baseId, tableId)).where('base_rows.id', '>', afterId).orderBy('base_rows.id').limit(1).executeTakeFirst();
  return row ? Number(row.id) : undefined;
}

/**
 * The first `limit` rows matching `where` among the next `window` rows of a table after the row `afterId`
 * in id order, each as its row text with its id: a walk that reads at most `window` rows whatever the
 * filter matches (the inner `LIMIT` bounds it; a filter's index is not read). A listing filtered on a
 * term matching many rows finds its page here with no probe of the term's index (RowIndexes.walkWindow).
 */
export async function listRowTextsInWindow(
  db: Executor,
  dialect: DialectName,
  q: { baseId: number; tableId: string; afterId: number; where: Expression<SqlBool>; limit: number; window: number },
): Promise<Array<{ id: number; r: string }>> {
  // The inner query's rows are named base_rows, so the filter's and the row text's references are to them.
  const walked = sql`(select * from base_rows where ${tableScope(q.baseId, q.tableId)} and base_rows.id > ${q.afterId} order by base_rows.id limit ${q.window})`;
  const { rows } = await sql<{ id: number | string; r: string }>`select base_rows.id, ${rowTextSql(dialect)} as r from ${walked} as base_rows where ${q.where} order by base_rows.id limit ${q.limit}`.execute(db);
  return rows.map((row) => ({ id: Number(row.id), r: row.r }));
}

/**
 * A table's position index (RowIndexes.positionIndex) and the listings' "not archived" term it is partial
 * on: usable for a listing whose only condition is that term (no filter).
 */
export interface PositionJump {
  index: string;
  listed: Expression<SqlBool>;
}

/** `(select id … offset n)`: the id of the listed row `offset` rows after the row `afterId`, read off the position index. */
function firstIdAt(dialect: DialectName, baseId: number, tableId: string, jump: PositionJump, afterId: number, offset: number) {
  const indexedBy = dialect === 'sqlite' ? sql` indexed by ${sql.id(jump.index)}` : sql``;
  // The inner query names base_rows again: its references (`base_rows.…`) are to its own rows.
  return sql<number>`(select base_rows.id from base_rows${indexedBy} where ${tableScope(baseId, tableId)} and ${jump.listed} and base_rows.id > ${afterId} order by base_rows.id limit 1 offset ${offset})`;
}

/** Listed rows with `afterId` < id < `belowId`, counted through the position index (position-blocks.ts: inside one block). */
export async function countListedBetween(db: Executor, dialect: DialectName, baseId: number, tableId: string, jump: PositionJump, afterId: number, belowId: number): Promise<number> {
  const indexedBy = dialect === 'sqlite' ? sql` indexed by ${sql.id(jump.index)}` : sql``;
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from base_rows${indexedBy}
    where ${tableScope(baseId, tableId)} and ${jump.listed} and base_rows.id > ${afterId} and base_rows.id < ${belowId}`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * The ids of a sorted listing's rows, all of them in its order (8 bytes a row as a Float64Array), read
 * `chunk` rows at a time (issue 34: a result of every row of a 10,000,000-row table held as row objects is
 * gigabytes): SQLite streams the statement, PostgreSQL fetches from a cursor in a transaction of its own.
 */
export async function sortedRowIds(db: Executor, dialect: DialectName, q: Omit<ListQuery, 'offset' | 'limit'>, chunk = 10_000): Promise<Float64Array> {
  let query = db.selectFrom('base_rows').select('base_rows.id').where(tableScope(q.baseId, q.tableId));
  if (q.where) query = query.where(q.where);
  for (const term of q.orderBy) query = query.orderBy(term);
  query = query.orderBy('base_rows.id');
  const ids = new IdBuffer();
  if (dialect === 'sqlite') {
    for await (const row of query.stream(chunk)) ids.push(Number(row.id));
    return ids.done();
  }
  const read = async (trx: Executor) => {
    await sql`declare sorted_row_ids no scroll cursor for ${query}`.execute(trx);
    for (;;) {
      const { rows } = await sql<{ id: number | string }>`fetch forward ${sql.lit(chunk)} from sorted_row_ids`.execute(trx);
      for (const row of rows) ids.push(Number(row.id));
      if (rows.length < chunk) break;
    }
    await sql`close sorted_row_ids`.execute(trx);
  };
  if (db.isTransaction) await read(db);
  else await db.transaction().execute(read);
  return ids.done();
}

/** A growing list of row ids, 8 bytes each. */
class IdBuffer {
  private ids = new Float64Array(1024);
  private length = 0;

  push(id: number): void {
    if (this.length === this.ids.length) {
      const grown = new Float64Array(this.ids.length * 2);
      grown.set(this.ids);
      this.ids = grown;
    }
    this.ids[this.length++] = id;
  }

  done(): Float64Array {
    return this.ids.slice(0, this.length);
  }
}

/** Row texts of the rows with these ids, in the order of `ids`. */
export async function rowTextsByIds(db: Executor, dialect: DialectName, baseId: number, ids: ArrayLike<number>): Promise<string[]> {
  const list = Array.from(ids);
  const rows = await db.selectFrom('base_rows').select(['base_rows.id', rowTextSql(dialect).as('r')]).where('base_rows.base_id', '=', baseId).where('base_rows.id', 'in', list).execute();
  const byId = new Map(rows.map((r) => [Number(r.id), r.r]));
  return list.flatMap((id) => byId.get(id) ?? []);
}

/** `scanTable` answering row texts (see `rowTextSql`): the whole-base read. */
export async function* scanTableTexts(db: Executor, dialect: DialectName, baseId: number, tableId: string, batch = 1000): AsyncGenerator<string[]> {
  const pages = byId(batch, (after) => tablePage(db, baseId, tableId, after, batch).select(['id', rowTextSql(dialect).as('r')]).execute());
  for await (const rows of pages) yield rows.map((r) => r.r);
}

/**
 * Replace the cells of existing rows in bulk (one statement per chunk). With `stamp` the rows' mtime and
 * last modifier are set too; structural rewrites (type changes, counter fills) pass null.
 */
export async function updateRows(
  trx: Executor,
  dialect: DialectName,
  baseId: number,
  rows: Array<{ rowId: string; data: Record<string, unknown> }>,
  stamp: { mtime: number; modifier: string } | null,
): Promise<void> {
  for (const part of chunks(rows)) {
    const values = sql.join(part.map((r) => sql`(${r.rowId}, ${JSON.stringify(r.data)})`));
    const data = dialect === 'postgres' ? sql`v.data::jsonb` : sql`v.data`;
    const set = stamp ? sql`data = ${data}, mtime = ${stamp.mtime}, last_modifier = ${stamp.modifier}` : sql`data = ${data}`;
    await sql`
      with v(row_id, data) as (values ${values})
      update base_rows set ${set}
      from v where base_rows.base_id = ${baseId} and base_rows.row_id = v.row_id`.execute(trx);
  }
}

export async function deleteRows(trx: Executor, baseId: number, rowIds: string[]): Promise<void> {
  for (const part of chunks(rowIds)) {
    await trx.deleteFrom('base_rows').where('base_id', '=', baseId).where('row_id', 'in', part).execute();
  }
}

export async function deleteTableRows(trx: Executor, baseId: number, tableId: string): Promise<void> {
  await trx.deleteFrom('base_rows').where('base_id', '=', baseId).where('table_id', '=', tableId).execute();
}

/**
 * A table's rows in one string that any write changes: how many, the last stored and the latest
 * modified (a new row raises the last id, a delete lowers the count, a change moves the mtime).
 */
export async function rowsFingerprint(db: Executor, baseId: number, tableId: string): Promise<string> {
  const row = await db
    .selectFrom('base_rows')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('id').as('last'), eb.fn.max('mtime').as('mtime')])
    .where('base_id', '=', baseId)
    .where('table_id', '=', tableId)
    .executeTakeFirstOrThrow();
  return `${Number(row.n)}:${Number(row.last ?? 0)}:${Number(row.mtime ?? 0)}`;
}

export async function countRows(db: Executor, baseId: number, tableId: string): Promise<number> {
  const row = await db
    .selectFrom('base_rows')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('base_id', '=', baseId)
    .where('table_id', '=', tableId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Every row of a table in insertion order, `batch` at a time (structural rewrites, whole-base export). */
export async function* scanTable(db: Executor, baseId: number, tableId: string, batch = 1000): AsyncGenerator<StoredRow[]> {
  const pages = byId(batch, (after) => tablePage(db, baseId, tableId, after, batch).select(['id', ...ROW_COLUMNS]).execute());
  for await (const rows of pages) yield rows.map(toStored);
}

/** One page of a table's rows after the row with id `after`, in id order (select the columns to read). */
function tablePage(db: Executor, baseId: number, tableId: string, after: number, batch: number) {
  return db.selectFrom('base_rows').where('base_id', '=', baseId).where('table_id', '=', tableId).where('id', '>', after).orderBy('id').limit(batch);
}

/** Pages by id (keyset): each page starts after the last id of the one before, until a short page. */
async function* byId<R extends { id: unknown }>(batch: number, page: (after: number) => Promise<R[]>): AsyncGenerator<R[]> {
  let after = 0;
  for (;;) {
    const rows = await page(after);
    if (rows.length === 0) return;
    yield rows;
    after = Number(rows[rows.length - 1]!.id);
    if (rows.length < batch) return;
  }
}

/** Remove a deleted column's cells from every row of its table. */
export async function dropCells(trx: Executor, dialect: DialectName, baseId: number, tableId: string, columnKey: string): Promise<void> {
  const data = dialect === 'postgres' ? sql`data - ${columnKey}::text` : sql`json_remove(data, ${jsonPath(columnKey)})`;
  await sql`update base_rows set data = ${data} where base_id = ${baseId} and table_id = ${tableId}`.execute(trx);
}

/** SQLite JSON path of a column key. Keys are 4 letters/digits; quoted anyway. */
export function jsonPath(columnKey: string): string {
  return `$."${columnKey.replace(/["\\]/g, '')}"`;
}
