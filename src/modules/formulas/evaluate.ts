import { resetBudget, spend, textUnits } from './budget.js';
import { FUNCTIONS } from './functions/index.js';
import { MAX_TEXT } from './functions/text.js';
import type { CompiledFormula } from './compile.js';
import type { BinaryOp, Node } from './syntax.js';
import { FormulaDate, FormulaValueError, isBlank, toDate, toNumber, toText, type EvalContext, type Value } from './values.js';

const DAY_MS = 86_400_000;

/** A row's value of a column (by key), as the formula sees it. */
export type CellReader = (key: string) => Value;

/**
 * The value of a compiled formula for one row. Pure: it reads only `cell` and `ctx`. A value the formula
 * cannot use (`'abc' * 2`, a division by zero), or more work than one evaluation may do (budget.ts),
 * makes the whole result empty (null), as an error cell.
 */
export function evaluate(formula: CompiledFormula, cell: CellReader, ctx: EvalContext): Value {
  resetBudget();
  try {
    return evalNode(formula.ast, cell, ctx);
  } catch (e) {
    if (e instanceof FormulaValueError) return null;
    throw e;
  }
}

function evalNode(node: Node, cell: CellReader, ctx: EvalContext): Value {
  spend(1);
  switch (node.kind) {
    case 'number':
    case 'string':
    case 'bool':
      return node.value;
    case 'column':
      return cell(node.key ?? node.name);
    case 'unary': {
      const n = toNumber(evalNode(node.operand, cell, ctx));
      return node.op === '-' ? -n : n;
    }
    case 'binary':
      return binary(node.op, evalNode(node.left, cell, ctx), evalNode(node.right, cell, ctx), ctx);
    case 'call': {
      const def = FUNCTIONS.get(node.name)!;
      if (def.lazy) return def.lazy(node.args.map((a) => () => evalNode(a, cell, ctx)), ctx);
      const args = node.args.map((a) => evalNode(a, cell, ctx));
      spend(textUnits(args));
      const result = def.fn!(args, ctx);
      if (typeof result === 'string') spend(result.length);
      return result;
    }
  }
}

function binary(op: BinaryOp, l: Value, r: Value, ctx: EvalContext): Value {
  switch (op) {
    case '&': {
      const [a, b] = [toText(l, ctx.timeZone), toText(r, ctx.timeZone)];
      if (a.length + b.length > MAX_TEXT) throw new FormulaValueError(`text longer than ${MAX_TEXT} characters`);
      spend(a.length + b.length);
      return a + b;
    }
    case '+':
      if (l instanceof FormulaDate && !(r instanceof FormulaDate)) return new FormulaDate(l.ms + toNumber(r) * DAY_MS);
      if (r instanceof FormulaDate && !(l instanceof FormulaDate)) return new FormulaDate(r.ms + toNumber(l) * DAY_MS);
      return toNumber(l) + toNumber(r);
    case '-':
      if (l instanceof FormulaDate && r instanceof FormulaDate) return (l.ms - r.ms) / DAY_MS;
      if (l instanceof FormulaDate) return new FormulaDate(l.ms - toNumber(r) * DAY_MS);
      return toNumber(l) - toNumber(r);
    case '*':
      return toNumber(l) * toNumber(r);
    case '/': {
      const d = toNumber(r);
      if (d === 0) throw new FormulaValueError('division by zero');
      return toNumber(l) / d;
    }
    case '%': {
      const d = toNumber(r);
      if (d === 0) throw new FormulaValueError('division by zero');
      const n = toNumber(l);
      return n - d * Math.floor(n / d);
    }
    case '^':
      return toNumber(l) ** toNumber(r);
    default: {
      const c = compare(l, r, ctx.timeZone);
      switch (op) {
        case '=':
          return c === 0;
        case '<>':
          return c !== 0;
        case '>':
          return c > 0;
        case '>=':
          return c >= 0;
        case '<':
          return c < 0;
        default:
          return c <= 0;
      }
    }
  }
}

/**
 * Order of two values: dates by instant, numbers (and numeric text against a number) numerically,
 * booleans as 0/1, anything else as text (case-sensitive). An empty value equals 0, '' and false.
 */
export function compare(l: Value, r: Value, timeZone: string): number {
  if (isBlank(l) && isBlank(r)) return 0;
  if (l instanceof FormulaDate || r instanceof FormulaDate) {
    if (isBlank(l) || isBlank(r)) return isBlank(l) ? -1 : 1;
    return Math.sign(toDate(l, timeZone)!.ms - toDate(r, timeZone)!.ms);
  }
  const numeric = (v: Value) => typeof v === 'number' || typeof v === 'boolean' || v === null;
  if (numeric(l) && numeric(r)) return Math.sign(toNumber(l) - toNumber(r));
  if (numeric(l) || numeric(r)) {
    try {
      return Math.sign(toNumber(l) - toNumber(r));
    } catch {
      // Non-numeric text against a number: compare as text.
    }
  }
  const [a, b] = [toText(l, timeZone), toText(r, timeZone)];
  return a < b ? -1 : a > b ? 1 : 0;
}
