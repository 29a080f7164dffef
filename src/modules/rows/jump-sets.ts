import { createHash } from 'node:crypto';
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import { longStatement, longStatementTimeout, type Db, type Executor } from '../../db/index.js';
import { indexedValue } from '../filters/index.js';
import { waitForOlderTransactions } from './older-transactions.js';

/**
 * Jump sets (PostgreSQL; migration 0044): what makes a first jump deep into a big table's sorted or
 * filtered listing cost about its first page. PostgreSQL reads every row an expression index returns
 * (no index-only scan of an expression on `data`), so skipping N rows of a listing read N heap rows.
 *
 * A jump set serves one listing shape of one table: filtered on at most one column, sorted on at most one
 * (not neither: the position index serves that). It is a narrow row per *listed* row (not archived) in
 * `row_jump_keys` — the sort value as a plain column (`num` or `txt`, the expressions of
 * filters/cell-sql.ts), the filter column's cell alone as `data` (`{key: cell}`, or `{}` without the key)
 * and the row's id — under a covering index `(sort value, id) INCLUDE (data)`, partial on the set. Named
 * `base_rows` in a query, the filter's SQL (written on `base_rows.data`) reads it unchanged, so the id and
 * sort value of the row before a deep page are found by an index-only scan (`jumpAnchor`), and the page
 * is read by keyset after that row, as after a page end known before.
 *
 * A filtered set has a second covering index, keyed on the filter cell's indexed value first
 * (`(value, sort value, id) INCLUDE (data)`): an equality (or IN) filter's rows are one range of it, already
 * in the listing's order, and a range filter's rows one range to sort, so the skip reads only matching
 * entries instead of checking the filter's JSON on every entry before the page (the anchor query adds the
 * filter's indexable term on that value, implied by the filter: filters/to-sql.ts `indexableTerms`).
 *
 * The trigger `base_rows_jump_keys` keeps every set of a written row's table current in the writing
 * statement (inserts: the statement trigger `base_rows_jump_keys_insert` over the statement's new rows,
 * migration 0050; updates and deletes: the row trigger); an insert pays one probe of `row_jump_defs` per
 * statement when no set exists, an update or delete one per row.
 *
 * A build holds a session advisory lock on its name from before its definition exists until it is
 * registered (`row_indexes`); a definition without a registration whose lock is free is what a crashed
 * build left (`recoverJumpSets` drops it: the trigger would fill it for nothing, and no read uses it).
 */

export interface JumpSetUse {
  filter?: { key: string; valueType: 'number' | 'text' };
  sort?: { key: string; valueType: 'number' | 'text'; desc: boolean };
  /**
   * A listing filtered on several columns or sorted on several (migration 0047), instead of `filter` and
   * `sort`: the set's rows keep every column's cell in `data`, and its covering index orders by the sort
   * expressions of cell-sql.ts on that `data` (read index-only: the index includes `data`).
   */
  many?: JumpManyUse;
}

/** The columns of a jump set of several (see JumpSetUse `many`): up to 3 filtered, up to 3 sorted on. */
export interface JumpManyUse {
  filters: Array<{ key: string; valueType: 'number' | 'text' }>;
  sorts: Array<{ key: string; valueType: 'number' | 'text'; desc: boolean }>;
}

/** The cells a set of several keeps (each column once). */
function manyCells(many: JumpManyUse): string[] {
  return [...new Set([...many.filters.map((f) => f.key), ...many.sorts.map((s) => s.key)])];
}

export interface JumpSet {
  /** `row_jump_keys.jump_id`. */
  id: number;
  /** The covering index's name (also the set's `row_indexes` entry). */
  name: string;
  baseId: number;
  tableId: string;
  use: JumpSetUse;
}

/** The name of the set of a use (short: a digest of what it serves). */
export function jumpSetName(baseId: number, tableId: string, use: JumpSetUse): string {
  if (use.many) {
    const signature = JSON.stringify([tableId, 'many', use.many.filters.map((f) => [f.key, f.valueType]), use.many.sorts.map((s) => [s.key, s.valueType, s.desc])]);
    return `brj_${Number(baseId)}_${createHash('sha256').update(signature).digest('hex').slice(0, 24)}`;
  }
  const parts: unknown[] = [tableId, use.filter?.key ?? null, use.filter?.valueType ?? null, use.sort?.key ?? null, use.sort?.valueType ?? null, use.sort?.desc ?? false];
  // Filtered sets have a keyed index too (`keyedIndexName`): another name than those built before it.
  if (use.filter) parts.push('keyed');
  const signature = JSON.stringify(parts);
  return `brj_${Number(baseId)}_${createHash('sha256').update(signature).digest('hex').slice(0, 24)}`;
}

interface DefRow {
  id: string | number;
  name: string;
  base_id: string | number;
  table_id: string;
  filter_key: string | null;
  filter_type: string | null;
  sort_key: string | null;
  sort_type: string | null;
  descending: boolean;
  spec: JumpManyUse | string | null;
}

function fromRow(r: DefRow): JumpSet {
  const use: JumpSetUse = {};
  if (r.spec) use.many = typeof r.spec === 'string' ? (JSON.parse(r.spec) as JumpManyUse) : r.spec;
  if (r.filter_key) use.filter = { key: r.filter_key, valueType: r.filter_type as 'number' | 'text' };
  if (r.sort_key) use.sort = { key: r.sort_key, valueType: r.sort_type as 'number' | 'text', desc: r.descending };
  return { id: Number(r.id), name: r.name, baseId: Number(r.base_id), tableId: r.table_id, use };
}

/** Every set whose definition is listed. */
export async function loadJumpSets(db: Db): Promise<JumpSet[]> {
  const { rows } = await sql<DefRow>`select id, name, base_id, table_id, filter_key, filter_type, sort_key, sort_type, descending, spec from row_jump_defs`.execute(db);
  return rows.map(fromRow);
}

/** What a build may be told (tests, benches). */
export interface JumpSetBuildOptions {
  /** Rows copied per transaction (each holds the base's write lock only while it copies its batch). */
  batchRows: number;
  /** Called after each batch is committed, before the next (tests: a write between two batches). */
  afterBatch?: (batch: number) => Promise<void>;
  /** Registers the built set (its `row_indexes` entry); runs before the build's advisory lock is released. */
  register: (set: JumpSet) => Promise<void>;
}

/** The first key of the advisory locks builds hold (the second: `hashtext` of the set's name). */
export const JUMP_SET_BUILD_LOCK = 340_046;
const BUILD_LOCK = JUMP_SET_BUILD_LOCK;

/**
 * Builds a set: its definition (from then on the trigger keeps the rows written after it), a wait for
 * the transactions that may have written without seeing it, its rows for the table's listed rows in
 * batches by id, each copied under the base's write lock (`base_metadata` FOR UPDATE, which every writer
 * of the base holds to its commit: a write racing a batch's copy could leave a stale entry) held only for
 * that batch — writers go on between batches, and the trigger keeps every row they write, copied yet or
 * not (a batch's `ON CONFLICT DO NOTHING` keeps the trigger's newer entry) — then its covering indexes
 * (CONCURRENTLY), a VACUUM (the visibility map an index-only scan needs) and its registration. All of it
 * under a session advisory lock on its name, so `recoverJumpSets` tells a live build from a dead one.
 */
export async function buildJumpSet(db: Db, name: string, baseId: number, tableId: string, use: JumpSetUse, listed: string, options: JumpSetBuildOptions): Promise<JumpSet> {
  return db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${BUILD_LOCK}, hashtext(${name}))`.execute(conn);
    try {
      const cells = use.many ? manyCells(use.many) : null;
      const spec = use.many ? JSON.stringify(use.many) : null;
      const { rows } = await sql<DefRow>`insert into row_jump_defs (name, base_id, table_id, filter_key, filter_type, sort_key, sort_type, descending, cells, spec)
        values (${name}, ${baseId}, ${tableId}, ${use.filter?.key ?? null}, ${use.filter?.valueType ?? null}, ${use.sort?.key ?? null}, ${use.sort?.valueType ?? null}, ${use.sort?.desc ?? false}, ${cells}::text[], ${spec}::jsonb)
        on conflict (name) do update set name = excluded.name
        returning id, name, base_id, table_id, filter_key, filter_type, sort_key, sort_type, descending, spec`.execute(conn);
      const set = fromRow(rows[0]!);
      try {
        await fillJumpSet(db, conn, set, listed, options);
        await options.register(set);
      } catch (error) {
        // No half-built set: its definition would make every write of the table pay for it.
        await dropJumpSet(conn, name).catch(() => undefined);
        throw error;
      }
      return set;
    } finally {
      await sql`select pg_advisory_unlock(${BUILD_LOCK}, hashtext(${name}))`.execute(conn);
    }
  });
}

async function fillJumpSet(db: Db, conn: Db, set: JumpSet, listed: string, options: JumpSetBuildOptions): Promise<void> {
  await waitForOlderTransactions(db, 'jump set');
  await copyRows(db, set, listed, options);
  // Long statements (db/long-statements.ts): at 10,000,000 rows these take minutes, past the client's read
  // timeout as well as the server's statement timeout (`set statement_timeout` alone lifts only the latter).
  await longStatementTimeout().execute(conn);
  try {
    const order = set.use.many ? compiledText(db, manyOrder(set.use.many, sql`data`)) : orderText(set.use);
    await longStatement(`create index concurrently if not exists "${set.name}" on row_jump_keys (${order}) include (data) where jump_id = ${set.id}`).execute(conn);
    const keyed = keyedIndexText(db, set);
    if (keyed) await longStatement(keyed).execute(conn);
    await longStatement('vacuum (analyze) row_jump_keys').execute(conn);
  } finally {
    await sql`reset statement_timeout`.execute(conn);
  }
}

/** The table's listed rows into the set, `batchRows` at a time in id order, each batch under the base's write lock. */
async function copyRows(db: Db, set: JumpSet, listed: string, options: JumpSetBuildOptions): Promise<void> {
  const { baseId, tableId } = set;
  const { num, txt, data } = keyValues(set, sql.ref('b.data'));
  const batchRows = Math.max(1, Math.floor(options.batchRows));
  for (let after = 0, batch = 0; ; batch++) {
    const done = await db.transaction().execute(async (trx) => {
      await sql`select 1 from base_metadata where base_id = ${baseId} for update`.execute(trx);
      const { rows } = await sql<{ last: string | null; n: string }>`with batch as (
          select id, data from base_rows where base_id = ${baseId} and table_id = ${tableId} and id > ${after} order by id limit ${batchRows}
        ), copied as (
          insert into row_jump_keys (jump_id, id, num, txt, data)
          select ${set.id}, b.id, ${num}, ${txt}, ${data} from batch b where ${sql.raw(listed.replace(/\bdata\b/g, 'b.data'))}
          on conflict (jump_id, id) do nothing
        )
        select max(id) as last, count(*) as n from batch`.execute(trx);
      return rows[0]!;
    });
    if (done.last === null) return;
    after = Number(done.last);
    await options.afterBatch?.(batch);
    if (Number(done.n) < batchRows) return;
  }
}

/** SQL text of a fragment with no parameters (index definitions). */
function compiledText(db: Db, fragment: RawBuilder<unknown>): string {
  const compiled = fragment.compile(db);
  if (compiled.parameters.length > 0) throw new Error('a jump set\'s index must have no parameters');
  return compiled.sql;
}

/** The name of a filtered set's keyed index (see the module's comment). */
function keyedIndexName(name: string): string {
  return `${name}_k`;
}

/** `CREATE INDEX` of a filtered set's keyed index: the filter cell's indexed value (filters/cell-sql.ts), then the listing's order. */
function keyedIndexText(db: Db, set: JumpSet): string | undefined {
  const filter = set.use.filter;
  if (!filter) return undefined;
  const compiled = indexedValue('postgres', sql.ref('data'), filter.key, filter.valueType).compile(db);
  if (compiled.parameters.length > 0) throw new Error('a jump set\'s key must have no parameters');
  return `create index concurrently if not exists "${keyedIndexName(set.name)}" on row_jump_keys (${compiled.sql}, ${orderText(set.use)}) include (data) where jump_id = ${set.id}`;
}

/** Drops a set: its indexes, its definition and its rows. */
export async function dropJumpSet(db: Db, name: string): Promise<void> {
  const bare = name.replace(/"/g, '');
  await sql.raw(`drop index concurrently if exists "${bare}"`).execute(db);
  await sql.raw(`drop index concurrently if exists "${keyedIndexName(bare)}"`).execute(db);
  await db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: string }>`delete from row_jump_defs where name = ${name} returning id`.execute(trx);
    for (const row of rows) await sql`delete from row_jump_keys where jump_id = ${row.id}`.execute(trx);
  });
}

/**
 * Drops the sets a crashed build left: a definition with no `row_indexes` entry whose build lock no
 * session holds (a live build holds it until it has registered its set). Returns their names.
 */
export async function recoverJumpSets(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select d.name from row_jump_defs d where not exists (select 1 from row_indexes i where i.name = d.name)`.execute(db);
  const dropped: string[] = [];
  for (const { name } of rows) {
    await db.connection().execute(async (conn) => {
      const locked = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${BUILD_LOCK}, hashtext(${name})) as ok`.execute(conn);
      if (!locked.rows[0]?.ok) return; // being built
      try {
        // Registered between the listing and the lock: a finished set.
        const registered = await sql`select 1 from row_indexes where name = ${name}`.execute(conn);
        if (registered.rows.length > 0) return;
        await dropJumpSet(conn, name);
        dropped.push(name);
      } finally {
        await sql`select pg_advisory_unlock(${BUILD_LOCK}, hashtext(${name}))`.execute(conn);
      }
    });
  }
  return dropped;
}

/**
 * The id and sort value of the listed row at `position` (0-based) of the set's listing under `filter`
 * (the listing's filter terms on `base_rows.data`, without its "not archived" term: the set holds listed
 * rows only), read index-only; undefined when the listing has no row there. `keyTerm`: a term on the
 * filter column's indexed value implied by `filter` (a range of the keyed index), if the filter has one.
 */
export async function jumpAnchor(db: Executor, set: JumpSet, filter: Expression<SqlBool> | undefined, position: number, keyTerm?: Expression<SqlBool>): Promise<{ id: number; values: unknown[] } | undefined> {
  const { rows } = await inOrderedScan(db, set, (e) => anchorQuery(set, filter, position, '', keyTerm).execute(e));
  const row = rows[0] as (Record<string, unknown> & { id: string }) | undefined;
  if (!row) return undefined;
  // The row's sort values, as the listing's keyset takes them (none: unsorted).
  const values = set.use.many ? set.use.many.sorts.map((_, i) => row[`v${i}`]) : set.use.sort ? [row.v] : [];
  return { id: Number(row.id), values };
}

/** The plan of `jumpAnchor`'s query (tests: an index-only scan of the set's index). */
export async function explainJumpAnchor(db: Executor, set: JumpSet, filter: Expression<SqlBool> | undefined, position: number, keyTerm?: Expression<SqlBool>): Promise<string> {
  const { rows } = await inOrderedScan(db, set, (e) => anchorQuery(set, filter, position, 'explain ', keyTerm).execute(e));
  return (rows as unknown as Array<Record<string, unknown>>).map((r) => String(r['QUERY PLAN'])).join('\n');
}

function anchorQuery(set: JumpSet, filter: Expression<SqlBool> | undefined, position: number, prefix: string, keyTerm: Expression<SqlBool> | undefined) {
  if (set.use.many) return manyAnchorQuery(set, set.use.many, filter, position, prefix);
  const column = sortColumn(set.use);
  const value = column ? sql.raw(`base_rows.${column}`) : sql`null`;
  // The table named `base_rows`: the filter's SQL reads `base_rows.data`, here the filter cell alone.
  return sql<{ id: string; v: unknown }>`${sql.raw(prefix)}select base_rows.id, ${value} as v from row_jump_keys as base_rows
    where base_rows.jump_id = ${sql.lit(set.id)}${keyTerm && set.use.filter ? sql` and ${keyTerm}` : sql``}${filter ? sql` and ${filter}` : sql``}
    order by ${sql.raw(orderText(set.use, 'base_rows.'))} offset ${position} limit 1`;
}

/**
 * A set of several's anchor: its entries read index-only in the listing's order, the filter checked on
 * each entry's cells, and the sort values computed (from the kept cells) for the one row answered only.
 * Run with sorts and parallel plans off (`inOrderedScan`): the planner otherwise takes the filter for a
 * handful of rows and sorts them all.
 */
function manyAnchorQuery(set: JumpSet, many: JumpManyUse, filter: Expression<SqlBool> | undefined, position: number, prefix: string) {
  const data = sql.ref('anchor.data') as unknown as RawBuilder<unknown>;
  const values = many.sorts.length === 0 ? sql`null` : sql.join(many.sorts.map((s, i) => sql`${indexedValue('postgres', data, s.key, s.valueType)} as ${sql.raw(`v${i}`)}`));
  const order = manyOrder(many, sql`base_rows.data`);
  return sql<Record<string, unknown> & { id: string }>`${sql.raw(prefix)}select anchor.id, ${values} from (
      select base_rows.id, base_rows.data from row_jump_keys as base_rows where base_rows.jump_id = ${sql.lit(set.id)}${filter ? sql` and ${filter}` : sql``}
      order by ${order} offset ${position} limit 1
    ) as anchor`;
}

/** Runs a set of several's anchor query with sorts and parallel plans off, in a transaction of its own (see manyAnchorQuery). */
async function inOrderedScan<T>(db: Executor, set: JumpSet, run: (e: Executor) => Promise<T>): Promise<T> {
  if (!set.use.many || db.isTransaction) return run(db);
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('enable_sort', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)`.execute(trx);
    return run(trx);
  });
}

/** A set of several's order: its sort expressions (cell-sql.ts, as sort-sql.ts orders them: empty last), then the id. */
function manyOrder(many: JumpManyUse, data: RawBuilder<unknown>): RawBuilder<unknown> {
  const terms = many.sorts.map((s) => sql`${indexedValue('postgres', data, s.key, s.valueType)} ${sql.raw(s.desc ? 'desc' : 'asc')} nulls last`);
  return sql.join([...terms, sql.raw('id')]);
}

function sortColumn(use: JumpSetUse): 'num' | 'txt' | undefined {
  return use.sort ? (use.sort.valueType === 'number' ? 'num' : 'txt') : undefined;
}

/** The listing's order on the set's columns: the sort value (empty last either way), then the id. */
function orderText(use: JumpSetUse, prefix = ''): string {
  const column = sortColumn(use);
  return column ? `${prefix}${column} ${use.sort!.desc ? 'desc' : 'asc'} nulls last, ${prefix}id` : `${prefix}id`;
}

/** A set's values of a row, as the trigger of migration 0044 computes them. */
function keyValues(set: JumpSet, data: RawBuilder<unknown>) {
  const sortKey = set.use.sort?.key;
  const filterKey = set.use.filter?.key;
  const num =
    set.use.sort?.valueType === 'number' ? sql`case when jsonb_typeof(${data} -> ${sortKey}::text) = 'number' then (${data} ->> ${sortKey}::text)::float8 end` : sql`null::float8`;
  const txt = set.use.sort?.valueType === 'text' ? sql`${data} ->> ${sortKey}::text` : sql`null::text`;
  const cells = set.use.many ? manyCells(set.use.many) : undefined;
  const cell = cells
    ? sql`(select coalesce(jsonb_object_agg(k.key, ${data} -> k.key), '{}'::jsonb) from unnest(${cells}::text[]) as k(key) where ${data} ? k.key)`
    : filterKey
    ? sql`case when ${data} ? ${filterKey}::text then jsonb_build_object(${filterKey}::text, ${data} -> ${filterKey}::text) else '{}'::jsonb end`
    : sql`'{}'::jsonb`;
  return { num, txt, data: cell };
}

