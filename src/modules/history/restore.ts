import { AppError, badRequest } from '../../shared/errors.js';
import type { ColumnMeta, RestoreScope } from '../rows/index.js';
import { laterOperationsOfRows } from './history.repository.js';
import { restoreTrashedTable } from './table-trash.js';
import type { TrashedTableRow } from './table-trash.repository.js';
import type { LoggedChange, Operation } from './history.types.js';

export interface Conflict {
  op_id: number;
  row_id: string;
  column_keys: string[];
}

const linkOp = (c: LoggedChange) => c.o === 'add_link' || c.o === 'remove_link';
const keysOf = (c: LoggedChange) => new Set([...Object.keys(c.a ?? {}), ...Object.keys(c.b ?? {})]);

/** Does `later` (a change to the same row after `c`) touch what reverting `c` would set back? */
function collides(c: LoggedChange, later: LoggedChange): string[] | null {
  if (c.o === 'insert_row' || later.o === 'delete_row' || later.o === 'insert_row') return [];
  if (c.o === 'delete_row') return null;
  if (linkOp(c) !== linkOp(later)) return null;
  const mine = keysOf(c);
  const shared = [...keysOf(later)].filter((k) => mine.has(k));
  return shared.length > 0 ? shared : null;
}

/** The later operations that changed the cells (or rows) this operation's revert would set back. */
export async function conflictsOf(scope: RestoreScope, op: Operation): Promise<Conflict[]> {
  const later = cancelPairs(await laterOperationsOfRows(scope.trx, op.baseId, [...new Set(op.changes.rows.map((c) => c.r))], op.id));
  const conflicts: Conflict[] = [];
  for (const next of later) {
    for (const l of next.changes.rows) {
      for (const c of op.changes.rows) {
        if (c.r !== l.r) continue;
        const keys = collides(c, l);
        if (keys) conflicts.push({ op_id: next.id, row_id: c.r, column_keys: keys });
      }
    }
  }
  return conflicts;
}

/**
 * Later operations without those that cancel out: an operation reverted by a later one (an undo) and
 * that revert leave the cells as they were, so undoing step after step is no conflict. Walked newest
 * first: a revert that was itself reverted (a redo) cancels nothing, so the redone change counts.
 */
function cancelPairs(later: Operation[]): Operation[] {
  const ids = new Set(later.map((o) => o.id));
  const cancelled = new Set<number>();
  for (const o of [...later].reverse()) {
    if (cancelled.has(o.id)) continue;
    if (o.reverts !== null && ids.has(o.reverts)) {
      cancelled.add(o.id);
      cancelled.add(o.reverts);
    }
  }
  return later.filter((o) => !cancelled.has(o.id));
}

export function conflictError(opId: number, conflicts: Conflict[]): AppError {
  const first = conflicts[0]!;
  const cells = first.column_keys.length > 0 ? ` (columns ${first.column_keys.join(', ')})` : '';
  return new AppError(409, {
    error_msg: `Operation ${opId} cannot be restored: operation ${first.op_id} changed row ${first.row_id}${cells} later. Restore with "overwrite": true to set them back anyway.`,
    conflicts: conflicts.slice(0, 100),
  });
}

/**
 * Reverts an operation's row changes inside one restore write: inserted rows are deleted, changed
 * cells set back, deleted rows inserted again under their ids with their links (their comments never
 * left), link cells set back. Rows that are gone meanwhile (with `overwrite`) are skipped.
 */
export async function revert(scope: RestoreScope, op: Operation): Promise<void> {
  const byTable = new Map<string, LoggedChange[]>();
  // Last change first: a write touching one row twice is undone in reverse order.
  for (const c of [...op.changes.rows].reverse()) byTable.set(c.t, [...(byTable.get(c.t) ?? []), c]);
  for (const [tableId, changes] of byTable) {
    if (!scope.meta.tables.some((t) => t._id === tableId)) continue;
    const current = await scope.find(tableId, changes.map((c) => c.r));
    const inserted = changes.filter((c) => c.o === 'insert_row' && current.has(c.r)).map((c) => c.r);
    if (inserted.length > 0) await scope.remove(tableId, inserted);
    const modified = changes.filter((c) => c.o === 'modify_row' && current.has(c.r)).map((c) => ({ rowId: c.r, data: c.b ?? {} }));
    if (modified.length > 0) await scope.setCells(tableId, modified);
    const deleted = changes.filter((c) => c.o === 'delete_row' && !c.x && !current.has(c.r));
    if (deleted.length > 0) await scope.reinsert(tableId, deleted.map((c) => ({ rowId: c.r, data: c.b ?? {}, ...(c.l ? { links: c.l } : {}), ...(c.c ? { creator: c.c[0], ctime: c.c[1] } : {}) })));
    for (const c of changes.filter(linkOp)) {
      for (const [key, ids] of Object.entries(c.b ?? {})) await scope.setLinks(tableId, c.r, key, Array.isArray(ids) ? ids.map(String) : []);
    }
  }
}

type StructureEntry = Record<string, unknown> & { op_type: string; table_id: string };

const REVERTIBLE = new Set(['insert_table', 'rename_table', 'delete_table', 'insert_column', 'rename_column', 'delete_column']);

/** Refuses (400, before anything changes) an operation with structure changes a restore cannot set back. */
export function assertStructureRevertible(op: Operation): void {
  for (const s of (op.changes.structure ?? []) as StructureEntry[]) {
    // With row changes, settings that came along (e.g. select options a cell added) stay as they are.
    if (!REVERTIBLE.has(s.op_type) && op.changes.rows.length === 0) throw badRequest(`Operation ${op.id} cannot be restored: ${s.op_type} is not restorable (tables and columns added, renamed or deleted are).`);
    if (s.op_type === 'delete_column' && (s.old_column as { type?: string } | undefined)?.type === 'link') {
      throw badRequest(`Operation ${op.id} cannot be restored: a deleted link column's links are not kept.`);
    }
  }
}

/**
 * Sets back an operation's table and column changes, last first, inside the restore write: an added
 * table or column is deleted (a table to the trash), a rename is undone, a deleted table comes back
 * from the trash with its rows and links, a deleted column comes back empty (its cells went with it).
 */
export async function revertStructure(scope: RestoreScope, op: Operation, trashOf: (tableId: string) => Promise<TrashedTableRow | undefined>): Promise<void> {
  for (const s of [...((op.changes.structure ?? []) as StructureEntry[])].reverse()) {
    switch (s.op_type) {
      case 'insert_table':
        await scope.structure.removeTable(s.table_id);
        break;
      case 'rename_table':
        scope.structure.renameTable(s.table_id, String(s.old_table_name));
        break;
      case 'delete_table': {
        const trash = await trashOf(s.table_id);
        if (!trash) throw new AppError(409, { error_msg: `Operation ${op.id} cannot be restored: table ${String(s.table_name)} is no longer in the trash.` });
        await restoreTrashedTable(scope, trash);
        break;
      }
      case 'insert_column':
        await scope.structure.removeColumn(s.table_id, (s.column_data as ColumnMeta).key);
        break;
      case 'rename_column':
        scope.structure.renameColumn(s.table_id, String(s.column_key), String(s.old_column_name));
        break;
      case 'delete_column':
        if ((s.old_column as { type?: string } | undefined)?.type === 'link') break;
        await scope.structure.addColumn(s.table_id, s.old_column as ColumnMeta, String(s.upper_column_key ?? ''));
        break;
    }
  }
}
