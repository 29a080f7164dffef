import type { Executor } from '../../db/index.js';
import { laterOperationsOfRows } from './history.repository.js';
import type { Cells, LoggedChange, Operation } from './history.types.js';

/** Rows read per statement. */
const CHUNK = 500;

/**
 * Fills in the cells of appended rows (`f`: logged without them, operation-log.ts) as they were right
 * after the append: the row's stored cells (or those its deletion kept) with every later logged
 * change to the row undone, newest first (found in the row index, which has every later one; a
 * row's mtime cannot tell, two writes may share a millisecond). Not in the log, so not undone: formula results refreshed since and
 * cells of columns deleted or converted since. A row purged from the trash shows none. `rowId`: only
 * that row's changes are wanted.
 */
export async function fillAppendedCells(db: Executor, baseId: number, ops: readonly Operation[], rowId?: string): Promise<void> {
  const wanted = ops.flatMap((op) => op.changes.rows.filter((c) => c.f && !c.x && c.a === undefined && (rowId === undefined || c.r === rowId)).map((c) => ({ op, c })));
  if (wanted.length === 0) return;
  const stored = await storedRows(db, baseId, [...new Set(wanted.map((w) => w.c.r))]);
  const byOp = new Map<Operation, LoggedChange[]>();
  for (const { op, c } of wanted) {
    const changes = byOp.get(op);
    if (changes) changes.push(c);
    else byOp.set(op, [c]);
  }
  for (const [op, changes] of byOp) {
    const later = await laterOperationsOfRows(db, baseId, changes.map((c) => c.r), op.id);
    for (const c of changes) c.a = undone(stored.get(c.r)?.data, c.r, later);
  }
}

async function storedRows(db: Executor, baseId: number, rowIds: string[]): Promise<Map<string, { data: Cells }>> {
  const rows = new Map<string, { data: Cells }>();
  for (let i = 0; i < rowIds.length; i += CHUNK) {
    const found = await db
      .selectFrom('base_rows')
      .select(['row_id', 'data'])
      .where('base_id', '=', baseId)
      .where('row_id', 'in', rowIds.slice(i, i + CHUNK))
      .execute();
    for (const r of found) rows.set(r.row_id, { data: (typeof r.data === 'string' ? JSON.parse(r.data) : (r.data ?? {})) as Cells });
  }
  return rows;
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
