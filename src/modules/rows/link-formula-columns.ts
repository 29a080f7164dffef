import { FormulaColumnError, FormulaPlan, linkFormulaCell, linkFormulaColumnData, otherTableId, readSpec, type LinkedCells } from '../formulas/index.js';
import { badRequest } from '../../shared/errors.js';
import type { WriteScope } from './base-writer.js';
import { linkEnds } from './link-cells.js';
import { linkedIds } from './links.repository.js';
import type { ColumnMeta, TableMeta } from './metadata.js';
import type { StoredRow } from './present.js';
import { modifyEvent, sameCells } from './row-events.js';
import { findRows, scanTable, updateRows } from './rows.repository.js';

/**
 * Link-formula columns (lookup, rollup, count_links, findmin, findmax): materialized in the row like
 * formula cells, recomputed inside the write that changes a link or a linked row. See docs/formulas.md.
 */

/** How far a change travels through link formulas reading link formulas (A ← B ← C …). */
const MAX_DEPTH = 4;
const BATCH = 1000;

export function configureLinkFormulaColumn(w: WriteScope, table: TableMeta, column: ColumnMeta): void {
  try {
    column.data = linkFormulaColumnData(table._id, table, w.meta.tables, column.data ?? {});
  } catch (e) {
    if (e instanceof FormulaColumnError) throw badRequest(e.message);
    throw e;
  }
}

const linkFormulas = (table: TableMeta) => table.columns.filter((c) => c.type === 'link-formula' && readSpec(c.data) !== null);

/** Row columns every update changes (a link formula reading them sees each update). */
const STAMPED = new Set(['mtime', 'last-modifier']);

/** Keys of the cells that differ between the `before` and `after` data of changed rows. */
export function changedCellKeys(pairs: Array<[Record<string, unknown>, Record<string, unknown>]>): Set<string> {
  const keys = new Set<string>();
  for (const [a, b] of pairs) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) if (!keys.has(key) && !sameCells({ v: a[key] }, { v: b[key] })) keys.add(key);
  }
  return keys;
}

/**
 * The link formulas of `dependent` over `link` that read cells of the other table among `keys`
 * (all of them when `keys` is undefined). count_links reads no cell: only link changes move it.
 */
function readersOf(dependent: TableMeta, other: TableMeta, linkKey: string, keys: Set<string> | undefined): ColumnMeta[] {
  return linkFormulas(dependent).filter((c) => {
    const spec = readSpec(c.data)!;
    if (spec.linkColumnKey !== linkKey) return false;
    if (!keys) return true;
    return [spec.targetKey, spec.comparisonKey].some((key) => {
      if (key === null) return false;
      if (keys.has(key)) return true;
      const column = other.columns.find((o) => o.key === key);
      return column !== undefined && STAMPED.has(column.type);
    });
  });
}

/** Cells of a linked row as link formulas read them (row timestamps for ctime/mtime columns). */
function cellsOf(table: TableMeta, row: StoredRow): LinkedCells {
  const cells: LinkedCells = { ...row.data };
  for (const c of table.columns) {
    if (c.type === 'ctime') cells[c.key] = row._ctime;
    else if (c.type === 'mtime') cells[c.key] = row._mtime;
    else if (c.type === 'creator') cells[c.key] = row._creator;
    else if (c.type === 'last-modifier') cells[c.key] = row._last_modifier;
  }
  return cells;
}

/** New rows link to nothing yet: their link formulas start empty (count 0, sums 0). */
export function emptyLinkFormulas(w: WriteScope, timeZone: string, table: TableMeta, rows: StoredRow[]): void {
  for (const column of linkFormulas(table)) {
    const spec = readSpec(column.data)!;
    const link = table.columns.find((c) => c.key === spec.linkColumnKey);
    const other = link && w.meta.tables.find((t) => t._id === otherTableId(table._id, link));
    const value = other ? linkFormulaCell(spec, other, [], timeZone) : null;
    for (const row of rows) {
      if (value === null) delete row.data[column.key];
      else row.data[column.key] = value;
    }
  }
}

/**
 * Recompute the link formulas (then the formulas) of `rowIds` in `table`, store the rows whose cells
 * change (with a modify event, mtime kept) and carry the change on to the tables linking to them.
 */
export async function recomputeLinkFormulas(w: WriteScope, timeZone: string, table: TableMeta, rowIds: string[], depth = 0, only?: ColumnMeta[]): Promise<void> {
  const columns = only ?? linkFormulas(table);
  if (columns.length === 0 || rowIds.length === 0) return;
  for (let i = 0; i < rowIds.length; i += BATCH) {
    const rows = [...(await findRows(w.trx, w.base.id, table._id, rowIds.slice(i, i + BATCH))).values()];
    const before = new Map(rows.map((r) => [r._id, { ...r, data: { ...r.data } }]));
    await computeInto(w, timeZone, table, columns, rows);
    const changed = rows.filter((r) => !sameCells(before.get(r._id)!.data, r.data));
    await updateRows(w.trx, w.dialect, w.base.id, changed.map((r) => ({ rowId: r._id, data: r.data })), null);
    w.emit(changed.flatMap((r) => modifyEvent(w.base, table, before.get(r._id)!, r, w.actor, w.now) ?? []));
    const keys = changedCellKeys(changed.map((r) => [before.get(r._id)!.data, r.data]));
    if (depth < MAX_DEPTH) await propagateLinkFormulas(w, timeZone, table, changed.map((r) => r._id), depth + 1, keys);
  }
}

/** Set the link-formula cells of `rows` from their linked rows, then the table's formulas. */
async function computeInto(w: WriteScope, timeZone: string, table: TableMeta, columns: ColumnMeta[], rows: StoredRow[]): Promise<void> {
  const ids = rows.map((r) => r._id);
  for (const column of columns) {
    const spec = readSpec(column.data)!;
    const link = table.columns.find((c) => c.key === spec.linkColumnKey && c.type === 'link');
    const other = link && w.meta.tables.find((t) => t._id === otherTableId(table._id, link));
    if (!link || !other) {
      for (const row of rows) delete row.data[column.key];
      continue;
    }
    const linked = await linkedIds(w.trx, w.base.id, linkEnds(table, link).linkId, linkEnds(table, link).side, ids);
    const others = await findRows(w.trx, w.base.id, other._id, [...new Set([...linked.values()].flat())]);
    for (const row of rows) {
      const cells = (linked.get(row._id) ?? []).flatMap((id) => (others.has(id) ? [cellsOf(other, others.get(id)!)] : []));
      const value = linkFormulaCell(spec, other, cells, timeZone);
      if (value === null) delete row.data[column.key];
      else row.data[column.key] = value;
    }
  }
  const plan = FormulaPlan.of(table);
  if (plan) for (const row of rows) plan.apply(row, { timeZone, now: w.now });
}

/**
 * Rows of `table` changed (`rowIds`, in the cells `keys` when known): recompute the link formulas
 * that read those cells, in the rows linking to them, in every table linking to `table`.
 */
export async function propagateLinkFormulas(w: WriteScope, timeZone: string, table: TableMeta, rowIds: string[], depth = 0, keys?: Set<string>): Promise<void> {
  if (rowIds.length === 0 || keys?.size === 0) return;
  for (const dependent of (await dependentRows(w, table, rowIds, keys)).values()) {
    await recomputeLinkFormulas(w, timeZone, dependent.table, dependent.ids, depth, dependent.columns);
  }
}

/** Rows (per table) whose link formulas read rows `rowIds` of `table` (in the cells `keys` when known), with those link formulas. */
export async function dependentRows(w: WriteScope, table: TableMeta, rowIds: string[], keys?: Set<string>): Promise<Map<string, { table: TableMeta; columns: ColumnMeta[]; ids: string[] }>> {
  const out = new Map<string, { table: TableMeta; columns: ColumnMeta[]; ids: string[] }>();
  for (const dependent of w.meta.tables) {
    for (const link of dependent.columns) {
      if (link.type !== 'link' || otherTableId(dependent._id, link) !== table._id) continue;
      const readers = readersOf(dependent, table, link.key, keys);
      if (readers.length === 0) continue;
      // Seen from `table`, the same link: which of its rows link to which dependent rows.
      const ends = linkEnds(dependent, link);
      const fromSide = ends.side === 'row_id' ? 'other_row_id' : 'row_id';
      const linked = await linkedIds(w.trx, w.base.id, ends.linkId, table._id === dependent._id ? ends.side : fromSide, rowIds);
      const entry = out.get(dependent._id) ?? { table: dependent, columns: [], ids: [] };
      const ids = new Set([...entry.ids, ...[...linked.values()].flat()]);
      if (table._id === dependent._id) {
        // A self-link: rows on either end may read the changed rows.
        const back = await linkedIds(w.trx, w.base.id, ends.linkId, fromSide, rowIds);
        for (const id of [...back.values()].flat()) ids.add(id);
      }
      out.set(dependent._id, { table: dependent, columns: [...new Set([...entry.columns, ...readers])], ids: [...ids] });
    }
  }
  return out;
}

/** Every row of the table (a link-formula column added or changed, or its link deleted). */
export async function recomputeAllLinkFormulas(w: WriteScope, timeZone: string, table: TableMeta): Promise<void> {
  const columns = linkFormulas(table);
  const stale = table.columns.filter((c) => c.type === 'link-formula' && !columns.includes(c));
  for await (const batch of scanTable(w.trx, w.base.id, table._id, BATCH)) {
    const before = new Map(batch.map((r) => [r._id, { ...r.data }]));
    for (const row of batch) for (const c of stale) delete row.data[c.key];
    await computeInto(w, timeZone, table, columns, batch);
    const changed = batch.filter((r) => !sameCells(before.get(r._id)!, r.data));
    await updateRows(w.trx, w.dialect, w.base.id, changed.map((r) => ({ rowId: r._id, data: r.data })), null);
  }
}

/** A column of `table` was retyped or deleted: recompute the link formulas of the tables linking to it. */
export async function recomputeLinkFormulasReading(w: WriteScope, timeZone: string, table: TableMeta): Promise<void> {
  for (const dependent of w.meta.tables) {
    const reads = linkFormulas(dependent).some((c) => {
      const link = dependent.columns.find((l) => l.key === readSpec(c.data)!.linkColumnKey && l.type === 'link');
      return link !== undefined && otherTableId(dependent._id, link) === table._id;
    });
    if (reads) await recomputeAllLinkFormulas(w, timeZone, dependent);
  }
}
