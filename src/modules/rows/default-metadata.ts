import type { BaseMetadata, ColumnMeta, TableMeta, ViewMeta } from './metadata.js';
import { DEFAULT_DATE_SETTINGS } from './structure.present.js';

export function newColumn(key: string, name: string, type: string, data: Record<string, unknown> | null): ColumnMeta {
  return { key, name, type, width: 200, editable: true, resizable: true, draggable: true, data };
}

export function newView(id: string, name: string, type = 'table'): ViewMeta {
  return { _id: id, name, type, is_locked: false, filter_conjunction: 'And', filters: [], sorts: [], groupbys: [], hidden_columns: [] };
}

export function newTable(id: string, name: string, columns: ColumnMeta[]): TableMeta {
  return { _id: id, name, is_header_locked: false, header_settings: {}, summary_configs: {}, columns, views: [newView('0000', 'Default View')] };
}

/**
 * The metadata document of a new base: one table `Table1` (id `0000`) with a text column `Name`
 * (key `0000`) and a `Default View` (id `0000`), as the original creates it; `insertBlankBaseRows`
 * adds its empty rows.
 */
export function defaultMetadata(): BaseMetadata {
  return { version: 1, format_version: 9, settings: { date_settings: { ...DEFAULT_DATE_SETTINGS } }, tables: [newTable('0000', 'Table1', [newColumn('0000', 'Name', 'text', null)])] };
}

export function defaultMetadataJson(): string {
  return JSON.stringify(defaultMetadata());
}
