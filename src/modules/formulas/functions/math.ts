import { FormulaValueError, flatten, isBlank, toNumber, type Value } from '../values.js';
import { arg, VARIADIC, type FunctionDef } from './types.js';

/** Argument `i` as a number; `fallback` when the argument is left out. */
export const num = (args: Value[], i: number, fallback?: number): number => (i >= args.length && fallback !== undefined ? fallback : toNumber(arg(args, i)));

const unary = (f: (n: number) => number): FunctionDef => ({ min: 1, max: 1, result: 'number', fn: (a) => f(num(a, 0)) });

/** Round half away from zero to `digits` decimals (negative digits round to tens, hundreds…). */
export function roundHalfAway(n: number, digits: number, mode: 'half' | 'down' | 'up' = 'half'): number {
  const d = Math.trunc(digits);
  const factor = 10 ** Math.abs(d);
  const scaled = d >= 0 ? n * factor : n / factor;
  // Remove binary noise first (1.005 * 100 = 100.49999…).
  const clean = Number(Math.abs(scaled).toPrecision(15));
  const r = mode === 'half' ? Math.round(clean) : mode === 'down' ? Math.floor(clean) : Math.ceil(clean);
  const signed = Math.sign(n) * r;
  return d >= 0 ? signed / factor : signed * factor;
}

function multiple(n: number, significance: number, up: boolean): number {
  if (significance === 0) return 0;
  if (n > 0 && significance < 0) throw new FormulaValueError('significance must have the sign of the number');
  const q = Number((n / significance).toPrecision(15));
  return (up ? Math.ceil(q) : Math.floor(q)) * significance;
}

const numbers = (args: Value[]): number[] => flatten(args).filter((v) => !isBlank(v) && typeof v !== 'boolean').flatMap((v) => {
  try {
    return [toNumber(v)];
  } catch {
    return [];
  }
});

export const MATH_FUNCTIONS: Record<string, FunctionDef> = {
  abs: unary(Math.abs),
  ceiling: { min: 1, max: 2, result: 'number', fn: (a) => multiple(num(a, 0), num(a, 1, 1), true) },
  floor: { min: 1, max: 2, result: 'number', fn: (a) => multiple(num(a, 0), num(a, 1, 1), false) },
  round: { min: 1, max: 2, result: 'number', fn: (a) => roundHalfAway(num(a, 0), num(a, 1, 0)) },
  rounddown: { min: 1, max: 2, result: 'number', fn: (a) => roundHalfAway(num(a, 0), num(a, 1, 0), 'down') },
  roundup: { min: 1, max: 2, result: 'number', fn: (a) => roundHalfAway(num(a, 0), num(a, 1, 0), 'up') },
  // Rounds toward minus infinity, as the original (`int(-3.33)` = -4).
  int: unary(Math.floor),
  mod: {
    min: 2,
    max: 2,
    result: 'number',
    fn: (a) => {
      const [n, d] = [num(a, 0), num(a, 1)];
      if (d === 0) throw new FormulaValueError('division by zero');
      // The result has the divisor's sign, as in spreadsheets.
      return n - d * Math.floor(n / d);
    },
  },
  power: { min: 2, max: 2, result: 'number', fn: (a) => num(a, 0) ** num(a, 1) },
  sqrt: unary((n) => {
    if (n < 0) throw new FormulaValueError('square root of a negative number');
    return Math.sqrt(n);
  }),
  exp: unary(Math.exp),
  log: {
    min: 1,
    max: 2,
    result: 'number',
    fn: (a) => {
      const [n, base] = [num(a, 0), num(a, 1, 10)];
      if (n <= 0 || base <= 0 || base === 1) throw new FormulaValueError('logarithm of a non-positive number');
      return Math.log(n) / Math.log(base);
    },
  },
  lg: unary((n) => {
    if (n <= 0) throw new FormulaValueError('logarithm of a non-positive number');
    return Math.log10(n);
  }),
  ln: unary((n) => {
    if (n <= 0) throw new FormulaValueError('logarithm of a non-positive number');
    return Math.log(n);
  }),
  sign: unary((n) => (n > 0 ? 1 : n < 0 ? -1 : 0)),
  even: unary((n) => Math.sign(n) * Math.ceil(Math.abs(n) / 2) * 2),
  odd: unary((n) => {
    const up = Math.ceil(Math.abs(n));
    return (n < 0 ? -1 : 1) * (up % 2 === 1 ? up : up + 1);
  }),
  sum: { min: 1, max: VARIADIC, result: 'number', fn: (a) => numbers(a).reduce((s, n) => s + n, 0) },
  average: {
    min: 1,
    max: VARIADIC,
    result: 'number',
    fn: (a) => {
      const ns = numbers(a);
      if (ns.length === 0) throw new FormulaValueError('average of nothing');
      return ns.reduce((s, n) => s + n, 0) / ns.length;
    },
  },
  max: { min: 1, max: VARIADIC, result: 'number', fn: (a) => (numbers(a).length === 0 ? 0 : Math.max(...numbers(a))) },
  min: { min: 1, max: VARIADIC, result: 'number', fn: (a) => (numbers(a).length === 0 ? 0 : Math.min(...numbers(a))) },
  /** Non-empty arguments. */
  counta: { min: 1, max: VARIADIC, result: 'number', fn: (a) => a.filter((v) => !isBlank(v)).length },
  /** All arguments, empty ones included. */
  countall: { min: 1, max: VARIADIC, result: 'number', fn: (a) => a.length },
  countblank: { min: 1, max: VARIADIC, result: 'number', fn: (a) => a.filter(isBlank).length },
  /** Items in the (multi-valued) arguments: options of a multiple select, linked records… */
  countitems: { min: 1, max: VARIADIC, result: 'number', fn: (a) => flatten(a).filter((v) => !isBlank(v)).length },
};
