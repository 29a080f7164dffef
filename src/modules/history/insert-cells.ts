import type { Executor } from '../../db/index.js';
import { laterOperationIdsByKey, operationIdsAfter, operationsByIds } from './history.repository.js';
import { storedCellsOfAppends } from './stored-cells.js';
import type { Cells, LoggedChange, Operation } from './history.types.js';
import { rowKey } from '../../shared/row-key.js';

/**
 * Fills in the cells of appended rows (`f`: logged without them, operation-log.ts) as they were right
 * after the append: the row's stored cells (or those its deletion kept) with every later logged
 * change to the row undone, newest first (found in the row index, which has every later one; a
 * row's mtime cannot tell, two writes may share a millisecond). Not in the log, so not undone: formula results refreshed since and
 * cells of columns deleted or converted since. A row purged from the trash shows none. `rowId`: only
 * that row's changes are wanted.
 *
 * A whole page in three statements whatever its appends: the rows' cells, their later operations' ids
 * (after the page's oldest append; each append keeps those after itself), and those operations.
 * When the base has few operations after the page's oldest append (a recent page: LATER_READ_MAX),
 * those are read instead, by the base's (base, id) index, those on the page not again, and the rows'
 * later operations found in their changes: a short range instead of one row-index look-up per row.
 */
export async function fillAppendedCells(db: Executor, baseId: number, ops: readonly Operation[], rowId?: string): Promise<void> {
  const wanted = ops.flatMap((op) => op.changes.rows.filter((c) => c.f && !c.x && c.a === undefined && (rowId === undefined || c.r === rowId)).map((c) => ({ op, c })));
  if (wanted.length === 0) return;
  const rowIds = wanted.map((w) => w.c.r);
  const stored = await storedCellsOfAppends(db, baseId, appendsOf(wanted));
  const oldest = Math.min(...wanted.map((w) => w.op.id));
  const laterOf = (await laterFromLog(db, baseId, oldest, ops)) ?? (await laterFromRowIndex(db, baseId, rowIds, oldest));
  for (const { op, c } of wanted) c.a = undone(stored.get(c.r), c.r, laterOf(c.r).filter((o) => o.id > op.id));
}

/** The wanted rows' ids by append and table, in logged order (an append's rows have consecutive stored ids: stored-cells.ts). */
function appendsOf(wanted: ReadonlyArray<{ op: Operation; c: LoggedChange }>): string[][] {
  const byAppend = new Map<string, string[]>();
  for (const { op, c } of wanted) {
    const key = `${op.id}\u0000${c.t}`;
    const ids = byAppend.get(key);
    if (ids) ids.push(c.r);
    else byAppend.set(key, [c.r]);
  }
  return [...byAppend.values()];
}

/** At most this many operations after a page's oldest append are read whole (see fillAppendedCells). */
export const LATER_READ_MAX = 1000;

/** A row's operations after `afterId`, oldest first. */
type LaterOf = (rowId: string) => Operation[];

/** From the base's operations after `afterId` (the page's own not read again); undefined when there are more than LATER_READ_MAX. */
async function laterFromLog(db: Executor, baseId: number, afterId: number, page: readonly Operation[]): Promise<LaterOf | undefined> {
  const ids = await operationIdsAfter(db, baseId, afterId, LATER_READ_MAX + 1);
  if (ids.length > LATER_READ_MAX) return undefined;
  const onPage = new Map(page.map((op) => [op.id, op]));
  const read = await operationsByIds(db, baseId, ids.filter((id) => !onPage.has(id)));
  const byRow = new Map<string, Operation[]>();
  for (const id of ids) {
    const op = onPage.get(id) ?? read.get(id);
    if (op === undefined) continue; // (pruned meanwhile)
    for (const rowId of new Set(op.changes.rows.map((c) => c.r))) {
      const list = byRow.get(rowId);
      if (list) list.push(op);
      else byRow.set(rowId, [op]);
    }
  }
  return (rowId) => byRow.get(rowId) ?? [];
}

/** From the row index: one look-up per row (any number of later operations). */
async function laterFromRowIndex(db: Executor, baseId: number, rowIds: readonly string[], afterId: number): Promise<LaterOf> {
  const laterIds = await laterOperationIdsByKey(db, baseId, rowIds.map(rowKey), afterId);
  const later = await operationsByIds(db, baseId, [...laterIds.values()].flat());
  return (rowId) => (laterIds.get(rowKey(rowId)) ?? []).map((id) => later.get(id)).filter((o): o is Operation => o !== undefined);
}

/** The row's cells before `later` (its operations after the append, oldest first), from `now` (undefined: the row is gone). */
function undone(now: Cells | undefined, rowId: string, later: readonly Operation[]): Cells {
  let cells: Cells = { ...now };
  for (let i = later.length - 1; i >= 0; i--) {
    const changes = later[i]!.changes.rows;
    for (let j = changes.length - 1; j >= 0; j--) {
      const c = changes[j]!;
      if (c.r !== rowId) continue;
      // Before a deletion: the cells it kept (none once purged); before a restore put it back: none.
      if (c.o === 'delete_row') cells = { ...c.b };
      else if (c.o === 'insert_row') cells = {};
      else if (c.o === 'modify_row') {
        for (const [key, value] of Object.entries(c.b ?? {})) {
          if (value === null || value === undefined) delete cells[key];
          else cells[key] = value;
        }
      }
    }
  }
  return cells;
}
