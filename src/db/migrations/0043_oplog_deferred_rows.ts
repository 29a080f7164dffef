import { sql, type Kysely } from 'kysely';

/**
 * The operation log's row index on SQLite is filled in batches for single-row changes (issue 28):
 * such an operation carries its row's key in `operation_log.row_key` (a plain column, no index) and no
 * `operation_log_rows` entry is written in the write's transaction; `operation_log_indexed.indexed_to`
 * is the id up to which every operation has its entries. A batch step (and every reader of the row
 * index, first) indexes the operations above it (src/modules/history/row-index.ts).
 *
 * PostgreSQL writes the entries in the write's one statement as before; the column stays empty there
 * and the watermark is not used. Every existing operation has its entries: the watermark starts at the
 * newest id.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE operation_log ADD COLUMN row_key bigint`.execute(db);
  await sql`CREATE TABLE operation_log_indexed (id integer PRIMARY KEY, indexed_to bigint NOT NULL)`.execute(db);
  await sql`INSERT INTO operation_log_indexed (id, indexed_to) SELECT 1, COALESCE(MAX(id), 0) FROM operation_log`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE operation_log_indexed`.execute(db);
  await sql`ALTER TABLE operation_log DROP COLUMN row_key`.execute(db);
}
