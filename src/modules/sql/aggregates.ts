/** COUNT, SUM, AVG, MIN and MAX over the inner query's per-row columns (see select.ts). */
import { sql } from 'kysely';
import type { DialectName } from '../../db/index.js';
import { C, fieldSql, type CellReading, type Fragment } from './field-sql.js';
import { decodeGrouped } from './output.js';
import { isNode, type Node } from './parser.js';
import { resolveColumnRef, columnName, type TableScope } from './references.js';
import type { Field, ValueType } from './schema.js';
import { sqlError } from './sql-error.js';

/** The inner query's select list, deduplicated by what each column computes. */
export interface InnerColumns {
  fragments: Fragment[];
  names: Map<string, string>;
}

export interface Aggregate {
  /** The response key: the text the aggregate was written as, e.g. `COUNT(*)`. */
  label: string;
  sql: Fragment;
  /** What comparisons in HAVING see. */
  valueType: ValueType;
  /** The `metadata` entry's type and data. */
  columnType: string;
  columnData: unknown;
  decode: (convertKeys: boolean) => (raw: unknown) => unknown;
}

const FUNCTIONS = ['COUNT', 'SUM', 'AVG', 'MIN', 'MAX'];

const number = () => (raw: unknown) => (raw === null || raw === undefined ? null : Number(raw));

function innerColumn(inner: InnerColumns, id: string, expr: Fragment): Fragment {
  let name = inner.names.get(id);
  if (!name) {
    name = `a${inner.names.size}`;
    inner.names.set(id, name);
    inner.fragments.push(sql`${expr} as ${sql.ref(name)}`);
  }
  return sql.ref(name);
}

function fieldId(field: Field): string {
  return field.kind === 'row' ? `row:${field.field}` : `cell:${field.column.key}`;
}

/** The original keys a function or aggregate item by its upper-cased name and the argument as written: `SUM(数字)`. */
function upperCasedCall(node: Node, written: string): string {
  if (node.type !== 'function' && node.type !== 'aggr_func') return written;
  const m = /^([A-Za-z_][A-Za-z0-9_]*)(\s*\()/.exec(written);
  return m ? m[1]!.toUpperCase() + written.slice(m[1]!.length) : written;
}

export function labelOf(node: Node, text: string, name: string): string {
  const loc = node.loc as { start?: { offset?: number }; end?: { offset?: number } } | undefined;
  const start = loc?.start?.offset;
  const end = loc?.end?.offset;
  if (typeof start === 'number' && typeof end === 'number' && end > start && end <= text.length) return upperCasedCall(node, text.slice(start, end).trim());
  return `${name}(…)`;
}

export function aggregateOf(node: Node, scope: TableScope, dialect: DialectName, inner: InnerColumns, text: string, cells?: CellReading): Aggregate {
  const name = String(node.name).toUpperCase();
  if (!FUNCTIONS.includes(name)) throw sqlError(`Function ${name} is not supported; aggregates are COUNT, SUM, AVG, MIN and MAX.`);
  if (node.over !== null && node.over !== undefined) throw sqlError('Window functions are not supported.');
  const args = isNode(node.args) ? node.args : {};
  if (args.orderby !== null && args.orderby !== undefined) throw sqlError(`ORDER BY inside ${name} is not supported.`);
  const isDistinct = typeof args.distinct === 'string' && args.distinct.toUpperCase() === 'DISTINCT';
  const distinct = isDistinct ? sql`distinct ` : sql``;
  const label = labelOf(node, text, name);
  const arg = isNode(args.expr) ? args.expr : undefined;
  if (!arg) throw sqlError(`${name} needs an argument.`);

  const star = arg.type === 'star' || (arg.type === 'column_ref' && columnName(arg, scope) === '*');
  const constantArg = arg.type === 'number' || arg.type === 'single_quote_string' || arg.type === 'double_quote_string' || arg.type === 'bool';
  // A plan over a group set's rows (group-set-plans.ts): the set's counts and sums.
  const fromSet = (field?: Field): Aggregate | undefined => {
    const found = cells?.groupSet?.aggregate({ name, ...(field ? { field } : {}), distinct: isDistinct });
    if (!found) return undefined;
    const refs = found.inner.map((column) => innerColumn(inner, column.id, column.expr));
    return { label, sql: found.outer(refs), valueType: 'number', columnType: 'number', columnData: null, decode: number };
  };
  if (star || constantArg) {
    if (name !== 'COUNT') throw sqlError(`${name} needs a column.`);
    if (isDistinct) throw sqlError('COUNT(DISTINCT …) needs a column.');
    const counted = fromSet();
    if (counted) return counted;
    return { label, sql: sql`count(*)`, valueType: 'number', columnType: 'number', columnData: null, decode: number };
  }
  if (arg.type !== 'column_ref') throw sqlError(`${name} accepts a column; expressions and functions are not supported.`);
  const field = resolveColumnRef(arg, scope);
  const setAggregate = fromSet(field);
  if (setAggregate) return setAggregate;
  const fs = fieldSql(field, dialect, undefined, cells);
  if (fs.type === 'opaque') throw sqlError(`${field.label} cannot be aggregated.`);
  const column = field.column;

  if (name === 'COUNT') {
    const ref = innerColumn(inner, `group:${fieldId(field)}`, fs.group);
    return { label, sql: sql`count(${distinct}${ref})`, valueType: 'number', columnType: 'number', columnData: null, decode: number };
  }
  if (name === 'SUM' || name === 'AVG') {
    if (fs.type !== 'number') throw sqlError(`${name} needs a number column; ${field.label} is ${column?.type ?? fs.type}.`);
    const ref = innerColumn(inner, `group:${fieldId(field)}`, fs.group);
    // SQLite's SUM overflows on large integers; TOTAL does not, but answers 0.0 where SUM answers NULL.
    const expr =
      name === 'AVG'
        ? sql`avg(${distinct}${ref})`
        : dialect === 'sqlite'
          ? sql`(case when count(${ref}) = 0 then null else total(${distinct}${ref}) end)`
          : sql`sum(${distinct}${ref})`;
    return { label, sql: expr, valueType: 'number', columnType: 'number', columnData: null, decode: number };
  }
  if (fs.type === 'list') throw sqlError(`${name} does not support ${field.label} (a list).`);
  const ref = innerColumn(inner, `group:${fieldId(field)}`, fs.group);
  const textual = fs.type === 'string' || fs.type === 'date';
  const expr = sql`${sql.raw(name.toLowerCase())}(${textual ? C(dialect, ref) : ref})`;
  return {
    label,
    sql: expr,
    valueType: fs.type,
    columnType: column?.type ?? (fs.type === 'time' ? (field.kind === 'row' && field.field === 'mtime' ? 'mtime' : 'ctime') : 'text'),
    columnData: column?.data ?? null,
    decode: (convertKeys) => (raw) => decodeGrouped(field, raw, convertKeys),
  };
}
