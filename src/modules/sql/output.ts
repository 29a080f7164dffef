/**
 * Cell values as the SQL endpoint answers them (the original's dtable-db formats): dates and row
 * timestamps as RFC 3339, select options by id unless `convert_keys` (then by name), every selected
 * column present with null when empty.
 */
import { selectOptions, type Field, type SqlColumn } from './schema.js';
import { dateToIso, isoMillis } from './values.js';

import { rowFieldValue, type StoredRow } from '../rows/index.js';

export type { StoredRow };

const SYSTEM_TYPES: Record<string, string> = {
  row_id: 'text',
  ctime: 'ctime',
  mtime: 'mtime',
  creator: 'creator',
  last_modifier: 'last-modifier',
};

const SYSTEM_NAMES: Record<string, string> = {
  row_id: '_id',
  ctime: '_ctime',
  mtime: '_mtime',
  creator: '_creator',
  last_modifier: '_last_modifier',
};

/** The result key of a selected field. */
export function fieldKey(field: Field, convertKeys: boolean): string {
  if (!field.column) return SYSTEM_NAMES[(field as Extract<Field, { kind: 'row' }>).field]!;
  return convertKeys ? field.column.name : field.column.key;
}

/** The `metadata` entry of a selected field (the column object, or a synthetic one for `_id` & co). */
export function fieldMetadata(field: Field, alias: string | null): Record<string, unknown> {
  let entry: Record<string, unknown>;
  if (field.column) entry = { ...field.column.meta };
  else {
    const name = SYSTEM_NAMES[(field as Extract<Field, { kind: 'row' }>).field]!;
    entry = { key: name, name, type: SYSTEM_TYPES[(field as Extract<Field, { kind: 'row' }>).field], data: null };
  }
  return alias === null ? entry : { ...entry, key: alias, name: alias };
}

/** A select option name as the response shows it: its id unless names were asked for. */
function optionOut(column: SqlColumn, name: unknown, convertKeys: boolean): unknown {
  if (convertKeys || typeof name !== 'string') return name;
  return selectOptions(column).find((o) => o.name === name)?.id ?? name;
}

/** Format a cell value (as stored, or as SQL returned it for grouped queries) for the response. */
export function formatCell(column: SqlColumn, value: unknown, convertKeys: boolean): unknown {
  // The original treats '' and [] as NULL.
  if (value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)) return null;
  switch (column.type) {
    case 'date':
      return dateToIso(value);
    case 'single-select':
      return optionOut(column, value, convertKeys);
    case 'multiple-select':
      return Array.isArray(value) ? value.map((v) => optionOut(column, v, convertKeys)) : value;
    case 'button':
      return null;
    default:
      return value;
  }
}

/** The value of `field` for a stored row. Link cells come from `links` (they are not part of `data`). */
export function readField(field: Field, row: StoredRow, convertKeys: boolean, links?: Map<string, unknown>): unknown {
  if (field.kind === 'row') return rowFieldValue(row, field.field);
  const column = field.column;
  if (column.type === 'link') return links?.get(`${column.key}:${row._id}`) ?? [];
  return formatCell(column, row.data[column.key], convertKeys);
}

/** A value computed by SQL (group key, MIN/MAX) back into the response format of `field`. */
export function decodeGrouped(field: Field, raw: unknown, convertKeys: boolean): unknown {
  if (raw === null || raw === undefined) return null;
  switch (field.valueType) {
    case 'number':
      return Number(raw);
    case 'bool':
      return Number(raw) === 1;
    case 'time':
      return isoMillis(Number(raw));
    case 'list': {
      let list: unknown;
      try {
        list = typeof raw === 'string' ? JSON.parse(raw) : raw;
      } catch {
        return null;
      }
      return field.kind === 'cell' ? formatCell(field.column, list, convertKeys) : list;
    }
    default:
      return field.kind === 'cell' ? formatCell(field.column, raw, convertKeys) : raw;
  }
}
