import { sql, type SqlBool } from 'kysely';
import type { Executor } from '../../db/index.js';

/**
 * Staged rows: the rows a multi-batch write (a CSV/XLSX import) appends are stored under a staging
 * table id, `~` + the write's 3-character stage code + the real table's 4-character id, which no table
 * of any base has. Every read of rows names a real table id from the base's metadata (listings, views,
 * SQL, export, deadline scans, the whole-base read), so staged rows are invisible to all of them without
 * a filter; the two whole-base copies (dtable-copy, the base archive) read only the metadata's table ids
 * (`storedIdsOf`, kept-tables.ts).
 * Publishing moves them to the real table id in the transaction that releases the write's held events,
 * so rows and their events appear together; undoing deletes them.
 */
export const STAGING_PREFIX = '~';

/** A stage code: 3 letters or digits (unique among a base's unfinished staged writes; the caller ensures it). */
export const STAGE_CODE = /^[A-Za-z0-9]{3}$/;

export function stagingTableId(stage: string, tableId: string): string {
  return `${STAGING_PREFIX}${stage}${tableId}`;
}

/** Moves a stage's rows of `tableIds` into their tables (in the publishing transaction). Returns how many. */
export async function publishStaged(trx: Executor, baseId: number, stage: string, tableIds: readonly string[]): Promise<number> {
  let moved = 0;
  for (const tableId of tableIds) {
    const result = await trx
      .updateTable('base_rows')
      .set({ table_id: tableId })
      .where('base_id', '=', baseId)
      .where('table_id', '=', stagingTableId(stage, tableId))
      .executeTakeFirst();
    moved += Number(result.numUpdatedRows);
  }
  return moved;
}

/** Deletes a stage's rows of `tableIds` (the staged write was undone). */
export async function dropStaged(trx: Executor, baseId: number, stage: string, tableIds: readonly string[]): Promise<void> {
  for (const tableId of tableIds) {
    await trx.deleteFrom('base_rows').where('base_id', '=', baseId).where('table_id', '=', stagingTableId(stage, tableId)).execute();
  }
}

/** Deletes every staged row of a stage in the base, whatever its table (undoing the staged write). */
export async function dropStage(trx: Executor, baseId: number, stage: string): Promise<void> {
  await trx.deleteFrom('base_rows').where('base_id', '=', baseId).where('table_id', 'like', `${STAGING_PREFIX}${stage}%`).execute();
}

/** WHERE term for reads of a whole base's rows: no staged row (the copies now read the metadata's table ids instead). */
export const notStaged = sql<SqlBool>`base_rows.table_id not like ${STAGING_PREFIX + '%'}`;
