import { isUniqueViolation, type Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { sha256Hex } from '../../shared/crypto.js';
import { badRequest, conflict, notFound } from '../../shared/errors.js';
import type { Page } from '../../shared/pagination.js';
import type { AccountUser } from '../accounts/index.js';
import { REQUIRED, type BaseAccess, type BaseListing } from '../access/index.js';
import { outboxPosition } from '../events/index.js';
import * as deliveries from './deliveries.repository.js';
import { attemptRow, type WebhookDeliveryService } from './delivery.service.js';
import { newMessageId, pingBody } from './payload.js';
import { parseMaxRate } from './pacing.js';
import { redeliverFailed, replayRange, type ReplayContext, type ReplayLimits } from './replay.js';
import { SECRET_MASK, type SecretBox } from './secret-box.js';
import { checkSecret, checkWebhookUrl } from './webhook-url.js';
import * as repo from './webhooks.repository.js';
import type { WebhookAlertRow, WebhookRow } from './webhooks.repository.js';
import { deliveryRecord, isoMillis, webhookRecord } from './webhooks.present.js';
import { deliveryStats, percentile } from './stats.repository.js';
import { parsePositiveId } from '../../shared/ids.js';
import { loadMetadata } from '../rows/index.js';
import { eventsOfBases } from '../events/index.js';
import { compileSubscription, matchChange, MATCH_MESSAGES, mentionsSubscription, parseSubscription, presentSubscription, readSubscription, SUBSCRIPTION_FIELDS } from '../subscriptions/index.js';

const DEFAULT_ROTATION_GRACE_S = 86_400;
const STATS_WINDOWS = new Map([
  ['hour', 3_600_000],
  ['day', 86_400_000],
]);
const MAX_ROTATION_GRACE_S = 7 * 86_400;

export interface BaseTarget {
  workspaceId: string;
  baseName: string;
}

export interface WebhooksServiceDeps {
  db: Db;
  clock: Clock;
  access: BaseAccess;
  secrets: SecretBox;
  delivery: WebhookDeliveryService;
  /** WEBHOOK_ALLOW_PRIVATE: when false, URLs with a literal private or metadata host are refused. */
  allowPrivate?: boolean;
  /** Called after deliveries were queued outside the event consumer (redeliver, re-enable). */
  onQueued?: () => void;
  /** WEBHOOK_MAX_PER_BASE (default 20). */
  maxPerBase?: number;
  /** TIME_ZONE, for date filters in dry runs. */
  timeZone?: string;
  /** Bounds of replays and bulk redeliveries (WEBHOOK_REPLAY_MAX, CHANGE_FEED_RETENTION_DAYS, WEBHOOK_MAX_BACKLOG). */
  replay?: ReplayLimits;
}

const DEFAULT_REPLAY_LIMITS: ReplayLimits = { max: 1000, retentionDays: 7, maxBacklog: 10_000 };

export type WebhookRecord = ReturnType<typeof webhookRecord>;
export type DeliveryRecord = ReturnType<typeof deliveryRecord>;

/** Webhook CRUD, the delivery log, redeliver and ping. Managing webhooks needs owner or admin. */
export class WebhooksService {
  constructor(private readonly deps: WebhooksServiceDeps) {}

  async list(user: AccountUser, target: BaseTarget): Promise<WebhookRecord[]> {
    const base = await this.base(user, target);
    return (await repo.listForBase(this.deps.db, base.id)).map((w) => webhookRecord(w, base.uuid));
  }

  async create(user: AccountUser, target: BaseTarget, body: Record<string, unknown>): Promise<WebhookRecord> {
    const base = await this.base(user, target);
    const url = checkWebhookUrl(body.url, { allowPrivate: this.deps.allowPrivate ?? false });
    const secret = checkSecret(body.secret);
    const max = this.deps.maxPerBase ?? 20;
    if ((await repo.countForBase(this.deps.db, base.id)) >= max) throw badRequest(`A base can have at most ${max} webhooks.`);
    const subscription = mentionsSubscription(body) ? await this.subscriptionOf(base.id, body) : null;
    const maxRate = parseMaxRate(body.max_rate) ?? null;
    const now = this.deps.clock.now();
    const id = await this.unique(() =>
      repo.insertWebhook(this.deps.db, {
        base_id: base.id,
        url,
        url_hash: sha256Hex(url),
        secret: secret ? this.deps.secrets.seal(secret) : null,
        creator_id: user.id,
        creator: user.virtualId,
        created_at: now,
        updated_at: now,
        invalid_reason: null,
        subscription,
        max_rate: maxRate,
        paced_until: null,
        // Read in the INSERT itself: the webhook receives exactly the changes committed after it.
        start_event_id: outboxPosition(this.deps.db),
      }),
    );
    return webhookRecord(await this.mustFind(base, id), base.uuid);
  }

  /**
   * Change url and/or secret. Saving always re-validates the webhook (also with nothing changed), and
   * its paused queue resumes. A secret equal to the mask the API shows keeps the stored secret, so a
   * client that sends back what it read changes nothing; '' or null removes the secret.
   */
  async update(user: AccountUser, target: BaseTarget, webhookId: string, body: Record<string, unknown>): Promise<WebhookRecord> {
    const base = await this.base(user, target);
    const webhook = await this.mustFind(base, webhookId);
    const url = body.url === undefined || body.url === '' ? undefined : checkWebhookUrl(body.url, { allowPrivate: this.deps.allowPrivate ?? false });
    const secret = checkSecret(body.secret);
    const maxRate = parseMaxRate(body.max_rate);
    // Fields not given keep their stored value; `null`, '' or [] clears one.
    const stored = readSubscription(webhook.subscription);
    const subscription = mentionsSubscription(body)
      ? await this.subscriptionOf(base.id, { ...(stored ? presentSubscription(stored) : {}), ...pick(body) })
      : undefined;
    const changes = {
      ...(url !== undefined ? { url, url_hash: sha256Hex(url) } : {}),
      ...(subscription !== undefined ? { subscription } : {}),
      // A new rate starts with a full bucket.
      ...(maxRate !== undefined ? { max_rate: maxRate, paced_until: null } : {}),
      // A secret set here replaces it at once (no rotation window: see rotateSecret).
      ...(secret === null
        ? { secret: null, previous_secret: null, previous_secret_until: null }
        : secret !== undefined && secret !== SECRET_MASK
          ? { secret: this.deps.secrets.seal(secret), previous_secret: null, previous_secret_until: null }
          : {}),
      is_valid: 1,
      failure_streak: 0,
      invalid_reason: null,
      updated_at: this.deps.clock.now(),
    };
    await this.unique(() => repo.updateWebhook(this.deps.db, webhook.id, changes));
    if (Number(webhook.is_valid) !== 1) this.deps.onQueued?.();
    return webhookRecord(await this.mustFind(base, webhook.id), base.uuid);
  }

  /**
   * Why a past change was or was not (or would not be) sent to this webhook: its subscription as
   * saved now, the webhook's start, and the delivery queued for it if any.
   */
  async dryRun(user: AccountUser, target: BaseTarget, webhookId: string, body: Record<string, unknown>) {
    const base = await this.base(user, target);
    const webhook = await this.mustFind(base, webhookId);
    const eventId = parsePositiveId(typeof body.event_id === 'number' ? String(body.event_id) : body.event_id);
    if (eventId === null) throw badRequest('event_id must be a positive integer');
    const [event] = await eventsOfBases(this.deps.db, eventId - 1, eventId, [base.id]);
    if (!event) throw notFound('Event not found.');
    const delivery = await deliveries.deliveryOfEvent(this.deps.db, webhook.id, eventId);
    const sent = delivery ? { delivery_id: Number(delivery.id), delivery_status: delivery.status } : { delivery_id: null, delivery_status: null };
    if (eventId <= Number(webhook.start_event_id)) {
      return { event_id: eventId, would_send: false, reason: 'before_webhook_created', message: 'The change was committed before the webhook was created.', ...sent };
    }
    const result = matchChange(compileSubscription(readSubscription(webhook.subscription)), event, this.deps.timeZone ?? 'UTC');
    return { event_id: eventId, would_send: result.match, reason: result.reason, message: MATCH_MESSAGES[result.reason], ...sent };
  }

  /**
   * Replace the secret without downtime: the old one keeps signing deliveries (a second
   * `webhook-signature` entry) for `grace_seconds` (default a day, at most 7 days).
   */
  async rotateSecret(user: AccountUser, target: BaseTarget, webhookId: string, body: Record<string, unknown>): Promise<WebhookRecord> {
    const base = await this.base(user, target);
    const webhook = await this.mustFind(base, webhookId);
    const secret = checkSecret(body.secret);
    if (typeof secret !== 'string' || secret === '' || secret === SECRET_MASK) throw badRequest('secret: the new secret is required');
    const grace = body.grace_seconds === undefined || body.grace_seconds === '' ? DEFAULT_ROTATION_GRACE_S : Number(body.grace_seconds);
    if (!Number.isInteger(grace) || grace < 0 || grace > MAX_ROTATION_GRACE_S) throw badRequest(`grace_seconds must be an integer from 0 to ${MAX_ROTATION_GRACE_S}`);
    const now = this.deps.clock.now();
    const keepOld = webhook.secret !== null && grace > 0;
    await repo.updateWebhook(this.deps.db, webhook.id, {
      secret: this.deps.secrets.seal(secret),
      previous_secret: keepOld ? webhook.secret : null,
      previous_secret_until: keepOld ? now + grace * 1000 : null,
      updated_at: now,
    });
    return webhookRecord(await this.mustFind(base, webhook.id), base.uuid);
  }

  /** The subscription fields of `body` checked against the base's tables, as stored text (null: every change). */
  private async subscriptionOf(baseId: number, body: Record<string, unknown>): Promise<string | null> {
    const meta = await loadMetadata(this.deps.db, baseId);
    const spec = parseSubscription(body, meta.tables);
    return spec === null ? null : JSON.stringify(spec);
  }

  async remove(user: AccountUser, target: BaseTarget, webhookId: string): Promise<void> {
    const base = await this.base(user, target);
    const webhook = await this.mustFind(base, webhookId);
    await repo.deleteWebhook(this.deps.db, webhook.id);
  }

  async deliveries(user: AccountUser, target: BaseTarget, webhookId: string, page: Page) {
    const base = await this.base(user, target);
    const webhook = await this.mustFind(base, webhookId);
    const { rows, total } = await deliveries.listDeliveries(this.deps.db, webhook.id, page.offset, page.perPage);
    const attempts = await deliveries.attemptsOf(this.deps.db, rows.map((r) => Number(r.id)));
    return {
      delivery_list: rows.map((row) => deliveryRecord(row, attempts.filter((a) => Number(a.delivery_id) === Number(row.id)))),
      total_count: total,
    };
  }

  /** Success rate, p50/p99 latency and backlog over the last hour or day (issue 31). */
  async stats(user: AccountUser, target: BaseTarget, webhookId: string, window: string | undefined) {
    const base = await this.base(user, target);
    const webhook = await this.mustFind(base, webhookId);
    const span = STATS_WINDOWS.get(window ?? 'hour');
    if (span === undefined) throw badRequest('window must be hour or day');
    const since = this.deps.clock.now() - span;
    const found = await deliveryStats(this.deps.db, webhook.id, since);
    const finished = found.succeeded + found.failed;
    return {
      webhook_id: webhook.id,
      window: window ?? 'hour',
      since: isoMillis(since),
      deliveries_succeeded: found.succeeded,
      deliveries_failed: found.failed,
      success_rate: finished === 0 ? null : found.succeeded / finished,
      latency_ms: { p50: percentile(found.latencies, 50), p99: percentile(found.latencies, 99) },
      sampled: found.sampled,
      backlog: found.backlog,
      backlog_capped: found.backlogCapped,
      max_rate: webhook.max_rate === null ? null : Number(webhook.max_rate),
    };
  }

  /** Queue the delivery again (same body, same webhook-id) at the end of the webhook's queue. */
  async redeliver(user: AccountUser, target: BaseTarget, webhookId: string, deliveryId: string): Promise<DeliveryRecord> {
    const base = await this.base(user, target);
    const webhook = await this.mustFind(base, webhookId);
    const id = parsePositiveId(deliveryId);
    const original = id === null ? undefined : await deliveries.findDelivery(this.deps.db, webhook.id, id);
    if (!original) throw notFound('Delivery not found.');
    const now = this.deps.clock.now();
    const newId = await deliveries.insertDelivery(
      this.deps.db,
      deliveries.queuedDelivery(
        {
          webhook_id: webhook.id,
          base_id: base.id,
          event_id: original.event_id,
          dedupe_key: null,
          msg_id: original.msg_id,
          kind: 'redelivery',
          op_type: original.op_type,
          body: original.body,
          redelivery_of: Number(original.id),
        },
        now,
      ),
    );
    this.deps.onQueued?.();
    return this.deliveryById(webhook.id, newId);
  }

  /** Queue again every delivery that failed since `body.since` (replay lane); returns how many. */
  async redeliverFailed(user: AccountUser, target: BaseTarget, webhookId: string, body: Record<string, unknown>): Promise<{ count: number }> {
    const base = await this.base(user, target);
    const webhook = await this.mustFind(base, webhookId);
    const count = await redeliverFailed(this.replayContext(), webhook, body.since);
    if (count > 0) this.deps.onQueued?.();
    return { count };
  }

  /** Queue the changes committed from `body.from` through `body.to` (replay lane); returns how many. */
  async replay(user: AccountUser, target: BaseTarget, webhookId: string, body: Record<string, unknown>): Promise<{ count: number }> {
    const base = await this.base(user, target);
    const webhook = await this.mustFind(base, webhookId);
    const count = await replayRange(this.replayContext(), webhook, body);
    if (count > 0) this.deps.onQueued?.();
    return { count };
  }

  private replayContext(): ReplayContext {
    return { db: this.deps.db, now: this.deps.clock.now(), timeZone: this.deps.timeZone ?? 'UTC', limits: this.deps.replay ?? DEFAULT_REPLAY_LIMITS };
  }

  /** Send a test event now, once (no retries, no effect on the disable policy), and log it. */
  async ping(user: AccountUser, target: BaseTarget, webhookId: string): Promise<DeliveryRecord> {
    const base = await this.base(user, target);
    const webhook = await this.mustFind(base, webhookId);
    const msgId = newMessageId();
    const created = this.deps.clock.now();
    const body = pingBody({ baseUuid: base.uuid, webhookId: webhook.id, opUser: user.virtualId, now: created });
    const report = await this.deps.delivery.attempt({
      url: webhook.url,
      secretSealed: webhook.secret,
      previousSealed: webhook.previous_secret,
      previousUntil: webhook.previous_secret_until === null ? null : Number(webhook.previous_secret_until),
      msgId,
      body,
      attempt: 1,
    });
    const { decision, result } = report;
    const now = this.deps.clock.now();
    const id = await this.deps.db.transaction().execute(async (trx) => {
      const deliveryId = await deliveries.insertDelivery(trx, {
        webhook_id: webhook.id,
        base_id: base.id,
        event_id: null,
        dedupe_key: null,
        msg_id: msgId,
        kind: 'ping',
        op_type: 'ping',
        body,
        status: decision.outcome === 'success' ? 'succeeded' : 'failed',
        attempts: 1,
        next_attempt_at: now,
        locked_until: null,
        claim_token: null,
        last_status_code: result.ok ? result.status : null,
        last_error: decision.outcome === 'success' ? null : decision.error,
        redelivery_of: null,
        created_at: created,
        completed_at: now,
      });
      const onceOnly = decision.outcome === 'retry' ? { ...report, decision: { outcome: 'failed' as const, error: decision.error, exhausted: false } } : report;
      await deliveries.insertAttempt(trx, attemptRow(deliveryId, webhook.url, 1, onceOnly));
      return deliveryId;
    });
    return this.deliveryById(webhook.id, id);
  }

  /** "Your webhook was disabled" notices of a user (until the notifications inbox takes them over). */
  alertsFor(userId: number): Promise<WebhookAlertRow[]> {
    return repo.alertsForUser(this.deps.db, userId);
  }

  private async deliveryById(webhookId: number, id: number): Promise<DeliveryRecord> {
    const row = await deliveries.findDelivery(this.deps.db, webhookId, id);
    if (!row) throw notFound('Delivery not found.');
    return deliveryRecord(row, await deliveries.attemptsOf(this.deps.db, [id]));
  }

  private async base(user: AccountUser, target: BaseTarget): Promise<BaseListing> {
    return (await this.deps.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageWebhooks)).base;
  }

  private async mustFind(base: BaseListing, webhookId: string | number): Promise<WebhookRow> {
    const id = parsePositiveId(webhookId);
    const webhook = id === null ? undefined : await repo.findOnBase(this.deps.db, base.id, id);
    if (!webhook) throw notFound('Webhook not found.');
    return webhook;
  }

  private async unique<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('Webhook exists.');
      throw error;
    }
  }
}


/** The subscription fields a body gives (even as null: clearing one). */
function pick(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of SUBSCRIPTION_FIELDS) if (body[field] !== undefined) out[field] = body[field];
  return out;
}
