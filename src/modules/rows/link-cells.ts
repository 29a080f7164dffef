import type { Executor } from '../../db/index.js';
import { linkedIds, type LinkSide } from './links.repository.js';
import type { BaseMetadata, ColumnMeta, TableMeta } from './metadata.js';
import { displayText, type LinkCell, type LinkCells, type StoredRow } from './present.js';
import { findRows } from './rows.repository.js';

/** Link cells in list/get responses show at most this many linked rows (the original's 5.3 rule). */
export const LINK_CELL_LIMIT = 50;

export interface LinkColumnData {
  link_id: string;
  table_id: string;
  other_table_id: string;
  display_column_key?: string;
}

export interface LinkEnds {
  linkId: string;
  /** Which end of `base_links` this table's rows are stored on. */
  side: LinkSide;
  otherTableId: string;
}

/** Both tables' link columns share `{link_id, table_id, other_table_id}`; the side follows from the table. */
export function linkEnds(table: TableMeta, column: ColumnMeta): LinkEnds {
  const data = column.data as unknown as LinkColumnData;
  if (data.table_id === table._id) return { linkId: data.link_id, side: 'row_id', otherTableId: data.other_table_id };
  return { linkId: data.link_id, side: 'other_row_id', otherTableId: data.table_id };
}

/** The column a linked row is shown by: the link's display column if it still exists, else the first column. */
export function displayColumn(otherTable: TableMeta | undefined, column: ColumnMeta): ColumnMeta | undefined {
  if (!otherTable) return undefined;
  const key = (column.data as { display_column_key?: unknown } | null)?.display_column_key;
  return otherTable.columns.find((c) => c.key === key) ?? otherTable.columns[0];
}

/** `{row_id, display_value}` lists for `rowIds`, one map per link column among `columns`. */
export async function loadLinkCells(
  db: Executor,
  baseId: number,
  meta: BaseMetadata,
  table: TableMeta,
  columns: ColumnMeta[],
  rowIds: string[],
  limit = LINK_CELL_LIMIT,
): Promise<LinkCells> {
  const cells: LinkCells = new Map();
  if (rowIds.length === 0) return cells;
  for (const column of columns) {
    if (column.type !== 'link') continue;
    const ends = linkEnds(table, column);
    const linked = await linkedIds(db, baseId, ends.linkId, ends.side, rowIds);
    const shown = new Map<string, string[]>();
    for (const [rowId, ids] of linked) shown.set(rowId, ids.slice(0, limit));
    const otherTable = meta.tables.find((t) => t._id === ends.otherTableId);
    const others = await findRows(db, baseId, ends.otherTableId, [...shown.values()].flat());
    cells.set(column.key, presentLinks(shown, others, displayColumn(otherTable, column)));
  }
  return cells;
}

function presentLinks(linked: Map<string, string[]>, others: Map<string, StoredRow>, display: ColumnMeta | undefined): Map<string, LinkCell[]> {
  const out = new Map<string, LinkCell[]>();
  for (const [rowId, ids] of linked) {
    out.set(
      rowId,
      ids.filter((id) => others.has(id)).map((id) => ({ row_id: id, display_value: displayText(display, others.get(id)!) })),
    );
  }
  return out;
}
