import type { Selectable } from 'kysely';
import type { Executor } from '../../db/index.js';
import type { TrashedTablesTable } from './history.table.js';

export type TrashedTableRow = Selectable<TrashedTablesTable>;

export async function insertTrashedTable(db: Executor, values: Omit<TrashedTableRow, 'id'>): Promise<number> {
  const row = await db.insertInto('trashed_tables').values(values).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function insertTrashedRows(db: Executor, trashId: number, rows: Array<{ row_id: string; data: string }>): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) {
    const part = rows.slice(i, i + 200).map((r) => ({ trash_id: trashId, row_id: r.row_id, data: r.data }));
    if (part.length > 0) await db.insertInto('trashed_table_rows').values(part).execute();
  }
}

/** A base's trashed tables newer than `since`, most recently deleted first. */
export async function listTrashedTables(db: Executor, baseId: number, since: number, limit: number, offset: number): Promise<TrashedTableRow[]> {
  return db
    .selectFrom('trashed_tables')
    .selectAll()
    .where('base_id', '=', baseId)
    .where('deleted_at', '>=', since)
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countTrashedTables(db: Executor, baseId: number, since: number): Promise<number> {
  const row = await db
    .selectFrom('trashed_tables')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('base_id', '=', baseId)
    .where('deleted_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findTrashedTable(db: Executor, baseId: number, id: number, since: number): Promise<TrashedTableRow | undefined> {
  return db.selectFrom('trashed_tables').selectAll().where('base_id', '=', baseId).where('id', '=', id).where('deleted_at', '>=', since).executeTakeFirst();
}

/** The trash entry a logged table delete made (same base, table and time). */
export async function trashOfDelete(db: Executor, baseId: number, tableId: string, deletedAt: number): Promise<TrashedTableRow | undefined> {
  return db
    .selectFrom('trashed_tables')
    .selectAll()
    .where('base_id', '=', baseId)
    .where('table_id', '=', tableId)
    .where('deleted_at', '=', deletedAt)
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

/** One page of a trashed table's rows after row `after` (keyset), in their order. */
export async function trashedRowsPage(db: Executor, trashId: number, after: number, limit: number): Promise<Array<{ id: number; data: string }>> {
  const rows = await db
    .selectFrom('trashed_table_rows')
    .select(['id', 'data'])
    .where('trash_id', '=', trashId)
    .where('id', '>', after)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: Number(r.id), data: r.data }));
}

/**
 * Deletes a trashed table with its rows, the rows `batch` at a time (short statements, no long lock).
 * Returns when all are gone.
 */
export async function deleteTrashedTable(db: Executor, trashId: number, batch = 1000): Promise<void> {
  for (;;) {
    const ids = await db.selectFrom('trashed_table_rows').select('id').where('trash_id', '=', trashId).limit(batch).execute();
    if (ids.length === 0) break;
    await db.deleteFrom('trashed_table_rows').where('id', 'in', ids.map((r) => Number(r.id))).execute();
    if (ids.length < batch) break;
  }
  await db.deleteFrom('trashed_tables').where('id', '=', trashId).execute();
}

/** A purge claims an entry: `deleted_at` 0 hides it from the listing and from restores. */
export async function claimTrashedTable(db: Executor, trashId: number): Promise<TrashedTableRow | undefined> {
  const result = await db.updateTable('trashed_tables').set({ deleted_at: 0 }).where('id', '=', trashId).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return undefined;
  return db.selectFrom('trashed_tables').selectAll().where('id', '=', trashId).executeTakeFirst();
}

/**
 * A restore takes an entry (first, in its write): deletes it unless a purge claimed it. Deleting it
 * first makes a concurrent purge's claim wait for the restore and then find nothing.
 */
export async function takeTrashedTable(db: Executor, trashId: number): Promise<boolean> {
  const result = await db.deleteFrom('trashed_tables').where('id', '=', trashId).where('deleted_at', '>', 0).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Up to `limit` trashed tables deleted before `cutoff`, oldest first. */
export async function expiredTrashedTables(db: Executor, cutoff: number, limit: number): Promise<number[]> {
  const rows = await db.selectFrom('trashed_tables').select('id').where('deleted_at', '<', cutoff).orderBy('deleted_at').limit(limit).execute();
  return rows.map((r) => Number(r.id));
}

/** Rewrites an entry's `meta` (a purge notes the files of the rows it is about to delete). */
export async function updateTrashedMeta(db: Executor, trashId: number, meta: string): Promise<void> {
  await db.updateTable('trashed_tables').set({ meta }).where('id', '=', trashId).execute();
}

/**
 * Calls `visit` with the stored text of each row of the base's trash entries of the older layout
 * (`trashed_table_rows`, rows copied at the delete) but `exceptTrashId`, only rows whose text may name
 * a file, `batch` per statement (keyset on each entry's (trash_id, id) index).
 */
export async function visitOldTrashRows(db: Executor, baseId: number, exceptTrashId: number, visit: (data: string) => void, batch = 1000): Promise<void> {
  const entries = await db.selectFrom('trashed_tables').select('id').where('base_id', '=', baseId).where('id', '<>', exceptTrashId).execute();
  for (const entry of entries) {
    for (let after = 0; ; ) {
      const rows = await db
        .selectFrom('trashed_table_rows')
        .select(['id', 'data'])
        .where('trash_id', '=', Number(entry.id))
        .where('id', '>', after)
        .where('data', 'like', '%/asset/%')
        .orderBy('id')
        .limit(batch)
        .execute();
      for (const r of rows) visit(r.data);
      if (rows.length < batch) break;
      after = Number(rows[rows.length - 1]!.id);
    }
  }
}
