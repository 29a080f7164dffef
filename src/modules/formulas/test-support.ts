import { compileFormula } from './compile.js';
import { evaluate } from './evaluate.js';
import { toCell, type ResultType, type Value } from './values.js';


/** Evaluate `formula` over a row of `cells` (name → value, typed by the value) and store it as a cell. */
export function run(formula: string, cells: Record<string, Value> = {}, options: { timeZone?: string; now?: number } = {}): unknown {
  const timeZone = options.timeZone ?? 'UTC';
  const types = new Map<string, ResultType>();
  for (const [name, value] of Object.entries(cells)) {
    types.set(name, Array.isArray(value) ? 'array' : typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'bool' : value !== null && typeof value === 'object' ? 'date' : 'string');
  }
  const compiled = compileFormula(formula, (name) => (types.has(name) ? { key: name, type: types.get(name)! } : undefined));
  const value = evaluate(compiled, (key) => cells[key] ?? null, { now: options.now ?? Date.UTC(2024, 0, 31, 15, 30), timeZone });
  return toCell(value, compiled.resultType, timeZone);
}

export function resultType(formula: string, types: Record<string, ResultType> = {}): ResultType {
  return compileFormula(formula, (name) => (types[name] ? { key: name, type: types[name] } : undefined)).resultType;
}
