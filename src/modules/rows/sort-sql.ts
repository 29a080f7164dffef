import { sql, type Expression, type RawBuilder } from 'kysely';
import type { DialectName } from '../../db/index.js';
import type { ColumnMeta } from './metadata.js';
import { jsonPath } from './rows.repository.js';

const NUMERIC_TYPES = ['number', 'duration', 'rate'];
const TEXT_TYPES = ['text', 'long-text', 'email', 'url', 'auto-number', 'date', 'single-select'];
const ROW_FIELD: Record<string, string> = { ctime: 'ctime', mtime: 'mtime', creator: 'creator', 'last-modifier': 'last_modifier' };

/**
 * The value a column sorts by, in SQL; null for columns that do not sort (lists, links, files, buttons).
 * Text compares by code point on both engines (`COLLATE "C"` on PostgreSQL, SQLite's BINARY).
 */
function sortValue(column: ColumnMeta, dialect: DialectName): RawBuilder<unknown> | null {
  const type = sortType(column);
  const field = ROW_FIELD[type];
  if (field) {
    const isText = field === 'creator' || field === 'last_modifier';
    return isText && dialect === 'postgres' ? sql`${sql.ref(field)} collate "C"` : sql.ref(field);
  }
  const key = column.key;
  if (NUMERIC_TYPES.includes(type)) {
    return dialect === 'postgres'
      ? sql`case when jsonb_typeof(data -> ${key}::text) = 'number' then (data ->> ${key}::text)::numeric end`
      : sql`json_extract(data, ${jsonPath(key)})`;
  }
  if (type === 'checkbox') {
    return dialect === 'postgres'
      ? sql`case when jsonb_typeof(data -> ${key}::text) = 'boolean' then (data ->> ${key}::text)::boolean end`
      : sql`json_extract(data, ${jsonPath(key)})`;
  }
  if (TEXT_TYPES.includes(type)) {
    return dialect === 'postgres' ? sql`(data ->> ${key}::text) collate "C"` : sql`json_extract(data, ${jsonPath(key)})`;
  }
  return null;
}

/** Formula and link-formula cells sort as their result type (dates as RFC 3339 text: in time order within the zone). */
const SORT_TYPE_OF_RESULT: Record<string, string> = { number: 'number', bool: 'checkbox', string: 'text', date: 'text' };

function sortType(column: ColumnMeta): string {
  if (column.type !== 'formula' && column.type !== 'link-formula') return column.type;
  return SORT_TYPE_OF_RESULT[String(column.data?.result_type)] ?? column.type;
}

/** ORDER BY terms for `(column, descending)` pairs; empty cells sort last either way. */
export function orderTerms(sorts: Array<{ column: ColumnMeta; desc: boolean }>, dialect: DialectName): Expression<unknown>[] {
  const terms: Expression<unknown>[] = [];
  for (const { column, desc } of sorts) {
    const value = sortValue(column, dialect);
    if (value) terms.push(desc ? sql`${value} desc nulls last` : sql`${value} asc nulls last`);
  }
  return terms;
}
