import { seesRow } from '../access/index.js';
import type { ChangeEvent } from '../events/index.js';
import type { FilterContext, StoredRow } from '../filters/index.js';
import { storedRowOf } from '../notifications/index.js';
import type { TableMeta, ViewMeta } from '../rows/index.js';
import { linkOperation } from './link-operations.js';
import { toOperation, type ChangeGroup, type Operation } from './operations.js';

/** One shared view as the live channel filters for it: its table, the view, its hidden column keys. */
export interface ViewLens {
  table: TableMeta;
  view: ViewMeta;
  hidden: ReadonlySet<string>;
}

export function lensOf(table: TableMeta, view: ViewMeta): ViewLens {
  return { table, view, hidden: new Set(view.hidden_columns) };
}

/**
 * The operation a holder of a view share gets for one group of row changes (operations.ts), or null:
 * only rows of the view's table that the view shows before or after the change (its filters through the
 * filters engine, `access`'s `seesRow`, with `ctx.currentUser` the holder; archived rows are not shown),
 * and only the cells of the columns it shows. An inserted row the view does not show is left out, so is
 * a deleted one it did not show; a changed row stays when it was or is in the view. Link changes: the
 * view's side of them (`viewLinkOperation`). Pure.
 */
export function viewOperation(group: ChangeGroup, lens: ViewLens, ctx: FilterContext): Operation | null {
  const first = group[0]!;
  const shows = (row: StoredRow | null) => row !== null && row.data._archived !== true && seesRow([{ table: lens.table._id, view: lens.view._id }], lens.table, row, ctx);
  if (first.opType === 'add_link' || first.opType === 'remove_link') return viewLinkOperation(group, lens, shows);
  if (first.tableId !== lens.table._id) return null;
  let kept: ChangeEvent[];
  switch (first.opType) {
    case 'insert_row':
      kept = group.filter((event) => shows(after(event)));
      break;
    case 'modify_row':
      // In the view before or after; sent when a cell it shows changed, or the row came in or went out.
      kept = group.filter((event) => {
        const [was, is] = [shows(before(event)), shows(after(event))];
        return (was || is) && (was !== is || event.rowData.some((item) => !lens.hidden.has(item.column_key)));
      });
      break;
    case 'delete_row':
      kept = group.filter((event) => shows(before(event)));
      break;
    default:
      return null;
  }
  if (kept.length === 0) return null;
  // (Inserted rows follow the first row of the table: the row above may be one the view does not show.)
  return toOperation(kept.map((event) => visibleOnly(event, lens.hidden)), '');
}

/**
 * The link operation for the view's side of one write's link changes: the link cells of the rows the
 * view shows in a link column it shows, as the base's room would get them
 * had only that side changed (`linkOperation`: `add_link`/`remove_link` for one pair, else
 * `update_rows_links` with those rows only). The other table's rows are not sent, only their ids, which
 * the link cells show anyway. Cells that follow from the links (`link-formula` columns) are row changes
 * of their own, filtered as any.
 */
function viewLinkOperation(group: ChangeGroup, lens: ViewLens, shows: (row: StoredRow | null) => boolean): Operation | null {
  const kept = group.filter((event) => {
    const key = event.rowData[0]?.column_key;
    // (Filters cannot name a link column: the link change leaves the row in or out of the view as it was.)
    return event.tableId === lens.table._id && key !== undefined && !lens.hidden.has(key) && shows(after(event));
  });
  return kept.length === 0 ? null : linkOperation(kept);
}

/** The row after the change, with its archived flag (null after a delete). */
function after(event: ChangeEvent): StoredRow | null {
  if (event.row === null) return null;
  return withArchived(storedRowOf(event), event.row);
}

/** The row before the change: the cells after it with the changed ones set back (a delete's cells are all in its row data). */
function before(event: ChangeEvent): StoredRow | null {
  if (event.opType === 'insert_row') return null;
  const row = event.row === null ? storedRowOf({ ...event, row: { _id: event.rowId } }) : withArchived(storedRowOf(event), event.row);
  const data = { ...row.data };
  for (const item of event.rowData) {
    if (item.old_value === undefined || item.old_value === null) delete data[item.column_key];
    else data[item.column_key] = item.old_value;
  }
  return { ...row, data };
}

function withArchived(row: StoredRow, stored: Record<string, unknown>): StoredRow {
  return stored._archived === true ? { ...row, data: { ...row.data, _archived: true } } : row;
}

/** The event with the cells of hidden columns left out (its row data and its row). */
function visibleOnly(event: ChangeEvent, hidden: ReadonlySet<string>): ChangeEvent {
  if (hidden.size === 0) return event;
  const row = event.row === null ? null : Object.fromEntries(Object.entries(event.row).filter(([key]) => !hidden.has(key)));
  return { ...event, rowData: event.rowData.filter((item) => !hidden.has(item.column_key)), row };
}
