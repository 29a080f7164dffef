import { sql, type SqlBool } from 'kysely';
import type { Executor } from '../../db/index.js';

/**
 * Staged rows: the rows a multi-batch write (a CSV/XLSX import) appends to existing tables are stored
 * under a staging table id, `~` + the write's 3-character stage code + the real table's 4-character id,
 * which no table of any base has. (The rows of its new tables, which are in no metadata until the
 * publish, go under those tables' own ids from the start: no read names them either, and the publish
 * moves nothing; `dropUnlisted` deletes them on an undo.) Every read of rows names a real table id from the base's metadata (listings, views,
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

/**
 * Rows per statement when staged rows are moved or deleted: a million-row import's rows in one UPDATE
 * outlast PostgreSQL's statement timeout (DATABASE_STATEMENT_TIMEOUT_MS, 30 s) on a busy machine; in
 * steps of this size each statement is short (an index range of `(base_id, table_id, id)`), and the
 * steps run in the caller's one transaction, so readers still see all of the rows move or none.
 */
export const STAGED_STEP = 10_000;

/** Moves a stage's rows of `tableIds` into their tables (in the publishing transaction). Returns how many. */
export async function publishStaged(trx: Executor, baseId: number, stage: string, tableIds: readonly string[], step = STAGED_STEP): Promise<number> {
  let moved = 0;
  for (const tableId of tableIds) {
    const staged = stagingTableId(stage, tableId);
    for (;;) {
      const ids = trx.selectFrom('base_rows').select('id').where('base_id', '=', baseId).where('table_id', '=', staged).orderBy('id').limit(step);
      const result = await trx.updateTable('base_rows').set({ table_id: tableId }).where('id', 'in', ids).executeTakeFirst();
      moved += Number(result.numUpdatedRows);
      if (Number(result.numUpdatedRows) < step) break;
    }
  }
  return moved;
}

/** Deletes every staged row of a stage in the base, whatever its table (undoing the staged write), a step at a time. */
export async function dropStage(trx: Executor, baseId: number, stage: string, step = STAGED_STEP): Promise<void> {
  // The stage's staging table ids first (one pass over the base's index), then each as an index range.
  const staged = await trx.selectFrom('base_rows').select('table_id').distinct().where('base_id', '=', baseId).where('table_id', 'like', `${STAGING_PREFIX}${stage}%`).execute();
  for (const { table_id } of staged) {
    for (;;) {
      const ids = trx.selectFrom('base_rows').select('id').where('base_id', '=', baseId).where('table_id', '=', table_id).orderBy('id').limit(step);
      const result = await trx.deleteFrom('base_rows').where('id', 'in', ids).executeTakeFirst();
      if (Number(result.numDeletedRows) < step) break;
    }
  }
}

/**
 * Deletes every row stored under `tableIds` in the base, a step at a time: the rows a staged write put
 * into its new tables (in no metadata) when it is undone. The caller passes only ids no listed table has.
 */
export async function dropUnlisted(trx: Executor, baseId: number, tableIds: readonly string[], step = STAGED_STEP): Promise<void> {
  for (const tableId of tableIds) {
    for (;;) {
      const ids = trx.selectFrom('base_rows').select('id').where('base_id', '=', baseId).where('table_id', '=', tableId).orderBy('id').limit(step);
      const result = await trx.deleteFrom('base_rows').where('id', 'in', ids).executeTakeFirst();
      if (Number(result.numDeletedRows) < step) break;
    }
  }
}

/** WHERE term for reads of a whole base's rows: no staged row (the copies now read the metadata's table ids instead). */
export const notStaged = sql<SqlBool>`base_rows.table_id not like ${STAGING_PREFIX + '%'}`;
