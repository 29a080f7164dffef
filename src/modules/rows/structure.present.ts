import type { ColumnMeta, TableMeta, ViewMeta } from './metadata.js';

/** A column as the API shows it: the stored fields plus the original's permission defaults. */
export function presentColumn(column: ColumnMeta): Record<string, unknown> {
  return {
    description: null,
    colorbys: {},
    permission_type: '',
    permitted_users: [],
    permitted_group: [],
    edit_metadata_permission_type: '',
    edit_metadata_permitted_users: [],
    edit_metadata_permitted_group: [],
    ...column,
    data: column.data ?? null,
  };
}

export function presentView(view: ViewMeta): Record<string, unknown> {
  return {
    rows: [],
    formula_rows: {},
    summaries: {},
    groups: [],
    group_rows: [],
    colorbys: {},
    colors: {},
    column_colors: {},
    link_rows: {},
    private_for: null,
    row_height: 'default',
    ...view,
  };
}

/** The metadata view of a table (no rows). */
export function presentTable(table: TableMeta): Record<string, unknown> {
  return { ...table, columns: table.columns.map(presentColumn), views: table.views.map(presentView) };
}

/** A table as `POST tables/` answers it: empty rows and the view structure. */
export function presentNewTable(table: TableMeta): Record<string, unknown> {
  return {
    ...presentTable(table),
    rows: [],
    id_row_map: {},
    view_structure: { folders: [], view_ids: table.views.map((v) => v._id) },
  };
}
