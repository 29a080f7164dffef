import { sql, type Kysely } from 'kysely';
import { rowKey } from '../../shared/row-key.js';
import { isPostgres } from './helpers.js';

/** Entries converted per step (each a short read and one insert). */
const STEP = 5000;

/**
 * The operation log's row index keys a row by an integer (`row_key`, a 53-bit hash of its id:
 * shared/row-key.ts) instead of its 22-character id (issue 28): three integers per entry, a narrower
 * index (a 1,000-row write adds 1,000 entries; measured, the insert's time did not change beyond the
 * noise: docs/history.md). The entries there are converted (the hash is computed here, not in SQL).
 *
 * PostgreSQL: the log's `changes` are no longer compressed by the writing process; the server
 * compresses large values itself (TOAST), with lz4 where it was built with it (faster than pglz).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const pg = isPostgres(db);
  await sql`CREATE TABLE operation_log_row_keys (
    base_id bigint NOT NULL, row_key bigint NOT NULL, op_id bigint NOT NULL,
    CONSTRAINT operation_log_row_keys_pk PRIMARY KEY (base_id, row_key, op_id))${pg ? sql`` : sql` WITHOUT ROWID`}`.execute(db);
  let after: { base_id: number; row_id: string; op_id: number } | undefined;
  for (;;) {
    const where = after ? sql`WHERE (base_id, row_id, op_id) > (${after.base_id}, ${after.row_id}, ${after.op_id})` : sql``;
    const { rows } = await sql<{ base_id: number | string; row_id: string; op_id: number | string }>`
      SELECT base_id, row_id, op_id FROM operation_log_rows ${where} ORDER BY base_id, row_id, op_id LIMIT ${STEP}`.execute(db);
    if (rows.length === 0) break;
    const values = rows.map((r) => sql`(${Number(r.base_id)}, ${rowKey(r.row_id)}, ${Number(r.op_id)})`);
    for (let i = 0; i < values.length; i += 500) {
      await sql`INSERT INTO operation_log_row_keys (base_id, row_key, op_id) VALUES ${sql.join(values.slice(i, i + 500))} ON CONFLICT DO NOTHING`.execute(db);
    }
    const last = rows[rows.length - 1]!;
    after = { base_id: Number(last.base_id), row_id: last.row_id, op_id: Number(last.op_id) };
    if (rows.length < STEP) break;
  }
  await sql`DROP TABLE operation_log_rows`.execute(db);
  await sql`ALTER TABLE operation_log_row_keys RENAME TO operation_log_rows`.execute(db);
  if (pg) {
    const { rows: lz4 } = await sql`SELECT 1 FROM pg_settings WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)`.execute(db);
    if (lz4.length > 0) await sql`ALTER TABLE operation_log ALTER COLUMN changes SET COMPRESSION lz4`.execute(db);
  }
}

export async function down(): Promise<void> {
  // The row ids cannot be recovered from their keys (they are in each operation's changes).
}
