/**
 * The SQL text of a cell's value, shared by filters, sorts and the row indexes built on them
 * (rows/row-indexes.ts). An expression index is used by the planner only when a query contains the very
 * same expression, so the column key is written into the SQL as a literal (a bound parameter is a
 * different expression to both planners). That is safe only for keys that are plain identifiers —
 * this server's column keys are 4 letters/digits; any other key stays a bound parameter (no index).
 */
import { sql, type RawBuilder } from 'kysely';

type Fragment = RawBuilder<unknown>;
export type CellDialect = 'sqlite' | 'postgres';

const SAFE_KEY = /^[A-Za-z0-9_]{1,64}$/;

/** True when a column key is written into SQL as a literal (and so can be indexed). */
export function indexableKey(key: string): boolean {
  return SAFE_KEY.test(key);
}

/** SQLite JSON path of a key: a literal for plain keys, else a parameter. */
function sqlitePath(key: string): Fragment {
  const path = `$."${key}"`;
  return indexableKey(key) ? sql.lit(path) : sql`${path}`;
}

/** PostgreSQL key: a text literal for plain keys, else a text parameter. */
function postgresKey(key: string): Fragment {
  return indexableKey(key) ? sql.lit(key) : sql`${key}::text`;
}

/** SQLite: `json_extract(data, '$."k"')` (filters, sorts and the index on them use exactly this). */
export function sqliteValue(data: Fragment, key: string): Fragment {
  return sql`json_extract(${data}, ${sqlitePath(key)})`;
}

export function sqliteType(data: Fragment, key: string): Fragment {
  return sql`json_type(${data}, ${sqlitePath(key)})`;
}

export function sqlitePathOf(key: string): Fragment {
  return sqlitePath(key);
}

/** PostgreSQL: the cell as JSONB (`data -> 'k'`). */
export function postgresJson(data: Fragment, key: string): Fragment {
  return sql`(${data} -> ${postgresKey(key)})`;
}

/** PostgreSQL: the cell as text (`data ->> 'k'`). */
export function postgresText(data: Fragment, key: string): Fragment {
  return sql`(${data} ->> ${postgresKey(key)})`;
}

/** PostgreSQL: a number cell as float8, else NULL (the CASE guards the cast). Indexed as is. */
export function postgresNumber(data: Fragment, key: string): Fragment {
  return sql`(case when jsonb_typeof(${postgresJson(data, key)}) = 'number' then (${postgresText(data, key)})::float8 end)`;
}

/** PostgreSQL: a cell's text compared by code point (`COLLATE "C"`). Indexed as is. */
export function postgresTextC(data: Fragment, key: string): Fragment {
  return sql`(${postgresText(data, key)} collate "C")`;
}

/** The value an index on a cell orders by, per dialect and value type (see rows/row-indexes.ts). */
export function indexedValue(dialect: CellDialect, data: Fragment, key: string, valueType: 'number' | 'text'): Fragment {
  if (dialect === 'sqlite') return sqliteValue(data, key);
  return valueType === 'number' ? postgresNumber(data, key) : postgresTextC(data, key);
}

/**
 * The smallest string above every string whose first `day.length` characters are at most `day`
 * (the day's last character bumped by one code point): `v < dayUpperBound(T)` holds for every text
 * `v` with `substr(v, 1, 10) <= T`, which lets an index range stand beside the exact date test.
 */
export function dayUpperBound(day: string): string {
  return day.slice(0, -1) + String.fromCharCode(day.charCodeAt(day.length - 1) + 1);
}
