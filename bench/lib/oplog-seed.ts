/**
 * A long operation log for the history benches (`history.bench.ts`, `history-update.instructions.ts`),
 * written by SQL instead of through the API.
 */
import { sql } from 'kysely';
import { rowKey } from '../../src/shared/row-key.js';
import type { TestApp } from '../../test/helpers/index.js';

/**
 * `count` modify operations of one row each, spread over `rows` rows (`row0`, `row1`, …) of a base,
 * written by SQL in steps of 200,000 (the HTTP path would take hours for 10 million): each step one
 * INSERT … SELECT over a number series for the operations, one for their row index entries.
 */
export async function seedOperations(t: TestApp, baseId: number, count: number, rows: number): Promise<void> {
  const db = t.container.db;
  // The row index keys rows by rowKey (computed in JS): `row<n>`'s key, as a table to join.
  await sql`CREATE TABLE IF NOT EXISTS bench_row_keys (n bigint PRIMARY KEY, k bigint NOT NULL)`.execute(db);
  for (let n = 0; n < rows; n += 500) {
    const keys = Array.from({ length: Math.min(500, rows - n) }, (_, i) => sql`(${n + i}, ${rowKey(`row${n + i}`)})`);
    await sql`INSERT INTO bench_row_keys (n, k) VALUES ${sql.join(keys)} ON CONFLICT DO NOTHING`.execute(db);
  }
  const step = 200_000;
  for (let from = 0; from < count; from += step) {
    const to = Math.min(count, from + step) - 1;
    const series =
      t.dialect === 'postgres'
        ? sql`SELECT g AS n FROM generate_series(${sql.lit(from)}::bigint, ${sql.lit(to)}::bigint) g`
        : sql`WITH RECURSIVE s(n) AS (SELECT ${sql.lit(from)} UNION ALL SELECT n + 1 FROM s WHERE n < ${sql.lit(to)}) SELECT n FROM s`;
    // (Literals: SQLite binds a JS number as a real, and `row' || n` would read `row0.0`.)
    await db.transaction().execute(async (trx) => {
      const { rows: last } = await sql<{ id: number | null }>`SELECT max(id) AS id FROM operation_log`.execute(trx);
      const after = Number(last[0]?.id ?? 0);
      // Each operation names the row its index entry points to (a row's history keeps only operations that name it).
      await sql`INSERT INTO operation_log (base_id, write_id, op_type, table_id, op_user, op_app, op_time, row_count, changes, reverts)
        SELECT ${baseId}, 'seed', 'modify_row', '0000', 'bench@auth.local', NULL, n, 1,
               '{"o":"modify_row","t":"0000","rows":[{"r":"row' || (n % ${sql.lit(rows)}) || '","n":"x","a":{"0000":"new"},"b":{"0000":"old"}}]}', NULL
          FROM (${series}) AS q`.execute(trx);
      await sql`INSERT INTO operation_log_rows (base_id, row_key, op_id)
        SELECT o.base_id, k.k, o.id FROM operation_log o JOIN bench_row_keys k ON k.n = o.op_time % ${sql.lit(rows)}
         WHERE o.id > ${after} AND o.base_id = ${baseId}`.execute(trx);
    });
  }
}
