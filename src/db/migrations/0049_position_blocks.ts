import { sql, type Kysely } from 'kysely';
import { createDeltaTriggers, dropDeltaTriggers, isPostgres } from './helpers.js';

/**
 * Issue 34: **counted position blocks** (rows/position-blocks.ts, docs/base-data.md "Big tables"). A jump to
 * `start` into a big table's unfiltered listing counted `start` entries of its position index (linear: 0.7 s
 * on SQLite at 10,000,000 rows). `row_position_defs` lists the tables that have blocks; `row_position_blocks`
 * holds per table and block (`block` = `base_rows.id >> 12`, at most 4,096 ids) the number of the table's
 * listed (not archived) rows in it. A jump sums the blocks in order until the sum passes `start` and counts
 * the rest inside one block through the position index (at most 4,096 entries).
 *
 * Triggers on `base_rows` keep every defined table's blocks exact in the writing statement, on every path
 * that changes which rows a table lists: inserts, deletes, archiving and unarchiving (an update that changes
 * the listed state), moves between tables and bases (an update of `table_id` / `base_id`: imports' staged
 * rows, trash restores), purges. Tables without blocks pay one probe of `row_position_defs`.
 *
 * SQLite: one row per block (primary key), upserted +1/−1. PostgreSQL: statement-level triggers over the
 * transition tables (one call per writing statement, its deltas summed per block) insert **delta rows**,
 * never update one: appends that commit concurrently (PG_CONCURRENT_APPENDS) all touch the table's last
 * block and would otherwise wait on each other's row lock. Reads sum per block; compaction merges them.
 * `state`: `building` (the triggers already count into it, no read uses it) or `ready`.
 */
const SQLITE_LISTED = (row: string) => `(instr(${row}.data, '"_archived"') = 0 OR json_extract(${row}.data, '$._archived') IS NOT 1)`;
const PG_LISTED = (row: string) => `((${row}.data ->> '_archived') IS DISTINCT FROM 'true')`;

export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  await sql`CREATE TABLE row_position_defs (
    base_id bigint NOT NULL,
    table_id varchar(8) NOT NULL,
    state varchar(8) NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (base_id, table_id)
  )`.execute(db);
  if (pg) {
    await sql`CREATE TABLE row_position_blocks (
      base_id bigint NOT NULL,
      table_id varchar(8) NOT NULL,
      block bigint NOT NULL,
      listed bigint NOT NULL
    )`.execute(db);
    await sql`CREATE INDEX row_position_blocks_block ON row_position_blocks (base_id, table_id, block)`.execute(db);
    const signed = (table: string, sign: string) =>
      `SELECT r.base_id, r.table_id, r.id >> 12 AS block, ${sign} AS listed FROM ${table} r
        JOIN row_position_defs d ON d.base_id = r.base_id AND d.table_id = r.table_id WHERE ${PG_LISTED('r')}`;
    const insert = (parts: string) => `INSERT INTO row_position_blocks (base_id, table_id, block, listed)
        SELECT base_id, table_id, block, sum(listed) FROM (${parts}) s GROUP BY base_id, table_id, block HAVING sum(listed) <> 0;`;
    await createDeltaTriggers(db, { name: 'position_blocks', prefix: 'position', definitions: 'row_position_defs', signed, insert });
    return;
  }
  await sql`CREATE TABLE row_position_blocks (
    base_id integer NOT NULL,
    table_id text NOT NULL,
    block integer NOT NULL,
    listed integer NOT NULL,
    PRIMARY KEY (base_id, table_id, block)
  ) WITHOUT ROWID`.execute(db);
  const defined = (row: string) => `EXISTS (SELECT 1 FROM row_position_defs d WHERE d.base_id = ${row}.base_id AND d.table_id = ${row}.table_id)`;
  const upsert = (row: string, sign: string) => `INSERT INTO row_position_blocks (base_id, table_id, block, listed)
    SELECT ${row}.base_id, ${row}.table_id, ${row}.id >> 12, ${sign} WHERE ${defined(row)} AND ${SQLITE_LISTED(row)}
    ON CONFLICT (base_id, table_id, block) DO UPDATE SET listed = listed + excluded.listed;`;
  await sql.raw(`CREATE TRIGGER base_rows_position_blocks_insert AFTER INSERT ON base_rows WHEN ${defined('NEW')} BEGIN
${upsert('NEW', '1')}
END`).execute(db);
  await sql.raw(`CREATE TRIGGER base_rows_position_blocks_delete AFTER DELETE ON base_rows WHEN ${defined('OLD')} BEGIN
${upsert('OLD', '-1')}
END`).execute(db);
  // Only an update that moves the row or changes its listed state counts (a cell edit adds nothing).
  await sql.raw(`CREATE TRIGGER base_rows_position_blocks_update AFTER UPDATE OF data, base_id, table_id, id ON base_rows
  WHEN (${defined('OLD')} OR ${defined('NEW')}) AND (OLD.base_id IS NOT NEW.base_id OR OLD.table_id IS NOT NEW.table_id OR OLD.id IS NOT NEW.id OR ${SQLITE_LISTED('OLD')} IS NOT ${SQLITE_LISTED('NEW')}) BEGIN
${upsert('OLD', '-1')}
${upsert('NEW', '1')}
END`).execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await dropDeltaTriggers(db, 'position_blocks');
  await sql`DROP TABLE IF EXISTS row_position_blocks`.execute(db);
  await sql`DROP TABLE IF EXISTS row_position_defs`.execute(db);
}
