import { cellToValue, referenceType } from './cells.js';
import { compileFormula, type CompiledFormula } from './compile.js';
import { evaluate } from './evaluate.js';
import { FormulaSyntaxError } from './syntax.js';
import { toCell, type ResultType, type Value } from './values.js';

/**
 * Formula columns of one table: how a formula column's `data` is checked and completed, and the plan
 * that computes every formula cell of a row (in dependency order) when the row is written.
 * Structural types keep this module independent of the rows module.
 */

export interface PlanColumn {
  key: string;
  name: string;
  type: string;
  data: Record<string, unknown> | null;
}

export interface PlanTable {
  columns: PlanColumn[];
}

export interface PlanRow {
  _ctime: number;
  _mtime: number;
  _creator: string;
  _last_modifier: string;
  data: Record<string, unknown>;
}

/** A formula the column data refuses, with the position (1-based) when it is a syntax or name error. */
export class FormulaColumnError extends Error {}

/** Column types a formula cannot read (their values are not in the row). */
const UNREADABLE = ['link', 'button'];

const ROW_FIELD: Record<string, (row: PlanRow) => unknown> = {
  ctime: (r) => r._ctime,
  mtime: (r) => r._mtime,
  creator: (r) => r._creator,
  'last-modifier': (r) => r._last_modifier,
};

function compileColumn(table: PlanTable, column: PlanColumn, source: string): CompiledFormula {
  return compileFormula(source, (name) => {
    const target = table.columns.find((c) => c.name === name);
    if (!target || UNREADABLE.includes(target.type)) return undefined;
    if (target.key === column.key) return undefined;
    return { key: target.key, type: referenceType(target.type, target.data?.result_type) };
  });
}

/** Formula columns of `table` in an order where every formula comes after the formulas it reads. */
function ordered(table: PlanTable, compiled: Map<string, CompiledFormula>): PlanColumn[] | string {
  const formulas = table.columns.filter((c) => compiled.has(c.key));
  const done = new Set<string>();
  const visiting = new Set<string>();
  const out: PlanColumn[] = [];
  const visit = (column: PlanColumn): string | null => {
    if (done.has(column.key)) return null;
    if (visiting.has(column.key)) return column.name;
    visiting.add(column.key);
    for (const ref of compiled.get(column.key)!.references) {
      const dep = formulas.find((c) => c.key === ref);
      const cycle = dep ? visit(dep) : null;
      if (cycle) return cycle;
    }
    visiting.delete(column.key);
    done.add(column.key);
    out.push(column);
    return null;
  };
  for (const column of formulas) {
    const cycle = visit(column);
    if (cycle) return cycle;
  }
  return out;
}

/**
 * The stored `data` of a formula column: `formula` checked against the table (which already holds
 * `column`), `result_type` inferred and `operated_columns` listed, as the original reports them.
 */
export function formulaColumnData(table: PlanTable, column: PlanColumn, raw: Record<string, unknown>): Record<string, unknown> {
  const source = raw.formula;
  if (typeof source !== 'string' || source.trim() === '') throw new FormulaColumnError('column_data.formula invalid.');
  let compiled: CompiledFormula;
  try {
    compiled = compileColumn(table, column, source);
  } catch (e) {
    if (e instanceof FormulaSyntaxError) {
      const target = table.columns.find((c) => c.name === (e.reason.match(/^column (.*) not found$/)?.[1] ?? null));
      const reason = target ? (target.key === column.key ? `column ${target.name} refers to the formula itself` : `column ${target.name} (${target.type}) cannot be used in a formula`) : e.reason;
      throw new FormulaColumnError(`Formula error at position ${e.position + 1}: ${reason}.`);
    }
    throw e;
  }
  const all = compiledFormulas({ columns: table.columns.map((c) => (c.key === column.key ? { ...c, data: { ...raw, formula: source } } : c)) });
  all.set(column.key, compiled);
  const order = ordered(table, all);
  if (typeof order === 'string') throw new FormulaColumnError(`Formula error: columns refer to each other in a cycle (through ${order}).`);
  return { ...raw, formula: source, result_type: compiled.resultType, operated_columns: compiled.references };
}

function compiledFormulas(table: PlanTable): Map<string, CompiledFormula> {
  const out = new Map<string, CompiledFormula>();
  for (const column of table.columns) {
    if (column.type !== 'formula' || typeof column.data?.formula !== 'string') continue;
    try {
      out.set(column.key, compileColumn(table, column, column.data.formula));
    } catch (e) {
      // A formula broken by a later change (a referenced column deleted or retyped) computes nothing.
      if (!(e instanceof FormulaSyntaxError)) throw e;
    }
  }
  return out;
}

export interface PlanContext {
  timeZone: string;
  /** The write's instant: `now()`, and the modification time of the rows being written. */
  now: number;
  /** Who writes rows (their new last modifier); none for structural recomputes, which keep mtime. */
  modifier?: string;
}

/** Computes the formula cells of a table's rows. */
export class FormulaPlan {
  private constructor(
    private readonly table: PlanTable,
    private readonly steps: Array<{ column: PlanColumn; formula: CompiledFormula | null; type: ResultType }>,
  ) {}

  /** The plan of `table`, or null when it has no formula columns (the write path's fast way out). */
  static of(table: PlanTable): FormulaPlan | null {
    if (!table.columns.some((c) => c.type === 'formula')) return null;
    const compiled = compiledFormulas(table);
    const order = ordered(table, compiled);
    const sorted = typeof order === 'string' ? [] : order;
    const broken = table.columns.filter((c) => c.type === 'formula' && !sorted.includes(c));
    const steps = [
      ...broken.map((column) => ({ column, formula: null, type: 'string' as ResultType })),
      ...sorted.map((column) => ({ column, formula: compiled.get(column.key)!, type: compiled.get(column.key)!.resultType })),
    ];
    return new FormulaPlan(table, steps);
  }

  /** Keys of the formula columns computed. */
  get keys(): string[] {
    return this.steps.map((s) => s.column.key);
  }

  /** Set the formula cells of `row` (in place); with `ctx.modifier` the row is being written now by them. */
  apply(row: PlanRow, ctx: PlanContext): void {
    const written: PlanRow = ctx.modifier === undefined ? row : { ...row, _mtime: ctx.now, _last_modifier: ctx.modifier };
    const columns = new Map(this.table.columns.map((c) => [c.key, c]));
    const read = (key: string): Value => {
      const column = columns.get(key);
      if (!column) return null;
      const field = ROW_FIELD[column.type];
      return cellToValue(column.type, field ? field(written) : row.data[key], ctx.timeZone, referenceType(column.type, column.data?.result_type));
    };
    for (const step of this.steps) {
      const value = step.formula ? toCell(evaluate(step.formula, read, ctx), step.type, ctx.timeZone) : null;
      if (value === null) delete row.data[step.column.key];
      else row.data[step.column.key] = value;
    }
  }
}

/** `source` with every reference to column `from` renamed to `to` (when a column is renamed). */
export function renameReference(source: string, from: string, to: string): string {
  return source.replace(/\{([^}]*)\}/g, (whole, name: string) => (name.trim() === from ? `{${to}}` : whole));
}
