import type { Selectable } from 'kysely';
import type { Executor } from '../../db/index.js';
import type { NotificationsTable } from './notifications.table.js';

export type NotificationRow = Selectable<NotificationsTable>;
export type NewNotification = Omit<NotificationRow, 'id' | 'seen' | 'emailed_at'>;

const CHUNK = 500;

export async function insertNotifications(db: Executor, rows: NewNotification[]): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    await db.insertInto('notifications').values(rows.slice(i, i + CHUNK)).execute();
  }
}

/** A user's notifications, newest first; `baseId` narrows to one base. */
export function listNotifications(db: Executor, userId: number, baseId: number | null, offset: number, limit: number): Promise<NotificationRow[]> {
  let query = db.selectFrom('notifications').selectAll().where('user_id', '=', userId);
  if (baseId !== null) query = query.where('base_id', '=', baseId);
  return query.orderBy('id', 'desc').offset(offset).limit(limit).execute();
}

export async function countNotifications(db: Executor, userId: number, onlyUnseen: boolean): Promise<number> {
  let query = db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', userId);
  if (onlyUnseen) query = query.where('seen', '=', 0);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

export function findNotification(db: Executor, id: number): Promise<NotificationRow | undefined> {
  return db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Sets `seen` on the user's notifications (one by id, one base, or all). Reading a notification also
 * cancels its pending e-mail; marking it unread again does not re-arm the e-mail.
 */
export async function setSeen(
  db: Executor,
  userId: number,
  scope: { id?: number; baseId?: number },
  seen: boolean,
): Promise<number> {
  let query = db
    .updateTable('notifications')
    .set(seen ? { seen: 1, email_due_at: null } : { seen: 0 })
    .where('user_id', '=', userId);
  if (scope.id !== undefined) query = query.where('id', '=', scope.id);
  if (scope.baseId !== undefined) query = query.where('base_id', '=', scope.baseId);
  if (seen && scope.id === undefined) query = query.where('seen', '=', 0);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function deleteNotifications(db: Executor, userId: number, baseId: number | null): Promise<number> {
  let query = db.deleteFrom('notifications').where('user_id', '=', userId);
  if (baseId !== null) query = query.where('base_id', '=', baseId);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Users with at least one notification whose e-mail is due. */
export async function usersWithDueEmail(db: Executor, now: number, limit: number): Promise<number[]> {
  const rows = await db
    .selectFrom('notifications')
    .select('user_id')
    .distinct()
    .where('email_due_at', '<=', now)
    .orderBy('user_id')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.user_id));
}

export interface DueEmail {
  id: number;
  msg_type: string;
  detail: string;
  created_at: number;
  email_due_at: number;
  base_name: string | null;
  workspace_id: number | null;
}

export async function dueEmailsOf(db: Executor, userId: number, now: number): Promise<DueEmail[]> {
  const rows = await db
    .selectFrom('notifications')
    .leftJoin('bases', 'bases.id', 'notifications.base_id')
    .select([
      'notifications.id',
      'notifications.msg_type',
      'notifications.detail',
      'notifications.created_at',
      'notifications.email_due_at',
      'bases.name as base_name',
      'bases.workspace_id',
    ])
    .where('notifications.user_id', '=', userId)
    .where('notifications.email_due_at', '<=', now)
    .orderBy('notifications.id')
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    msg_type: r.msg_type,
    detail: r.detail,
    created_at: Number(r.created_at),
    email_due_at: Number(r.email_due_at),
    base_name: r.base_name,
    workspace_id: r.workspace_id === null ? null : Number(r.workspace_id),
  }));
}

/**
 * Takes the e-mail duty of these notifications (`emailedAt` null: skipped, the user does not want
 * e-mail). Only rows still due are taken, so a notice read meanwhile is not mailed; returns their ids.
 */
export async function takeDueEmails(db: Executor, ids: number[], emailedAt: number | null): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('notifications')
    .set({ email_due_at: null, emailed_at: emailedAt })
    .where('id', 'in', ids)
    .where('email_due_at', 'is not', null)
    .returning('id')
    .execute();
  return rows.map((r) => Number(r.id));
}

/** Gives the e-mail duty back after a failed send, so the next run retries. */
export async function restoreDueEmails(db: Executor, ids: number[], dueAt: number): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('notifications')
    .set({ email_due_at: dueAt, emailed_at: null })
    .where('id', 'in', ids)
    .where('seen', '=', 0)
    .execute();
}
