import { notFound } from '../../shared/errors.js';

/** A column as stored in the base's metadata document. */
export interface ColumnMeta {
  key: string;
  name: string;
  type: string;
  width: number;
  editable: boolean;
  resizable: boolean;
  draggable: boolean;
  data: Record<string, unknown> | null;
  frozen?: boolean;
  [extra: string]: unknown;
}

export interface ViewSort {
  column_key: string;
  sort_type: 'up' | 'down';
}

export interface ViewMeta {
  _id: string;
  name: string;
  type: string;
  is_locked: boolean;
  filter_conjunction: 'And' | 'Or';
  filters: unknown[];
  sorts: ViewSort[];
  groupbys: unknown[];
  hidden_columns: string[];
  [extra: string]: unknown;
}

export interface TableMeta {
  _id: string;
  name: string;
  is_header_locked: boolean;
  header_settings: Record<string, unknown>;
  summary_configs: Record<string, unknown>;
  columns: ColumnMeta[];
  views: ViewMeta[];
  [extra: string]: unknown;
}

export interface BaseMetadata {
  version: number;
  format_version: number;
  settings: Record<string, unknown>;
  tables: TableMeta[];
}

/** What a request names a table by: `table_name` and/or `table_id` (the contract allows either). */
export interface TableRef {
  table_name?: unknown;
  table_id?: unknown;
}

/** The table named by `table_name` (falling back to an id match) or `table_id`; 404 when none. */
export function findTable(meta: BaseMetadata, ref: TableRef): TableMeta {
  const table = lookupTable(meta, ref);
  if (!table) throw notFound(`table ${describeRef(ref)} not found`);
  return table;
}

export function lookupTable(meta: BaseMetadata, ref: TableRef): TableMeta | undefined {
  const name = typeof ref.table_name === 'string' ? ref.table_name : undefined;
  const id = typeof ref.table_id === 'string' ? ref.table_id : undefined;
  if (name !== undefined && name !== '') {
    return meta.tables.find((t) => t.name === name) ?? meta.tables.find((t) => t._id === name);
  }
  if (id !== undefined && id !== '') return meta.tables.find((t) => t._id === id);
  return undefined;
}

function describeRef(ref: TableRef): string {
  if (typeof ref.table_name === 'string' && ref.table_name !== '') return ref.table_name;
  if (typeof ref.table_id === 'string' && ref.table_id !== '') return ref.table_id;
  return '(none given)';
}

/** A column by name first, then by key (clients use either). */
export function lookupColumn(table: TableMeta, nameOrKey: string): ColumnMeta | undefined {
  return table.columns.find((c) => c.name === nameOrKey) ?? table.columns.find((c) => c.key === nameOrKey);
}

export function findColumn(table: TableMeta, nameOrKey: unknown): ColumnMeta {
  const column = typeof nameOrKey === 'string' ? lookupColumn(table, nameOrKey) : undefined;
  if (!column) throw notFound(`column ${typeof nameOrKey === 'string' ? nameOrKey : ''} not found`);
  return column;
}

/** A view by name first, then by id. */
export function lookupView(table: TableMeta, nameOrId: string): ViewMeta | undefined {
  return table.views.find((v) => v.name === nameOrId) ?? table.views.find((v) => v._id === nameOrId);
}

export function findView(table: TableMeta, nameOrId: unknown): ViewMeta {
  const view = typeof nameOrId === 'string' ? lookupView(table, nameOrId) : undefined;
  if (!view) throw notFound(`view ${typeof nameOrId === 'string' ? nameOrId : ''} not found`);
  return view;
}

/** The view named by `view_name` or `view_id`, or undefined when neither is given. */
export function optionalView(table: TableMeta, ref: { view_name?: unknown; view_id?: unknown }): ViewMeta | undefined {
  const name = typeof ref.view_name === 'string' && ref.view_name !== '' ? ref.view_name : undefined;
  const id = typeof ref.view_id === 'string' && ref.view_id !== '' ? ref.view_id : undefined;
  if (name !== undefined) return findView(table, name);
  if (id !== undefined) {
    const view = table.views.find((v) => v._id === id);
    if (!view) throw notFound(`view ${id} not found`);
    return view;
  }
  return undefined;
}

/** Columns a view shows (all columns without a view). */
export function visibleColumns(table: TableMeta, view: ViewMeta | undefined): ColumnMeta[] {
  if (!view || view.hidden_columns.length === 0) return table.columns;
  const hidden = new Set(view.hidden_columns);
  return table.columns.filter((c) => !hidden.has(c.key));
}

export function parseMetadata(text: string): BaseMetadata {
  return JSON.parse(text) as BaseMetadata;
}
