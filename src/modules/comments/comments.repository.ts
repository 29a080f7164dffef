import type { Selectable } from 'kysely';
import type { Executor } from '../../db/index.js';
import type { RowCommentsTable } from './comments.table.js';

export type CommentRow = Selectable<RowCommentsTable>;

export async function insertComment(db: Executor, row: Omit<CommentRow, 'id' | 'resolved'>): Promise<number> {
  const inserted = await db.insertInto('row_comments').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(inserted.id);
}

/** A row's comments (or a whole table's when `rowId` is null), newest first; only of `tableIds` when given (a table scope). */
export async function listComments(
  db: Executor,
  baseId: number,
  tableId: string | null,
  rowId: string | null,
  start: number,
  limit: number,
  tableIds?: readonly string[],
): Promise<CommentRow[]> {
  if (tableIds?.length === 0) return [];
  let query = db.selectFrom('row_comments').selectAll().where('base_id', '=', baseId);
  if (tableIds) query = query.where('table_id', 'in', tableIds);
  if (tableId !== null) query = query.where('table_id', '=', tableId);
  if (rowId !== null) query = query.where('row_id', '=', rowId);
  return query.orderBy('id', 'desc').offset(start).limit(limit).execute();
}

/** The row's comments; only those of `tableIds` when given (as `listComments`). */
export async function countRowComments(db: Executor, baseId: number, rowId: string, tableIds?: readonly string[]): Promise<number> {
  if (tableIds?.length === 0) return 0;
  let query = db
    .selectFrom('row_comments')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('base_id', '=', baseId)
    .where('row_id', '=', rowId);
  if (tableIds) query = query.where('table_id', 'in', tableIds);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A base's comments created at or after `since` (ms), newest first, at most `limit`; only of `tableIds` when given. */
export async function commentsSince(db: Executor, baseId: number, since: number, limit: number, tableIds?: readonly string[]): Promise<CommentRow[]> {
  if (tableIds?.length === 0) return [];
  let query = db.selectFrom('row_comments').selectAll().where('base_id', '=', baseId).where('created_at', '>=', since);
  if (tableIds) query = query.where('table_id', 'in', tableIds);
  return query.orderBy('id', 'desc').limit(limit).execute();
}

export function findComment(db: Executor, baseId: number, id: number): Promise<CommentRow | undefined> {
  return db.selectFrom('row_comments').selectAll().where('base_id', '=', baseId).where('id', '=', id).executeTakeFirst();
}

export async function updateComment(db: Executor, id: number, comment: string, now: number): Promise<void> {
  await db.updateTable('row_comments').set({ comment, updated_at: now }).where('id', '=', id).execute();
}

export async function deleteComment(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('row_comments').where('id', '=', id).execute();
}

/** The table a row lives in, or undefined when the base has no such row. */
export async function tableOfRow(db: Executor, baseId: number, rowId: string): Promise<string | undefined> {
  const row = await db.selectFrom('base_rows').select('table_id').where('base_id', '=', baseId).where('row_id', '=', rowId).executeTakeFirst();
  return row?.table_id;
}

/** The active user who created API-Token `tokenId` (its `generated_by`), if any. */
export function apiTokenCreator(db: Executor, tokenId: number): Promise<{ id: number; virtual_id: string } | undefined> {
  return db
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.virtual_id', 'api_tokens.generated_by')
    .select(['users.id', 'users.virtual_id'])
    .where('api_tokens.id', '=', tokenId)
    .where('users.is_active', '=', 1)
    .executeTakeFirst();
}

/** Comments per row of a base (rows without comments are absent); only of `tableIds` when given. */
export async function commentsPerRow(db: Executor, baseId: number, tableIds?: readonly string[]): Promise<Record<string, number>> {
  if (tableIds?.length === 0) return {};
  let query = db
    .selectFrom('row_comments')
    .select(['row_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('base_id', '=', baseId);
  if (tableIds) query = query.where('table_id', 'in', tableIds);
  const rows = await query.groupBy('row_id').execute();
  return Object.fromEntries(rows.map((r) => [r.row_id, Number(r.n)]));
}

/** Deletes up to `batch` comments of a table's rows (a table deleted for good); how many. */
/** Deletes up to `batch` comments of a base (a purge); how many. */
export async function deleteBaseComments(db: Executor, baseId: number, batch: number): Promise<number> {
  const ids = await db.selectFrom('row_comments').select('id').where('base_id', '=', baseId).limit(batch).execute();
  if (ids.length > 0) await db.deleteFrom('row_comments').where('id', 'in', ids.map((r) => Number(r.id))).execute();
  return ids.length;
}

export async function deleteTableComments(db: Executor, baseId: number, tableId: string, batch: number): Promise<number> {
  const ids = await db.selectFrom('row_comments').select('id').where('base_id', '=', baseId).where('table_id', '=', tableId).limit(batch).execute();
  if (ids.length > 0) await db.deleteFrom('row_comments').where('id', 'in', ids.map((r) => Number(r.id))).execute();
  return ids.length;
}
