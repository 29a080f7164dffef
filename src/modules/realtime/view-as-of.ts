import type { StructureEvent } from '../events/index.js';
import type { ColumnMeta, TableMeta, ViewMeta } from '../rows/index.js';

type Op = StructureEvent['op'];

const isArray = (value: unknown): value is unknown[] => Array.isArray(value);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Table `tableId` and its view `viewId` as they were before the structure changes `later` (in commit
 * order): `table` (now) with each of them undone, last first, from what it carries of what it replaced
 * (rows/structure-ops.ts: `old_filters`, `old_hidden_columns`, `old_column`, `deleted_view`, …). The
 * view's filters, filter conjunction and hidden columns and the table's columns are what the live
 * channel's filtering reads (view-operations.ts); other settings are left as they are now. Null when
 * the view (or its table) did not exist then. `table` null: not there now (a later change removed it).
 * Each undo sets what was there, so undoing a change already absent from `table` changes nothing. Pure.
 */
export function viewAsOf(table: TableMeta | null, tableId: string, viewId: string, later: readonly StructureEvent[]): { table: TableMeta; view: ViewMeta } | null {
  let columns: ColumnMeta[] | null = table ? [...table.columns] : null;
  let view: ViewMeta | null = table?.views.find((v) => v._id === viewId) ?? null;
  let base: TableMeta | null = table;
  for (let i = later.length - 1; i >= 0; i--) {
    const op = later[i]!.op as Op;
    if (op.table_id !== tableId) continue;
    switch (op.op_type) {
      case 'insert_table':
        return null;
      case 'delete_table':
        if (isObject(op.deleted_table)) {
          base = op.deleted_table as unknown as TableMeta;
          columns = isArray(base.columns) ? [...base.columns] : [];
          view = (isArray(base.views) ? base.views : []).find((v) => v._id === viewId) ?? null;
        }
        break;
      case 'insert_view':
        if (isObject(op.view_data) && op.view_data._id === viewId) view = null;
        break;
      case 'delete_view':
        if (op.view_id === viewId && isObject(op.deleted_view)) view = op.deleted_view as unknown as ViewMeta;
        break;
      case 'modify_filters':
        if (view && op.view_id === viewId && isArray(op.old_filters)) {
          view = { ...view, filters: op.old_filters, filter_conjunction: op.old_filter_conjunction === 'Or' ? 'Or' : 'And' };
        }
        break;
      case 'modify_hidden_columns':
        if (view && op.view_id === viewId && isArray(op.old_hidden_columns)) view = { ...view, hidden_columns: op.old_hidden_columns as string[] };
        break;
      default:
        if (columns) columns = columnsBefore(columns, op);
    }
  }
  if (!base || !view || !columns) return null;
  return { table: { ...base, columns, views: base.views.map((v) => (v._id === viewId ? view! : v)) }, view };
}

/** The columns before one column change (set back; the others leave them as they are). */
function columnsBefore(columns: ColumnMeta[], op: Op): ColumnMeta[] {
  switch (op.op_type) {
    case 'insert_column': {
      const key = isObject(op.column_data) ? op.column_data.key : undefined;
      return columns.filter((c) => c.key !== key);
    }
    case 'delete_column': {
      if (!isObject(op.old_column)) return columns;
      const old = op.old_column as unknown as ColumnMeta;
      if (columns.some((c) => c.key === old.key)) return columns;
      const after = columns.findIndex((c) => c.key === op.upper_column_key);
      return [...columns.slice(0, after + 1), old, ...columns.slice(after + 1)];
    }
    case 'modify_column_type':
      return isObject(op.old_column) ? columns.map((c) => (c.key === op.column_key ? (op.old_column as unknown as ColumnMeta) : c)) : columns;
    case 'modify_column_data':
      return 'old_column_data' in op ? columns.map((c) => (c.key === op.column_key ? { ...c, data: (op.old_column_data ?? null) as ColumnMeta['data'] } : c)) : columns;
    default:
      return columns;
  }
}
