import { sql, type Kysely } from 'kysely';
import { createDeltaTriggers, dropDeltaTriggers, isPostgres } from './helpers.js';

/**
 * Issue 34: **group sets** (rows/group-sets.ts). A grouped SQL statement over a big table (`SELECT Kind,
 * COUNT(*) … GROUP BY Kind`) read every row's JSON. A group set keeps, for one table and one group column
 * (and at most one number column), a row per group value with the number of rows, and the count, sum and
 * "inexact" count of that number column's values; the SQL endpoint answers such statements from it
 * (sql/group-set-plans.ts). `row_group_defs` lists the sets; triggers on `base_rows` keep every set of a
 * written row's table exact in the writing statement (tables without a set pay one probe of
 * `row_group_defs` per written row). A write adds its new row's values (+1) and takes its old row's
 * values away (−1): on SQLite one upsert each into the group's row; on PostgreSQL one inserted **delta
 * row** each (no row is updated, so concurrent writers of one group never wait on each other, and a
 * writer never waits on a row another writer holds), summed per group value when read and merged by
 * compaction (`GroupSets.compact`).
 *
 * The group value is the SQL endpoint's GROUP BY value (sql/field-sql.ts): `group_kind` `text` — a JSON
 * string, '' read as none; `number` — a JSON number; `bool` — 1 for `true`, else 0. The value column's
 * value is a JSON number, else none. A value is **inexact** when it is not an integer or its magnitude
 * is 2^28 or more: sums of the others are exact in a double whatever the order of the additions (below
 * 2^52 for up to 16 million rows), so SUM and AVG are answered from a set only while no value of it is
 * inexact.
 *
 * SQLite: the group value is `g` (no type affinity: numbers stay numbers, texts texts), '' standing for
 * none (no group value is ''), the primary key. PostgreSQL: `num` (number and bool kinds) or `txt`, any
 * number of rows per value.
 *
 * `state`: `building` (PostgreSQL, while its rows are computed: the triggers already count into it, no
 * read uses it) or `ready`.
 */
/**
 * A value that is not an integer, or of magnitude 2^28 or more, is counted in `inexact` and left out of
 * `vsum`, so `vsum` only ever adds and takes away integers and stays exact in a double whatever the order
 * (a decimal added and taken away again could leave a residue such as 3.0000000000000004 behind).
 */
const INEXACT_PG = 'x.v IS NOT NULL AND (abs(x.v) >= 268435456 OR x.v <> trunc(x.v))';
const INEXACT_SQLITE = 'x.v IS NOT NULL AND (abs(x.v) >= 268435456 OR x.v <> round(x.v))';

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  await sql`CREATE TABLE row_group_defs (
    id ${sql.raw(pg ? 'bigserial PRIMARY KEY' : 'integer PRIMARY KEY AUTOINCREMENT')},
    name varchar(63) NOT NULL UNIQUE,
    base_id bigint NOT NULL,
    table_id varchar(8) NOT NULL,
    group_key varchar(64) NOT NULL,
    group_kind varchar(8) NOT NULL,
    group_type varchar(32) NOT NULL,
    value_key varchar(64),
    value_type varchar(32),
    state varchar(8) NOT NULL,
    created_at bigint NOT NULL
  )`.execute(db);
  await sql`CREATE INDEX row_group_defs_table ON row_group_defs (base_id, table_id)`.execute(db);
  if (pg) {
    await sql`CREATE TABLE row_group_rows (
      set_id bigint NOT NULL,
      num float8,
      txt text COLLATE "C",
      cnt bigint NOT NULL,
      vcnt bigint NOT NULL,
      vsum float8 NOT NULL,
      inexact bigint NOT NULL
    )`.execute(db);
    await sql`CREATE INDEX row_group_rows_set ON row_group_rows (set_id)`.execute(db);
    // Statement-level triggers over the statement's transition tables: one call per writing statement (a
    // 1,000-row append pays one join with the few definitions, not 1,000 plpgsql calls), and the deltas of
    // a statement are summed per group value before they are inserted (a row updated without changing its
    // group or value adds nothing; an append adds one delta row per group value it touched).
    const values = (row: string) => `SELECT d.id,
            CASE WHEN d.group_kind = 'number' THEN (CASE WHEN jsonb_typeof(${row}.data -> d.group_key) = 'number' THEN (${row}.data ->> d.group_key)::float8 END)
                 WHEN d.group_kind = 'bool' THEN (CASE WHEN (${row}.data -> d.group_key) = 'true'::jsonb THEN 1 ELSE 0 END) END AS num,
            CASE WHEN d.group_kind = 'text' THEN (CASE WHEN jsonb_typeof(${row}.data -> d.group_key) = 'string' THEN nullif(${row}.data ->> d.group_key, '') END) END AS txt,
            CASE WHEN d.value_key IS NOT NULL AND jsonb_typeof(${row}.data -> d.value_key) = 'number' THEN (${row}.data ->> d.value_key)::float8 END AS v`;
    const signed = (table: string, sign: string) => `SELECT x.id, x.num, x.txt, ${sign} AS cnt, ${sign} * (CASE WHEN x.v IS NULL THEN 0 ELSE 1 END) AS vcnt,
            ${sign} * (CASE WHEN ${INEXACT_PG} THEN 0 ELSE coalesce(x.v, 0) END) AS vsum, ${sign} * (CASE WHEN ${INEXACT_PG} THEN 1 ELSE 0 END) AS inexact
          FROM (${values('r')} FROM ${table} r JOIN row_group_defs d ON d.base_id = r.base_id AND d.table_id = r.table_id) x`;
    const insert = (parts: string) => `INSERT INTO row_group_rows (set_id, num, txt, cnt, vcnt, vsum, inexact)
        SELECT id, num, txt, sum(cnt), sum(vcnt), sum(vsum), sum(inexact) FROM (${parts}) s
        GROUP BY id, num, txt HAVING sum(cnt) <> 0 OR sum(vcnt) <> 0 OR sum(vsum) <> 0 OR sum(inexact) <> 0;`;
    await createDeltaTriggers(db, { name: 'group_sets', prefix: 'group', definitions: 'row_group_defs', signed, insert });
    return;
  }
  await sql`CREATE TABLE row_group_rows (
    set_id integer NOT NULL,
    g BLOB NOT NULL,
    cnt integer NOT NULL,
    vcnt integer NOT NULL,
    vsum BLOB NOT NULL,
    inexact integer NOT NULL,
    PRIMARY KEY (set_id, g)
  )`.execute(db);
  for (const [op, when, rows] of [
    ['INSERT', 'NEW', [['NEW', '1']]],
    ['UPDATE OF data, base_id, table_id', 'NEW', [['OLD', '-1'], ['NEW', '1']]],
    ['DELETE', 'OLD', [['OLD', '-1']]],
  ] as const) {
    const name = `base_rows_group_sets_${op.split(' ')[0]!.toLowerCase()}`;
    const upserts = rows.map(([row, sign]) => sqliteUpsert(row, sign)).join('\n');
    // An update's old row is probed on its own table: a move between tables is the one-row case where NEW's differs.
    const probe = (r: string) => `EXISTS (SELECT 1 FROM row_group_defs d WHERE d.base_id = ${r}.base_id AND d.table_id = ${r}.table_id)`;
    const condition = op.startsWith('UPDATE') ? `${probe('OLD')} OR ${probe('NEW')}` : probe(when);
    await sql.raw(`CREATE TRIGGER ${name} AFTER ${op} ON base_rows WHEN ${condition} BEGIN\n${upserts}\nEND`).execute(db);
  }
}

/** One upsert of a row's values (`row`: NEW or OLD) into every set of its table, counted with `sign`. */
function sqliteUpsert(row: string, sign: string): string {
  const path = (key: string) => `'$."' || ${key} || '"'`;
  const json = (key: string) => `json_type(${row}.data, ${path(key)})`;
  const value = (key: string) => `json_extract(${row}.data, ${path(key)})`;
  const group = `coalesce(CASE d.group_kind
      WHEN 'text' THEN (CASE WHEN ${json('d.group_key')} = 'text' THEN nullif(${value('d.group_key')}, '') END)
      WHEN 'number' THEN (CASE WHEN ${json('d.group_key')} IN ('integer', 'real') THEN ${value('d.group_key')} END)
      WHEN 'bool' THEN (CASE WHEN ${json('d.group_key')} = 'true' THEN 1 ELSE 0 END) END, '')`;
  const v = `(CASE WHEN d.value_key IS NOT NULL AND ${json('d.value_key')} IN ('integer', 'real') THEN ${value('d.value_key')} END)`;
  return `INSERT INTO row_group_rows (set_id, g, cnt, vcnt, vsum, inexact)
  SELECT x.id, x.g, ${sign}, ${sign} * (x.v IS NOT NULL), ${sign} * (CASE WHEN ${INEXACT_SQLITE} THEN 0 ELSE coalesce(x.v, 0) END),
         ${sign} * (CASE WHEN ${INEXACT_SQLITE} THEN 1 ELSE 0 END)
  FROM (SELECT d.id, ${group} AS g, ${v} AS v FROM row_group_defs d WHERE d.base_id = ${row}.base_id AND d.table_id = ${row}.table_id) x WHERE 1
  ON CONFLICT (set_id, g) DO UPDATE SET cnt = cnt + excluded.cnt, vcnt = vcnt + excluded.vcnt, vsum = vsum + excluded.vsum, inexact = inexact + excluded.inexact;`;
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await dropDeltaTriggers(db, 'group_sets');
  await sql`DROP TABLE IF EXISTS row_group_rows`.execute(db);
  await sql`DROP TABLE IF EXISTS row_group_defs`.execute(db);
}
