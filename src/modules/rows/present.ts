import type { StoredRow } from '../filters/index.js';
import type { ColumnMeta } from './metadata.js';
import { lockFields } from './row-locks.js';
import { isDateColumn, presentDate } from '../../shared/dates/index.js';

/** A row as stored, with its cells keyed by column key (contract: StoredRow), defined by the filter engine. */
export type { StoredRow };

export interface LinkCell {
  row_id: string;
  display_value: string;
}

/** Linked rows per link column key, per row id. */
export type LinkCells = Map<string, Map<string, LinkCell[]>>;

let lastMs = Number.NaN;
let lastIso = '';

/** `2021-03-10T16:06:48.981+00:00`, the original's row timestamp format. */
export function isoMillis(ms: number): string {
  // Rows of one batch share their timestamps: remember the last conversion.
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString().replace('Z', '+00:00');
    lastMs = ms;
  }
  return lastIso;
}

/** The row's own fields (the `base_rows` columns beside the cells). */
export type RowField = 'row_id' | 'ctime' | 'mtime' | 'creator' | 'last_modifier';

/** Column types that show one of the row's own fields rather than a cell. */
export const ROW_FIELD_OF_COLUMN_TYPE: Readonly<Record<string, RowField>> = {
  ctime: 'ctime',
  mtime: 'mtime',
  creator: 'creator',
  'last-modifier': 'last_modifier',
};

/** A row field as clients see it (timestamps as `…+00:00`). */
export function rowFieldValue(row: StoredRow, field: RowField): unknown {
  switch (field) {
    case 'row_id':
      return row._id;
    case 'ctime':
      return isoMillis(row._ctime);
    case 'mtime':
      return isoMillis(row._mtime);
    case 'creator':
      return row._creator;
    case 'last_modifier':
      return row._last_modifier;
  }
}

/** The value a column shows for a row: computed columns read the row's own fields; empty is null. */
export function cellValue(column: ColumnMeta, row: StoredRow): unknown {
  const field = ROW_FIELD_OF_COLUMN_TYPE[column.type];
  if (field) return rowFieldValue(row, field);
  if (column.type === 'button') return null;
  const value = row.data[column.key];
  return value === undefined ? null : value;
}

/**
 * A row for list/get responses: every given column present (`null` when empty, link cells as arrays of
 * `{row_id, display_value}`), keyed by column name when `byName`, else by key.
 */
export function presentRow(row: StoredRow, columns: ColumnMeta[], byName: boolean, links?: LinkCells): Record<string, unknown> {
  const out: Record<string, unknown> = {
    _id: row._id,
    _ctime: isoMillis(row._ctime),
    _mtime: isoMillis(row._mtime),
    _creator: row._creator,
    _last_modifier: row._last_modifier,
    _archived: row.data._archived === true,
    ...lockFields(row),
  };
  for (const column of columns) {
    const key = byName ? column.name : column.key;
    out[key] = column.type === 'link' ? (links?.get(column.key)?.get(row._id) ?? []) : presentedValue(column, cellValue(column, row));
  }
  return out;
}

/** A cell value as answers show it: dates as RFC 3339 in TIME_ZONE (src/shared/dates), the rest as it is. */
export function presentedValue(column: ColumnMeta, value: unknown): unknown {
  if (value === null || !isDateColumn(column.type, column.data)) return value;
  return Array.isArray(value) ? value.map(presentDate) : presentDate(value);
}

/** The keys of the columns whose cells are dates (date columns, formulas of result type date). */
export function dateColumnKeys(columns: ColumnMeta[]): string[] {
  return columns.filter((c) => isDateColumn(c.type, c.data)).map((c) => c.key);
}

/** `rowByKeys` with the date cells of `dateKeys` presented: `first_row` of an append, the whole-base read. */
export function presentRowByKeys(row: StoredRow, dateKeys: string[]): Record<string, unknown> {
  const out = rowByKeys(row);
  for (const key of dateKeys) {
    const value = out[key];
    if (value !== undefined && value !== null) out[key] = Array.isArray(value) ? value.map(presentDate) : presentDate(value);
  }
  return out;
}

/** The stored cells keyed by column key plus the row fields: `first_row` of an append, and an event's `row`. */
export function rowByKeys(row: StoredRow): Record<string, unknown> {
  return {
    _id: row._id,
    _ctime: isoMillis(row._ctime),
    _mtime: isoMillis(row._mtime),
    _creator: row._creator,
    _last_modifier: row._last_modifier,
    ...row.data,
  };
}

/** A cell as one line of text: a link's display value, an event's row name. */
export function displayText(column: ColumnMeta | undefined, row: StoredRow): string {
  if (!column) return '';
  const value = cellValue(column, row);
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'object' && v !== null ? String((v as { name?: unknown }).name ?? '') : String(v))).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
