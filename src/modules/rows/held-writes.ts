import { discardHeldEvents, heldInsertedRowIds, heldModifications } from '../events/index.js';
import type { WriteScope } from './base-writer.js';
import * as repo from './rows.repository.js';

const PAGE = 1000;

/**
 * Undoes the row writes made under a hold (BaseWriter `holdEvents`) in the caller's transaction: the
 * held modifications are reverted latest first (each puts back the cells' values before it, so a row
 * changed twice ends as it was before the first), the rows held inserts made are deleted, and the held
 * events are dropped. Nothing is emitted: no consumer saw the writes being undone.
 */
export async function undoHeldWrites(w: WriteScope, hold: string): Promise<void> {
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
  await discardHeldEvents(w.trx, hold);
}
