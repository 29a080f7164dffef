import type { Expression, SqlBool } from 'kysely';
import type { Executor } from '../../db/index.js';
import { executeIndexed, storedRowFromRecord, tableScope, type StoredRow } from '../rows/index.js';

/**
 * One page of a table's rows that satisfy `where` (SQL compiled by the filter engine), in id order
 * after `afterId`. Deadline scans walk the matches page by page and never hold the table in memory.
 */
export async function matchingRowsPage(
  db: Executor,
  baseId: number,
  tableId: string,
  where: Expression<SqlBool>,
  afterId: number,
  limit: number,
  /** SQLite: the row index to read (RowIndexes.hint). */
  indexedBy?: string,
): Promise<Array<{ id: number; row: StoredRow }>> {
  const query = db
    .selectFrom('base_rows')
    .select(['id', 'row_id', 'data', 'ctime', 'mtime', 'creator', 'last_modifier'])
    // The base and table as literals: the form a table's row indexes (rows/row-indexes.ts) are found by.
    .where(tableScope(baseId, tableId))
    .where('id', '>', afterId)
    .where(where)
    .orderBy('id')
    .limit(limit);
  const rows = await executeIndexed(db, query.compile(), indexedBy);
  return rows.map((r) => ({ id: Number(r.id), row: storedRowFromRecord(r) }));
}
