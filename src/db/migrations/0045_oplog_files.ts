import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.js';

/**
 * The files the operation log can put back, recorded at write time (issue 28): one entry per
 * (base, file path, operation) for every operation whose kept values (a changed cell's old value, a
 * deleted row's cells) name a file (`/asset/<uuid>/<path>`). A trashed table's purge looks up only
 * its own files' entries instead of walking the base's whole log
 * (src/modules/history/file-refs.ts).
 *
 * `operation_log_files_from.from_id`: every operation with an id from there on has its entries. It
 * starts after the newest operation (the older ones are walked as before, or backfilled by the
 * scheduler's tick in batches, which moves it down to 1).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE operation_log_files (
    base_id bigint NOT NULL, path text NOT NULL, op_id bigint NOT NULL,
    CONSTRAINT operation_log_files_pk PRIMARY KEY (base_id, path, op_id))${isPostgres(db) ? sql`` : sql` WITHOUT ROWID`}`.execute(db);
  await sql`CREATE TABLE operation_log_files_from (id integer PRIMARY KEY, from_id bigint NOT NULL)`.execute(db);
  await sql`INSERT INTO operation_log_files_from (id, from_id) SELECT 1, COALESCE(MAX(id), 0) + 1 FROM operation_log`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE operation_log_files_from`.execute(db);
  await sql`DROP TABLE operation_log_files`.execute(db);
}
