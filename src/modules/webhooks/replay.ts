import { sql } from 'kysely';
import type { Db, Executor } from '../../db/index.js';
import { instantText, parseInstant } from '../../shared/dates/index.js';
import { AppError, badRequest, conflict } from '../../shared/errors.js';
import { eventIdsBetween, eventsOfBases, type ChangeEvent } from '../events/index.js';
import { compileSubscription, matchChange, readSubscription } from '../subscriptions/index.js';
import * as deliveries from './deliveries.repository.js';
import { changeMessageId, eventBody } from './payload.js';
import { REPLAY_PRIORITY } from './webhooks.table.js';
import type { WebhookRow } from './webhooks.repository.js';

/** Events read per page while collecting a replay's changes. */
const PAGE = 500;

export interface ReplayLimits {
  /** WEBHOOK_REPLAY_MAX: deliveries one call may queue. */
  max: number;
  /** CHANGE_FEED_RETENTION_DAYS: changes older than this are not replayable (410). */
  retentionDays: number;
  /** WEBHOOK_MAX_BACKLOG: the replay lane of a webhook holds at most this many pending deliveries. */
  maxBacklog: number;
}

export interface ReplayContext {
  db: Db;
  now: number;
  timeZone: string;
  limits: ReplayLimits;
}

/**
 * Queue again, in the replay lane, every delivery of `webhook` that failed for good and was created at
 * or after `since`, unless the same message was delivered or is queued since. One new delivery per
 * message (same `webhook-id`, same body). Returns how many were queued.
 */
export async function redeliverFailed(ctx: ReplayContext, webhook: WebhookRow, sinceInput: unknown): Promise<number> {
  const since = instantParam(sinceInput, 'since');
  const failed = await failedSince(ctx.db, Number(webhook.id), since, ctx.limits.max + 1);
  tooMany(failed.length, ctx.limits.max, 'failed deliveries', 'a later since');
  const originals = await deliveries.deliveriesById(ctx.db, failed);
  const rows = originals.map((original) =>
    replayDelivery(
      {
        webhook_id: Number(webhook.id),
        base_id: Number(webhook.base_id),
        event_id: original.event_id,
        dedupe_key: null,
        msg_id: original.msg_id,
        kind: 'redelivery',
        op_type: original.op_type,
        // A shared event body is referenced, not copied.
        body: original.payload_id === null ? original.body : '',
        payload_id: original.payload_id,
        redelivery_of: Number(original.id),
        row_key: original.row_key,
      },
      ctx.now,
    ),
  );
  return queue(ctx, webhook, rows.length, async () => rows);
}

/**
 * Queue, in the replay lane, every change of the webhook's base committed from `from` through `to`
 * that its subscription wants (also changes from before the webhook existed), each with the
 * `webhook-id` its live delivery has or would have. Returns how many were queued.
 */
export async function replayRange(ctx: ReplayContext, webhook: WebhookRow, body: Record<string, unknown>): Promise<number> {
  const from = instantParam(body.from, 'from');
  const to = body.to === undefined || body.to === null || body.to === '' ? ctx.now : instantParam(body.to, 'to');
  if (to < from) throw badRequest('to must not be before from');
  const oldest = ctx.now - ctx.limits.retentionDays * 86_400_000;
  if (from < oldest) {
    throw new AppError(410, {
      error_msg: `Changes are kept for CHANGE_FEED_RETENTION_DAYS=${ctx.limits.retentionDays} days; replay from oldest_from or later.`,
      oldest_from: instantText(oldest, 'UTC'),
    });
  }
  const events = await wantedEvents(ctx, webhook, from, to);
  const webhookId = Number(webhook.id);
  return queue(ctx, webhook, events.length, async (trx) => {
    const payloadIds = await deliveries.insertPayloads(trx, events.map((event) => ({ eventId: event.id, body: eventBody(event) })), ctx.now);
    return events.map((event) =>
      replayDelivery(
        {
          webhook_id: webhookId,
          base_id: event.baseId,
          event_id: event.id,
          // Not the live delivery's dedupe key: a replay of a delivered change is a new attempt, not a duplicate.
          dedupe_key: null,
          msg_id: changeMessageId(webhookId, event.id, event.writeId),
          kind: 'replay',
          op_type: event.opType,
          body: '',
          payload_id: payloadIds.get(event.id)!,
          redelivery_of: null,
          row_key: event.rowId,
        },
        ctx.now,
      ),
    );
  });
}

/** The base's changes in the range that the webhook's subscription wants, at most `max` (400 beyond). */
async function wantedEvents(ctx: ReplayContext, webhook: WebhookRow, from: number, to: number): Promise<ChangeEvent[]> {
  const baseId = Number(webhook.base_id);
  const sub = compileSubscription(readSubscription(webhook.subscription));
  const out: ChangeEvent[] = [];
  let after = 0;
  for (;;) {
    const ids = await eventIdsBetween(ctx.db, baseId, from, to, after, PAGE);
    if (ids.length === 0) return out;
    const wanted = new Set(ids);
    const page = await eventsOfBases(ctx.db, ids[0]! - 1, ids[ids.length - 1]!, [baseId]);
    for (const event of page) if (wanted.has(event.id) && matchChange(sub, event, ctx.timeZone).match) out.push(event);
    tooMany(out.length, ctx.limits.max, 'changes', 'a shorter range');
    if (ids.length < PAGE) return out;
    after = ids[ids.length - 1]!;
  }
}

/** Insert the deliveries (one transaction) unless the webhook's replay lane would pass its bound. */
async function queue(ctx: ReplayContext, webhook: WebhookRow, count: number, build: (trx: Executor) => Promise<deliveries.NewDelivery[]>): Promise<number> {
  if (count === 0) return 0;
  return ctx.db.transaction().execute(async (trx) => {
    const queued = await pendingReplays(trx, Number(webhook.id));
    if (queued + count > ctx.limits.maxBacklog) {
      throw conflict(`This webhook already has ${queued} replayed deliveries queued; at most ${ctx.limits.maxBacklog} may wait (WEBHOOK_MAX_BACKLOG).`);
    }
    const rows = await build(trx);
    await deliveries.insertDeliveries(trx, rows);
    return rows.length;
  });
}

function replayDelivery(fields: deliveries.QueuedDeliveryFields, now: number): deliveries.NewDelivery {
  return { ...deliveries.queuedDelivery(fields, now), priority: REPLAY_PRIORITY };
}

function instantParam(value: unknown, name: string): number {
  const ms = parseInstant(value);
  if (ms === null) throw badRequest(`${name} must be an ISO 8601 date-time with an offset or epoch seconds`);
  return ms;
}

function tooMany(count: number, max: number, what: string, hint: string): void {
  if (count > max) throw badRequest(`More than ${max} ${what} (WEBHOOK_REPLAY_MAX); use ${hint}.`);
}

/**
 * The newest failed delivery of each message of the webhook created since `since`, whose message has
 * no later delivery that succeeded or is queued (pings are tests: not redelivered).
 */
async function failedSince(db: Executor, webhookId: number, since: number, limit: number): Promise<number[]> {
  const result = await sql<{ id: number }>`
    SELECT MAX(d.id) AS id FROM webhook_deliveries AS d
     WHERE d.webhook_id = ${webhookId} AND d.status = 'failed' AND d.kind <> 'ping' AND d.created_at >= ${since}
       AND NOT EXISTS (SELECT 1 FROM webhook_deliveries AS x
                        WHERE x.webhook_id = d.webhook_id AND x.msg_id = d.msg_id AND x.id > d.id AND x.status IN ('pending', 'succeeded'))
     GROUP BY d.msg_id
     ORDER BY MAX(d.id)
     LIMIT ${limit}`.execute(db);
  return result.rows.map((r) => Number(r.id));
}

async function pendingReplays(db: Executor, webhookId: number): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending')
    .where('priority', '=', REPLAY_PRIORITY)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
