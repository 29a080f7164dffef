import { FormulaColumnError, FormulaPlan, formulaColumnData, renameReference } from '../formulas/index.js';
import { badRequest } from '../../shared/errors.js';
import type { WriteScope } from './base-writer.js';
import type { ColumnMeta, TableMeta } from './metadata.js';
import type { StoredRow } from './present.js';
import { emptyLinkFormulas } from './link-formula-columns.js';
import { scanTable, updateRows } from './rows.repository.js';
import { sameCells } from './row-events.js';

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

/** The hook of the row write path: compute the formula cells of rows being written (in place); `fresh` rows are new. */
export function computeFormulas(w: WriteScope, timeZone: string, table: TableMeta, rows: StoredRow[], fresh = false): void {
  if (fresh) emptyLinkFormulas(w, timeZone, table, rows);
  const plan = FormulaPlan.of(table);
  if (!plan) return;
  const ctx = { timeZone, now: w.now, modifier: w.actor.user };
  for (const row of rows) plan.apply(row, ctx);
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
  const plan = FormulaPlan.of(table);
  if (!plan) return;
  const ctx = { timeZone, now: w.now };
  for await (const batch of scanTable(w.trx, w.base.id, table._id)) {
    const changed = [];
    for (const row of batch) {
      const before = { ...row.data };
      plan.apply(row, ctx);
      if (!sameCells(before, row.data)) changed.push({ rowId: row._id, data: row.data });
    }
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
