import type { Executor } from '../../db/index.js';
import { linkIdOf, type LostLinkColumn, type RestoreScope, type StoredRow, type TableDeletion, type TableMeta } from '../rows/index.js';
import * as repo from './table-trash.repository.js';

/** What `trashed_tables.meta` holds. */
interface KeptTable {
  table: TableMeta;
  linkColumns: LostLinkColumn[];
}

/** What each `trashed_table_rows.data` holds. */
interface KeptRow {
  row: StoredRow;
  links?: Record<string, string[]>;
}

/** Rows put back per step of a restore. */
const RESTORE_PAGE = 500;

/**
 * The table-delete hook (in the deleting write's transaction): the table, the link columns other
 * tables lose with it, and its rows with their links go to the trash before they are deleted.
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
  const kept: KeptTable = { table: structuredClone(d.table), linkColumns };
  const trashId = await repo.insertTrashedTable(d.trx, {
    base_id: d.base.id,
    table_id: d.table._id,
    table_name: d.table.name,
    deleted_by: d.actor.user,
    deleted_at: d.now,
    row_count: 0,
    meta: JSON.stringify(kept),
  });
  let count = 0;
  for await (const page of d.pages()) {
    await repo.insertTrashedRows(d.trx, trashId, page.map((r) => ({ row_id: r.row._id, data: JSON.stringify(r satisfies KeptRow) })));
    count += page.length;
  }
  if (count > 0) await d.trx.updateTable('trashed_tables').set({ row_count: count }).where('id', '=', trashId).execute();
}

/**
 * Puts a trashed table back inside a restore write: its structure, the other tables' link columns,
 * its rows under their ids (insert events as for any write) with their links to rows that exist.
 * Comments were never deleted with the rows; files are the base's and stayed. The trash entry goes.
 */
export async function restoreTrashedTable(scope: RestoreScope, trash: repo.TrashedTableRow): Promise<TableMeta> {
  const kept = JSON.parse(trash.meta) as KeptTable;
  const table = scope.structure.addTable(kept.table, kept.linkColumns);
  for (let after = 0; ; ) {
    const page = await repo.trashedRowsPage(scope.trx, trash.id, after, RESTORE_PAGE);
    if (page.length === 0) break;
    const rows = page.map((p) => JSON.parse(p.data) as KeptRow);
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

export function presentTrashedTable(t: repo.TrashedTableRow) {
  return {
    id: Number(t.id),
    table_id: t.table_id,
    table_name: t.table_name,
    deleted_by: t.deleted_by,
    deleted_at: new Date(Number(t.deleted_at)).toISOString(),
    row_count: Number(t.row_count),
  };
}

export async function purgeTrashedTables(db: Executor, cutoff: number): Promise<number> {
  let purged = 0;
  for (let i = 0; i < 50; i++) {
    const ids = await repo.expiredTrashedTables(db, cutoff, 100);
    for (const id of ids) await repo.deleteTrashedTable(db, id);
    purged += ids.length;
    if (ids.length < 100) break;
  }
  return purged;
}
