import { FormulaValueError, type Value } from './values.js';

/**
 * The work one formula evaluation may do, in units of roughly 25–50 ns: one per node evaluated, the
 * length of every text a function or operator receives and returns, and for a regular expression the
 * text's length times the compiled pattern's size (RE2's matching cost). An ordinary formula spends a
 * few hundred; two passes of a function over a 100,000-character text reach the limit, so no cell
 * costs more than about 25 ms whatever its formula (issue #24). Over the limit the formula's value is
 * an error (an empty cell), as any other `#VALUE!`.
 */
export const EVAL_BUDGET_UNITS = 500_000;

/**
 * The budget of the evaluation under way. Evaluation is synchronous and does not re-enter, so one
 * counter per process serves: `evaluate` resets it, every step spends from it.
 */
let left = EVAL_BUDGET_UNITS;

export function resetBudget(units = EVAL_BUDGET_UNITS): void {
  left = units;
}

export function spend(units: number): void {
  left -= units;
  if (left < 0) throw new FormulaValueError('the formula needs more work than one evaluation may do');
}

/** Units of values handed to or returned by a step: the length of their texts. */
export function textUnits(values: readonly Value[]): number {
  let units = 0;
  for (const v of values) {
    if (typeof v === 'string') units += v.length;
    else if (Array.isArray(v)) units += v.length + textUnits(v);
  }
  return units;
}
