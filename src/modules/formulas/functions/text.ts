import { FormulaDate, FormulaValueError, toNumber, toText, type EvalContext, type Value } from '../values.js';
import { spend } from '../budget.js';
import { formatDate, formatNumber } from './format.js';
import { num } from './math.js';
import { compilePattern, regexExtract, regexTest, type Pattern } from './regex.js';
import { arg, VARIADIC, type FunctionDef } from './types.js';

/** Longest text a text function builds (rept, substitute…): bounded memory per cell. */
export const MAX_TEXT = 100_000;


const str = (a: Value[], i: number, ctx: EvalContext) => toText(arg(a, i), ctx.timeZone);
const chars = (s: string) => [...s];

function bounded(s: string): string {
  if (s.length > MAX_TEXT) throw new FormulaValueError(`text longer than ${MAX_TEXT} characters`);
  return s;
}

function count(a: Value[], i: number, fallback: number): number {
  const n = Math.trunc(num(a, i, fallback));
  if (n < 0) throw new FormulaValueError('negative count');
  return n;
}

function pattern(a: Value[], ctx: EvalContext): Pattern {
  return compilePattern(str(a, 1, ctx));
}

/** `text` with every `old` replaced, refused before it is built when the result would be too long. */
function replaceAll(text: string, old: string, replacement: string): string {
  const parts = text.split(old);
  if (text.length + (parts.length - 1) * (replacement.length - old.length) > MAX_TEXT) throw new FormulaValueError(`text longer than ${MAX_TEXT} characters`);
  return parts.join(replacement);
}

/** 1-based position of `needle` in `hay` from `start`, 0 when absent. */
function position(needle: string, hay: string, start: number, fold: boolean): number {
  if (start < 1) throw new FormulaValueError('start must be at least 1');
  const h = chars(fold ? hay.toLowerCase() : hay);
  const n = fold ? needle.toLowerCase() : needle;
  const index = h.slice(start - 1).join('').indexOf(n);
  return index < 0 ? 0 : chars(h.slice(start - 1).join('').slice(0, index)).length + start;
}

export const TEXT_FUNCTIONS: Record<string, FunctionDef> = {
  concatenate: { min: 1, max: VARIADIC, result: 'string', fn: (a, ctx) => bounded(a.map((v) => toText(v, ctx.timeZone)).join('')) },
  left: { min: 1, max: 2, result: 'string', fn: (a, ctx) => chars(str(a, 0, ctx)).slice(0, count(a, 1, 1)).join('') },
  right: {
    min: 1,
    max: 2,
    result: 'string',
    fn: (a, ctx) => {
      const n = count(a, 1, 1);
      return n === 0 ? '' : chars(str(a, 0, ctx)).slice(-n).join('');
    },
  },
  mid: {
    min: 3,
    max: 3,
    result: 'string',
    fn: (a, ctx) => {
      const start = Math.trunc(num(a, 1));
      if (start < 1) throw new FormulaValueError('start must be at least 1');
      return chars(str(a, 0, ctx)).slice(start - 1, start - 1 + count(a, 2, 0)).join('');
    },
  },
  len: { min: 1, max: 1, result: 'number', fn: (a, ctx) => chars(str(a, 0, ctx)).length },
  lower: { min: 1, max: 1, result: 'string', fn: (a, ctx) => str(a, 0, ctx).toLowerCase() },
  upper: { min: 1, max: 1, result: 'string', fn: (a, ctx) => str(a, 0, ctx).toUpperCase() },
  proper: { min: 1, max: 1, result: 'string', fn: (a, ctx) => str(a, 0, ctx).toLowerCase().replace(/(^|[^\p{L}\p{N}'])(\p{L})/gu, (_, p: string, c: string) => p + c.toUpperCase()) },
  trim: { min: 1, max: 1, result: 'string', fn: (a, ctx) => str(a, 0, ctx).trim() },
  find: { min: 2, max: 3, result: 'number', fn: (a, ctx) => position(str(a, 0, ctx), str(a, 1, ctx), Math.trunc(num(a, 2, 1)), false) },
  search: { min: 2, max: 3, result: 'number', fn: (a, ctx) => position(str(a, 0, ctx), str(a, 1, ctx), Math.trunc(num(a, 2, 1)), true) },
  substitute: {
    min: 3,
    max: 4,
    result: 'string',
    fn: (a, ctx) => {
      const [text, old, replacement] = [str(a, 0, ctx), str(a, 1, ctx), str(a, 2, ctx)];
      if (old === '') return text;
      if (a.length < 4) return replaceAll(text, old, replacement);
      const nth = Math.trunc(num(a, 3));
      if (nth < 1) throw new FormulaValueError('instance must be at least 1');
      let from = 0;
      for (let i = 1; ; i++) {
        const at = text.indexOf(old, from);
        if (at < 0) return text;
        if (i === nth) return bounded(text.slice(0, at) + replacement + text.slice(at + old.length));
        from = at + old.length;
      }
    },
  },
  replace: {
    min: 4,
    max: 4,
    result: 'string',
    fn: (a, ctx) => {
      const text = chars(str(a, 0, ctx));
      const start = Math.trunc(num(a, 1));
      if (start < 1) throw new FormulaValueError('start must be at least 1');
      return bounded([...text.slice(0, start - 1), str(a, 3, ctx), ...text.slice(start - 1 + count(a, 2, 0))].join(''));
    },
  },
  rept: {
    min: 2,
    max: 2,
    result: 'string',
    fn: (a, ctx) => {
      const text = str(a, 0, ctx);
      const n = count(a, 1, 0);
      if (text.length * n > MAX_TEXT) throw new FormulaValueError(`text longer than ${MAX_TEXT} characters`);
      return text.repeat(n);
    },
  },
  exact: { min: 2, max: 2, result: 'bool', fn: (a, ctx) => str(a, 0, ctx) === str(a, 1, ctx) },
  t: { min: 1, max: 1, result: 'string', fn: (a) => (typeof arg(a, 0) === 'string' ? arg(a, 0) : '') },
  text: {
    min: 1,
    max: 2,
    result: 'string',
    fn: (a, ctx) => {
      const v = arg(a, 0);
      const format = a.length > 1 ? str(a, 1, ctx) : '';
      if (v === null) return '';
      if (v instanceof FormulaDate) return format === '' ? toText(v, ctx.timeZone) : formatDate(v.ms, format, ctx.timeZone);
      if (format === '') return toText(v, ctx.timeZone);
      return formatNumber(toNumber(v), format);
    },
  },
  value: { min: 1, max: 1, result: 'number', fn: (a) => toNumber(arg(a, 0)) },
  regexmatch: { min: 2, max: 2, result: 'bool', fn: (a, ctx) => regexTest(str(a, 0, ctx), pattern(a, ctx)) },
  regexextract: { min: 2, max: 2, result: 'string', fn: (a, ctx) => regexExtract(str(a, 0, ctx), pattern(a, ctx)) },
};
