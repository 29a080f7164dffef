import { FormulaPlan, type PlanContext, type PlanRow, type PlanTable } from './table-plan.js';

/** One batch of rows whose formula cells are computed together, on a formula thread or here. */
export interface FormulaBatch {
  table: PlanTable;
  rows: PlanRow[];
  ctx: PlanContext;
}

/** The formula cells of each row of the batch (in order), keyed by column key; an absent key is an empty cell. */
export type FormulaCells = Array<Record<string, unknown>>;

/**
 * Computes a batch's formula cells without touching its rows: pure (the table's plan, the rows' cells,
 * the time zone and the write's "now" are all it reads), so a thread can run it on a copy.
 */
export function evaluateBatch(batch: FormulaBatch): FormulaCells {
  const plan = FormulaPlan.of(batch.table);
  if (!plan) return batch.rows.map(() => ({}));
  const keys = plan.keys;
  return batch.rows.map((row) => {
    const copy = { ...row, data: { ...row.data } };
    plan.apply(copy, batch.ctx);
    const cells: Record<string, unknown> = {};
    for (const key of keys) if (key in copy.data) cells[key] = copy.data[key];
    return cells;
  });
}

/** Set a row's formula cells to `cells` (in place); a key of `keys` missing from `cells` becomes empty (an error cell). */
export function storeFormulaCells(row: PlanRow, keys: readonly string[], cells: Record<string, unknown> | undefined): void {
  for (const key of keys) {
    if (cells && key in cells) row.data[key] = cells[key];
    else delete row.data[key];
  }
}
