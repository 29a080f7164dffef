/**
 * Expressions in WHERE / HAVING conditions: arithmetic (`+ - * /`) and the formula functions whose SQL
 * gives the formula library's answer on both engines (docs/formulas.md lists them and what is left out).
 * Compiled to parameterized SQL; every name is matched against an allow-list, never written as text.
 * Empty numbers count as 0 and empty text as '' (the formula rules); a division by zero is NULL,
 * which a condition reads as false (the formula's empty result).
 */
import { sql } from 'kysely';
import { numberParam, textParam, type Fragment } from './field-sql.js';
import type { Node } from './parser.js';
import type { Operand, PredicateScope } from './predicates.js';
import { datePart } from './date-functions.js';
import { sqlError } from './sql-error.js';
import { constantOf, toNumber, toText } from './values.js';

/** Resolves a sub-expression to a constant or an operand (the predicate compiler's `sideOf`). */
export type Side = (node: Node) => { constant: import('./values.js').Scalar } | { operand: Operand };

const ARITHMETIC: Record<string, Fragment> = { '+': sql`+`, '-': sql`-`, '*': sql`*` };
const MAX_ARGS = 64;
/** Deeper expressions are refused before compiling (SQLite allows 1000 levels; the compiler recurses). */
export const MAX_EXPRESSION_DEPTH = 64;

/** Nesting depth of an expression tree, measured without recursion (a long `a + b + …` is deep). */
function depthOf(root: Node): number {
  let max = 0;
  const stack: Array<[Node, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    max = Math.max(max, depth);
    if (max > MAX_EXPRESSION_DEPTH) return max;
    for (const child of [node.left, node.right, ...((node.args as { value?: unknown } | undefined)?.value as unknown[] | undefined ?? [])]) {
      if (typeof child === 'object' && child !== null) stack.push([child as Node, depth + 1]);
    }
  }
  return max;
}

function operand(label: string, type: 'number' | 'string', value: Fragment): Operand {
  return { label, type, value, isEmpty: sql`(${value} is null)`, nullIsError: type === 'number' };
}

function args(node: Node): Node[] {
  const list = (node.args as { value?: unknown } | undefined)?.value;
  const items = Array.isArray(list) ? (list as Node[]) : [];
  if (items.length > MAX_ARGS) throw sqlError(`Too many arguments (at most ${MAX_ARGS}).`);
  return items;
}

function nameOf(node: Node): string {
  const parts = (node.name as { name?: Array<{ value?: unknown }> } | undefined)?.name;
  if (Array.isArray(parts)) return parts.map((p) => String(p?.value ?? '')).join('.').toLowerCase();
  return typeof node.name === 'string' ? node.name.toLowerCase() : '';
}

/** floor(x) on both engines (SQLite's math functions depend on its build; its cast truncates toward zero). */
function floorOf(x: Fragment, dialect: 'sqlite' | 'postgres'): Fragment {
  if (dialect === 'postgres') return sql`floor(${x})`;
  return sql`(cast(${x} as integer) - (case when ${x} < cast(${x} as integer) then 1 else 0 end))`;
}

/** The expression as an operand, or undefined when it is not one this compiler knows. */
export function compileExpression(node: Node, scope: PredicateScope, side: Side): Operand | undefined {
  if (node.type !== 'binary_expr' && node.type !== 'function') return undefined;
  if (depthOf(node) > MAX_EXPRESSION_DEPTH) throw sqlError(`The expression is nested too deeply (at most ${MAX_EXPRESSION_DEPTH} levels).`);
  const number = (n: Node, what: string): Fragment => {
    const s = side(n);
    if ('constant' in s) return numberParam(scope.dialect, s.constant === null ? 0 : toNumber(s.constant, what));
    if (s.operand.type !== 'number') throw sqlError(`${what} needs numbers; ${s.operand.label} is ${s.operand.type}.`);
    // An empty cell counts as 0; an error inside (a division by zero) makes the whole result empty.
    return s.operand.nullIsError ? s.operand.value : sql`coalesce(${s.operand.value}, 0)`;
  };
  const text = (n: Node, what: string): Fragment => {
    const s = side(n);
    if ('constant' in s) return textParam(scope.dialect, s.constant === null ? '' : toText(s.constant, what));
    if (s.operand.type !== 'string') throw sqlError(`${what} needs text; ${s.operand.label} is ${s.operand.type}.`);
    return sql`coalesce(${s.operand.value}, '')`;
  };
  const count = (n: Node | undefined, what: string, min: number): number => {
    const value = n ? constantOf(n, scope.bindings) : undefined;
    const k = value === undefined || value === null ? Number.NaN : toNumber(value, what);
    if (!Number.isInteger(k) || k < min || k > 1_000_000) throw sqlError(`${what} needs a whole number of at least ${min} as a constant.`);
    return k;
  };

  if (node.type === 'binary_expr') {
    const op = String(node.operator);
    if (ARITHMETIC[op]) return operand(`expression ${op}`, 'number', sql`(${number(node.left as Node, op)} ${ARITHMETIC[op]} ${number(node.right as Node, op)})`);
    if (op === '/') {
      const divisor = number(node.right as Node, '/');
      const dividend = number(node.left as Node, '/');
      // SQLite divides integers as integers; the formula divides as real numbers.
      const real = scope.dialect === 'sqlite' ? sql`cast(${dividend} as real)` : dividend;
      return operand('expression /', 'number', sql`(${real} / nullif(${divisor}, 0))`);
    }
    return undefined;
  }
  if (node.type !== 'function') return undefined;
  const name = nameOf(node);
  const a = args(node);
  const arity = (min: number, max = min) => {
    if (a.length < min || a.length > max) throw sqlError(`Function ${name} takes ${min === max ? min : `${min} to ${max}`} arguments.`);
  };
  switch (name) {
    case 'abs':
      arity(1);
      return operand('abs', 'number', sql`abs(${number(a[0]!, 'abs')})`);
    case 'sign': {
      arity(1);
      const n = number(a[0]!, 'sign');
      return operand('sign', 'number', sql`(case when ${n} is null then null when ${n} > 0 then 1 when ${n} < 0 then -1 else 0 end)`);
    }
    case 'len':
      arity(1);
      return operand('len', 'number', sql`length(${text(a[0]!, 'len')})`);
    case 'concatenate': {
      arity(1, MAX_ARGS);
      const parts = a.map((n) => text(n, 'concatenate'));
      return operand('concatenate', 'string', sql`nullif(${sql.join(parts, sql` || `)}, '')`);
    }
    case 'left': {
      arity(1, 2);
      const n = a.length > 1 ? count(a[1], 'left', 0) : 1;
      return operand('left', 'string', sql`nullif(substr(${text(a[0]!, 'left')}, 1, ${n}), '')`);
    }
    case 'right': {
      arity(1, 2);
      const n = a.length > 1 ? count(a[1], 'right', 0) : 1;
      if (n === 0) return operand('right', 'string', sql`cast(null as text)`);
      const s = text(a[0]!, 'right');
      const value = scope.dialect === 'postgres' ? sql`right(${s}, ${n})` : sql`substr(${s}, ${-n})`;
      return operand('right', 'string', sql`nullif(${value}, '')`);
    }
    case 'mid': {
      arity(3);
      const start = count(a[1], 'mid', 1);
      const n = count(a[2], 'mid', 0);
      return operand('mid', 'string', sql`nullif(substr(${text(a[0]!, 'mid')}, ${start}, ${n}), '')`);
    }
    case 'int': {
      arity(1);
      // Toward minus infinity, as the original (`int(-3.33)` = -4) and the formula library.
      return operand('int', 'number', floorOf(number(a[0]!, 'int'), scope.dialect));
    }
    case 'mod': {
      arity(2);
      // n - d * floor(n / d): the divisor's sign, as in spreadsheets; a zero divisor is empty.
      const n = number(a[0]!, 'mod');
      const d = number(a[1]!, 'mod');
      const q = scope.dialect === 'sqlite' ? sql`(cast(${n} as real) / nullif(${d}, 0))` : sql`(${n} / nullif(${d}, 0))`;
      return operand('mod', 'number', sql`(${n} - ${d} * ${floorOf(q, scope.dialect)})`);
    }
    case 'floor':
    case 'ceiling': {
      // Only the one-argument form (significance 1): the whole number below / above.
      if (a.length !== 1) throw sqlError(`Function ${name} takes 1 argument in SQL.`);
      const n = number(a[0]!, name);
      return operand(name, 'number', name === 'floor' ? floorOf(n, scope.dialect) : sql`(-${floorOf(sql`(-${n})`, scope.dialect)})`);
    }
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
    case 'minute':
    case 'second':
    case 'weekday': {
      // weekday's return-type argument is left out of SQL: the default week (1 = Sunday).
      arity(1);
      const s = side(a[0]!);
      if (!('operand' in s) || s.operand.type !== 'date' || !s.operand.raw) throw sqlError(`${name} needs a date column.`);
      return operand(name, 'number', datePart(name, s.operand.raw, scope.dialect));
    }
    case 'round': {
      arity(1, 2);
      const digits = a.length > 1 ? wholeConstant(a[1], scope, 'round', -15, 15) : 0;
      return operand('round', 'number', roundHalfAway(number(a[0]!, 'round'), digits, scope.dialect));
    }
    case 'power': {
      arity(2);
      const x = number(a[0]!, 'power');
      const y = number(a[1]!, 'power');
      // The formula's x ** y where it is a finite number; NULL (the formula's error) where either
      // engine would raise (0 to a negative power, a negative base to a fraction, overflow).
      const exponent = sql`(${y} * ln(abs(${x})))`;
      return operand('power', 'number', sql`(case when ${x} = 0 and ${y} < 0 then null when ${x} < 0 and ${y} <> ${floorOf(y, scope.dialect)} then null when ${x} <> 0 and ${exponent} > 700 then null when ${x} <> 0 and ${exponent} < -700 then 0 else power(${x}, ${y}) end)`);
    }
    case 'sqrt': {
      arity(1);
      const x = number(a[0]!, 'sqrt');
      return operand('sqrt', 'number', sql`(case when ${x} < 0 then null else sqrt(${x}) end)`);
    }
    case 'trim': {
      arity(1);
      // JavaScript's trim(): every Unicode space and line break, not only ' '.
      const value = text(a[0]!, 'trim');
      const spaces = textParam(scope.dialect, JS_WHITESPACE);
      return operand('trim', 'string', sql`nullif(${scope.dialect === 'postgres' ? sql`btrim(${value}, ${spaces})` : sql`trim(${value}, ${spaces})`}, '')`);
    }
    default:
      return undefined;
  }
}

/** What String.prototype.trim removes (ECMAScript WhiteSpace and LineTerminator). */
const JS_WHITESPACE = '\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';

function wholeConstant(n: Node | undefined, scope: PredicateScope, what: string, min: number, max: number): number {
  const value = n ? constantOf(n, scope.bindings) : undefined;
  const k = value === undefined || value === null ? Number.NaN : toNumber(value, what);
  if (!Number.isInteger(k) || k < min || k > max) throw sqlError(`${what} needs a whole number from ${min} to ${max} as a constant.`);
  return k;
}

/**
 * The formula's round (half away from zero, after trimming binary noise to 15 significant digits).
 * PostgreSQL's numeric round does exactly that (a double becomes numeric with 15 digits); SQLite's
 * round() rounds the binary value (2.675 → 2.67), so the formula's steps are written out.
 */
function roundHalfAway(x: Fragment, digits: number, dialect: 'sqlite' | 'postgres'): Fragment {
  if (dialect === 'postgres') return sql`cast(round(cast(${x} as numeric), ${sql.lit(digits)}) as double precision)`;
  const factor = sql.lit(10 ** Math.abs(digits));
  const scaled = digits >= 0 ? sql`(abs(${x}) * ${factor})` : sql`(abs(${x}) / cast(${factor} as real))`;
  const clean = sql`cast(printf('%.15g', ${scaled}) as real)`;
  // Beyond 1e15 a double has no fraction left to round (and the integer cast would overflow).
  const rounded = sql`(case when ${clean} >= 1e15 then ${clean} else cast(${clean} + 0.5 as integer) end)`;
  // printf('%.15g', NULL) is '' (0 as a number): an empty or failed value stays NULL.
  const signed = sql`(case when ${x} is null then null when ${x} < 0 then -${rounded} else ${rounded} end)`;
  return digits >= 0 ? sql`(cast(${signed} as real) / ${factor})` : sql`(${signed} * ${factor})`;
}
