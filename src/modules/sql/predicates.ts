/**
 * WHERE / HAVING conditions → a SQL boolean that is never NULL. The original treats NULL as false in
 * AND/OR/NOT and makes the negative forms (`!=`, NOT LIKE, NOT IN, NOT BETWEEN, IS NOT …) true for an
 * empty cell: each positive leaf is wrapped in `coalesce(…, false)` and a negative one is `NOT` of it.
 */
import { sql } from 'kysely';
import type { DialectName } from '../../db/index.js';
import { intParam, numberParam, textParam, type Fragment } from './field-sql.js';
import { isNode, type Node } from './parser.js';
import type { ValueType } from './schema.js';
import { compileExpression } from './expressions.js';
import { sqlError } from './sql-error.js';
import {
  canonicalDate,
  constantOf,
  describe,
  likeForPostgres,
  likeToGlob,
  toFlag,
  toInstant,
  toNumber,
  toText,
  type Bindings,
  type Scalar,
} from './values.js';

/** A non-constant side of a condition: a column, or in HAVING a group key or an aggregate. */
export interface Operand {
  label: string;
  type: ValueType;
  value: Fragment;
  isEmpty: Fragment;
  anyOf?: (values: Fragment[]) => Fragment;
  /** A computed number whose NULL is an error (division by zero), not an empty cell: it stays NULL. */
  nullIsError?: boolean;
  /** A date column's stored text (date functions read it). */
  raw?: Fragment;
  /** The cell as a row index orders it (see FieldSql.indexed). */
  indexed?: Fragment;
}

export interface PredicateScope {
  dialect: DialectName;
  bindings: Bindings;
  clause: 'WHERE' | 'HAVING';
  /** TIME_ZONE, for date functions (UTC when not given). */
  timeZone?: string;
  /** Resolve a column reference or aggregate node, or throw a SqlError naming what is wrong. */
  operand(node: Node): Operand;
}

/** Deeper nesting than this is refused (AND/OR chains are flattened first, so long lists of terms are fine). */
export const MAX_DEPTH = 64;

const TRUE = sql`(1 = 1)`;
const FALSE = sql`(1 = 0)`;
const COMPARISON: Record<string, Fragment> = { '=': sql`=`, '<': sql`<`, '<=': sql`<=`, '>': sql`>`, '>=': sql`>=` };
const FLIP: Record<string, string> = { '=': '=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

const positive = (expr: Fragment) => sql`coalesce(${expr}, false)`;
const negate = (expr: Fragment) => sql`(not ${expr})`;

export function compilePredicate(node: Node, scope: PredicateScope, depth = 0): Fragment {
  if (depth > MAX_DEPTH) throw sqlError('The condition is nested too deeply.');
  const op = typeof node.operator === 'string' ? node.operator.toUpperCase() : undefined;

  if (node.type === 'binary_expr' && (op === 'AND' || op === 'OR')) {
    const terms = flatten(node, op).map((term) => compilePredicate(term, scope, depth + 1));
    return balanced(terms, op === 'AND' ? sql` and ` : sql` or `);
  }
  if (node.type === 'unary_expr' && (op === 'NOT' || op === '!') && isNode(node.expr)) {
    return negate(compilePredicate(node.expr, scope, depth + 1));
  }
  // `NOT (…)` comes back as a function call named NOT.
  const notArg = notFunctionArgument(node);
  if (notArg) return negate(compilePredicate(notArg, scope, depth + 1));

  if (node.type === 'binary_expr' && op !== undefined && isNode(node.left) && isNode(node.right)) {
    return compileBinary(op, node.left, node.right, scope);
  }
  const constant = constantOf(node, scope.bindings);
  if (typeof constant === 'boolean') return constant ? TRUE : FALSE;
  if (node.type === 'column_ref') {
    // A bare checkbox column is a condition: `WHERE done`.
    const operand = scope.operand(node);
    if (operand.type === 'bool') return positive(sql`${operand.value} = 1`);
    throw sqlError(`${operand.label} is not a condition; compare it with a value.`);
  }
  throw unsupported(node, scope.clause);
}

/**
 * `(a or b or c …)` nested as a balanced tree: engines parse a flat chain into a tree as deep as it is
 * long, and SQLite refuses expressions deeper than 1000.
 */
function balanced(terms: Fragment[], separator: Fragment): Fragment {
  if (terms.length === 1) return terms[0]!;
  if (terms.length <= 8) return sql`(${sql.join(terms, separator)})`;
  const middle = Math.ceil(terms.length / 2);
  return sql`(${balanced(terms.slice(0, middle), separator)}${separator}${balanced(terms.slice(middle), separator)})`;
}

/** The terms of a left- or right-deep chain of one operator, iteratively. */
function flatten(node: Node, op: string): Node[] {
  const terms: Node[] = [];
  const stack: Node[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    const currentOp = typeof current.operator === 'string' ? current.operator.toUpperCase() : undefined;
    if (current.type === 'binary_expr' && currentOp === op && isNode(current.left) && isNode(current.right)) {
      stack.push(current.right, current.left);
    } else {
      terms.push(current);
    }
  }
  return terms;
}

function notFunctionArgument(node: Node): Node | undefined {
  if (node.type !== 'function') return undefined;
  const parts = (node.name as { name?: Array<{ value?: unknown }> } | undefined)?.name;
  if (!Array.isArray(parts) || parts.length !== 1 || String(parts[0]?.value).toUpperCase() !== 'NOT') return undefined;
  const args = (node.args as { value?: unknown } | undefined)?.value;
  return Array.isArray(args) && args.length === 1 && isNode(args[0]) ? args[0] : undefined;
}

function compileBinary(op: string, left: Node, right: Node, scope: PredicateScope): Fragment {
  switch (op) {
    case '=':
    case '<':
    case '<=':
    case '>':
    case '>=':
      return compare(op, left, right, scope);
    case '!=':
    case '<>':
      return negate(compare('=', left, right, scope));
    case 'LIKE':
      return like(left, right, scope);
    case 'NOT LIKE':
      return negate(like(left, right, scope));
    case 'ILIKE':
      return like(left, right, scope, true);
    case 'NOT ILIKE':
      return negate(like(left, right, scope, true));
    case 'IN':
      return inList(left, right, scope);
    case 'NOT IN':
      return negate(inList(left, right, scope));
    case 'BETWEEN':
      return between(left, right, scope);
    case 'NOT BETWEEN':
      return negate(between(left, right, scope));
    case 'IS':
      return isTest(left, right, scope);
    case 'IS NOT':
      return negate(isTest(left, right, scope));
    default:
      throw sqlError(`Operator ${op} is not supported in ${scope.clause}.`);
  }
}

/** A constant typed for comparison with `operand`; null for SQL NULL. */
export function typedConstant(dialect: DialectName, operand: Operand, value: Scalar): Fragment | null {
  if (value === null) return null;
  const where = `Comparison with ${operand.label}`;
  switch (operand.type) {
    case 'string':
    case 'list':
      return textParam(dialect, toText(value, where));
    case 'number':
      return numberParam(dialect, toNumber(value, where));
    case 'bool':
      return intParam(dialect, toFlag(value, where));
    case 'date':
      return textParam(dialect, canonicalDate(toInstant(value, where)));
    case 'time':
      return intParam(dialect, toInstant(value, where));
    default:
      throw sqlError(`${operand.label} cannot be used in conditions.`);
  }
}

function sideOf(node: Node, scope: PredicateScope): { constant: Scalar } | { operand: Operand } {
  const constant = constantOf(node, scope.bindings);
  if (constant !== undefined) return { constant };
  if (node.type === 'column_ref' || node.type === 'aggr_func') return { operand: usable(scope.operand(node), scope) };
  const expression = compileExpression(node, scope, (n) => sideOf(n, scope));
  if (expression) return { operand: expression };
  throw unsupported(node, scope.clause);
}

function usable(operand: Operand, scope: PredicateScope): Operand {
  if (operand.type === 'opaque') throw sqlError(`${operand.label} cannot be used in ${scope.clause}.`);
  return operand;
}

function compare(op: string, left: Node, right: Node, scope: PredicateScope): Fragment {
  const l = sideOf(left, scope);
  const r = sideOf(right, scope);
  if ('constant' in l && 'constant' in r) return compareConstants(op, l.constant, r.constant) ? TRUE : FALSE;
  if ('operand' in l && 'operand' in r) {
    const lt = l.operand.type === 'list' ? 'string' : l.operand.type;
    const rt = r.operand.type === 'list' ? 'string' : r.operand.type;
    if (lt !== rt) throw sqlError(`Cannot compare ${l.operand.label} (${l.operand.type}) with ${r.operand.label} (${r.operand.type}).`);
    return positive(sql`${l.operand.value} ${COMPARISON[op]!} ${r.operand.value}`);
  }
  const [operand, constant, effective] = 'operand' in l ? [l.operand, (r as { constant: Scalar }).constant, op] : [(r as { operand: Operand }).operand, (l as { constant: Scalar }).constant, FLIP[op]!];
  const value = typedConstant(scope.dialect, operand, constant);
  if (value === null) return FALSE;
  const exact = positive(sql`${operand.value} ${COMPARISON[effective]!} ${value}`);
  // The same comparison on the indexed expression, implied by the exact one (so never changing the
  // answer, NULL included): a plain term a row index can answer.
  if (operand.indexed) return sql`(${operand.indexed} ${COMPARISON[effective]!} ${value} and ${exact})`;
  return exact;
}

function compareConstants(op: string, a: Scalar, b: Scalar): boolean {
  if (a === null || b === null) return false;
  let x: string | number;
  let y: string | number;
  if (typeof a === 'string' && typeof b === 'string') [x, y] = [a, b];
  else [x, y] = [toNumber(a, 'Comparison'), toNumber(b, 'Comparison')];
  switch (op) {
    case '=':
      return x === y;
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    default:
      return x >= y;
  }
}

/**
 * LIKE is case-sensitive on both engines. ILIKE folds the ASCII letters A–Z only, on both engines
 * (SQLite's own lower() and LIKE fold no other letter; PostgreSQL's would follow the database's locale):
 * 'É' ILIKE 'é' is false everywhere.
 */
function like(left: Node, right: Node, scope: PredicateScope, insensitive = false): Fragment {
  const what = insensitive ? 'ILIKE' : 'LIKE';
  const l = sideOf(left, scope);
  if (!('operand' in l)) throw sqlError(`${what} needs a column on its left side.`);
  const operand = l.operand;
  if (operand.type !== 'string' && operand.type !== 'list' && operand.type !== 'date') {
    throw sqlError(`${what} only supports text; ${operand.label} is ${operand.type}.`);
  }
  const pattern = constantOf(right, scope.bindings);
  if (pattern === undefined) throw sqlError(`${what} needs a text pattern on its right side.`);
  if (pattern === null) return FALSE;
  const raw = toText(pattern, what);
  const text = insensitive ? asciiLower(raw) : raw;
  const value = insensitive ? asciiLowerSql(scope.dialect, operand.value) : operand.value;
  if (scope.dialect === 'postgres') return positive(sql`${value} like ${textParam('postgres', likeForPostgres(text))} escape '\\'`);
  return positive(sql`${value} glob ${likeToGlob(text)}`);
}

const UPPER_ASCII = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
/** A–Z to a–z and nothing else (SQLite's lower() does exactly that; PostgreSQL's translate does it in any locale). */
function asciiLowerSql(dialect: PredicateScope['dialect'], value: Fragment): Fragment {
  return dialect === 'postgres' ? sql`translate(${value}, ${UPPER_ASCII}, ${UPPER_ASCII.toLowerCase()})` : sql`lower(${value})`;
}

function listItems(right: Node, scope: PredicateScope, what: string): Scalar[] {
  if (right.type !== 'expr_list' || !Array.isArray(right.value)) throw sqlError(`${what} needs a list of values in parentheses.`);
  return (right.value as unknown[]).map((item) => {
    const value = isNode(item) ? constantOf(item, scope.bindings) : undefined;
    if (value === undefined) throw sqlError(`${what} accepts only constant values and ? parameters.`);
    return value;
  });
}

function inList(left: Node, right: Node, scope: PredicateScope): Fragment {
  const l = sideOf(left, scope);
  const items = listItems(right, scope, 'IN');
  if ('constant' in l) return items.some((item) => compareConstants('=', l.constant, item)) ? TRUE : FALSE;
  const operand = l.operand;
  const values = items.map((item) => typedConstant(scope.dialect, operand, item)).filter((v): v is Fragment => v !== null);
  if (values.length === 0) return FALSE;
  if (operand.anyOf) return positive(operand.anyOf(values));
  return positive(sql`${operand.value} in (${sql.join(values)})`);
}

function between(left: Node, right: Node, scope: PredicateScope): Fragment {
  const l = sideOf(left, scope);
  const bounds = listItems(right, scope, 'BETWEEN');
  if (bounds.length !== 2) throw sqlError('BETWEEN needs two bounds: BETWEEN low AND high.');
  const [low, high] = bounds as [Scalar, Scalar];
  if ('constant' in l) return compareConstants('>=', l.constant, low) && compareConstants('<=', l.constant, high) ? TRUE : FALSE;
  const operand = l.operand;
  if (operand.type === 'bool' || operand.type === 'list') throw sqlError(`BETWEEN does not support ${operand.label} (${operand.type}).`);
  const lo = typedConstant(scope.dialect, operand, low);
  const hi = typedConstant(scope.dialect, operand, high);
  if (lo === null || hi === null) return FALSE;
  return positive(sql`(${operand.value} >= ${lo} and ${operand.value} <= ${hi})`);
}

function isTest(left: Node, right: Node, scope: PredicateScope): Fragment {
  const target = constantOf(right, scope.bindings);
  if (right.type === 'origin' || (target !== null && typeof target !== 'boolean')) {
    throw sqlError('IS must be followed by NULL, TRUE or FALSE.');
  }
  const l = sideOf(left, scope);
  if ('constant' in l) return (target === null ? l.constant === null : l.constant === target) ? TRUE : FALSE;
  const operand = l.operand;
  if (target === null) return operand.isEmpty;
  if (operand.type !== 'bool') throw sqlError(`IS TRUE / IS FALSE need a checkbox column; ${operand.label} is ${operand.type}.`);
  return positive(sql`${operand.value} = ${sql.lit(target ? 1 : 0)}`);
}

function unsupported(node: Node, clause: string): Error {
  if (node.type === 'function') return sqlError(`Function ${functionName(node)} is not supported.`);
  if (node.type === 'aggr_func') return sqlError(`Aggregate ${String(node.name)} is not allowed in ${clause}.`);
  if (node.ast !== undefined || node.type === 'select') return sqlError('Subqueries are not supported.');
  if (node.type === 'binary_expr') return sqlError(`Operator ${String(node.operator)} is not supported in ${clause}.`);
  return sqlError(`Unsupported expression in ${clause}${node.type ? ` (${String(node.type)})` : ''}.`);
}

export function functionName(node: Node): string {
  const parts = (node.name as { name?: Array<{ value?: unknown }> } | undefined)?.name;
  if (Array.isArray(parts)) return parts.map((p) => String(p?.value ?? '')).join('.');
  return typeof node.name === 'string' ? node.name : 'unknown';
}

