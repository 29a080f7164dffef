import { sql } from 'kysely';
import type { Executor } from '../../db/index.js';
import { countIndexedOperations, countRowOperations, findOperation, listIndexedOperations, toOperation } from './history.repository.js';
import type { Operation, OperationFilter } from './history.types.js';
import { rowKey } from '../../shared/row-key.js';

/*
 * An append of new rows is logged without a row-index entry per row (operation-log.ts): it is found
 * by the row's creation time
 * (`base_rows.ctime`, or the creation time its deletion kept) through the partial index of insert
 * operations (migration 0041). Every later operation of the row is in the row index as before.
 */

/** When the row was created: as stored, or as its deletion kept it; undefined when neither tells. */
async function createdAt(db: Executor, baseId: number, rowId: string): Promise<number | undefined> {
  const row = await db.selectFrom('base_rows').select('ctime').where('base_id', '=', baseId).where('row_id', '=', rowId).executeTakeFirst();
  if (row) return Number(row.ctime);
  // A deleted row: its newest operation is the deletion, which kept [creator, ctime] (one step down
  // the row's index range from its end, however many operations the row has).
  const latest = await db
    .selectFrom('operation_log_rows')
    .select('op_id')
    .where('base_id', '=', baseId)
    .where('row_key', '=', rowKey(rowId))
    .orderBy('op_id', 'desc')
    .limit(1)
    .executeTakeFirst();
  const op = latest === undefined ? undefined : await findOperation(db, baseId, Number(latest.op_id));
  return [...(op?.changes.rows ?? [])].reverse().find((c) => c.r === rowId && c.o === 'delete_row')?.c?.[1];
}

/**
 * The appends that created the row and were logged without index entries (one; more only when a
 * client appended a deleted row's id again, or a test clock stood still), newest first.
 */
export async function appendsOfRow(db: Executor, baseId: number, rowId: string): Promise<Operation[]> {
  const ctime = await createdAt(db, baseId, rowId);
  if (ctime === undefined) return [];
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

function passes(op: Operation, filter: OperationFilter): boolean {
  return (
    (filter.tableId === undefined || op.tableId === filter.tableId) &&
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
