import type { Executor } from '../../db/index.js';
import { insertNotifications, type NewNotification } from './inbox.repository.js';
import { userByVirtualId } from './base-context.repository.js';

/** The original's default: unread notifications are e-mailed after two hours. */
export const DEFAULT_EMAIL_DELAY_MS = 120 * 60_000;

export interface Notice {
  userId: number;
  msgType: string;
  /** Serialized as JSON. */
  detail: object;
  baseId?: number | null;
  dtableUuid?: string | null;
}

/** Writes in-app notifications in the caller's transaction, each with its e-mail fallback armed. */
export async function writeNotices(trx: Executor, notices: Notice[], now: number, emailDelayMs: number): Promise<void> {
  const rows: NewNotification[] = notices.map((n) => ({
    user_id: n.userId,
    base_id: n.baseId ?? null,
    dtable_uuid: n.dtableUuid ?? null,
    msg_type: n.msgType,
    detail: JSON.stringify(n.detail),
    created_at: now,
    email_due_at: now + emailDelayMs,
  }));
  await insertNotifications(trx, rows);
}

export interface NotifyUserInput {
  /** The recipient by user id or by virtual id (`…@auth.local`). */
  userId?: number;
  virtualId?: string;
  msgType: string;
  detail: Record<string, unknown>;
  baseId?: number | null;
  dtableUuid?: string | null;
  /** ms; default Date.now(). Pass the container clock's time where one exists. */
  now?: number;
  /** Default two hours; the container-bound `notifications.notifyUser` uses NOTIFICATION_EMAIL_DELAY_MINUTES. */
  emailDelayMs?: number;
}

/**
 * Put one notification into a user's inbox (and so into the e-mail fallback), inside the caller's
 * transaction. For other modules, e.g. webhooks telling an owner their webhook was disabled.
 * Returns false when no such user exists.
 */
export async function notifyUser(trx: Executor, input: NotifyUserInput): Promise<boolean> {
  let userId = input.userId;
  if (userId === undefined && input.virtualId !== undefined) userId = (await userByVirtualId(trx, input.virtualId))?.id;
  if (userId === undefined) return false;
  const exists = await trx.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
  if (!exists) return false;
  await writeNotices(
    trx,
    [{ userId, msgType: input.msgType, detail: input.detail, baseId: input.baseId ?? null, dtableUuid: input.dtableUuid ?? null }],
    input.now ?? Date.now(),
    input.emailDelayMs ?? DEFAULT_EMAIL_DELAY_MS,
  );
  return true;
}
