import type { WriteScope } from './base-writer.js';
import { linkEnds } from './link-cells.js';
import { recomputeLinkFormulas } from './link-formula-columns.js';
import { addLinks, linkedIds, removeLinks } from './links.repository.js';
import type { TableMeta } from './metadata.js';
import { findRows, findRowsInBase } from './rows.repository.js';
import { linkEvent } from './row-events.js';

/**
 * A self-link (a table linking to itself) has one column, on the `row_id` end: a deleted row's cell
 * holds only the rows it links to, so the rows of the table linking *to* it are kept under this
 * prefix and the column key (column keys never start with it).
 */
const LINKED_FROM = '<';

const isSelfLink = (column: { data?: unknown }) => {
  const data = column.data as { table_id?: unknown; other_table_id?: unknown } | null | undefined;
  return data?.table_id !== undefined && data.table_id === data.other_table_id;
};

/**
 * The links of rows about to be deleted, by row and link column key, so the delete's events carry
 * them to the operation log and a restore can put them back (deleting a row deletes its links).
 * `linkedFrom`: also the rows of a self-link linking to them (not needed when the whole table goes).
 */
export async function linksOfRows(w: WriteScope, table: TableMeta, rowIds: string[], linkedFrom = true): Promise<Map<string, Record<string, string[]>>> {
  const out = new Map<string, Record<string, string[]>>();
  if (rowIds.length === 0) return out;
  const keep = (linked: Map<string, string[]>, key: string) => {
    for (const [rowId, ids] of linked) if (ids.length > 0) out.set(rowId, { ...(out.get(rowId) ?? {}), [key]: ids });
  };
  for (const column of table.columns) {
    if (column.type !== 'link' || !column.data) continue;
    const ends = linkEnds(table, column);
    keep(await linkedIds(w.trx, w.base.id, ends.linkId, ends.side, rowIds), column.key);
    if (linkedFrom && isSelfLink(column)) keep(await linkedIds(w.trx, w.base.id, ends.linkId, 'other_row_id', rowIds), LINKED_FROM + column.key);
  }
  return out;
}

/** Link restored rows again to those of their former linked rows that still exist (both ways for a self-link). */
export async function restoreLinks(w: WriteScope, timeZone: string, table: TableMeta, rows: Array<{ rowId: string; links?: Record<string, string[]> }>): Promise<void> {
  for (const column of table.columns) {
    if (column.type !== 'link' || !column.data) continue;
    const ends = linkEnds(table, column);
    const toPair = ([rowId, other]: readonly [string, string]) => (ends.side === 'row_id' ? { rowId, otherRowId: other } : { rowId: other, otherRowId: rowId });
    const wanted = rows.flatMap((r) => (r.links?.[column.key] ?? []).map((other) => [r.rowId, other] as const));
    // A self-link's rows that linked to a restored row: the pair is (that row, the restored row).
    const from = isSelfLink(column) ? rows.flatMap((r) => (r.links?.[LINKED_FROM + column.key] ?? []).map((other) => [other, r.rowId] as const)) : [];
    if (wanted.length === 0 && from.length === 0) continue;
    const existing = await findRowsInBase(w.trx, w.base.id, [...new Set([...wanted.map(([, other]) => other), ...from.map(([other]) => other)])]);
    const pairs = [
      ...wanted.filter(([, other]) => existing.get(other)?.tableId === ends.otherTableId).map(toPair),
      ...from.filter(([other]) => existing.get(other)?.tableId === table._id).map(([other, rowId]) => ({ rowId: other, otherRowId: rowId })),
    ];
    await addLinks(w.trx, w.base.id, ends.linkId, pairs, w.now);
    const otherTable = w.meta.tables.find((t) => t._id === ends.otherTableId);
    // The rows whose cells show the restored links (for a self-link, both ends are the table's).
    const shown = pairs.flatMap((p) => (isSelfLink(column) ? [p.rowId, p.otherRowId] : [ends.side === 'row_id' ? p.otherRowId : p.rowId]));
    if (otherTable) await recomputeLinkFormulas(w, timeZone, otherTable, [...new Set(shown)]);
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
