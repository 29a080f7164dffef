import type { EvalContext, ResultType, Value } from '../values.js';

/** One function of the library. Arguments arrive evaluated, or as thunks when `lazy` (if, ifs, switch…). */
export interface FunctionDef {
  min: number;
  max: number;
  /** The result type, or how it follows from the argument types. */
  result: ResultType | ((args: ResultType[]) => ResultType);
  fn?: (args: Value[], ctx: EvalContext) => Value;
  lazy?: (args: Array<() => Value>, ctx: EvalContext) => Value;
}

export const VARIADIC = 255;

export const arg = (args: Value[], i: number): Value => (i < args.length ? args[i]! : null);
