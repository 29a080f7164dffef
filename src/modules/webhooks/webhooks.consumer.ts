import type { Executor } from '../../db/index.js';
import type { ChangeEvent, OutboxConsumer, PartialBatch } from '../events/index.js';
import * as deliveries from './deliveries.repository.js';
import type { ClaimedDelivery, NewDelivery } from './deliveries.repository.js';
import { BacklogHints, handoffCandidates, type HandoffContext, type HandoffWorker } from './handoff.js';
import { changeMessageId, eventBody } from './payload.js';
import * as repo from './webhooks.repository.js';
import { SubscriptionCache } from './subscription-cache.js';

export const WEBHOOKS_CONSUMER = 'webhooks';

/**
 * Deliveries one dispatcher transaction creates, at most (issue 24: twenty webhooks on a base made a
 * 500-event batch 10,000 inserts, holding SQLite's connection and the event loop for seconds). A larger
 * fan-out acknowledges a prefix of the batch; the dispatcher yields, then hands over the rest. A
 * request needs a few turns of the event loop, each of which may wait for one batch: 500 keeps that
 * wait short. A 500-event batch to one webhook still goes in one transaction, as before.
 */
export const MAX_DELIVERIES_PER_BATCH = 500;

/** WEBHOOK_MAX_BACKLOG: a webhook with more queued deliveries is paused (disabled, its owner told). */
export interface BacklogCap {
  max: number;
  pause(trx: Executor, webhookId: number, url: string, reason: string, now: number): Promise<void>;
}

/**
 * Turns committed change events into queued deliveries: one per event per valid webhook of the
 * event's base, written in the dispatcher's transaction (so an event is queued exactly when the
 * consumer acknowledges it). `dedupe_key` makes a replayed event a no-op.
 */
export class WebhookEventConsumer implements OutboxConsumer {
  readonly name = WEBHOOKS_CONSUMER;
  /** Webhook latency is what users feel: caught up again before the later consumers go on. */
  readonly options = { catchUpFirst: true };
  private readonly backlogHints = new BacklogHints();
  /** Each webhook's subscription, compiled once per saved version; TIME_ZONE for date filters. */
  readonly subscriptions = new SubscriptionCache();

  constructor(
    private readonly now: () => number,
    /** Wakes the delivery worker; called once the dispatcher's transaction has committed. */
    private readonly onQueued: () => void = () => {},
    private readonly backlog: BacklogCap | null = null,
    /** This process's delivery worker: deliveries that may go at once are handed to it already leased. */
    private readonly handoff: HandoffWorker | null = null,
    private readonly maxDeliveries = MAX_DELIVERIES_PER_BATCH,
  ) {}

  basesOfInterest(trx: Executor, baseIds: number[]): Promise<number[]> {
    return repo.basesWithWebhooks(trx, baseIds);
  }

  async handle(trx: Executor, events: ChangeEvent[], context?: HandoffContext): Promise<PartialBatch | undefined> {
    const baseIds = [...new Set(events.map((e) => e.baseId))];
    const hooks = await repo.validForBases(trx, baseIds);
    if (hooks.length === 0) return undefined;
    const now = this.now();
    const bounded = boundFanOut(events, hooks, this.maxDeliveries);
    await this.queue(trx, bounded, hooks, now, context);
    return bounded.length < events.length ? { through: bounded[bounded.length - 1]!.id } : undefined;
  }

  private async queue(
    trx: Executor,
    events: ChangeEvent[],
    hooks: repo.ValidWebhook[],
    now: number,
    context: HandoffContext | undefined,
  ): Promise<void> {
    const { paused, queued } = await this.pauseOverflowing(trx, hooks, events, now);
    const byBase = new Map<number, repo.ValidWebhook[]>();
    for (const hook of hooks) {
      if (paused.has(hook.id)) continue;
      byBase.set(hook.base_id, [...(byBase.get(hook.base_id) ?? []), hook]);
    }
    // A webhook receives exactly the changes committed after it was created that its subscription wants.
    const targets = new Map<number, number[]>();
    for (const event of events) {
      const ids = (byBase.get(event.baseId) ?? []).filter((hook) => event.id > hook.start_event_id && this.subscriptions.wants(hook, event)).map((hook) => hook.id);
      if (ids.length > 0) targets.set(event.id, ids);
    }
    // One stored body per event, referenced by each webhook's delivery (not copied per webhook).
    const targeted = events.filter((event) => targets.has(event.id));
    const bodies = new Map(targeted.map((event) => [event.id, eventBody(event)]));
    const payloadIds = await deliveries.insertPayloads(trx, targeted.map((event) => ({ eventId: event.id, body: bodies.get(event.id)! })), now);
    const rows: NewDelivery[] = [];
    for (const event of targeted) {
      for (const webhookId of targets.get(event.id)!) {
        rows.push(
          deliveries.queuedDelivery(
            {
              webhook_id: webhookId,
              base_id: event.baseId,
              event_id: event.id,
              dedupe_key: `${webhookId}:${event.id}`,
              msg_id: changeMessageId(webhookId, event.id, event.writeId),
              kind: 'event',
              op_type: event.opType,
              body: '',
              payload_id: payloadIds.get(event.id)!,
              redelivery_of: null,
              row_key: event.rowId,
            },
            now,
          ),
        );
      }
    }
    const paced = new Set(hooks.filter((hook) => hook.paced).map((hook) => hook.id));
    const handed = await this.leaseForHandoff(trx, rows, now, context, queued, paced);
    const inserted = await deliveries.insertDeliveries(trx, rows);
    if (handed) await this.passAfterCommit(trx, handed, rows, inserted, bodies, now, context!);
    // Only what was not handed off waits for a claim. Waking before the commit would let the
    // worker's claim (another connection) find nothing.
    if (rows.length === (handed?.indexes.length ?? 0)) return;
    if (context) context.afterCommit(this.onQueued);
    else this.onQueued();
  }

  /**
   * Marks the deliveries that may go at once as leased to this process's worker (the same columns
   * and lease a claim sets) and reserves their slots. Only with a dispatcher context that can undo
   * the reservation on rollback.
   */
  private async leaseForHandoff(
    trx: Executor,
    rows: NewDelivery[],
    now: number,
    context: HandoffContext | undefined,
    pending: Map<number, number> | undefined,
    paced: Set<number>,
  ) {
    const worker = this.handoff;
    if (!worker || rows.length === 0 || !context?.afterRollback) return null;
    const lease = worker.openLease(now);
    if (!lease) return null;
    const candidates = (
      await handoffCandidates(trx, rows, lease.lanes, now, { backlog: this.backlogHints, epoch: worker.claimEpoch, ...(pending ? { pending } : {}) })
    ).filter((index) => !paced.has(Number(rows[index]!.webhook_id)));
    const reserved = candidates.length === 0 ? 0 : worker.reserve(candidates.length);
    if (reserved === 0) return null;
    context.afterRollback(() => worker.release(reserved));
    const indexes = candidates.slice(0, reserved);
    for (const index of indexes) Object.assign(rows[index]!, { locked_until: lease.leaseUntil, claim_token: lease.token, lease_owner: lease.owner });
    return { worker, token: lease.token, reserved, indexes };
  }

  /** Once the transaction committed, the handed-off deliveries go to the worker's pool in memory. */
  private async passAfterCommit(
    trx: Executor,
    handed: { worker: HandoffWorker; token: string; reserved: number; indexes: number[] },
    rows: NewDelivery[],
    inserted: Map<string, number>,
    bodies: Map<number, string>,
    now: number,
    context: HandoffContext,
  ): Promise<void> {
    // A replayed event's delivery already existed (not inserted): not handed off.
    const taken = handed.indexes.map((index) => rows[index]!).filter((row) => inserted.has(row.dedupe_key!));
    const hooks = await repo.markHandedOff(trx, [...new Set(taken.map((row) => Number(row.webhook_id)))], now);
    const list: ClaimedDelivery[] = taken.flatMap((row) => {
      const hook = hooks.get(Number(row.webhook_id));
      if (!hook) return []; // gone meanwhile (PostgreSQL): its deliveries go with it
      const delivery: ClaimedDelivery = {
        id: inserted.get(row.dedupe_key!)!,
        webhook_id: Number(row.webhook_id),
        msg_id: row.msg_id,
        body: bodies.get(Number(row.event_id))!,
        attempts: 0,
        url: hook.url,
        secret: hook.secret,
        failure_streak: hook.failure_streak,
        previous_secret: hook.previous_secret,
        previous_secret_until: hook.previous_secret_until,
      };
      return [delivery];
    });
    context.afterCommit(() => handed.worker.accept(list, handed.token, handed.reserved));
  }

  /**
   * Webhooks whose queue would pass the backlog cap with this batch: paused now (their owner is told
   * in the same transaction) and given none of these events. Saving the webhook resumes it. Also
   * returns the queue lengths it counted (the hand-off reads no window of a long queue).
   */
  private async pauseOverflowing(
    trx: Executor,
    hooks: Array<{ id: number; base_id: number; url: string }>,
    events: ChangeEvent[],
    now: number,
  ): Promise<{ paused: Set<number>; queued?: Map<number, number> }> {
    const paused = new Set<number>();
    if (!this.backlog) return { paused };
    const perBase = new Map<number, number>();
    for (const e of events) perBase.set(e.baseId, (perBase.get(e.baseId) ?? 0) + 1);
    const queued = await repo.backlogOf(trx, hooks.map((h) => h.id));
    for (const hook of hooks) {
      if ((queued.get(hook.id) ?? 0) + (perBase.get(hook.base_id) ?? 0) <= this.backlog.max) continue;
      paused.add(hook.id);
      const reason = `More than ${this.backlog.max} deliveries were queued (the receiver does not keep up); changes after that were not queued.`;
      await this.backlog.pause(trx, hook.id, hook.url, reason, now);
    }
    return { paused, queued };
  }
}

/**
 * The longest prefix of `events` (at least one event) whose deliveries — one per valid webhook of the
 * event's base — stay within `max`. Counted before each webhook's start filter: an upper bound.
 */
export function boundFanOut(events: ChangeEvent[], hooks: Array<{ base_id: number }>, max: number): ChangeEvent[] {
  const perBase = new Map<number, number>();
  for (const hook of hooks) perBase.set(hook.base_id, (perBase.get(hook.base_id) ?? 0) + 1);
  let deliveries = 0;
  for (const [index, event] of events.entries()) {
    deliveries += perBase.get(event.baseId) ?? 0;
    if (deliveries > max && index > 0) return events.slice(0, index);
  }
  return events;
}
