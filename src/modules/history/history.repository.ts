import { sql, type Selectable } from 'kysely';
import type { Executor } from '../../db/index.js';
import type { OperationLogTable } from './history.table.js';
import type { Cells, LoggedChanges, Operation, OperationFilter } from './history.types.js';
import { packChanges, parseChanges } from './changes-codec.js';
import { rowKey } from '../../shared/row-key.js';
import { indexPendingRows, onPostgres } from './row-index.js';
import { forgetFiles } from './file-refs.js';

export function toOperation(r: Selectable<OperationLogTable>): Operation {
  return {
    id: Number(r.id),
    baseId: Number(r.base_id),
    writeId: r.write_id,
    opType: r.op_type,
    tableId: r.table_id,
    opUser: r.op_user,
    opApp: r.op_app,
    opTime: Number(r.op_time),
    rowCount: Number(r.row_count),
    changes: parseChanges(r.changes),
    reverts: r.reverts === null ? null : Number(r.reverts),
  };
}

/** A base's operations matching `filter` (a row's: joined to its row index entries). */
function operationsQuery(db: Executor, baseId: number, filter: OperationFilter) {
  let query = db.selectFrom('operation_log').where('operation_log.base_id', '=', baseId);
  if (filter.rowId !== undefined) {
    query = query
      .innerJoin('operation_log_rows', 'operation_log_rows.op_id', 'operation_log.id')
      .where('operation_log_rows.base_id', '=', baseId)
      .where('operation_log_rows.row_key', '=', rowKey(filter.rowId));
  }
  if (filter.tableId !== undefined) query = query.where('operation_log.table_id', '=', filter.tableId);
  // ('' is no table's id: an empty scope finds nothing.)
  if (filter.tableIds !== undefined) query = query.where('operation_log.table_id', 'in', filter.tableIds.length > 0 ? [...filter.tableIds] : ['']);
  if (filter.author !== undefined) query = query.where('operation_log.op_user', '=', filter.author);
  if (filter.from !== undefined) query = query.where('operation_log.op_time', '>=', filter.from);
  if (filter.to !== undefined) query = query.where('operation_log.op_time', '<=', filter.to);
  if (filter.beforeId !== undefined) query = query.where('operation_log.id', '<', filter.beforeId);
  if (filter.afterId !== undefined) query = query.where('operation_log.id', '>', filter.afterId);
  return query;
}

/**
 * A base's operations, newest first: one index range whatever the log's size ((base, id), or
 * (base, table, id), (base, author, id), (base, row, op) when filtered). `offset` pages; `beforeId` is the keyset.
 * With `rowId`: the operations in the row index only (a row's append is not: row-operations.ts).
 */
export async function listIndexedOperations(db: Executor, baseId: number, filter: OperationFilter, limit: number, offset = 0): Promise<Operation[]> {
  if (filter.rowId !== undefined) await indexPendingRows(db);
  // A row's operations are walked down its own index range (base, row, op), never the base's.
  const order = sql.ref(filter.rowId !== undefined ? 'operation_log_rows.op_id' : 'operation_log.id');
  const rows = await operationsQuery(db, baseId, filter).selectAll('operation_log').orderBy(order, 'desc').limit(limit).offset(offset).execute();
  const ops = rows.map(toOperation);
  // A row is found by its key; another row with the same key (shared/row-key.ts) is not this one.
  return filter.rowId === undefined ? ops : ops.filter((op) => op.changes.rows.some((c) => c.r === filter.rowId));
}

/** How many operations `operationsQuery` finds (a row's: its index entries, including any of another row sharing its key). */
export async function countIndexedOperations(db: Executor, baseId: number, filter: OperationFilter): Promise<number> {
  if (filter.rowId !== undefined) await indexPendingRows(db);
  const row = await operationsQuery(db, baseId, filter)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countRowOperations(db: Executor, baseId: number, rowId: string): Promise<number> {
  await indexPendingRows(db);
  const row = await db
    .selectFrom('operation_log_rows')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('base_id', '=', baseId)
    .where('row_key', '=', rowKey(rowId))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findOperation(db: Executor, baseId: number, id: number): Promise<Operation | undefined> {
  const row = await db.selectFrom('operation_log').selectAll().where('base_id', '=', baseId).where('id', '=', id).executeTakeFirst();
  return row ? toOperation(row) : undefined;
}

/** Operations after `afterId` that touched any of these rows, oldest first (a restore's conflicts). */
export async function laterOperationsOfRows(db: Executor, baseId: number, rowIds: string[], afterId: number): Promise<Operation[]> {
  const ids = await laterOperationIdsByKey(db, baseId, rowIds.map(rowKey), afterId);
  const ops = await operationsByIds(db, baseId, [...ids.values()].flat());
  return [...ops.values()].sort((a, b) => a.id - b.id);
}

/**
 * The stored cells of these rows, by id, in one statement (a page's appends may name 50,000 rows).
 * Each id is one look-up of the (base, row id) key: joined from a list rather than `row_id IN (…)`,
 * which PostgreSQL planned as a scan of the whole base's rows while the table had no statistics yet
 * (freshly appended rows), comparing each with every id of the list.
 */
export async function storedCellsOfRows(db: Executor, baseId: number, rowIds: readonly string[]): Promise<Map<string, Cells>> {
  const cells = new Map<string, Cells>();
  if (rowIds.length === 0) return cells;
  const ids = JSON.stringify([...new Set(rowIds)]);
  const query = !onPostgres(db)
    ? sql<{ row_id: string; data: unknown }>`SELECT r.row_id, r.data FROM json_each(${ids}) AS i CROSS JOIN base_rows AS r WHERE r.base_id = ${baseId} AND r.row_id = i.value`
    : sql<{ row_id: string; data: unknown }>`SELECT r.row_id, r.data FROM json_array_elements_text(${ids}::json) AS i(id)
        CROSS JOIN LATERAL (SELECT row_id, data FROM base_rows WHERE base_id = ${baseId} AND row_id = i.id) AS r`;
  for (const r of (await query.execute(db)).rows) cells.set(r.row_id, (typeof r.data === 'string' ? JSON.parse(r.data) : (r.data ?? {})) as Cells);
  return cells;
}

/**
 * The operations after `afterId` of each of these row keys, in one statement: row key → operation ids,
 * ascending. One look-up of the row index per key (as `storedCellsOfRows`, not a key list PostgreSQL
 * may plan as a scan of the base's whole index range).
 */
export async function laterOperationIdsByKey(db: Executor, baseId: number, keys: readonly number[], afterId: number): Promise<Map<number, number[]>> {
  const byKey = new Map<number, number[]>();
  if (keys.length === 0) return byKey;
  await indexPendingRows(db);
  const list = JSON.stringify([...new Set(keys)]);
  const query = !onPostgres(db)
    ? sql<{ row_key: number; op_id: number }>`SELECT e.row_key, e.op_id FROM json_each(${list}) AS k CROSS JOIN operation_log_rows AS e
        WHERE e.base_id = ${baseId} AND e.row_key = k.value AND e.op_id > ${afterId} ORDER BY e.op_id`
    : sql<{ row_key: string; op_id: string }>`SELECT e.row_key, e.op_id FROM json_array_elements_text(${list}::json) AS k(key)
        CROSS JOIN LATERAL (SELECT row_key, op_id FROM operation_log_rows WHERE base_id = ${baseId} AND row_key = CAST(k.key AS bigint) AND op_id > ${afterId}) AS e ORDER BY e.op_id`;
  for (const r of (await query.execute(db)).rows) {
    const key = Number(r.row_key);
    const ids = byKey.get(key);
    if (ids) ids.push(Number(r.op_id));
    else byKey.set(key, [Number(r.op_id)]);
  }
  return byKey;
}

/** The ids of the base's operations after `afterId`, ascending, at most `limit` (a range of its (base, id) index). */
export async function operationIdsAfter(db: Executor, baseId: number, afterId: number, limit: number): Promise<number[]> {
  const rows = await db.selectFrom('operation_log').select('id').where('base_id', '=', baseId).where('id', '>', afterId).orderBy('id').limit(limit).execute();
  return rows.map((r) => Number(r.id));
}

/** These operations of the base, by id. */
export async function operationsByIds(db: Executor, baseId: number, ids: readonly number[]): Promise<Map<number, Operation>> {
  const ops = new Map<number, Operation>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const rows = await db.selectFrom('operation_log').selectAll().where('base_id', '=', baseId).where('id', 'in', unique.slice(i, i + 500)).execute();
    for (const r of rows) ops.set(Number(r.id), toOperation(r));
  }
  return ops;
}

/**
 * Deletes operations older than `cutoff` (ms), at most `batch` per call (short transactions, no long
 * lock); returns how many were deleted. Call again while it returns `batch`.
 */
export async function pruneOperations(db: Executor, cutoff: number, batch: number): Promise<number> {
  // Ids grow with time: the oldest operations are the first ids (the primary key; no time index to
  // keep up on every write). The run stops at the first one inside the retention.
  // (Their entries are deleted below by key: any not yet written are written first.)
  await indexPendingRows(db);
  const first = await db.selectFrom('operation_log').select(['id', 'op_time']).orderBy('id').limit(batch).execute();
  const end = first.findIndex((r) => Number(r.op_time) >= cutoff);
  const ids = (end === -1 ? first : first.slice(0, end)).map((r) => Number(r.id));
  if (ids.length === 0) return 0;
  const old = await db.selectFrom('operation_log').select(['id', 'base_id', 'changes']).where('id', 'in', ids).execute();
  // Each operation's rows are named in its changes: deleted by primary key (no index on op_id to keep up on every write).
  await db.transaction().execute(async (trx) => {
    for (const op of old) {
      // (A new row's append has no entry: row-operations.ts.)
      const keys = [...new Set(parseChanges(op.changes).rows.filter((c) => !c.f).map((c) => rowKey(c.r)))];
      for (let i = 0; i < keys.length; i += 500) {
        await trx
          .deleteFrom('operation_log_rows')
          .where('base_id', '=', Number(op.base_id))
          .where('row_key', 'in', keys.slice(i, i + 500))
          .where('op_id', '=', Number(op.id))
          .execute();
      }
    }
    // Their file entries (file-refs.ts), by key: the paths are in their changes.
    await forgetFiles(trx, old.map((op) => ({ id: Number(op.id), base_id: Number(op.base_id), changes: op.changes })));
    await trx.deleteFrom('operation_log').where('id', 'in', ids).execute();
  });
  return ids.length;
}

/** The newest operation of each of these rows (a row is in the trash while its newest operation deleted it). */
export async function latestOperationOfRows(db: Executor, baseId: number, rowIds: string[]): Promise<Map<string, number>> {
  await indexPendingRows(db);
  const latest = new Map<string, number>();
  const byKey = new Map<number, string[]>();
  for (const id of new Set(rowIds)) {
    const key = rowKey(id);
    byKey.set(key, [...(byKey.get(key) ?? []), id]);
  }
  const keys = [...byKey.keys()];
  for (let i = 0; i < keys.length; i += 500) {
    const found = await db
      .selectFrom('operation_log_rows')
      .select(['row_key', (eb) => eb.fn.max('op_id').as('op_id')])
      .where('base_id', '=', baseId)
      .where('row_key', 'in', keys.slice(i, i + 500))
      .groupBy('row_key')
      .execute();
    // (Rows sharing a key get the newest operation of either; callers check that it names their row.)
    for (const f of found) for (const id of byKey.get(Number(f.row_key)) ?? []) latest.set(id, Number(f.op_id));
  }
  return latest;
}

/** Up to `limit` operations that may have deleted rows, newer than `since`, below `beforeId`, newest first. */
export async function deletingOperations(db: Executor, baseId: number, since: number, beforeId: number | undefined, limit: number): Promise<Operation[]> {
  let query = db
    .selectFrom('operation_log')
    .selectAll()
    .where('base_id', '=', baseId)
    .where('op_time', '>=', since)
    .where('op_type', 'in', ['delete_row', 'delete_rows', 'batch']);
  if (beforeId !== undefined) query = query.where('id', '<', beforeId);
  return (await query.orderBy('id', 'desc').limit(limit).execute()).map(toOperation);
}

/** Replaces an operation's logged changes (a row purged from the trash loses its cells). */
export async function replaceChanges(db: Executor, opId: number, changes: LoggedChanges): Promise<void> {
  await db.updateTable('operation_log').set({ changes: packChanges(changes) }).where('id', '=', opId).execute();
}

/** Which of these rows are stored (a row in the trash is not; nor is one a client appended again under its id). */
export async function storedRowIds(db: Executor, baseId: number, rowIds: string[]): Promise<Set<string>> {
  const stored = new Set<string>();
  const ids = [...new Set(rowIds)];
  for (let i = 0; i < ids.length; i += 500) {
    const found = await db.selectFrom('base_rows').select('row_id').where('base_id', '=', baseId).where('row_id', 'in', ids.slice(i, i + 500)).execute();
    for (const r of found) stored.add(r.row_id);
  }
  return stored;
}
