import type { Executor } from '../../db/index.js';
import type { WriteScope } from './base-writer.js';
import { newShortId } from './ids.js';
import { loadMetadata } from './metadata.repository.js';
import type { BaseMetadata } from './metadata.js';
import { linkIdOf } from './structure.js';
import * as repo from './kept-tables.repository.js';
import { countRows } from './rows.repository.js';

/**
 * Kept tables: a table deleted into the trash keeps its rows in `base_rows` under its table id and its
 * links in `base_links` under its link ids. Every read of rows names a table of the base's metadata
 * and every read of links a link column of it, so once the table is out of the metadata its rows and
 * links are invisible to listings, views, SQL, rules, exports and copies (those read the ids
 * `storedIdsOf` gives), and the delete changes no row. New tables and links never take an id that
 * still has rows or links stored under it (`freeTableId`, `freeLinkId`); the trash brings a table back
 * by putting it into the metadata again, or purges it here in short batches.
 */

/** The table ids and link ids of the metadata: whole-base reads (archives, copies) read only these. */
export function storedIdsOf(meta: Pick<BaseMetadata, 'tables'>): { tableIds: string[]; linkIds: string[] } {
  const tables = Array.isArray(meta.tables) ? meta.tables : [];
  const linkIds = new Set<string>();
  for (const t of tables) for (const c of Array.isArray(t.columns) ? t.columns : []) {
    const id = linkIdOf(c);
    if (id !== null) linkIds.add(id);
  }
  return { tableIds: tables.map((t) => String(t._id)), linkIds: [...linkIds] };
}

/** A new table id: no table of the metadata has it and no row (of a trashed table) is stored under it. */
export function freeTableId(w: WriteScope): Promise<string> {
  return freeTableIdIn(w.trx, w.base.id, w.meta.tables.map((t) => t._id));
}

/** A table id not in `taken` with no row (of a trashed table, or of an import's unpublished table) stored under it in the base. */
export async function freeTableIdIn(db: Executor, baseId: number, taken: Iterable<string>, draw: (taken: string[]) => string = newShortId): Promise<string> {
  const used = [...taken];
  for (;;) {
    const id = draw(used);
    if (!(await repo.anyRowUnder(db, baseId, id))) return id;
    used.push(id);
  }
}

/** A new link id: no link column of the metadata has it and no link (of a trashed table) is stored under it. */
export async function freeLinkId(w: WriteScope): Promise<string> {
  const taken = storedIdsOf(w.meta).linkIds;
  for (;;) {
    const id = newShortId(taken);
    if (!(await repo.anyLinkUnder(w.trx, w.base.id, id))) return id;
    taken.push(id);
  }
}

/** Rows stored under a kept table's id (0 when a live table has the id now: those rows are not its). */
export async function keptRowCount(db: Executor, baseId: number, tableId: string): Promise<number> {
  const { tableIds } = storedIdsOf(await loadMetadata(db, baseId));
  return tableIds.includes(tableId) ? 0 : countRows(db, baseId, tableId);
}

export interface KeptTableIds {
  tableId: string;
  linkIds: string[];
}

/**
 * Deletes a kept table's rows and links for good, `batch` at a time, each batch its own short
 * statement (no transaction holds the base). Ids a live table or link column has taken since are left
 * alone (a new table only takes an id with nothing stored under it, so what is there is its own).
 * `onRows` sees each deleted batch's cells (JSON text) before the next, e.g. to find their files.
 */
export async function purgeKeptTable(
  db: Executor,
  baseId: number,
  kept: KeptTableIds,
  options: { batch?: number; onRows?: (cells: string[]) => Promise<void> } = {},
): Promise<{ rows: number; tableIdTaken: boolean }> {
  const batch = options.batch ?? 1000;
  const live = storedIdsOf(await loadMetadata(db, baseId));
  const tableIdTaken = live.tableIds.includes(kept.tableId);
  let deleted = 0;
  if (!tableIdTaken) {
    const upTo = await repo.maxRowId(db);
    for (;;) {
      const cells = await repo.deleteRowsUnder(db, baseId, kept.tableId, upTo, batch);
      if (cells.length > 0) await options.onRows?.(cells);
      deleted += cells.length;
      if (cells.length < batch) break;
    }
  }
  const upTo = await repo.maxLinkId(db);
  for (const linkId of kept.linkIds) {
    if (live.linkIds.includes(linkId)) continue;
    while ((await repo.deleteLinksUnder(db, baseId, linkId, upTo, batch)) === batch);
  }
  return { rows: deleted, tableIdTaken };
}

/**
 * Visits the cells (JSON text) of a base's stored rows, `batch` per read: of one table (`tableId`, kept
 * or live) or of all of them (live tables and trashed tables' kept rows alike).
 */
export async function visitStoredCells(db: Executor, baseId: number, tableId: string | undefined, visit: (cells: string[]) => void, batch = 1000): Promise<void> {
  for (let after: repo.CellsCursor | undefined; ; ) {
    const page = await repo.storedCellsPage(db, baseId, tableId, after, batch);
    if (page.cells.length > 0) visit(page.cells);
    if (page.cells.length < batch || !page.last) return;
    after = page.last;
  }
}

/**
 * Deletes all rows and links of a base being purged, `batch` per short statement (no transaction
 * holds the base; the base's own delete then cascades over nothing big). Safe to run again.
 */
export async function purgeBaseRows(db: Executor, baseId: number, batch = 1000): Promise<void> {
  while ((await repo.deleteBaseRows(db, baseId, batch)) === batch);
  while ((await repo.deleteBaseLinks(db, baseId, batch)) === batch);
}
