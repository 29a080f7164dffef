import { isBlank, toBool, type ResultType, type Value } from '../values.js';
import { VARIADIC, type FunctionDef } from './types.js';

/** The type of a value that may come from any of several branches: theirs when they agree, else text. */
export function common(types: ResultType[]): ResultType {
  const first = types[0] ?? 'string';
  return types.every((t) => t === first) ? first : 'string';
}

const equal = (a: Value, b: Value) => (isBlank(a) && isBlank(b)) || (a !== null && b !== null && String(a) === String(b));

export const LOGIC_FUNCTIONS: Record<string, FunctionDef> = {
  if: {
    min: 2,
    max: 3,
    result: (t) => common(t.length === 3 ? [t[1]!, t[2]!] : [t[1]!]),
    lazy: (a) => (toBool(a[0]!()) ? a[1]!() : a[2] ? a[2]() : null),
  },
  /** ifs(cond1, value1, cond2, value2, …): the value of the first true condition. */
  ifs: {
    min: 2,
    max: VARIADIC,
    result: (t) => common(t.filter((_, i) => i % 2 === 1)),
    lazy: (a) => {
      for (let i = 0; i + 1 < a.length; i += 2) if (toBool(a[i]!())) return a[i + 1]!();
      return null;
    },
  },
  /** switch(expr, match1, result1, …, [default]). */
  switch: {
    min: 3,
    max: VARIADIC,
    result: (t) => common(t.filter((_, i) => i > 0 && (i % 2 === 0 || i === t.length - 1))),
    lazy: (a) => {
      const value = a[0]!();
      let i = 1;
      for (; i + 1 < a.length; i += 2) if (equal(value, a[i]!())) return a[i + 1]!();
      return i < a.length ? a[i]!() : null;
    },
  },
  and: { min: 1, max: VARIADIC, result: 'bool', fn: (a) => a.every(toBool) },
  or: { min: 1, max: VARIADIC, result: 'bool', fn: (a) => a.some(toBool) },
  not: { min: 1, max: 1, result: 'bool', fn: (a) => !toBool(a[0] ?? null) },
  /** True when an odd number of arguments is true. */
  xor: { min: 1, max: VARIADIC, result: 'bool', fn: (a) => a.filter(toBool).length % 2 === 1 },
  isblank: { min: 1, max: 1, result: 'bool', fn: (a) => isBlank(a[0] ?? null) },
  true: { min: 0, max: 0, result: 'bool', fn: () => true },
  false: { min: 0, max: 0, result: 'bool', fn: () => false },
};
