import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor } from '../../db/index.js';

/**
 * Trigram indexes of a big table's row texts, for `contains` filters (docs/base-data.md, "Search").
 *
 * A `contains` term that JSON writes as is (filters/to-sql.ts `searchTerms`) is in the text of every row
 * whose cell contains it, so the rows holding all the term's trigrams are a superset of the matches: the
 * index narrows the table to them and the exact test decides. Built by RowIndexes (kind `search`) for a
 * table of at least `minRows` rows once a listing searches it.
 *
 * - SQLite: an FTS5 table of its own (`trigram` tokenizer, folding case; contentless, no positions), kept
 *   by three triggers on `base_rows` whose WHEN names the table, and filled in batches of rows by id after
 *   the triggers exist (one writer: no change falls between the two). A term is looked up as the AND of
 *   its trigrams (without positions FTS5 has no phrases).
 * - PostgreSQL: a GIN index of `pg_trgm` on the lowered text, partial on the table, answering a LIKE of
 *   the term on that text.
 * Which reads take it (a page read only for terms few rows hold): RowIndexes.searchNarrowing.
 */

/** The FTS5 query of rows holding every trigram of every term (the terms have at least 3 characters and no `"`). */
export function trigramMatch(terms: readonly string[]): string {
  const trigrams = new Set<string>();
  for (const term of terms) for (let i = 0; i + 3 <= term.length; i++) trigrams.add(term.slice(i, i + 3));
  return [...trigrams].map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND ');
}

/**
 * SQLite: the condition on `base_rows.id` that narrows a listing after `afterId` to the rows the index
 * says may hold the terms (SQLite reads the ids from the index in order and opens those rows by id).
 */
export function sqliteSearchIds(name: string, terms: readonly string[], afterId: number): RawBuilder<SqlBool> {
  const fts = sql.table(name);
  return sql<SqlBool>`base_rows.id in (select rowid from ${fts} where ${fts} match ${trigramMatch(terms)} and rowid > ${afterId})`;
}

/**
 * SQLite: how many rows the index gives for the terms, counting no further than `cap` (reads at most
 * `cap` ids; about 2 ms at 1,000,000 rows): a term many rows hold is read faster in id order, where its
 * page fills soon, than through a list of all its rows.
 */
export async function countSearchMatches(db: Executor, name: string, terms: readonly string[], cap: number): Promise<number> {
  const fts = sql.table(name);
  const { rows } = await sql<{ n: number }>`select count(*) as n from (select rowid from ${fts} where ${fts} match ${trigramMatch(terms)} limit ${cap})`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * PostgreSQL: the planner's estimates, from the statistics of the indexed text, of the rows of a table
 * holding the terms and of the table's rows (two EXPLAINs, nothing read).
 */
export async function postgresSearchEstimate(db: Executor, scope: string, terms: readonly string[]): Promise<{ matches: number; rows: number }> {
  const planRows = async (where: RawBuilder<SqlBool>) => {
    const { rows } = await sql<{ 'QUERY PLAN': Array<{ Plan: { 'Plan Rows': number } }> }>`explain (format json) select 1 from base_rows where ${sql.raw(scope)} and ${where}`.execute(db);
    return Number(rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0);
  };
  return { matches: await planRows(postgresSearchCondition(terms)), rows: await planRows(sql<SqlBool>`true`) };
}

/** The indexed text on PostgreSQL: the row's JSON lowered as the exact test lowers (A–Z only). */
export const POSTGRES_SEARCH_TEXT = `lower((data)::text collate "C")`;

/** PostgreSQL: the statistics object of that text (one for all tables). */
export const SEARCH_STATISTICS = 'brs_search';

/** PostgreSQL: a LIKE per term on the indexed text, which the partial trigram index answers. */
export function postgresSearchCondition(terms: readonly string[]): RawBuilder<SqlBool> {
  const likes = terms.map((term) => sql`lower((base_rows.data)::text collate "C") like ${`%${term.replace(/[%_\\]/g, (c) => `\\${c}`)}%`}::text`);
  return sql<SqlBool>`(${sql.join(likes, sql` and `)})`;
}

/** The `CREATE INDEX` of a table's trigram index on PostgreSQL, the operator class named in its schema. */
export function postgresSearchIndexSql(name: string, scope: string, trgmSchema: string): string {
  return `create index concurrently if not exists "${name}" on base_rows using gin ((${POSTGRES_SEARCH_TEXT}) "${trgmSchema}".gin_trgm_ops) where ${scope}`;
}

/**
 * PostgreSQL: the schema of `pg_trgm`, created in `public` when missing (a trusted extension since
 * PostgreSQL 13: the database's owner may create it), or undefined when it cannot be had.
 */
export async function trigramSchema(db: Executor): Promise<string | undefined> {
  const found = async () => (await sql<{ schema: string }>`select extnamespace::regnamespace::text as schema from pg_extension where extname = 'pg_trgm'`.execute(db)).rows[0]?.schema;
  const schema = await found();
  if (schema) return schema.replace(/^"|"$/g, '');
  // Another process creating it at the same moment fails this one (a duplicate key): it is there then.
  await sql`create extension if not exists pg_trgm with schema public`.execute(db).catch(() => undefined);
  return (await found())?.replace(/^"|"$/g, '');
}

const trigger = (name: string, suffix: 'i' | 'u' | 'd') => `"${name}_${suffix}"`;

/** SQLite: the FTS5 table and its triggers (one transaction), before it is filled. */
export function sqliteSearchDdl(name: string, baseId: number, tableId: string): string[] {
  const table = `"${name}"`;
  const ours = (row: 'new' | 'old') => `${row}.base_id = ${Number(baseId)} and ${row}.table_id = '${tableId.replace(/'/g, "''")}'`;
  return [
    `create virtual table if not exists ${table} using fts5(t, content='', contentless_delete=1, tokenize='trigram case_sensitive 0', detail='none')`,
    `create trigger if not exists ${trigger(name, 'i')} after insert on base_rows when ${ours('new')} begin insert or replace into ${table}(rowid, t) values (new.id, new.data); end`,
    `create trigger if not exists ${trigger(name, 'u')} after update of data on base_rows when ${ours('new')} begin insert or replace into ${table}(rowid, t) values (new.id, new.data); end`,
    `create trigger if not exists ${trigger(name, 'd')} after delete on base_rows when ${ours('old')} begin delete from ${table} where rowid = old.id; end`,
  ];
}

/** SQLite: copies the table's rows after `afterId` into its FTS5 table, at most `limit`; the last id copied, or undefined when none was left. */
export async function fillSqliteSearch(db: Executor, name: string, baseId: number, tableId: string, afterId: number, limit: number): Promise<number | undefined> {
  const last = await sql<{ id: number | null }>`select max(id) as id from (select id from base_rows where base_id = ${baseId} and table_id = ${tableId} and id > ${afterId} order by id limit ${limit})`.execute(db);
  const end = last.rows[0]?.id;
  if (end == null) return undefined;
  await sql`insert or replace into ${sql.table(name)}(rowid, t) select id, data from base_rows where base_id = ${baseId} and table_id = ${tableId} and id > ${afterId} and id <= ${end}`.execute(db);
  return Number(end);
}

/** SQLite: drops the FTS5 table and its triggers. */
export async function dropSqliteSearch(db: Executor, name: string): Promise<void> {
  for (const suffix of ['i', 'u', 'd'] as const) await sql.raw(`drop trigger if exists ${trigger(name, suffix)}`).execute(db);
  await sql.raw(`drop table if exists "${name}"`).execute(db);
}
