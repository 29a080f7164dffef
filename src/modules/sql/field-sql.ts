/**
 * How a field reads in SQL, per dialect, over `base_rows` (SQLite: `data` is JSON text; PostgreSQL: JSONB).
 * Column keys and JSON paths are bound parameters; only fixed SQL text is written inline. Every value
 * expression yields NULL for an empty cell (missing key, '' or []) or a value of the wrong JSON type, so
 * both engines give the same answer for the same stored document. Text compares byte-wise
 * (PostgreSQL `COLLATE "C"`, SQLite BINARY).
 */
import { indexableKey, indexedValue, sqliteValue } from '../filters/index.js';
import { sql, type RawBuilder } from 'kysely';
import type { DialectName } from '../../db/index.js';
import { selectOptions, type Field, type ValueType } from './schema.js';

export type Fragment = RawBuilder<unknown>;

export interface FieldSql {
  type: ValueType;
  /** Scalar for comparisons (a list's first element). */
  value: Fragment;
  /** What GROUP BY, DISTINCT, COUNT, MIN and MAX see (a list's JSON text). */
  group: Fragment;
  /** True when the cell is empty; never NULL. */
  isEmpty: Fragment;
  /** A list has an element among `values` (lists only). */
  anyOf?: (values: Fragment[]) => Fragment;
  /** ORDER BY key: single-select by option order, a list by its smallest element. */
  sort: Fragment;
  /** Dates: the stored text (`YYYY-MM-DD` or `YYYY-MM-DD HH:mm`), which date functions read. */
  raw?: Fragment;
  /**
   * The cell as a row index orders it (rows/row-indexes.ts, filters/cell-sql.ts): a comparison of
   * `value` with a constant implies the same comparison of this, which an index can answer.
   */
  indexed?: Fragment;
}

const ROW_COLUMN: Record<string, Fragment> = {
  row_id: sql.ref('row_id'),
  ctime: sql.ref('ctime'),
  mtime: sql.ref('mtime'),
  creator: sql.ref('creator'),
  last_modifier: sql.ref('last_modifier'),
};

export const C = (dialect: DialectName, expr: Fragment): Fragment => (dialect === 'postgres' ? sql`(${expr} collate "C")` : expr);

/** A bound text parameter (typed on PostgreSQL, which cannot infer `$n` types inside CASE or IN). */
export function textParam(dialect: DialectName, value: string): Fragment {
  return dialect === 'postgres' ? sql`cast(${value} as text)` : sql`${value}`;
}

export function numberParam(dialect: DialectName, value: number): Fragment {
  return dialect === 'postgres' ? sql`cast(${value} as double precision)` : sql`${value}`;
}

export function intParam(dialect: DialectName, value: number): Fragment {
  return dialect === 'postgres' ? sql`cast(${value} as bigint)` : sql`${value}`;
}

/**
 * How a plan reads cells (see indexed-groups.ts): every field it reads is told to `read`; the cells of
 * the column `fromIndex` (SQLite) are read off its row index's value alone, for the rows whose indexed
 * value is unambiguous.
 */
export interface CellReading {
  read?: (field: Field) => void;
  fromIndex?: string;
  /** Every field is read from a group set's row (group-set-plans.ts); its aggregates too. */
  groupSet?: SetReading;
}

/** How a plan over a group set's rows reads fields and aggregates (group-set-plans.ts `setReading`). */
export interface SetReading {
  /** The field as the set's row holds it; throws (NotFromSet) for a field the set does not hold. */
  field(field: Field): FieldSql;
  /**
   * An aggregate over the set's rows: the inner columns it reads and the aggregate over their refs;
   * undefined when the usual aggregate over `field`'s reading is already exact (MIN, MAX, COUNT DISTINCT
   * of the group column); throws (NotFromSet) when the set cannot answer it.
   */
  aggregate(call: { name: string; field?: Field; distinct: boolean }): { inner: Array<{ id: string; expr: Fragment }>; outer: (refs: Fragment[]) => Fragment } | undefined;
}

/** `alias`: the `base_rows` alias the field is read from (a join reads several); none reads `base_rows` itself. */
export function fieldSql(field: Field, dialect: DialectName, alias?: string, reading?: CellReading): FieldSql {
  reading?.read?.(field);
  if (reading?.groupSet) return reading.groupSet.field(field);
  if (field.kind === 'row') return rowFieldSql(field, dialect, alias);
  const key = field.column.key;
  const data = alias ? sql.ref(`${alias}.data`) : sql`data`;
  const fromIndex = dialect === 'sqlite' && !alias && reading?.fromIndex === key && indexableKey(key);
  const cell = dialect === 'postgres' ? postgresCell(key, data) : fromIndex ? sqliteIndexedCell(key, data) : sqliteCell(key, data);
  const type = field.valueType;
  switch (type) {
    case 'string': {
      const value = C(dialect, cell.text);
      const sort = field.column.type === 'single-select' ? optionRank(dialect, value, selectOptions(field.column).map((o) => o.name)) : value;
      const indexed = indexableKey(key) ? indexedValue(dialect, data, key, 'text') : undefined;
      return { type, value, group: value, isEmpty: sql`(${cell.text} is null)`, sort, ...(indexed ? { indexed } : {}) };
    }
    case 'number': {
      const indexed = indexableKey(key) ? indexedValue(dialect, data, key, 'number') : undefined;
      return { type, value: cell.number, group: cell.number, isEmpty: sql`(${cell.number} is null)`, sort: cell.number, ...(indexed ? { indexed } : {}) };
    }
    case 'bool':
      // An unchecked box may be stored as false or not at all: both read as 0.
      return { type, value: cell.flag, group: cell.flag, isEmpty: sql`(1 = 0)`, sort: cell.flag };
    case 'date': {
      const value = C(dialect, cell.date);
      return { type, value, group: value, isEmpty: sql`(${cell.date} is null)`, sort: value, raw: cell.text };
    }
    case 'list': {
      const first = C(dialect, cell.first);
      const group = C(dialect, cell.listJson);
      return { type, value: first, group, isEmpty: sql`(${cell.listJson} is null)`, anyOf: cell.anyOf, sort: C(dialect, cell.smallest) };
    }
    default:
      return { type, value: sql`null`, group: sql`null`, isEmpty: sql`(1 = 0)`, sort: sql`null` };
  }
}

function rowFieldSql(field: Extract<Field, { kind: 'row' }>, dialect: DialectName, alias?: string): FieldSql {
  const column = alias ? sql.ref(`${alias}.${field.field}`) : ROW_COLUMN[field.field]!;
  if (field.valueType === 'time') return { type: 'time', value: column, group: column, isEmpty: sql`(${column} is null)`, sort: column };
  const value = C(dialect, sql`nullif(${column}, '')`);
  return { type: 'string', value, group: value, isEmpty: sql`(${value} is null)`, sort: value };
}

/** Position of the value among the options (definition order); unknown names after them, NULL stays NULL. */
export function optionRank(dialect: DialectName, value: Fragment, names: string[]): Fragment {
  if (names.length === 0) return value;
  const whens = names.map((name, i) => sql`when ${value} = ${textParam(dialect, name)} then ${sql.lit(i)}`);
  return sql`(case when ${value} is null then null ${sql.join(whens, sql` `)} else ${sql.lit(names.length)} end)`;
}

interface CellSql {
  text: Fragment;
  number: Fragment;
  flag: Fragment;
  date: Fragment;
  first: Fragment;
  listJson: Fragment;
  smallest: Fragment;
  anyOf: (values: Fragment[]) => Fragment;
}

function sqliteCell(key: string, data: Fragment): CellSql {
  const path = `$."${key}"`;
  const type = sql`json_type(${data}, ${path})`;
  const value = sql`json_extract(${data}, ${path})`;
  const firstPath = `$."${key}"[0]`;
  return {
    text: sql`(case when ${type} = 'text' then nullif(${value}, '') end)`,
    number: sql`(case when ${type} in ('integer', 'real') then ${value} end)`,
    flag: sql`(case when ${type} = 'true' then 1 else 0 end)`,
    date: sql`(case when ${type} = 'text' then (case when length(${value}) = 10 then ${value} || ' 00:00' else nullif(${value}, '') end) end)`,
    first: sql`(case when json_type(${data}, ${firstPath}) = 'text' then nullif(json_extract(${data}, ${firstPath}), '') end)`,
    listJson: sql`(case when ${type} = 'array' and json_array_length(${data}, ${path}) > 0 then ${value} end)`,
    smallest: sql`(select min(je.value) from json_each(${data}, ${path}) as je where je.type = 'text')`,
    anyOf: (values) =>
      sql`(${type} = 'array' and exists (select 1 from json_each(${data}, ${path}) as je where je.type = 'text' and je.value in (${sql.join(values)})))`,
  };
}

/**
 * SQLite, a cell read off its row index: the index holds `json_extract(data, '$."k"')` only, whose SQL type
 * stands in for the JSON type. That is exact for every value but two kinds, which the plan reads from the
 * row instead (indexed-groups.ts `ambiguousRanges`): 0 and 1 (also `false` and `true`) and texts starting
 * with `[` or `{` (also arrays and objects). Lists and checkboxes are never read this way.
 */
function sqliteIndexedCell(key: string, data: Fragment): CellSql {
  const value = sqliteValue(data, key);
  const type = sql`typeof(${value})`;
  return {
    ...sqliteCell(key, data),
    text: sql`(case when ${type} = 'text' then nullif(${value}, '') end)`,
    number: sql`(case when ${type} in ('integer', 'real') then ${value} end)`,
    date: sql`(case when ${type} = 'text' then (case when length(${value}) = 10 then ${value} || ' 00:00' else nullif(${value}, '') end) end)`,
  };
}

function postgresCell(key: string, data: Fragment): CellSql {
  const json = sql`(${data} -> cast(${key} as text))`;
  const text = sql`(${data} ->> cast(${key} as text))`;
  const type = sql`jsonb_typeof(${json})`;
  // CASE (not AND) guards every cast and array function: PostgreSQL does not promise AND's evaluation order.
  const array = sql`(case when ${type} = 'array' then ${json} end)`;
  return {
    text: sql`(case when ${type} = 'string' then nullif(${text}, '') end)`,
    number: sql`(case when ${type} = 'number' then cast(${text} as double precision) end)`,
    flag: sql`(case when ${json} = 'true'::jsonb then 1 else 0 end)`,
    date: sql`(case when ${type} = 'string' then (case when length(${text}) = 10 then ${text} || ' 00:00' else nullif(${text}, '') end) end)`,
    first: sql`(case when jsonb_typeof(${json} -> 0) = 'string' then nullif(${json} ->> 0, '') end)`,
    listJson: sql`(case when ${type} = 'array' then (case when jsonb_array_length(${json}) > 0 then cast(${json} as text) end) end)`,
    smallest: sql`(select min((x.elem #>> '{}') collate "C") from jsonb_array_elements(${array}) as x(elem) where jsonb_typeof(x.elem) = 'string')`,
    anyOf: (values) => sql`coalesce(${array} ?| array[${sql.join(values)}]::text[], false)`,
  };
}
