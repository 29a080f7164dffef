import type { BaseData, BaseMetadata, ColumnMeta, TableMeta, ViewMeta } from '../rows/index.js';
import { findTable, optionalView, visibleColumns } from '../rows/index.js';
import { ROW_LIMITS } from '../rows/index.js';
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
 * listing (the view's filters and sorts, presented values), a page at a time, without a row cap.
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
      const page = ROW_LIMITS.list;
      for (let start = 0; ; start += page) {
        const rows = await baseData.rows.list(
          base,
          { table_id: table._id, ...(view ? { view_id: view._id } : {}), start, limit: page, convert_keys: true },
          {},
        );
        yield rows.map((row) => columns.map((c) => cellValue(row[c.name])));
        if (rows.length < page) return;
      }
    },
  };
}
