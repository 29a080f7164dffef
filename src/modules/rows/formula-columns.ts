import { FormulaColumnError, FormulaPlan, formulaColumnData, isVolatileFormula, renameReference } from '../formulas/index.js';
import { badRequest } from '../../shared/errors.js';
import type { WriteScope } from './base-writer.js';
import type { ColumnMeta, TableMeta } from './metadata.js';
import type { StoredRow } from './present.js';
import { changedCellKeys, emptyLinkFormulas, propagateLinkFormulas } from './link-formula-columns.js';
import { scanTable, updateRows } from './rows.repository.js';
import { modifyEvent, sameCells } from './row-events.js';

/**
 * The rows module's side of formula columns (the language lives in src/modules/formulas/):
 * formula cells are materialized in the row, computed in the write that changes the row, and
 * recomputed for the whole table when the table's structure changes what they read. See docs/formulas.md.
 */

/** Check a formula column's `column_data.formula` against its table and complete its data (400 on errors). */
export function configureFormulaColumn(table: TableMeta, column: ColumnMeta): void {
  try {
    column.data = formulaColumnData(table, column, column.data ?? {});
  } catch (e) {
    if (e instanceof FormulaColumnError) throw badRequest(e.message);
    throw e;
  }
}

/** Every formula column of a new table (formulas may name columns listed after them). */
export function configureTableFormulas(table: TableMeta): void {
  for (const column of table.columns) if (column.type === 'formula') configureFormulaColumn(table, column);
}

/**
 * The hook of the row write path: compute the formula cells of rows being written (in place); `fresh` rows are new.
 * Each cell's work is bounded (formulas/budget.ts), a batch by FORMULA_BATCH_TIMEOUT_MS (a large one runs
 * on a formula thread): cells still unevaluated at the limit become errors, and the write goes on.
 */
export async function computeFormulas(w: WriteScope, timeZone: string, table: TableMeta, rows: StoredRow[], fresh = false): Promise<void> {
  if (fresh) emptyLinkFormulas(w, timeZone, table, rows);
  await w.formulas.compute(table, rows, { timeZone, now: w.now, modifier: w.actor.user }, w.base.id);
}

/** True when a structural change to `column` can change the table's formula cells. */
export function affectsFormulas(table: TableMeta, column: ColumnMeta | string): boolean {
  const key = typeof column === 'string' ? column : column.key;
  if (typeof column !== 'string' && column.type === 'formula') return true;
  return table.columns.some((c) => c.type === 'formula' && Array.isArray(c.data?.operated_columns) && (c.data.operated_columns as unknown[]).includes(key));
}

/**
 * Recompute every formula cell of the table, in batches, writing only rows whose cells change.
 * Structural: no row events and no mtime change (a formula reading mtime keeps the row's own).
 */
export async function recomputeTable(w: WriteScope, timeZone: string, table: TableMeta): Promise<void> {
  for (const column of table.columns) {
    if (column.type === 'formula' && column.data && typeof column.data.formula === 'string') {
      try {
        configureFormulaColumn(table, column);
      } catch {
        // The formula no longer compiles (a column it reads is gone): its cells become empty.
      }
    }
  }
  if (!table.columns.some((c) => c.type === 'formula')) return;
  const ctx = { timeZone, now: w.now };
  for await (const batch of scanTable(w.trx, w.base.id, table._id)) {
    const before = batch.map((row) => ({ ...row.data }));
    await w.formulas.compute(table, batch, ctx, w.base.id);
    const changed = batch.filter((row, i) => !sameCells(before[i]!, row.data)).map((row) => ({ rowId: row._id, data: row.data }));
    await updateRows(w.trx, w.dialect, w.base.id, changed, null);
  }
}

/** A column was renamed: formulas naming it follow. */
export function renameInFormulas(table: TableMeta, from: string, to: string): void {
  for (const column of table.columns) {
    if (column.type !== 'formula' || typeof column.data?.formula !== 'string') continue;
    column.data = { ...column.data, formula: renameReference(column.data.formula, from, to) };
  }
}

/** True when a formula column of the table calls now() or today(). */
export function hasVolatileFormulas(table: TableMeta): boolean {
  return table.columns.some((c) => c.type === 'formula' && isVolatileFormula(c.data?.formula));
}

/**
 * The scheduled refresh of now()/today(): recompute the table's formulas at `w.now` and store the
 * rows whose cells change as ordinary modify events (webhooks and rules see them; mtime is kept, as
 * for other recomputed cells), carrying the change on to link formulas. Batches of 1,000 rows.
 */
export async function refreshVolatileFormulas(w: WriteScope, timeZone: string, table: TableMeta): Promise<number> {
  if (!table.columns.some((c) => c.type === 'formula')) return 0;
  const ctx = { timeZone, now: w.now };
  let count = 0;
  for await (const batch of scanTable(w.trx, w.base.id, table._id)) {
    const before = batch.map((row) => ({ ...row, data: { ...row.data } }));
    await w.formulas.compute(table, batch, ctx, w.base.id);
    const changed = batch.flatMap((after, i) => (sameCells(before[i]!.data, after.data) ? [] : [{ before: before[i]!, after }]));
    if (changed.length === 0) continue;
    await updateRows(w.trx, w.dialect, w.base.id, changed.map((c) => ({ rowId: c.after._id, data: c.after.data })), null);
    w.emit(changed.flatMap((c) => modifyEvent(w.base, table, c.before, c.after, w.actor, w.now) ?? []));
    const keys = changedCellKeys(changed.map((c) => [c.before.data, c.after.data]));
    await propagateLinkFormulas(w, timeZone, table, changed.map((c) => c.after._id), 0, keys);
    count += changed.length;
  }
  return count;
}
