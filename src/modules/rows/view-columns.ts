import { badRequest } from '../../shared/errors.js';
import { lookupColumn, type TableMeta, type ViewMeta } from './metadata.js';

/**
 * The console's column widths and order of one view (basegate's own fields, like `layout`: the
 * original keeps both on the table's columns only, and its clients ignore extra view keys).
 * `column_widths`: `{<column key or name>: 20..2000}`; `column_order`: `[<column key or name>]`, every
 * column at most once (columns left out follow in the table's order). Stored by column key.
 */
const MIN_WIDTH = 20;
const MAX_WIDTH = 2000;

export function applyColumnLayout(table: TableMeta, view: ViewMeta, body: Record<string, unknown>): void {
  if (body.column_widths !== undefined) {
    if (body.column_widths === null) delete view.column_widths;
    else view.column_widths = checkWidths(table, body.column_widths);
  }
  if (body.column_order !== undefined) {
    if (body.column_order === null) delete view.column_order;
    else view.column_order = checkOrder(table, body.column_order);
  }
}

function keyOf(table: TableMeta, ref: unknown, field: string): string {
  const column = typeof ref === 'string' ? lookupColumn(table, ref) : undefined;
  if (!column) throw badRequest(`${field}: column ${String(ref)} not found.`);
  return column.key;
}

function checkWidths(table: TableMeta, raw: unknown): Record<string, number> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw badRequest('column_widths invalid.');
  const widths: Record<string, number> = {};
  for (const [ref, width] of Object.entries(raw)) {
    if (typeof width !== 'number' || !Number.isInteger(width) || width < MIN_WIDTH || width > MAX_WIDTH)
      throw badRequest(`column_widths.${ref}: a whole number of pixels from ${MIN_WIDTH} to ${MAX_WIDTH}.`);
    widths[keyOf(table, ref, 'column_widths')] = width;
  }
  return widths;
}

function checkOrder(table: TableMeta, raw: unknown): string[] {
  if (!Array.isArray(raw)) throw badRequest('column_order invalid.');
  const keys = raw.map((ref) => keyOf(table, ref, 'column_order'));
  if (new Set(keys).size !== keys.length) throw badRequest('column_order: a column is named twice.');
  return keys;
}

/** A deleted column leaves the view's widths and order. */
export function forgetColumnLayout(view: ViewMeta, key: string): void {
  const widths = view.column_widths as Record<string, number> | undefined;
  if (widths && key in widths) view.column_widths = Object.fromEntries(Object.entries(widths).filter(([k]) => k !== key));
  const order = view.column_order as string[] | undefined;
  if (order?.includes(key)) view.column_order = order.filter((k) => k !== key);
}
