import { cellToValue, referenceType } from './cells.js';
import { compare } from './evaluate.js';
import { FormulaColumnError, type PlanColumn, type PlanTable } from './table-plan.js';
import { FormulaDate, flatten, isBlank, toCell, toNumber, toText, type ResultType, type Value } from './values.js';

/**
 * Link-formula columns: a value computed from the rows a link column links to. Pure: the caller
 * hands over the linked rows' cells. `data` fields are the original's.
 */

export const LINK_FORMULAS = ['lookup', 'rollup', 'count_links', 'findmin', 'findmax'] as const;
export const SUMMARY_METHODS = ['sum', 'average', 'max', 'min', 'count', 'concatenate'] as const;

export interface LinkFormulaSpec {
  formula: (typeof LINK_FORMULAS)[number];
  linkColumnKey: string;
  /** lookup/rollup: the linked table's column read. findmin/findmax: the column returned. */
  targetKey: string | null;
  /** findmin/findmax: the linked column compared. */
  comparisonKey: string | null;
  summary: (typeof SUMMARY_METHODS)[number] | null;
}

/** The other table of a link column (its `data` has both ends). */
export function otherTableId(tableId: string, link: PlanColumn): string | null {
  const data = link.data as { table_id?: unknown; other_table_id?: unknown } | null;
  if (!data) return null;
  return String(data.table_id === tableId ? data.other_table_id : data.table_id);
}

const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : null);

export function readSpec(data: Record<string, unknown> | null): LinkFormulaSpec | null {
  const formula = data?.formula;
  if (typeof formula !== 'string' || !(LINK_FORMULAS as readonly string[]).includes(formula)) return null;
  const isFind = formula === 'findmin' || formula === 'findmax';
  const summary = typeof data!.summary_method === 'string' ? data!.summary_method.toLowerCase() : null;
  return {
    formula: formula as LinkFormulaSpec['formula'],
    linkColumnKey: String(data!.link_column_key ?? ''),
    targetKey: text(isFind ? data!.searched_column_key : data!.level1_linked_column_key),
    comparisonKey: text(data!.comparison_column_key),
    summary: summary as LinkFormulaSpec['summary'],
  };
}

/** The result type of a link formula over `other` (the linked table). */
export function linkResultType(spec: LinkFormulaSpec, other: PlanTable): ResultType {
  const target = other.columns.find((c) => c.key === spec.targetKey);
  const targetType = target ? referenceType(target.type, target.data?.result_type) : 'string';
  switch (spec.formula) {
    case 'count_links':
      return 'number';
    case 'lookup':
      return 'array';
    case 'rollup':
      if (spec.summary === 'concatenate') return 'string';
      if ((spec.summary === 'max' || spec.summary === 'min') && targetType === 'date') return 'date';
      return 'number';
    default:
      return targetType;
  }
}

/**
 * The stored `data` of a link-formula column in `table`, checked: `formula` one of LINK_FORMULAS,
 * `link_column_key` a link column of the table, the linked columns existing in the other table.
 */
export function linkFormulaColumnData(tableId: string, table: PlanTable, tables: Array<PlanTable & { _id: string }>, raw: Record<string, unknown>): Record<string, unknown> {
  const spec = readSpec(raw);
  if (!spec) throw new FormulaColumnError(`column_data.formula invalid: one of ${LINK_FORMULAS.join(', ')}.`);
  const link = table.columns.find((c) => (c.key === spec.linkColumnKey || c.name === spec.linkColumnKey) && c.type === 'link');
  if (!link) throw new FormulaColumnError('column_data.link_column_key invalid.');
  const other = tables.find((t) => t._id === otherTableId(tableId, link));
  if (!other) throw new FormulaColumnError('column_data.link_column_key invalid.');
  const resolve = (ref: string | null, field: string) => {
    const column = other.columns.find((c) => c.key === ref || c.name === ref);
    if (!column || column.type === 'link' || column.type === 'button') throw new FormulaColumnError(`column_data.${field} invalid.`);
    return column.key;
  };
  const out: Record<string, unknown> = { ...raw, link_column_key: link.key };
  if (spec.formula === 'lookup' || spec.formula === 'rollup') out.level1_linked_column_key = resolve(spec.targetKey, 'level1_linked_column_key');
  if (spec.formula === 'rollup') {
    if (!spec.summary || !(SUMMARY_METHODS as readonly string[]).includes(spec.summary)) throw new FormulaColumnError(`column_data.summary_method invalid: one of ${SUMMARY_METHODS.join(', ')}.`);
    out.summary_method = spec.summary;
  }
  if (spec.formula === 'findmin' || spec.formula === 'findmax') {
    out.searched_column_key = resolve(spec.targetKey, 'searched_column_key');
    out.comparison_column_key = resolve(spec.comparisonKey, 'comparison_column_key');
  }
  const checked = readSpec(out)!;
  return { ...out, result_type: linkResultType(checked, other) };
}

/** A linked row as the computation sees it: its cells (row timestamps added for ctime/mtime columns). */
export type LinkedCells = Record<string, unknown>;

/** The stored cell of a link formula for one row, given the cells of the rows it links to (in link order). */
export function linkFormulaCell(spec: LinkFormulaSpec, other: PlanTable, linked: LinkedCells[], timeZone: string): unknown {
  const type = linkResultType(spec, other);
  const columnOf = (key: string | null) => other.columns.find((c) => c.key === key);
  const valuesOf = (column: PlanColumn | undefined): Value[] =>
    column ? linked.map((cells) => cellToValue(column.type, cells[column.key], timeZone, referenceType(column.type, column.data?.result_type))) : [];
  // A column the link formula reads was deleted: it computes nothing.
  if (spec.formula !== 'count_links' && (!columnOf(spec.targetKey) || (spec.comparisonKey !== null && !columnOf(spec.comparisonKey)))) return null;
  switch (spec.formula) {
    case 'count_links':
      return linked.length;
    case 'lookup':
      return toCell(flatten(valuesOf(columnOf(spec.targetKey))), 'array', timeZone);
    case 'rollup':
      return toCell(summarize(spec.summary!, valuesOf(columnOf(spec.targetKey)), timeZone), type, timeZone);
    default: {
      const keys = valuesOf(columnOf(spec.comparisonKey));
      const targets = valuesOf(columnOf(spec.targetKey));
      let best = -1;
      keys.forEach((k, i) => {
        if (isBlank(k)) return;
        const c = best < 0 ? 0 : compare(k, keys[best]!, timeZone);
        if (best < 0 || (spec.formula === 'findmin' ? c < 0 : c > 0)) best = i;
      });
      return best < 0 ? null : toCell(targets[best]!, type, timeZone);
    }
  }
}

function summarize(method: NonNullable<LinkFormulaSpec['summary']>, raw: Value[], timeZone: string): Value {
  const values = flatten(raw).filter((v) => !isBlank(v));
  const numbers = () =>
    values.flatMap((v) => {
      try {
        return [toNumber(v)];
      } catch {
        return [];
      }
    });
  switch (method) {
    case 'sum':
      return numbers().reduce((s, n) => s + n, 0);
    case 'average': {
      const ns = numbers();
      return ns.length === 0 ? null : ns.reduce((s, n) => s + n, 0) / ns.length;
    }
    case 'count':
      return values.length;
    case 'concatenate':
      return values.map((v) => toText(v, timeZone)).join(', ');
    default: {
      if (values.length === 0) return null;
      if (values.every((v) => v instanceof FormulaDate)) {
        const ms = (values as FormulaDate[]).map((d) => d.ms);
        return new FormulaDate(method === 'max' ? Math.max(...ms) : Math.min(...ms));
      }
      const ns = numbers();
      return ns.length === 0 ? null : method === 'max' ? Math.max(...ns) : Math.min(...ns);
    }
  }
}
