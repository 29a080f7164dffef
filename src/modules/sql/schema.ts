import { ROW_FIELD_OF_COLUMN_TYPE, type RowField } from '../rows/index.js';
import { sqlError } from './sql-error.js';

/** How a column behaves in SQL expressions. `list` columns compare by their first element (as the original). */
export type ValueType = 'string' | 'number' | 'bool' | 'date' | 'time' | 'list' | 'opaque';

export interface SqlColumn {
  key: string;
  name: string;
  type: string;
  data: Record<string, unknown> | null;
  /** The column object of the metadata document, echoed in the response's `metadata`. */
  meta: Record<string, unknown>;
}

export interface SqlTable {
  id: string;
  name: string;
  columns: SqlColumn[];
}

// The row's own fields (base_rows columns), addressed as `_id`, `_ctime`, … or through typed columns.
export type { RowField };

export type Field =
  | { kind: 'row'; field: RowField; valueType: ValueType; label: string; column?: SqlColumn }
  | { kind: 'cell'; column: SqlColumn; valueType: ValueType; label: string };

export const SYSTEM_FIELDS: Readonly<Record<string, RowField>> = {
  _id: 'row_id',
  _ctime: 'ctime',
  _mtime: 'mtime',
  _creator: 'creator',
  _last_modifier: 'last_modifier',
};


const VALUE_TYPES: Readonly<Record<string, ValueType>> = {
  text: 'string',
  'long-text': 'string',
  email: 'string',
  url: 'string',
  'auto-number': 'string',
  'single-select': 'string',
  number: 'number',
  duration: 'number',
  rate: 'number',
  checkbox: 'bool',
  date: 'date',
  'multiple-select': 'list',
  collaborator: 'list',
  image: 'list',
};

/** Column types an INSERT or UPDATE may write (the original's list; the rest are computed or need the file/link APIs). */
export const WRITABLE_TYPES: readonly string[] = [
  'text',
  'long-text',
  'number',
  'single-select',
  'multiple-select',
  'checkbox',
  'date',
  'duration',
  'rate',
  'url',
  'email',
  'collaborator',
];

/** Column keys end up in JSON paths (bound, but still): only the shapes the server generates are addressable. */
const SAFE_KEY = /^[A-Za-z0-9_-]{1,32}$/;

/** The tables of a base's metadata document, defensively read (a malformed entry is skipped). */
export function tablesOf(document: unknown): SqlTable[] {
  const tables = (document as { tables?: unknown } | null)?.tables;
  if (!Array.isArray(tables)) return [];
  const result: SqlTable[] = [];
  for (const t of tables as Array<Record<string, unknown>>) {
    if (typeof t?._id !== 'string' || typeof t.name !== 'string') continue;
    const columns: SqlColumn[] = [];
    for (const c of Array.isArray(t.columns) ? (t.columns as Array<Record<string, unknown>>) : []) {
      if (typeof c?.key !== 'string' || typeof c.name !== 'string' || typeof c.type !== 'string' || !SAFE_KEY.test(c.key)) continue;
      const data = typeof c.data === 'object' && c.data !== null && !Array.isArray(c.data) ? (c.data as Record<string, unknown>) : null;
      columns.push({ key: c.key, name: c.name, type: c.type, data, meta: c });
    }
    result.push({ id: t._id, name: t.name, columns });
  }
  return result;
}

/** Exact match first, then a case-insensitive one when it is unambiguous (SQL identifiers are case-insensitive). */
function findByName<T>(items: T[], name: string, nameOf: (item: T) => string): T | undefined {
  const exact = items.find((i) => nameOf(i) === name);
  if (exact) return exact;
  const lower = name.toLowerCase();
  const loose = items.filter((i) => nameOf(i).toLowerCase() === lower);
  return loose.length === 1 ? loose[0] : undefined;
}

/** A table by name, else by id (the contract accepts ids wherever names go). */
export function resolveTable(tables: SqlTable[], name: string): SqlTable {
  const table = findByName(tables, name, (t) => t.name) ?? tables.find((t) => t.id === name);
  if (!table) throw sqlError(`Table '${name}' not found.`);
  return table;
}

export function fieldOfColumn(column: SqlColumn): Field {
  const rowField = ROW_FIELD_OF_COLUMN_TYPE[column.type];
  if (rowField) {
    const valueType: ValueType = rowField === 'ctime' || rowField === 'mtime' ? 'time' : 'string';
    return { kind: 'row', field: rowField, valueType, label: column.name, column };
  }
  return { kind: 'cell', column, valueType: VALUE_TYPES[column.type] ?? formulaValueType(column) ?? 'opaque', label: column.name };
}

/** Formula cells are materialized with their result type; dates as RFC 3339 text (which orders within a zone). */
const FORMULA_VALUE_TYPES: Readonly<Record<string, ValueType>> = { number: 'number', bool: 'bool', string: 'string', date: 'string', array: 'list' };

function formulaValueType(column: SqlColumn): ValueType | undefined {
  if (column.type !== 'formula' && column.type !== 'link-formula') return undefined;
  return FORMULA_VALUE_TYPES[String(column.data?.result_type)];
}

export function systemField(name: string): Field | undefined {
  const field = SYSTEM_FIELDS[name];
  if (!field) return undefined;
  const valueType: ValueType = field === 'ctime' || field === 'mtime' ? 'time' : 'string';
  return { kind: 'row', field, valueType, label: name };
}

/** A column by name, then by key; `_id`, `_ctime`, `_mtime`, `_creator`, `_last_modifier` are the row's fields. */
export function resolveField(table: SqlTable, name: string): Field {
  const system = systemField(name);
  if (system) return system;
  const column = findByName(table.columns, name, (c) => c.name) ?? table.columns.find((c) => c.key === name);
  if (!column) throw sqlError(`Column '${name}' not found in table '${table.name}'.`);
  return fieldOfColumn(column);
}

/** Two fields address the same value. */
export function sameField(a: Field, b: Field): boolean {
  if (a.kind === 'row' && b.kind === 'row') return a.field === b.field;
  if (a.kind === 'cell' && b.kind === 'cell') return a.column.key === b.column.key;
  return false;
}

/** The options of a single- or multiple-select column, in definition order. */
export function selectOptions(column: SqlColumn | undefined): Array<{ id: string; name: string }> {
  const options = column?.data?.options;
  if (!Array.isArray(options)) return [];
  return options.filter(
    (o): o is { id: string; name: string } => typeof o === 'object' && o !== null && typeof o.id === 'string' && typeof o.name === 'string',
  );
}
