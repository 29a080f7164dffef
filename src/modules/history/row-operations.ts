import { sql } from 'kysely';
import type { Executor } from '../../db/index.js';
import { countIndexedOperations, countRowOperations, findOperation, listIndexedOperations, toOperation } from './history.repository.js';
import type { Operation, OperationFilter } from './history.types.js';
import { rowKey } from '../../shared/row-key.js';
import { indexPendingRows } from './row-index.js';

/*
 * An append of new rows is logged without a row-index entry per row (operation-log.ts): it is found
 * by the row's creation time
 * (`base_rows.ctime`, or the creation time its deletion kept) through the partial index of insert
 * operations (migration 0041). Every later operation of the row is in the row index as before.
 */

/** At most this many lives of one row id are followed back (a deleted row appended again under its id). */
const MAX_LIVES = 100;

/** The newest indexed operation of the row, below `beforeId` when given (one step down the row's index range). */
async function newestIndexed(db: Executor, baseId: number, rowId: string, beforeId?: number): Promise<Operation | undefined> {
  await indexPendingRows(db);
  let query = db.selectFrom('operation_log_rows').select('op_id').where('base_id', '=', baseId).where('row_key', '=', rowKey(rowId));
  if (beforeId !== undefined) query = query.where('op_id', '<', beforeId);
  const latest = await query.orderBy('op_id', 'desc').limit(1).executeTakeFirst();
  return latest === undefined ? undefined : findOperation(db, baseId, Number(latest.op_id));
}

/** The creation time a deletion of the row kept ([creator, ctime]), if `op` is one. */
function keptCreation(op: Operation | undefined, rowId: string): number | undefined {
  return [...(op?.changes.rows ?? [])].reverse().find((c) => c.r === rowId && c.o === 'delete_row')?.c?.[1];
}

/** The logged appends at `ctime` that created the row (other rows' appends of that millisecond dropped), newest first. */
async function appendsAt(db: Executor, baseId: number, rowId: string, ctime: number): Promise<Operation[]> {
  // The predicate as written in the index (literals: SQLite uses a partial index only for the same terms).
  const rows = await db
    .selectFrom('operation_log')
    .selectAll()
    .where('base_id', '=', baseId)
    .where('op_time', '=', ctime)
    .where(sql<boolean>`op_type IN ('insert_row', 'insert_rows')`)
    .orderBy('id', 'desc')
    .execute();
  return rows.map(toOperation).filter((op) => op.changes.rows.some((c) => c.f && c.r === rowId));
}

/**
 * The appends that created the row and were logged without index entries, newest first: found by
 * the row's creation time (as stored, or as its deletion kept it). A row id can have several lives: a
 * client may append a deleted row's id again (the live channel's `insert_row` with its `_id`). Each
 * earlier life ended in a deletion, which is the newest indexed operation of the row before the next
 * life's append and kept that life's creation time: so each life costs one step down the row's index
 * range and one look-up of the appends at that time.
 */
export async function appendsOfRow(db: Executor, baseId: number, rowId: string): Promise<Operation[]> {
  const stored = await db.selectFrom('base_rows').select('ctime').where('base_id', '=', baseId).where('row_id', '=', rowId).executeTakeFirst();
  let ctime = stored ? Number(stored.ctime) : keptCreation(await newestIndexed(db, baseId, rowId), rowId);
  const found: Operation[] = [];
  for (let life = 0; life < MAX_LIVES && ctime !== undefined; life++) {
    const appends = await appendsAt(db, baseId, rowId, ctime);
    found.push(...appends.filter((op) => !found.some((f) => f.id === op.id)));
    const oldest = appends.at(-1);
    // No logged append in this life (e.g. the row was put back by a restore, or pruned): nothing older to follow.
    if (oldest === undefined) break;
    const before = keptCreation(await newestIndexed(db, baseId, rowId, oldest.id), rowId);
    ctime = before !== undefined && before < ctime ? before : undefined;
  }
  return found.sort((a, b) => b.id - a.id);
}

function passes(op: Operation, filter: OperationFilter): boolean {
  return (
    (filter.tableId === undefined || op.tableId === filter.tableId) &&
    (filter.tableIds === undefined || (op.tableId !== null && filter.tableIds.includes(op.tableId))) &&
    (filter.author === undefined || op.opUser === filter.author) &&
    (filter.from === undefined || op.opTime >= filter.from) &&
    (filter.to === undefined || op.opTime <= filter.to) &&
    (filter.beforeId === undefined || op.id < filter.beforeId) &&
    (filter.afterId === undefined || op.id > filter.afterId)
  );
}

/**
 * A row's operations, newest first, `limit` from `offset`: those of the row index with its appends
 * merged in by id (an append's place: how many indexed operations are newer).
 */
export async function listRowOperations(db: Executor, baseId: number, rowId: string, filter: OperationFilter, limit: number, offset = 0): Promise<Operation[]> {
  const withRow = { ...filter, rowId };
  const appends = (await appendsOfRow(db, baseId, rowId)).filter((op) => passes(op, filter));
  if (appends.length === 0) return listIndexedOperations(db, baseId, withRow, limit, offset);
  const placed: Array<{ op: Operation; at: number }> = [];
  for (const [i, op] of appends.entries()) placed.push({ op, at: i + (await countIndexedOperations(db, baseId, { ...withRow, afterId: op.id })) });
  const before = placed.filter((p) => p.at < offset).length;
  const inside = placed.filter((p) => p.at >= offset && p.at < offset + limit).map((p) => p.op);
  const indexed = limit > inside.length ? await listIndexedOperations(db, baseId, withRow, limit - inside.length, offset - before) : [];
  return [...indexed, ...inside].sort((a, b) => b.id - a.id);
}

/** How many operations touched the row, its appends included. */
export async function countAllRowOperations(db: Executor, baseId: number, rowId: string): Promise<number> {
  return (await countRowOperations(db, baseId, rowId)) + (await appendsOfRow(db, baseId, rowId)).length;
}

/** A base's operations, newest first (`rowId`: that row's, its append included). */
export async function listOperations(db: Executor, baseId: number, filter: OperationFilter, limit: number, offset = 0): Promise<Operation[]> {
  if (filter.rowId !== undefined) return listRowOperations(db, baseId, filter.rowId, filter, limit, offset);
  return listIndexedOperations(db, baseId, filter, limit, offset);
}
