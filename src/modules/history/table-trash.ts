import type { Executor } from '../../db/index.js';
import { notFound } from '../../shared/errors.js';
import { deleteTableComments } from '../comments/index.js';
import { keptRowCount, linkIdOf, loadMetadata, purgeKeptTable, storedIdsOf, visitStoredCells, type LostLinkColumn, type RestoreScope, type StoredRow, type TableDeletion, type TableMeta } from '../rows/index.js';
import * as repo from './table-trash.repository.js';
import { collectAssetPaths } from './snapshot-files.js';
import { continueLogScan, LOG_FILE_SCAN_MAX, namedSince, startLogScan, type LogScan } from './logged-files.js';
import { filesNamedByRefs, filesRecordedFrom } from './file-refs.js';

/** What `trashed_tables.meta` holds. */
interface KeptTable {
  table: TableMeta;
  linkColumns: LostLinkColumn[];
  /**
   * True: the rows and links stayed where they were, under the table's ids (rows/kept-tables.ts).
   * Absent: an entry from before (migration 0030's layout), its rows copied to `trashed_table_rows`.
   */
  inPlace?: boolean;
  /**
   * The files (`/asset/…` paths) the kept rows named, found when a purge starts, so that a purge which
   * stopped half-way still deletes them. Absent until a purge started.
   */
  files?: string[];
  /**
   * How far the purge's walk of the operation log for those files got (logged-files.ts): a purge that
   * stopped, or ran out of its budget on the request path, resumes there. Absent until it began.
   */
  logScan?: LogScan;
}

/** Deletes files of a base (the assets module's storage); paths that are no file are left alone. */
export interface BaseFiles {
  remove(baseId: number, paths: string[]): Promise<void>;
}

/** What each `trashed_table_rows.data` holds (entries kept before rows stayed in place). */
interface CopiedRow {
  row: StoredRow;
  links?: Record<string, string[]>;
}

/** Rows put back per step of a restore of a copied entry. */
const RESTORE_PAGE = 500;
/** Rows, links and comments deleted per statement of a purge. */
const PURGE_BATCH = 1000;

/**
 * The table-delete hook (in the deleting write's transaction): records the table's structure and the
 * link columns other tables lose with it. Its rows and links stay where they are (the rows module
 * stops deleting them when a hook is registered), so this costs the same for any number of rows.
 */
export async function keepDeletedTable(d: TableDeletion): Promise<void> {
  const linkIds = new Set(d.table.columns.map(linkIdOf).filter((id): id is string => id !== null));
  const linkColumns: LostLinkColumn[] = [];
  for (const t of d.meta.tables) {
    if (t._id === d.table._id) continue;
    t.columns.forEach((column, index) => {
      const linkId = linkIdOf(column);
      if (linkId !== null && linkIds.has(linkId)) linkColumns.push({ tableId: t._id, column: structuredClone(column), after: t.columns[index - 1]?.key ?? '' });
    });
  }
  const kept: KeptTable = { table: structuredClone(d.table), linkColumns, inPlace: true };
  await repo.insertTrashedTable(d.trx, {
    base_id: d.base.id,
    table_id: d.table._id,
    table_name: d.table.name,
    deleted_by: d.actor.user,
    deleted_at: d.now,
    // Counted when listed (kept-tables.ts): counting here would cost the delete a pass over the rows.
    row_count: 0,
    meta: JSON.stringify(kept),
  });
}

/**
 * Puts a trashed table back inside a restore write: its structure and the other tables' link columns;
 * its rows (under their ids, with insert events as for any write) and their links to rows that still
 * exist. Comments were never deleted with the rows; files are the base's and stayed. The trash entry goes.
 */
export async function restoreTrashedTable(scope: RestoreScope, trash: repo.TrashedTableRow): Promise<TableMeta> {
  const kept = JSON.parse(trash.meta) as KeptTable;
  if (kept.inPlace) {
    // Taken first, in the write: a purge that started meanwhile finds it gone (or this finds it claimed).
    if (!(await repo.takeTrashedTable(scope.trx, trash.id))) throw notFound(`Table ${trash.id} is not in the trash.`);
    return scope.structure.revealTable(kept.table, kept.linkColumns);
  }
  const table = scope.structure.addTable(kept.table, kept.linkColumns);
  for (let after = 0; ; ) {
    const page = await repo.trashedRowsPage(scope.trx, trash.id, after, RESTORE_PAGE);
    if (page.length === 0) break;
    const rows = page.map((p) => JSON.parse(p.data) as CopiedRow);
    await scope.reinsert(
      table._id,
      rows.map((r) => ({ rowId: r.row._id, data: r.row.data, creator: r.row._creator, ctime: Number(r.row._ctime), ...(r.links ? { links: r.links } : {}) })),
    );
    after = page[page.length - 1]!.id;
    if (page.length < RESTORE_PAGE) break;
  }
  await repo.deleteTrashedTable(scope.trx, trash.id);
  return table;
}

export async function presentTrashedTable(db: Executor, t: repo.TrashedTableRow) {
  const kept = JSON.parse(t.meta) as KeptTable;
  return {
    id: Number(t.id),
    table_id: t.table_id,
    table_name: t.table_name,
    deleted_by: t.deleted_by,
    deleted_at: new Date(Number(t.deleted_at)).toISOString(),
    row_count: kept.inPlace ? await keptRowCount(db, Number(t.base_id), t.table_id) : Number(t.row_count),
  };
}

/**
 * Deletes a trashed table for good: claims the entry (hidden from the listing and from restores, and
 * found again by the tick if this stops half-way), notes the files its rows name, deletes its rows,
 * links and comments 1,000 per short statement, then the files no other stored row names (rows of
 * live tables and of other trashed tables; snapshots keep their own copies) and no value the
 * operation log can put back names (logged-files.ts), then the entry. False when
 * the entry is gone (restored meanwhile).
 *
 * The log is walked whole, but at most `logBudget` operations per call: when the walk is not done,
 * the entry stays (claimed: hidden, not restorable) with the walk's progress, and the tick (no budget)
 * finishes it. Every step is saved, so a purge that stops anywhere leaves neither rows nor files.
 */
export async function purgeTrashedTable(db: Executor, trashId: number, files?: BaseFiles, logBudget = LOG_FILE_SCAN_MAX): Promise<boolean> {
  const trash = await repo.claimTrashedTable(db, trashId);
  if (!trash) return false;
  const kept = JSON.parse(trash.meta) as KeptTable;
  if (kept.inPlace) {
    const baseId = Number(trash.base_id);
    // A live table took the id (after a restore and a new delete): what is stored under it is its own.
    const idTaken = storedIdsOf(await loadMetadata(db, baseId)).tableIds.includes(trash.table_id);
    if (files && !idTaken && kept.files === undefined) {
      const named = new Set<string>();
      await visitStoredCells(db, baseId, trash.table_id, (cells) => cells.forEach((c) => collectAssetPaths(c, named)), PURGE_BATCH);
      kept.files = [...named];
      await repo.updateTrashedMeta(db, trash.id, JSON.stringify(kept));
    }
    const linkIds = kept.table.columns.map(linkIdOf).filter((id): id is string => id !== null);
    const { tableIdTaken } = await purgeKeptTable(db, baseId, { tableId: trash.table_id, linkIds }, { batch: PURGE_BATCH });
    if (!tableIdTaken) while ((await deleteTableComments(db, baseId, trash.table_id, PURGE_BATCH)) === PURGE_BATCH);
    if (files && kept.files && kept.files.length > 0 && !(await removeUnnamedFiles(db, baseId, trash, kept, files, logBudget))) return true;
  }
  await repo.deleteTrashedTable(db, trash.id, PURGE_BATCH);
  return true;
}

/**
 * Deletes those of the noted files that no row stored in the base names any more, nor a row of
 * another trash entry of the older layout (`trashed_table_rows`: a restore of that entry brings it
 * back), nor a value the operation log can still put back (a row deleted earlier, in the row trash, or
 * a cell's old value; not those of the purged table's own rows). The log's operations with recorded
 * files (file-refs.ts: nearly all, all once the backfill is done) are asked by path: work in
 * proportion to the files, whatever the log's length. Only older ones are walked, in steps saved in
 * the entry. Once that walk is done, the stored rows are read again, then the recorded entries, then
 * the files go. False: the walk is not done (`logBudget` spent; the tick continues it).
 */
async function removeUnnamedFiles(db: Executor, baseId: number, purged: repo.TrashedTableRow, kept: KeptTable, files: BaseFiles, logBudget: number): Promise<boolean> {
  const save = async (scan: LogScan) => {
    kept.logScan = scan;
    await repo.updateTrashedMeta(db, purged.id, JSON.stringify(kept));
  };
  const recordedFrom = await filesRecordedFrom(db);
  if (!kept.logScan) {
    const stored = await storedNames(db, baseId, purged);
    await save(await startLogScan(db, baseId, kept.files!.filter((p) => !stored.has(p)), recordedFrom));
  }
  const scan = await continueLogScan(db, baseId, purged.table_id, kept.logScan!, save, logBudget);
  if (!scan.done) return false;
  // The walk may have taken a while (or resumed after a stop): what is stored now, what was logged
  // without entries after the walk's top (a walk saved before the entries began), and the entries.
  const stored = await storedNames(db, baseId, purged);
  const loose = scan.wanted.filter((p) => !stored.has(p) && !scan.named.includes(p));
  const since = await namedSince(db, baseId, purged.table_id, loose, scan.top, recordedFrom);
  const recorded = await filesNamedByRefs(db, baseId, purged.table_id, loose.filter((p) => !since.has(p)));
  const unnamed = loose.filter((p) => !since.has(p) && !recorded.has(p));
  if (unnamed.length > 0) await files.remove(baseId, unnamed);
  return true;
}

/** The files the rows stored in the base name (one pass over them) and those of other entries of the older layout. */
async function storedNames(db: Executor, baseId: number, purged: repo.TrashedTableRow): Promise<Set<string>> {
  const named = new Set<string>();
  await visitStoredCells(db, baseId, undefined, (cells) => cells.forEach((c) => collectAssetPaths(c, named)), PURGE_BATCH);
  await repo.visitOldTrashRows(db, baseId, Number(purged.id), (data) => collectAssetPaths(data, named), PURGE_BATCH);
  return named;
}

/** The tick: trashed tables deleted before `cutoff` (and purges that stopped half-way), 100 per step. */
export async function purgeTrashedTables(db: Executor, cutoff: number, files?: BaseFiles): Promise<number> {
  let purged = 0;
  for (let i = 0; i < 50; i++) {
    const ids = await repo.expiredTrashedTables(db, cutoff, 100);
    // No budget for the log's walk here: a purge the request path left unfinished ends now.
    for (const id of ids) if (await purgeTrashedTable(db, id, files, Number.POSITIVE_INFINITY)) purged++;
    if (ids.length < 100) break;
  }
  return purged;
}
