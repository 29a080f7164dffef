import { sql } from 'kysely';
import type { Executor } from '../../db/index.js';
import { deleteTrashedTable } from './table-trash.repository.js';
import { indexPendingRows } from './row-index.js';
import { purgeBaseFiles } from './file-refs.js';

/**
 * A purged base's history goes with it, `batch` per short statement (no transaction holds the base):
 * its operations' row index entries and file entries, its operations, its table trash (entries and copied rows). Safe
 * to run again after an interruption.
 */
export async function purgeBaseHistory(db: Executor, baseId: number, batch = 1000): Promise<void> {
  // Entries not yet written (row-index.ts) are written first, so none appear after the deletion below.
  await indexPendingRows(db);
  // The row index's key starts with the base: each batch is one range of it.
  for (;;) {
    const result = await sql`DELETE FROM operation_log_rows WHERE (base_id, row_key, op_id) IN (
      SELECT base_id, row_key, op_id FROM operation_log_rows WHERE base_id = ${baseId} LIMIT ${batch})`.execute(db);
    if (Number(result.numAffectedRows ?? 0) < batch) break;
  }
  await purgeBaseFiles(db, baseId, batch);
  for (;;) {
    const ids = await db.selectFrom('operation_log').select('id').where('base_id', '=', baseId).limit(batch).execute();
    if (ids.length > 0) await db.deleteFrom('operation_log').where('id', 'in', ids.map((r) => Number(r.id))).execute();
    if (ids.length < batch) break;
  }
  for (;;) {
    const entries = await db.selectFrom('trashed_tables').select('id').where('base_id', '=', baseId).limit(100).execute();
    for (const entry of entries) await deleteTrashedTable(db, Number(entry.id), batch);
    if (entries.length < 100) break;
  }
}
