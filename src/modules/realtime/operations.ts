import type { ChangeEvent } from '../events/index.js';
import { presentCell } from '../../shared/dates/index.js';

/** An operation object as the original's `dtable-store` applies it (`op_type` plus its attributes). */
export type Operation = { op_type: string } & Record<string, unknown>;

/** What every message carries besides the operation's own attributes (the webhook's data). */
function origin(event: ChangeEvent) {
  return { op_user: event.opUser, op_app: event.opApp, op_time: event.opTime, table_name: event.tableName, row_name: event.rowName };
}

function oldCells(event: ChangeEvent): Record<string, unknown> {
  const old: Record<string, unknown> = {};
  for (const item of event.rowData) old[item.column_key] = presentCell(item.column_type, item.column_data, item.old_value);
  return old;
}

function newCells(event: ChangeEvent): Record<string, unknown> {
  const updated: Record<string, unknown> = {};
  for (const item of event.rowData) updated[item.column_key] = presentCell(item.column_type, item.column_data, item.value);
  return updated;
}

/** The inserted row as the whole-base read shows it: its date cells presented (the event's cells name their types). */
function insertedRow(event: ChangeEvent): Record<string, unknown> {
  const row: Record<string, unknown> = { ...event.row };
  for (const item of event.rowData) if (item.column_key in row) row[item.column_key] = presentCell(item.column_type, item.column_data, row[item.column_key]);
  return row;
}

/**
 * The `update-dtable` operation for one committed change event, or null for a kind with none.
 * Rows are keyed by column key, as in the whole-base read, so `dtable-store` applies them as they are.
 * (Structure changes come as operations already: rows/structure-ops.ts, events/structure-events.ts.)
 */
export function toOperation(event: ChangeEvent): Operation | null {
  const base = { table_id: event.tableId };
  switch (event.opType) {
    case 'insert_row':
      // `row_id` is the row above in the original; '' appends, which is where our inserts land.
      return { op_type: 'insert_row', ...base, row_id: '', row_insert_position: 'insert_below', row_data: insertedRow(event), links_data: {}, ...origin(event) };
    case 'modify_row':
      return { op_type: 'modify_row', ...base, row_id: event.rowId, updated: newCells(event), old_row: oldCells(event), ...origin(event) };
    case 'delete_row':
      return {
        op_type: 'delete_row',
        ...base,
        row_id: event.rowId,
        deleted_row: { _id: event.rowId, ...oldCells(event) },
        upper_row_id: '',
        deleted_links_data: {},
        ...origin(event),
      };
    case 'add_link':
    case 'remove_link':
      return linkOperation(event);
    default:
      return null;
  }
}

/** A row's link cell changed: the original's `update_links` sets the row's whole list at once. */
function linkOperation(event: ChangeEvent): Operation | null {
  const cell = event.rowData[0];
  const data = cell?.column_data as { link_id?: string; table_id?: string; other_table_id?: string } | null | undefined;
  if (!cell || !data?.link_id) return null;
  const linkedBack = data.table_id !== event.tableId;
  return {
    op_type: 'update_links',
    link_id: data.link_id,
    table_id: event.tableId,
    other_table_id: linkedBack ? data.table_id : data.other_table_id,
    is_linked_back: linkedBack,
    row_id: event.rowId,
    other_rows_ids: Array.isArray(cell.value) ? cell.value : [],
    old_other_rows_ids: Array.isArray(cell.old_value) ? cell.old_value : [],
    column_key: cell.column_key,
    change: event.opType,
    ...origin(event),
  };
}
