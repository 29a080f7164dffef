import { discardHeldEvents, heldInsertedRowIds, heldModifications } from '../events/index.js';
import type { Executor } from '../../db/index.js';
import type { WriteScope } from './base-writer.js';
import * as repo from './rows.repository.js';
import { dropStage, dropUnlisted } from './staging.js';

const PAGE = 1000;

/**
 * Undoes the row writes made under a hold (BaseWriter `holdEvents`) in the caller's transaction: the
 * held modifications (holds of an older version) are reverted latest first (each puts back the cells'
 * values before it, so a row changed twice ends as it was before the first), the rows it staged are
 * deleted, and the held events and kept cell changes are dropped. Nothing is emitted: no consumer saw the writes being undone.
 */
export async function undoHeldWrites(w: WriteScope, staged: { id: string; stage: string; newTableIds?: readonly string[] }): Promise<void> {
  const hold = staged.id;
  for (let before = Number.MAX_SAFE_INTEGER; ; ) {
    const page = await heldModifications(w.trx, hold, before, PAGE);
    if (page.length === 0) break;
    before = page[page.length - 1]!.id;
    // One statement per table and step; a row twice in one page is reverted in two steps, latest first.
    while (page.length > 0) {
      const step: typeof page = [];
      const seen = new Set<string>();
      for (let i = 0; i < page.length; ) {
        const m = page[i]!;
        if (seen.has(m.rowId)) i++;
        else {
          seen.add(m.rowId);
          step.push(m);
          page.splice(i, 1);
        }
      }
      for (const tableId of new Set(step.map((m) => m.tableId))) {
        const mods = step.filter((m) => m.tableId === tableId);
        const current = await repo.findRows(w.trx, w.base.id, tableId, mods.map((m) => m.rowId));
        const rows = mods.flatMap((m) => {
          const row = current.get(m.rowId);
          if (!row) return [];
          const data = { ...row.data };
          for (const cell of m.before) {
            if (cell.old_value === null) delete data[cell.column_key];
            else data[cell.column_key] = cell.old_value;
          }
          return [{ rowId: m.rowId, data }];
        });
        await repo.updateRows(w.trx, w.dialect, w.base.id, rows, null);
      }
    }
  }
  await w.trx.deleteFrom('base_rows').where('base_id', '=', w.base.id).where('row_id', 'in', heldInsertedRowIds(w.trx, hold)).execute();
  await dropStage(w.trx, w.base.id, staged.stage);
  // Its new tables' rows, under ids no listed table has (one listed meanwhile under such an id keeps its rows).
  await dropUnlisted(w.trx, w.base.id, (staged.newTableIds ?? []).filter((id) => !w.meta.tables.some((t) => t._id === id)));
  await discardHeldEvents(w.trx, hold);
  await discardHeldUpdates(w.trx, hold);
}

/** Rows per INSERT of held updates: 5 parameters each, under both engines' limits. */
const UPDATE_CHUNK = 1000;

/** One row's cell changes kept for the end of a multi-batch write (`held_updates`, migration 0035). */
export interface HeldUpdate {
  rowId: string;
  /** The new cells by column name (or key), as the rows API's update takes them. */
  cells: Record<string, unknown>;
}

/** Keeps one batch's cell changes to existing rows of `tableId` under `hold`, in their order; nothing in the table changes. */
export async function holdUpdates(db: Executor, hold: string, tableId: string, updates: HeldUpdate[], now: number): Promise<void> {
  for (let i = 0; i < updates.length; i += UPDATE_CHUNK) {
    const values = updates.slice(i, i + UPDATE_CHUNK).map((u) => ({ hold_id: hold, table_id: tableId, row_id: u.rowId, cells: JSON.stringify(u.cells), created_at: now }));
    await db.insertInto('held_updates').values(values).execute();
  }
}

/** A hold's kept cell changes in the order they were kept, `PAGE` at a time (for the publishing transaction). */
export async function* heldUpdatePages(db: Executor, hold: string): AsyncGenerator<Array<HeldUpdate & { tableId: string }>> {
  for (let after = 0; ; ) {
    const rows = await db.selectFrom('held_updates').select(['id', 'table_id', 'row_id', 'cells']).where('hold_id', '=', hold).where('id', '>', after).orderBy('id').limit(PAGE).execute();
    if (rows.length > 0) yield rows.map((r) => ({ tableId: r.table_id, rowId: r.row_id, cells: JSON.parse(r.cells) as Record<string, unknown> }));
    if (rows.length < PAGE) return;
    after = Number(rows[rows.length - 1]!.id);
  }
}

/** Drops a hold's kept cell changes (applied, or the write was undone). */
export async function discardHeldUpdates(db: Executor, hold: string): Promise<void> {
  await db.deleteFrom('held_updates').where('hold_id', '=', hold).execute();
}
