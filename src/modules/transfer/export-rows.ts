import type { BaseData, BaseMetadata, ColumnMeta, TableMeta, ViewMeta } from '../rows/index.js';
import { findTable, optionalView, visibleColumns } from '../rows/index.js';
import { cellValue } from './cell-text.js';

export interface ExportSource {
  table: TableMeta;
  view: ViewMeta | undefined;
  columns: ColumnMeta[];
  /** Rows as spreadsheet values, in the view's order, a page at a time. */
  rows(): AsyncGenerator<Array<string | number | boolean | null>[]>;
}

/**
 * A table or a view to export: its visible columns, and its rows read through the rows API's own
 * listing (the view's filters and sorts, presented values), a page at a time in keyset order
 * (RowsService.scan: linear in the table's size), without a row cap.
 */
export function exportSource(baseData: BaseData, base: { id: number; uuid: string }, meta: BaseMetadata, ref: { table_id?: string; table_name?: string; view_id?: string; view_name?: string }): ExportSource {
  const table = findTable(meta, ref);
  const view = optionalView(table, ref);
  const columns = visibleColumns(table, view);
  return {
    table,
    view,
    columns,
    async *rows() {
      const pages = baseData.rows.scan(base, { table_id: table._id, ...(view ? { view_id: view._id } : {}), convert_keys: true }, {});
      for await (const rows of pages) yield rows.map((row) => columns.map((c) => cellValue(row[c.name])));
    },
  };
}
