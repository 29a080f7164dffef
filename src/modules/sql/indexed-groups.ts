/**
 * GROUP BY, DISTINCT and aggregates of one column answered from that column's row index (SQLite;
 * docs/sql.md "Grouped queries from a row index").
 *
 * SQLite's expression index on a cell holds `json_extract(data, '$."k"')` and the row id, and SQLite reads
 * such an expression from the index without opening the row. A grouped statement that reads no other
 * field than that one column (its group key, aggregate arguments, WHERE and HAVING) is therefore planned
 * twice and run as one query over the index:
 * - rows whose indexed value is unambiguous: the cell read from the value alone (its SQL type stands in for
 *   the JSON type; field-sql.ts `sqliteIndexedCell`) — the index is all that is read;
 * - rows whose indexed value is ambiguous (`ambiguousRanges`): the usual exact reading of the stored
 *   JSON, reached through the index's range of those values, so only those rows are opened;
 * joined by UNION ALL under the statement's own grouping, HAVING, ORDER BY and LIMIT. Both readings give the
 * same value for every unambiguous row, so the answer is the scan's, whatever the cells hold.
 * PostgreSQL cannot read an expression index without the row (no index-only scan of an expression over
 * `data`), so there the statement keeps the scan.
 */
import { sql } from 'kysely';
import { sqliteValue } from '../filters/index.js';
import type { Fragment } from './field-sql.js';
import type { Field, SqlColumn } from './schema.js';

/** The column whose row index can answer a grouped statement, and how its cells read. */
export interface GroupIndex {
  key: string;
  /** The filter index's name (`INDEXED BY`). */
  index: string;
  valueType: 'number' | 'string' | 'date';
}

const READABLE = new Set(['number', 'string', 'date']);
const INDEX_NAME = /^[A-Za-z0-9_]{1,63}$/;

/** The one cell column every field a plan read belongs to, when its cells can be read off an index; else undefined. */
export function singleIndexableColumn(fields: readonly Field[]): { column: SqlColumn; valueType: GroupIndex['valueType'] } | undefined {
  const first = fields[0];
  if (!first || first.kind !== 'cell' || !READABLE.has(first.valueType)) return undefined;
  const same = fields.every((f) => f.kind === 'cell' && f.column.key === first.column.key && f.valueType === first.valueType);
  return same ? { column: first.column, valueType: first.valueType as GroupIndex['valueType'] } : undefined;
}

/**
 * Conditions on the indexed value selecting the rows whose JSON type it does not tell (each a range the
 * index answers, pairwise disjoint):
 * - numbers: 0 and 1, which are also what `false` and `true` read as (a checkbox value in a number column);
 * - texts and dates: texts from `[` and from `{`, which are also what arrays and objects read as.
 * Every other value's SQL type is its JSON type: integer/real a number, text a string, NULL no value.
 */
export function ambiguousRanges(value: Fragment, valueType: GroupIndex['valueType']): Fragment[] {
  if (valueType === 'number') return [sql`${value} in (0, 1)`];
  return [sql`(${value} >= '[' and ${value} < '\\')`, sql`(${value} >= '{' and ${value} < '|')`];
}

/** Rows of the statement's inner query, over `from` filtered by `where` (select.ts planGrouped). */
export type InnerRows = (from: Fragment, where: Fragment) => Fragment;

/**
 * The inner query read through the index: the index-only part where no range of `ambiguousRanges` holds,
 * and the exact part for each range.
 */
export function indexedGroupSource(group: GroupIndex, fromIndex: { rows: InnerRows; where: Fragment }, exact: { rows: InnerRows; where: Fragment }): Fragment {
  if (!INDEX_NAME.test(group.index)) throw new Error(`unexpected row index name ${group.index}`);
  const from = sql`base_rows indexed by ${sql.raw(`"${group.index}"`)}`;
  const ranges = ambiguousRanges(sqliteValue(sql`data`, group.key), group.valueType);
  // NULL (no value) is unambiguous: coalesce keeps those rows in the index-only part.
  const unambiguous = sql`not coalesce((${sql.join(ranges, sql` or `)}), 0)`;
  const parts = [fromIndex.rows(from, sql`${fromIndex.where} and ${unambiguous}`), ...ranges.map((range) => exact.rows(from, sql`${exact.where} and ${range}`))];
  return sql.join(parts, sql` union all `);
}
