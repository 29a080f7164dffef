import type { Insertable, InsertObject, Selectable, Updateable } from 'kysely';
import type { Database, Executor } from '../../db/index.js';
import { LIVE_PRIORITY, type WebhookAlertsTable, type WebhooksTable } from './webhooks.table.js';

export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookAlertRow = Selectable<WebhookAlertsTable>;

export function listForBase(db: Executor, baseId: number): Promise<WebhookRow[]> {
  return db.selectFrom('webhooks').selectAll().where('base_id', '=', baseId).orderBy('id').execute();
}

export async function countForBase(db: Executor, baseId: number): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('base_id', '=', baseId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Queued (pending) deliveries per webhook, for the backlog cap. */
export async function backlogOf(db: Executor, webhookIds: number[]): Promise<Map<number, number>> {
  if (webhookIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['webhook_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('webhook_id', 'in', webhookIds)
    .where('status', '=', 'pending')
    // The replay lane is bounded by its own check (replay.ts): a replay never pauses live deliveries.
    .where('priority', '=', LIVE_PRIORITY)
    .groupBy('webhook_id')
    .execute();
  return new Map(rows.map((r) => [Number(r.webhook_id), Number(r.n)]));
}

export function findOnBase(db: Executor, baseId: number, id: number): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('base_id', '=', baseId).where('id', '=', id).executeTakeFirst();
}

export function findById(db: Executor, id: number): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Throws the driver's unique violation when the base already has this url. */
export async function insertWebhook(db: Executor, values: InsertObject<Database, 'webhooks'>): Promise<number> {
  const { id } = await db.insertInto('webhooks').values(values).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export async function updateWebhook(db: Executor, id: number, changes: Updateable<WebhooksTable>): Promise<void> {
  await db.updateTable('webhooks').set(changes).where('id', '=', id).execute();
}

export async function deleteWebhook(db: Executor, id: number): Promise<void> {
  await db.deleteFrom('webhooks').where('id', '=', id).execute();
}

/** The valid webhooks of these bases: who gets a delivery for their events (after `start_event_id`). */
export async function validForBases(db: Executor, baseIds: number[]): Promise<ValidWebhook[]> {
  if (baseIds.length === 0) return [];
  const rows = await db
    .selectFrom('webhooks')
    .select(['id', 'base_id', 'start_event_id', 'url', 'subscription', 'updated_at', 'max_rate'])
    .where('base_id', 'in', baseIds)
    .where('is_valid', '=', 1)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    base_id: Number(r.base_id),
    start_event_id: Number(r.start_event_id),
    url: r.url,
    subscription: r.subscription,
    updated_at: Number(r.updated_at),
    paced: r.max_rate !== null,
  }));
}

/** A valid webhook as the event consumer sees it (its subscription as stored text). */
export interface ValidWebhook {
  id: number;
  base_id: number;
  start_event_id: number;
  url: string;
  subscription: string | null;
  updated_at: number;
  /** It has a `max_rate`: its deliveries are never handed off (only a claim spends its tokens). */
  paced: boolean;
}

/**
 * A hand-off took deliveries of these webhooks: like a claim, it counts as their turn for a slot
 * (`last_claimed_at`, the round-robin order). Returns what sending needs (the secret is sealed).
 */
export async function markHandedOff(
  db: Executor,
  ids: number[],
  now: number,
): Promise<Map<number, { url: string; secret: string | null; failure_streak: number; previous_secret: string | null; previous_secret_until: number | null }>> {
  if (ids.length === 0) return new Map();
  const rows = await db
    .updateTable('webhooks')
    .set({ last_claimed_at: now })
    .where('id', 'in', ids)
    .returning(['id', 'url', 'secret', 'failure_streak', 'previous_secret', 'previous_secret_until'])
    .execute();
  const until = (v: number | null) => (v === null ? null : Number(v));
  return new Map(
    rows.map((r) => [Number(r.id), { url: r.url, secret: r.secret, failure_streak: Number(r.failure_streak), previous_secret: r.previous_secret, previous_secret_until: until(r.previous_secret_until) }]),
  );
}

/** Which of these bases have a valid webhook (one indexed lookup). */
export async function basesWithWebhooks(db: Executor, baseIds: number[]): Promise<number[]> {
  if (baseIds.length === 0) return [];
  const rows = await db.selectFrom('webhooks').select('base_id').distinct().where('base_id', 'in', baseIds).where('is_valid', '=', 1).execute();
  return rows.map((r) => Number(r.base_id));
}

export async function resetFailureStreak(db: Executor, id: number): Promise<void> {
  await db.updateTable('webhooks').set({ failure_streak: 0 }).where('id', '=', id).where('failure_streak', '<>', 0).execute();
}

/** Adds one failed delivery to the streak and returns the new streak (0 when the webhook is gone). */
export async function bumpFailureStreak(db: Executor, id: number): Promise<number> {
  await db
    .updateTable('webhooks')
    .set((eb) => ({ failure_streak: eb('failure_streak', '+', 1) }))
    .where('id', '=', id)
    .execute();
  const row = await db.selectFrom('webhooks').select('failure_streak').where('id', '=', id).executeTakeFirst();
  return row ? Number(row.failure_streak) : 0;
}

/** Marks a valid webhook invalid; false when it already was (so alerts are written once). */
export async function disableWebhook(db: Executor, id: number, reason: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('webhooks')
    .set({ is_valid: 0, invalid_reason: reason, updated_at: now })
    .where('id', '=', id)
    .where('is_valid', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Who hears about a disabled webhook (the base's owner and the webhook's creator), and its base. */
export async function alertTarget(
  db: Executor,
  webhookId: number,
): Promise<{ userIds: number[]; baseId: number; baseUuid: string } | null> {
  const row = await db
    .selectFrom('webhooks')
    .innerJoin('bases', 'bases.id', 'webhooks.base_id')
    .innerJoin('workspaces', 'workspaces.id', 'bases.workspace_id')
    .select(['workspaces.owner_id', 'webhooks.creator_id', 'bases.id as base_id', 'bases.uuid'])
    .where('webhooks.id', '=', webhookId)
    .executeTakeFirst();
  if (!row) return null;
  const ids = [Number(row.owner_id), Number(row.creator_id)];
  const existing = await db.selectFrom('users').select('id').where('id', 'in', ids).execute();
  return { userIds: [...new Set(existing.map((u) => Number(u.id)))], baseId: Number(row.base_id), baseUuid: row.uuid };
}

export async function insertAlerts(db: Executor, rows: Insertable<WebhookAlertsTable>[]): Promise<void> {
  if (rows.length > 0) await db.insertInto('webhook_alerts').values(rows).execute();
}

export function alertsForUser(db: Executor, userId: number, limit = 100): Promise<WebhookAlertRow[]> {
  return db.selectFrom('webhook_alerts').selectAll().where('user_id', '=', userId).orderBy('id', 'desc').limit(limit).execute();
}
