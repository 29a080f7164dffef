import type { Executor } from '../../db/index.js';
import { deletingOperations, findOperation, latestOperationOfRows, storedRowIds } from './history.repository.js';
import type { LoggedChange, Operation } from './history.types.js';

/** Operations read per step while listing the row trash, and the most one listing reads. */
const SCAN_BATCH = 200;
export const MAX_SCANNED_OPERATIONS = 20_000;

export interface TrashedRow {
  op: Operation;
  change: LoggedChange;
}

/**
 * The row trash is a view over the operation log: a row is in it while the newest operation that
 * touched it deleted it, less than TRASH_RETENTION_DAYS ago, and its table is one of `liveTables` (a row
 * of a trashed table comes back to the row trash with its table). Newest deletions first; at most `want`.
 */
export async function trashedRows(db: Executor, baseId: number, since: number, liveTables: ReadonlySet<string>, tableId: string | undefined, want: number): Promise<TrashedRow[]> {
  const found: TrashedRow[] = [];
  let beforeId: number | undefined;
  for (let scanned = 0; scanned < MAX_SCANNED_OPERATIONS && found.length < want; scanned += SCAN_BATCH) {
    const ops = await deletingOperations(db, baseId, since, beforeId, SCAN_BATCH);
    const candidates = ops.flatMap((op) =>
      op.changes.rows.filter((c) => c.o === 'delete_row' && !c.x && liveTables.has(c.t) && (tableId === undefined || c.t === tableId)).map((change) => ({ op, change })),
    );
    const latest = await latestOperationOfRows(db, baseId, candidates.map((c) => c.change.r));
    const deleted = candidates.filter((c) => latest.get(c.change.r) === c.op.id);
    // A client may append a deleted row's id again (appends have no row index entries: row-operations.ts).
    const stored = await storedRowIds(db, baseId, deleted.map((c) => c.change.r));
    found.push(...deleted.filter((c) => !stored.has(c.change.r)));
    if (ops.length < SCAN_BATCH) break;
    beforeId = ops[ops.length - 1]!.id;
  }
  return found.slice(0, want);
}

/** The deletion that put this row in the trash, or undefined when it is not there. */
export async function trashedRow(db: Executor, baseId: number, rowId: string, since: number): Promise<TrashedRow | undefined> {
  const latest = (await latestOperationOfRows(db, baseId, [rowId])).get(rowId);
  const op = latest === undefined ? undefined : await findOperation(db, baseId, latest);
  if (!op || op.opTime < since) return undefined;
  const change = [...op.changes.rows].reverse().find((c) => c.r === rowId);
  if (change?.o !== 'delete_row' || change.x || (await storedRowIds(db, baseId, [rowId])).has(rowId)) return undefined;
  return { op, change };
}
