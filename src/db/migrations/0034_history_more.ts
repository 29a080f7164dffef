import { sql, type Kysely } from 'kysely';
import { isPostgres } from './helpers.js';

/**
 * A cheaper operation log write (issue 28): the log is appended in every write's transaction, so each
 * index it keeps up is paid on every write.
 *  - `operation_log_time` goes: pruning walks the log from its oldest id (ids grow with time) and
 *    needs no index of its own.
 *  - SQLite: `operation_log_rows` becomes a WITHOUT ROWID table, one b-tree (its key) instead of a
 *    rowid table plus the key's index: each row of a write is written once, not twice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('operation_log_time').execute();
  if (isPostgres(db)) return;
  await sql`CREATE TABLE operation_log_rows_next (
    base_id bigint NOT NULL, row_id varchar(32) NOT NULL, op_id bigint NOT NULL,
    CONSTRAINT operation_log_rows_pk PRIMARY KEY (base_id, row_id, op_id)) WITHOUT ROWID`.execute(db);
  await sql`INSERT INTO operation_log_rows_next (base_id, row_id, op_id) SELECT base_id, row_id, op_id FROM operation_log_rows`.execute(db);
  await sql`DROP TABLE operation_log_rows`.execute(db);
  await sql`ALTER TABLE operation_log_rows_next RENAME TO operation_log_rows`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('operation_log_time').on('operation_log').column('op_time').execute();
}
