import { sql, type Kysely } from 'kysely';

/**
 * The operation log's appends of new rows (issue 28): such an operation no longer adds one row-index
 * entry per row (`operation_log_rows`), nor copies the rows' cells (they are in the rows). A row's
 * history finds its append by the row's creation time instead, through this index: one entry per
 * insert operation, none for any other write (a partial index; single-row updates do not pay for it).
 * See src/modules/history/row-operations.ts and insert-cells.ts.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX operation_log_inserts ON operation_log (base_id, op_time) WHERE op_type IN ('insert_row', 'insert_rows')`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX operation_log_inserts`.execute(db);
}
