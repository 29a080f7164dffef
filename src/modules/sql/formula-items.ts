/**
 * Formula functions SQL cannot compute the same on both engines (text case, dates, logic, …) are evaluated
 * by the formula library itself, per row, in the application: the SQL expression is written as the formula
 * it is (`upper(Name) = 'X'` → `upper({Name}) = "X"`), compiled against the table's columns and evaluated
 * on each stored row, exactly as a formula column computes it. One engine for both (docs/sql.md).
 */
import {
  FormulaSyntaxError,
  FUNCTIONS,
  cellToValue,
  compileFormula,
  evaluate,
  referenceType,
  toCell,
  type ColumnRef,
  type ResultType,
} from '../formulas/index.js';
import type { StoredRow } from './output.js';
import { functionName } from './predicates.js';
import { isNode, type Node } from './parser.js';
import { columnName, type TableScope } from './references.js';
import { SYSTEM_FIELDS, type SqlColumn } from './schema.js';
import { sqlError } from './sql-error.js';
import { MAX_EXPRESSION_DEPTH } from './expressions.js';
import { constantOf, type Bindings } from './values.js';

/** The functions `expressions.ts` compiles to SQL with the formula library's answers on both engines. */
export const SQL_COMPILED_FUNCTIONS: ReadonlySet<string> = new Set([
  'abs', 'sign', 'len', 'concatenate', 'left', 'right', 'mid', 'int', 'mod', 'floor', 'ceiling',
  'year', 'month', 'day', 'hour', 'minute', 'second', 'weekday', 'round', 'power', 'sqrt', 'trim',
]);

/** `NOT (…)` parses as a call of NOT; the condition compiler handles it. */
const SQL_KEYWORD_CALLS: ReadonlySet<string> = new Set(['not']);

const COMPARISONS: Record<string, string> = { '=': '=', '!=': '<>', '<>': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };
const ARITHMETIC = new Set(['+', '-', '*', '/', '%']);
const MAX_NODES = 10_000;

function children(node: Node): unknown[] {
  return [node.left, node.right, node.expr, ...(((node.args as { value?: unknown } | undefined)?.value as unknown[] | undefined) ?? [])];
}

const DATE_PARTS = new Set(['year', 'month', 'day', 'hour', 'minute', 'second', 'weekday']);
const TIME_COLUMN_TYPES = new Set(['ctime', 'mtime']);

/** A row timestamp (`_ctime`, `_mtime`, a created/modified-time column): SQL has no TIME_ZONE calendar for it. */
function isTimestamp(node: unknown, scope: TableScope | undefined): boolean {
  if (!scope || !isNode(node) || node.type !== 'column_ref') return false;
  const name = columnName(node, scope);
  return name === '_ctime' || name === '_mtime' || scope.table.columns.some((c) => c.name === name && TIME_COLUMN_TYPES.has(c.type));
}

/**
 * Whether `node` calls a formula function SQL does not compute (then the formula library evaluates it):
 * functions off SQL's list, and date parts of row timestamps (read in TIME_ZONE by the formula library).
 */
export function needsFormulaEngine(root: Node, scope?: TableScope): boolean {
  const stack: unknown[] = [root];
  let seen = 0;
  while (stack.length > 0 && seen++ < MAX_NODES) {
    const node = stack.pop();
    if (!isNode(node)) continue;
    if (node.type === 'function') {
      const name = functionName(node).toLowerCase();
      if (!SQL_COMPILED_FUNCTIONS.has(name) && !SQL_KEYWORD_CALLS.has(name) && FUNCTIONS.has(name)) return true;
      const first = ((node.args as { value?: unknown } | undefined)?.value as unknown[] | undefined)?.[0];
      if (DATE_PARTS.has(name) && isTimestamp(first, scope)) return true;
    }
    stack.push(...children(node));
  }
  return false;
}

/** The cells a formula reads: a column's stored cell (as formula columns see it) or `_ctime`/`_mtime`. */
type Reader = { ref: ColumnRef; read: (row: StoredRow, timeZone: string) => ReturnType<typeof cellToValue> };

function readerOf(name: string, scope: TableScope): Reader | undefined {
  if (name === '_ctime' || name === '_mtime') {
    const field = name === '_ctime' ? '_ctime' : '_mtime';
    return { ref: { key: name, type: 'date' }, read: (row, tz) => cellToValue('ctime', row[field], tz) };
  }
  if (name in SYSTEM_FIELDS) {
    const field = name as '_id' | '_creator' | '_last_modifier';
    return { ref: { key: name, type: 'string' }, read: (row) => (row as unknown as Record<string, string>)[field] ?? null };
  }
  const column: SqlColumn | undefined = scope.table.columns.find((c) => c.name === name);
  if (!column) return undefined;
  // Computed from the row itself, as formula columns read them.
  if (column.type === 'ctime' || column.type === 'mtime') {
    const field = column.type === 'ctime' ? '_ctime' : '_mtime';
    return { ref: { key: column.key, type: 'date' }, read: (row, tz) => cellToValue('ctime', row[field], tz) };
  }
  if (column.type === 'creator' || column.type === 'last-modifier') {
    const field = column.type === 'creator' ? '_creator' : '_last_modifier';
    return { ref: { key: column.key, type: 'string' }, read: (row) => row[field] ?? null };
  }
  const type = referenceType(column.type, column.data?.result_type);
  return { ref: { key: column.key, type }, read: (row, tz) => cellToValue(column.type, row.data[column.key], tz, type) };
}

/** A formula literal for a SQL constant. */
function literal(value: string | number | boolean | null): string {
  if (value === null) return '""';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return value < 0 ? `(0 - ${-value})` : String(value);
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The SQL expression `node` as formula source; anything the formula language has no word for is refused. */
function formulaSource(node: Node, scope: TableScope, bindings: Bindings, readers: Map<string, Reader>): string {
  const constant = constantOf(node, bindings);
  if (constant !== undefined) return literal(constant as string | number | boolean | null);
  switch (node.type) {
    case 'column_ref': {
      const name = columnName(node, scope);
      const reader = readerOf(name, scope);
      if (!reader) throw sqlError(`Column ${name} not found.`);
      readers.set(name, reader);
      return `{${name}}`;
    }
    case 'function': {
      const name = functionName(node).toLowerCase();
      if (!FUNCTIONS.has(name)) throw sqlError(`Function ${functionName(node)} is not supported.`);
      const args = ((node.args as { value?: unknown } | undefined)?.value as unknown[] | undefined) ?? [];
      return `${name}(${args.map((a) => (isNode(a) ? formulaSource(a, scope, bindings, readers) : '""')).join(', ')})`;
    }
    case 'binary_expr': {
      const op = String(node.operator).toUpperCase();
      // `x IS [NOT] NULL`: empty as SQL reads it ('' and [] are NULL), the formula's isblank.
      if ((op === 'IS' || op === 'IS NOT') && isNode(node.right) && node.right.type === 'null') {
        const blank = `isblank(${formulaSource(node.left as Node, scope, bindings, readers)})`;
        return op === 'IS' ? blank : `not(${blank})`;
      }
      const logical = op === 'AND' || op === 'OR' || op === '&&' || op === '||';
      if (!ARITHMETIC.has(op) && !COMPARISONS[op] && !logical) {
        throw sqlError(`Operator ${op} cannot be combined with function ${firstFunction(node)} (computed by the formula engine).`);
      }
      const left = formulaSource(node.left as Node, scope, bindings, readers);
      const right = formulaSource(node.right as Node, scope, bindings, readers);
      if (logical) return `${op === 'AND' || op === '&&' ? 'and' : 'or'}(${left}, ${right})`;
      return `(${left} ${COMPARISONS[op] ?? op} ${right})`;
    }
    case 'unary_expr':
      if (String(node.operator) === '-') return `(0 - ${formulaSource(node.expr as Node, scope, bindings, readers)})`;
      if (String(node.operator).toUpperCase() === 'NOT') return `not(${formulaSource(node.expr as Node, scope, bindings, readers)})`;
      break;
  }
  throw sqlError(`Unsupported expression next to function ${firstFunction(node)} (computed by the formula engine).`);
}

/** Nesting depth, measured without recursion (formulaSource recurses). */
function depthOf(root: Node): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[root, 1]];
  while (stack.length > 0 && max <= MAX_EXPRESSION_DEPTH) {
    const [node, depth] = stack.pop()!;
    if (!isNode(node)) continue;
    max = Math.max(max, depth);
    for (const child of children(node)) stack.push([child, depth + 1]);
  }
  return max;
}

function firstFunction(root: Node): string {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!isNode(node)) continue;
    if (node.type === 'function') return functionName(node);
    stack.push(...children(node));
  }
  return '?';
}

/** An expression the formula library evaluates per stored row; the value as a formula column of its type stores it. */
export interface FormulaItem {
  type: ResultType;
  evaluate(row: StoredRow): unknown;
}

export function formulaItem(node: Node, scope: TableScope, bindings: Bindings, timeZone: string, now: () => number): FormulaItem {
  if (depthOf(node) > MAX_EXPRESSION_DEPTH) throw sqlError(`The expression is nested too deeply (at most ${MAX_EXPRESSION_DEPTH} levels).`);
  const readers = new Map<string, Reader>();
  const source = formulaSource(node, scope, bindings, readers);
  let compiled;
  try {
    compiled = compileFormula(source, (name) => readers.get(name)?.ref);
  } catch (error) {
    if (error instanceof FormulaSyntaxError) throw sqlError(`The expression is not a valid formula: ${error.reason}.`);
    throw error;
  }
  const byKey = new Map([...readers.values()].map((r) => [r.ref.key, r]));
  const type = compiled.resultType;
  return {
    type,
    evaluate(row) {
      const ctx = { now: now(), timeZone };
      return toCell(evaluate(compiled, (key) => byKey.get(key)?.read(row, timeZone) ?? null, ctx), type, timeZone);
    },
  };
}

/**
 * A WHERE term the formula library evaluates; the row is kept when it gives `true`. `x IS [NOT] NULL` at
 * the top reads x's own value (empty, or a value the formula cannot compute, is NULL), so an error inside
 * x does not make the whole condition unknown.
 */
export function formulaCondition(node: Node, scope: TableScope, bindings: Bindings, timeZone: string, now: () => number): FormulaItem {
  const op = node.type === 'binary_expr' ? String(node.operator).toUpperCase() : '';
  if ((op === 'IS' || op === 'IS NOT') && isNode(node.right) && node.right.type === 'null' && isNode(node.left)) {
    const inner = formulaItem(node.left, scope, bindings, timeZone, now);
    return { type: 'bool', evaluate: (row) => (inner.evaluate(row) === null) === (op === 'IS') };
  }
  return formulaItem(node, scope, bindings, timeZone, now);
}

/** The `metadata` type of a formula item's column. */
export function formulaItemColumnType(type: ResultType): string {
  switch (type) {
    case 'number':
      return 'number';
    case 'date':
      return 'date';
    case 'bool':
      return 'checkbox';
    case 'array':
      return 'multiple-select';
    default:
      return 'text';
  }
}
