import type { WriteScope } from './base-writer.js';
import { linkEnds } from './link-cells.js';
import { recomputeLinkFormulas } from './link-formula-columns.js';
import { addLinks, linkedIds, removeLinks } from './links.repository.js';
import type { TableMeta } from './metadata.js';
import { findRows, findRowsInBase } from './rows.repository.js';
import { linkEvent } from './row-events.js';

/**
 * The links of rows about to be deleted, by row and link column key, so the delete's events carry
 * them to the operation log and a restore can put them back (deleting a row deletes its links).
 */
export async function linksOfRows(w: WriteScope, table: TableMeta, rowIds: string[]): Promise<Map<string, Record<string, string[]>>> {
  const out = new Map<string, Record<string, string[]>>();
  if (rowIds.length === 0) return out;
  for (const column of table.columns) {
    if (column.type !== 'link' || !column.data) continue;
    const ends = linkEnds(table, column);
    const linked = await linkedIds(w.trx, w.base.id, ends.linkId, ends.side, rowIds);
    for (const [rowId, ids] of linked) {
      if (ids.length === 0) continue;
      out.set(rowId, { ...(out.get(rowId) ?? {}), [column.key]: ids });
    }
  }
  return out;
}

/** Link restored rows again to those of their former linked rows that still exist. */
export async function restoreLinks(w: WriteScope, timeZone: string, table: TableMeta, rows: Array<{ rowId: string; links?: Record<string, string[]> }>): Promise<void> {
  for (const column of table.columns) {
    if (column.type !== 'link' || !column.data) continue;
    const ends = linkEnds(table, column);
    const wanted = rows.flatMap((r) => (r.links?.[column.key] ?? []).map((other) => [r.rowId, other] as const));
    if (wanted.length === 0) continue;
    const existing = await findRowsInBase(w.trx, w.base.id, [...new Set(wanted.map(([, other]) => other))]);
    const pairs = wanted
      .filter(([, other]) => existing.get(other)?.tableId === ends.otherTableId)
      .map(([rowId, other]) => (ends.side === 'row_id' ? { rowId, otherRowId: other } : { rowId: other, otherRowId: rowId }));
    await addLinks(w.trx, w.base.id, ends.linkId, pairs, w.now);
    const otherTable = w.meta.tables.find((t) => t._id === ends.otherTableId);
    if (otherTable) await recomputeLinkFormulas(w, timeZone, otherTable, [...new Set(pairs.map((p) => (ends.side === 'row_id' ? p.otherRowId : p.rowId)))]);
  }
}

/** Set one row's link cell to `ids` (those that still exist), with its link event; true when it changed. */
export async function setRowLinks(w: WriteScope, timeZone: string, table: TableMeta, rowId: string, columnKey: string, ids: string[]): Promise<boolean> {
  const column = table.columns.find((c) => c.key === columnKey && c.type === 'link' && c.data);
  const row = (await findRows(w.trx, w.base.id, table._id, [rowId])).get(rowId);
  if (!column || !row) return false;
  const ends = linkEnds(table, column);
  const current = (await linkedIds(w.trx, w.base.id, ends.linkId, ends.side, [rowId])).get(rowId) ?? [];
  const existing = await findRowsInBase(w.trx, w.base.id, ids);
  const wanted = ids.filter((id) => existing.get(id)?.tableId === ends.otherTableId);
  const pair = (other: string) => (ends.side === 'row_id' ? { rowId, otherRowId: other } : { rowId: other, otherRowId: rowId });
  const stale = current.filter((id) => !wanted.includes(id));
  const fresh = wanted.filter((id) => !current.includes(id));
  if (stale.length === 0 && fresh.length === 0) return false;
  await removeLinks(w.trx, w.base.id, ends.linkId, stale.map(pair));
  await addLinks(w.trx, w.base.id, ends.linkId, fresh.map(pair), w.now);
  w.emit([linkEvent(w.base, table, row, column, current, wanted, w.actor, w.now)]);
  await recomputeLinkFormulas(w, timeZone, table, [rowId]);
  const otherTable = w.meta.tables.find((t) => t._id === ends.otherTableId);
  if (otherTable) await recomputeLinkFormulas(w, timeZone, otherTable, [...stale, ...fresh]);
  return true;
}
