import type { BaseMetadata, ColumnMeta, TableMeta, ViewMeta } from './metadata.js';

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
    summaries: [],
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

/** The date settings a base has until someone changes them (the original's default). */
export const DEFAULT_DATE_SETTINGS = { first_day_of_week: 'Monday' } as const;

/** Base settings as the typed clients read them: `date_settings` is always there. */
export function presentSettings(settings: Record<string, unknown>): Record<string, unknown> {
  const date = typeof settings.date_settings === 'object' && settings.date_settings !== null ? settings.date_settings : {};
  return { ...settings, date_settings: { ...DEFAULT_DATE_SETTINGS, ...date } };
}

/** The metadata document as `GET …/metadata/` answers it. */
export function presentMetadata(meta: BaseMetadata): Record<string, unknown> {
  return { ...meta, settings: presentSettings(meta.settings ?? {}), tables: meta.tables.map(presentTable) };
}
