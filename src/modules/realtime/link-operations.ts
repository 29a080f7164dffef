import type { ChangeEvent } from '../events/index.js';
import { origin } from './operation-origin.js';
import type { Operation } from './operations.js';

interface LinkData {
  link_id?: string;
  table_id?: string;
  other_table_id?: string;
}

interface RowLinks {
  rowId: string;
  after: string[];
  before: string[];
}

const ids = (value: unknown): string[] => (Array.isArray(value) ? value.filter((id): id is string => typeof id === 'string') : []);

/**
 * The operation for the link changes one write made through one link, as the original sends them:
 * `add_link` / `remove_link` for one pair, else `update_rows_links` with every changed row's whole list.
 * Our events carry both sides (each row whose cell changed); dtable-store updates the other side
 * itself, so the operation names the link's own side (`table_id`), or the other side when only it
 * changed (`is_linked_back`).
 */
export function linkOperation(group: ChangeEvent[]): Operation | null {
  const data = group[0]!.rowData[0]?.column_data as LinkData | null | undefined;
  if (!data?.link_id || !data.table_id || !data.other_table_id) return null;
  const own = group.filter((event) => event.tableId === data.table_id);
  const linkedBack = own.length === 0;
  const side = linkedBack ? group : own;
  const rows: RowLinks[] = side.map((event) => ({ rowId: event.rowId, after: ids(event.rowData[0]?.value), before: ids(event.rowData[0]?.old_value) }));
  const tableId = linkedBack ? data.other_table_id : data.table_id;
  const otherTableId = linkedBack ? data.table_id : data.other_table_id;
  const from = origin(group[0]!);

  const pair = singlePair(rows);
  if (pair) {
    // table1 is the link's own table (`table_id` of the link column), table2 the other one.
    const [table1RowId, table2RowId] = linkedBack ? [pair.other, pair.rowId] : [pair.rowId, pair.other];
    return {
      op_type: pair.added ? 'add_link' : 'remove_link',
      link_id: data.link_id,
      table1_id: data.table_id,
      table2_id: data.other_table_id,
      table1_row_id: table1RowId,
      table2_row_id: table2RowId,
      ...from,
    };
  }
  return {
    op_type: 'update_rows_links',
    link_id: data.link_id,
    table_id: tableId,
    other_table_id: otherTableId,
    is_linked_back: linkedBack,
    row_id_list: rows.map((row) => row.rowId),
    other_rows_ids_map: Object.fromEntries(rows.map((row) => [row.rowId, row.after])),
    old_other_rows_ids_map: Object.fromEntries(rows.map((row) => [row.rowId, row.before])),
    ...from,
  };
}

/** The one pair a write linked or unlinked, when that is all it changed (seen from one side). */
function singlePair(rows: RowLinks[]): { rowId: string; other: string; added: boolean } | null {
  if (rows.length !== 1) return null;
  const { rowId, after, before } = rows[0]!;
  const added = after.filter((id) => !before.includes(id));
  const removed = before.filter((id) => !after.includes(id));
  if (added.length === 1 && removed.length === 0) return { rowId, other: added[0]!, added: true };
  if (removed.length === 1 && added.length === 0) return { rowId, other: removed[0]!, added: false };
  return null;
}
