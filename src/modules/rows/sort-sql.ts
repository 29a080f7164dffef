import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { DialectName } from '../../db/index.js';
import { postgresJson, postgresNumber, postgresText, postgresTextC, sqliteValue } from '../filters/index.js';
import type { ColumnMeta } from './metadata.js';

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
  const data = sql.ref('base_rows.data');
  // The expressions of cell-sql.ts, which the row indexes (row-indexes.ts) are built on.
  if (NUMERIC_TYPES.includes(type)) return dialect === 'postgres' ? postgresNumber(data, key) : sqliteValue(data, key);
  if (type === 'checkbox') {
    return dialect === 'postgres'
      ? sql`case when jsonb_typeof(${postgresJson(data, key)}) = 'boolean' then (${postgresText(data, key)})::boolean end`
      : sqliteValue(data, key);
  }
  if (TEXT_TYPES.includes(type)) return dialect === 'postgres' ? postgresTextC(data, key) : sqliteValue(data, key);
  return null;
}

/**
 * How a row index orders a column's cells (row-indexes.ts): 'number' or 'text', or null for columns
 * no index serves (row fields, checkboxes, lists, links, files).
 */
export function indexValueType(column: { type: string; data?: unknown }): 'number' | 'text' | null {
  const type = sortType(column);
  if (ROW_FIELD[type]) return null;
  if (NUMERIC_TYPES.includes(type)) return 'number';
  if (TEXT_TYPES.includes(type)) return 'text';
  return null;
}

/** Formula and link-formula cells sort as their result type (dates as RFC 3339 text: in time order within the zone). */
const SORT_TYPE_OF_RESULT: Record<string, string> = { number: 'number', bool: 'checkbox', string: 'text', date: 'text' };

function sortType(column: { type: string; data?: unknown }): string {
  if (column.type !== 'formula' && column.type !== 'link-formula') return column.type;
  return SORT_TYPE_OF_RESULT[String((column.data as { result_type?: unknown } | null | undefined)?.result_type)] ?? column.type;
}

/**
 * ORDER BY terms for `(column, descending)` pairs; empty cells sort last either way. SQLite says
 * "nulls last" as `(value is null), value`: the same order, in a form an index on those two
 * expressions can give without sorting (SQLite's indexes keep NULLs first).
 */
export function orderTerms(sorts: Array<{ column: ColumnMeta; desc: boolean }>, dialect: DialectName): Expression<unknown>[] {
  const terms: Expression<unknown>[] = [];
  for (const { column, desc } of sorts) {
    const value = sortValue(column, dialect);
    if (!value) continue;
    if (dialect === 'sqlite') {
      terms.push(sql`(${value} is null)`);
      terms.push(desc ? sql`${value} desc` : value);
    } else {
      terms.push(desc ? sql`${value} desc nulls last` : sql`${value} asc nulls last`);
    }
  }
  return terms;
}

/** The values a sorted listing orders by (its sortable columns, in order), as `orderTerms` orders them. */
export function sortKeys(sorts: Array<{ column: ColumnMeta; desc: boolean }>, dialect: DialectName): Array<{ value: RawBuilder<unknown>; desc: boolean }> {
  return sorts.flatMap(({ column, desc }) => {
    const value = sortValue(column, dialect);
    return value ? [{ value, desc }] : [];
  });
}

/**
 * The rows after a row in a sorted listing's order (keyset, issue 34): `last` holds that row's sort values
 * (as the listing selected them) and its id, the tie-break. Empty values sort last in either direction,
 * as `orderTerms` orders them: after an empty value come only empty values with a greater id.
 */
export function keysetAfter(keys: Array<{ value: RawBuilder<unknown>; desc: boolean }>, last: { values: unknown[]; id: number }): Expression<SqlBool> {
  let after: RawBuilder<SqlBool> = sql<SqlBool>`base_rows.id > ${last.id}`;
  for (let i = keys.length - 1; i >= 0; i--) {
    const { value, desc } = keys[i]!;
    const bound = last.values[i];
    if (bound === null || bound === undefined) {
      after = sql<SqlBool>`(${value} is null and ${after})`;
    } else {
      const beyond = desc ? sql`${value} < ${bound}` : sql`${value} > ${bound}`;
      after = sql<SqlBool>`(${value} is null or ${beyond} or (${value} = ${bound} and ${after}))`;
    }
  }
  return after;
}

/**
 * `keysetAfter` as conditions an index can seek to (issue 34): the exact condition alone is an OR that
 * neither planner turns into an index range, so a page after a row deep in the listing read the sort
 * index from its start. The rows after `last` are read as up to two ranges, in the listing's order:
 * 1. when the row's first sort value is not empty: the rows whose first value is not empty and on the
 *    far side of it (`v >= b`, or `v <= b` descending; SQLite also `(v is null) = 0`, its index's first
 *    column) — a range of the first sort column's row index;
 * 2. the rows whose first value is empty (they come last in either direction).
 * Each carries the exact condition too, so together they are exactly the rows `keysetAfter` gives.
 * `constantTerms`: how many leading `orderTerms` are constant within the range. The range is read
 * without them: SQLite otherwise sorts the whole range in a temporary B-tree instead of reading the index
 * in order (its planner does not see that an equality-bound expression term is satisfied by the index).
 */
export function keysetRanges(
  keys: Array<{ value: RawBuilder<unknown>; desc: boolean }>,
  last: { values: unknown[]; id: number },
  dialect: DialectName,
): Array<{ where: Expression<SqlBool>; constantTerms: number }> {
  const exact = keysetAfter(keys, last);
  const first = keys[0];
  if (!first) return [{ where: exact, constantTerms: 0 }];
  const { value, desc } = first;
  const sqlite = dialect === 'sqlite';
  const empty = {
    where: sqlite ? sql<SqlBool>`((${value} is null) = 1 and ${value} is null and ${exact})` : sql<SqlBool>`(${value} is null and ${exact})`,
    constantTerms: sqlite ? 2 : 1,
  };
  const bound = last.values[0];
  if (bound === null || bound === undefined) return [empty];
  const side = desc ? sql`${value} <= ${bound}` : sql`${value} >= ${bound}`;
  const filled = sqlite
    ? { where: sql<SqlBool>`((${value} is null) = 0 and ${side} and ${exact})`, constantTerms: 1 }
    : { where: sql<SqlBool>`(${side} and ${exact})`, constantTerms: 0 };
  return [filled, empty];
}
