import type { BaseMetadata, TableMeta, ViewMeta } from './metadata.js';

/** One structure change as the original's operation object (`dtable-store` applies these). */
export type StructureOp = { op_type: string; table_id: string } & Record<string, unknown>;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const byId = <T>(items: T[], id: (item: T) => string) => new Map(items.map((item) => [id(item), item]));

/**
 * The operations that turn `before` into `after`: tables, then per table its columns and views.
 * A table's or view's other settings changing (locks, widths, order) are not sent. Each carries what it
 * replaced (`old_…`, `deleted_…`), so the live channel can judge an earlier row change with the view as
 * it was then (realtime/view-as-of.ts).
 */
export function structureOps(before: BaseMetadata, after: BaseMetadata): StructureOp[] {
  const ops: StructureOp[] = [];
  const old = byId(before.tables, (t) => t._id);
  const now = byId(after.tables, (t) => t._id);
  for (const table of before.tables) {
    if (!now.has(table._id)) ops.push({ op_type: 'delete_table', table_id: table._id, table_name: table.name, deleted_table: { ...table, rows: [] } });
  }
  for (const table of after.tables) {
    const previous = old.get(table._id);
    if (!previous) {
      ops.push({ op_type: 'insert_table', table_id: table._id, table_data: { ...table, rows: [] } });
      continue;
    }
    if (previous.name !== table.name) ops.push({ op_type: 'rename_table', table_id: table._id, table_name: table.name, old_table_name: previous.name });
    columnOps(previous, table, ops);
    viewOps(previous, table, ops);
  }
  return ops;
}

function columnOps(before: TableMeta, after: TableMeta, ops: StructureOp[]): void {
  const table_id = after._id;
  const old = byId(before.columns, (c) => c.key);
  const now = byId(after.columns, (c) => c.key);
  before.columns.forEach((column, index) => {
    if (now.has(column.key)) return;
    ops.push({ op_type: 'delete_column', table_id, column_key: column.key, old_column: column, upper_column_key: before.columns[index - 1]?.key ?? '' });
  });
  after.columns.forEach((column, index) => {
    const previous = old.get(column.key);
    if (!previous) {
      // As in the original, `column_key` names the column it goes after (the new one is `column_data`).
      ops.push({ op_type: 'insert_column', table_id, column_key: after.columns[index - 1]?.key ?? '', column_data: column, view_id: '', rows_datas: [] });
      return;
    }
    if (previous.name !== column.name) {
      ops.push({ op_type: 'rename_column', table_id, column_key: column.key, new_column_name: column.name, old_column_name: previous.name });
    }
    if (previous.type !== column.type) {
      ops.push({ op_type: 'modify_column_type', table_id, column_key: column.key, new_column: column, old_column: previous });
    } else if (!same(previous.data, column.data)) {
      ops.push({ op_type: 'modify_column_data', table_id, column_key: column.key, column_data: column.data, old_column_data: previous.data });
    }
  });
}

function viewOps(before: TableMeta, after: TableMeta, ops: StructureOp[]): void {
  const table_id = after._id;
  const old = byId(before.views, (v) => v._id);
  const now = byId(after.views, (v) => v._id);
  for (const view of before.views) {
    if (!now.has(view._id)) ops.push({ op_type: 'delete_view', table_id, view_id: view._id, view_folder_id: '', view_name: view.name, deleted_view: view });
  }
  for (const view of after.views) {
    const previous = old.get(view._id);
    if (!previous) {
      ops.push({ op_type: 'insert_view', table_id, view_data: view, view_folder_id: '' });
      continue;
    }
    viewSettingOps(table_id, previous, view, ops);
  }
}

function viewSettingOps(table_id: string, before: ViewMeta, view: ViewMeta, ops: StructureOp[]): void {
  const view_id = view._id;
  if (before.name !== view.name) ops.push({ op_type: 'rename_view', table_id, view_id, view_name: view.name });
  if (!same(before.filters, view.filters) || before.filter_conjunction !== view.filter_conjunction) {
    ops.push({
      op_type: 'modify_filters',
      table_id,
      view_id,
      filters: view.filters,
      filter_conjunction: view.filter_conjunction,
      old_filters: before.filters,
      old_filter_conjunction: before.filter_conjunction,
    });
  }
  if (!same(before.sorts, view.sorts)) ops.push({ op_type: 'modify_sorts', table_id, view_id, sorts: view.sorts });
  if (!same(before.hidden_columns, view.hidden_columns)) {
    ops.push({ op_type: 'modify_hidden_columns', table_id, view_id, hidden_columns: view.hidden_columns, old_hidden_columns: before.hidden_columns });
  }
}

