import { sql, type ExpressionBuilder } from 'kysely';
import type { Database, DialectName, Executor } from '../../db/index.js';
import { resolveBodies } from './payload-bodies.repository.js';
import { advance, allowance, type Pace } from './pacing.js';
import { LIVE_PRIORITY, REPLAY_PRIORITY } from './webhooks.table.js';

/** A claimed delivery with what sending it needs. */
export interface ClaimedDelivery {
  id: number;
  webhook_id: number;
  msg_id: string;
  body: string;
  attempts: number;
  url: string;
  secret: string | null;
  /** The webhook's failure streak at claim time (a success only writes when it is not 0). */
  failure_streak: number;
  /** The secret a rotation replaced (sealed) and until when it still signs (issue 31). */
  previous_secret?: string | null;
  previous_secret_until?: number | null;
}

export interface ClaimInput {
  now: number;
  limit: number;
  leaseUntil: number;
  token: string;
  /** Deliveries of one webhook in flight at once (different rows only); 1 = strict order. Default 1. */
  lanes?: number;
  /** The claiming worker instance (its heartbeat keeps the lease alive). */
  owner?: string;
  /**
   * Leases of workers whose heartbeat is older than this are taken over (PostgreSQL). Undefined:
   * only the lease's time counts.
   */
  staleBefore?: number;
}

/** Pending deliveries looked at per webhook: its lanes in flight and as many candidates behind them. */
const WINDOW_PER_LANE = 2;

export interface QueueItem {
  id: number;
  webhook_id: number;
  row_key: string | null;
  next_attempt_at: number;
  locked_until: number | null;
  lease_owner: string | null;
  priority: number;
}

/**
 * Claim up to `limit` due deliveries as leases (`locked_until`, `claim_token`, `lease_owner`).
 *
 * Order (issue 18): a delivery is eligible only when no earlier pending delivery of its webhook has
 * the same row (`row_key`); with `lanes` = 1 only the webhook's oldest pending delivery is. At most
 * `lanes` deliveries of a webhook are in flight.
 * Fairness (issue 16): webhooks are served round-robin, the one that waited longest for a slot first
 * (`last_claimed_at`), one delivery each per turn — a queue never holds slots another webhook needs.
 * Cost: the webhooks with pending deliveries are found by skipping through an index (idle webhooks
 * and queue lengths cost nothing), then a bounded window of each one's queue is read.
 *
 * The claim is a guarded UPDATE (atomic per row on both engines): two workers never hold one delivery,
 * and a delivery taken by another worker between the read and the UPDATE is simply skipped.
 * SQLite: pass a transaction.
 */
export async function claimDeliveries(db: Executor, input: ClaimInput, dialect: DialectName = 'sqlite'): Promise<ClaimedDelivery[]> {
  const lanes = Math.max(1, input.lanes ?? 1);
  const live = input.staleBefore === undefined ? null : await liveWorkers(db, input.staleBefore);
  const leased = (d: QueueItem) =>
    d.locked_until !== null && Number(d.locked_until) > input.now && (live === null || d.lease_owner === null || live.has(d.lease_owner));

  // A paced webhook whose bucket is empty is not a candidate: its deliveries wait in the queue.
  const queues = (await webhooksWithQueues(db)).filter((q) => q.pace === null || allowance(q.pace, input.now, lanes) > 0);
  const candidates = queues.map((q) => q.id);
  const paces = new Map(queues.filter((q) => q.pace !== null).map((q) => [q.id, q.pace!]));
  const picked: number[] = [];
  const pickedOf = new Map<number, number[]>();
  for (let i = 0; i < candidates.length && picked.length < input.limit; i += input.limit) {
    const batch = candidates.slice(i, i + input.limit);
    const windows = await queueWindows(db, batch, lanes === 1 ? 1 : lanes * WINDOW_PER_LANE);
    const eligible = batch.map((webhookId) => {
      const list = eligibleOf(windows.get(webhookId) ?? [], lanes, input.now, leased);
      const pace = paces.get(webhookId);
      return (pace ? list.slice(0, allowance(pace, input.now, lanes)) : list).map((d) => ({ id: Number(d.id), priority: Number(d.priority) }));
    });
    // Live deliveries of every webhook first, then the replay lane with the slots left (issue 31).
    for (const priority of [LIVE_PRIORITY, REPLAY_PRIORITY]) {
      const lists = eligible.map((list) => list.filter((d) => d.priority === priority).map((d) => d.id));
      roundRobin(lists, picked, input.limit);
    }
    for (const [index, list] of eligible.entries()) pickedOf.set(batch[index]!, list.map((d) => d.id).filter((id) => picked.includes(id)));
  }
  if (picked.length === 0) return [];
  const refused = await spendTokens(db, paces, pickedOf, input.now);
  const allowed = refused.size === 0 ? picked : picked.filter((id) => !refused.has(id));
  return allowed.length === 0 ? [] : takeLeases(db, allowed, input, dialect);
}

/**
 * Take the paced webhooks' tokens for their picked deliveries before leasing them: a guarded UPDATE
 * on the bucket as it was read, so two workers never spend one token (the loser's picks wait for the
 * next claim). A token spent on a delivery another worker leased meanwhile is lost: slower, never faster.
 * Returns the delivery ids that may not be leased.
 */
async function spendTokens(db: Executor, paces: Map<number, Pace>, pickedOf: Map<number, number[]>, now: number): Promise<Set<number>> {
  const refused = new Set<number>();
  for (const [webhookId, pace] of paces) {
    const ids = pickedOf.get(webhookId) ?? [];
    if (ids.length === 0) continue;
    const result = await db
      .updateTable('webhooks')
      .set({ paced_until: advance(pace, now, ids.length) })
      .where('id', '=', webhookId)
      .where((eb) => (pace.readyAt === null ? eb('paced_until', 'is', null) : eb('paced_until', '=', pace.readyAt)))
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) for (const id of ids) refused.add(id);
  }
  return refused;
}

/** Round-robin: one delivery of each webhook per turn, longest-waiting webhook first. */
function roundRobin(lists: number[][], picked: number[], limit: number): void {
  for (let turn = 0; picked.length < limit; turn++) {
    let any = false;
    for (const list of lists) {
      if (turn < list.length && picked.length < limit) {
        picked.push(list[turn]!);
        any = true;
      }
    }
    if (!any) return;
  }
}

/** The deliveries of one webhook's window that may be sent now, in queue order (lane, then id). */
function eligibleOf(window: QueueItem[], lanes: number, now: number, leased: (d: QueueItem) => boolean): QueueItem[] {
  const inFlight = window.filter(leased).length;
  const out: QueueItem[] = [];
  const earlierRows = new Set<string>();
  for (const [index, d] of window.entries()) {
    if (out.length + inFlight >= lanes) break;
    const blocked = lanes === 1 ? index > 0 : d.row_key !== null && earlierRows.has(d.row_key);
    if (!blocked && !leased(d) && Number(d.next_attempt_at) <= now) out.push(d);
    if (d.row_key !== null) earlierRows.add(d.row_key);
  }
  return out;
}

async function liveWorkers(db: Executor, staleBefore: number): Promise<Set<string>> {
  const rows = await db.selectFrom('delivery_workers').select('id').where('heartbeat_at', '>', staleBefore).execute();
  return new Set(rows.map((r) => r.id));
}

/** Valid webhooks with pending deliveries, the one that waited longest for a slot first, with their pacing. */
async function webhooksWithQueues(db: Executor): Promise<Array<{ id: number; pace: Pace | null }>> {
  const result = await sql<{ id: number; max_rate: number | null; paced_until: number | null }>`
    WITH RECURSIVE queues(webhook_id) AS (
      SELECT MIN(webhook_id) FROM webhook_deliveries WHERE status = 'pending'
      UNION ALL
      SELECT (SELECT MIN(x.webhook_id) FROM webhook_deliveries AS x WHERE x.status = 'pending' AND x.webhook_id > queues.webhook_id)
        FROM queues WHERE queues.webhook_id IS NOT NULL)
    SELECT w.id, w.max_rate, w.paced_until FROM queues JOIN webhooks AS w ON w.id = queues.webhook_id
     WHERE w.is_valid = 1
     ORDER BY COALESCE(w.last_claimed_at, 0), w.id`.execute(db);
  return result.rows.map((r) => ({
    id: Number(r.id),
    pace: r.max_rate === null ? null : { maxRate: Number(r.max_rate), readyAt: r.paced_until === null ? null : Number(r.paced_until) },
  }));
}

/**
 * The first `size` pending deliveries of each webhook in queue order: the live lane, then the replay
 * lane (a live delivery queued during a replay goes before the replay's rest), each in id order.
 */
export async function queueWindows(db: Executor, webhookIds: number[], size: number): Promise<Map<number, QueueItem[]>> {
  const parts = webhookIds.map(
    (id, i) => sql`SELECT * FROM (SELECT id, webhook_id, row_key, next_attempt_at, locked_until, lease_owner, priority
                                    FROM webhook_deliveries WHERE webhook_id = ${id} AND status = 'pending'
                                   ORDER BY priority, id LIMIT ${size}) AS ${sql.raw(`q${i}`)}`,
  );
  const result = await sql<QueueItem>`${sql.join(parts, sql` UNION ALL `)}`.execute(db);
  const byWebhook = new Map<number, QueueItem[]>();
  for (const row of result.rows) {
    const id = Number(row.webhook_id);
    const list = byWebhook.get(id);
    if (list) list.push(row);
    else byWebhook.set(id, [row]);
  }
  for (const list of byWebhook.values()) list.sort((a, b) => Number(a.priority) - Number(b.priority) || Number(a.id) - Number(b.id));
  return byWebhook;
}

/**
 * The lease may be taken: none, expired, or its worker stopped beating. Whether the worker beats is
 * asked in the same statement (not from the list read before the claim, which may predate the first
 * heartbeat of a worker that has just started and claimed).
 */
function claimable(eb: ExpressionBuilder<Database, 'webhook_deliveries'>, now: number, staleBefore: number | undefined) {
  const free = [eb('locked_until', 'is', null), eb('locked_until', '<=', now)];
  if (staleBefore !== undefined) {
    const live = eb.selectFrom('delivery_workers').select('delivery_workers.id').where('delivery_workers.heartbeat_at', '>', staleBefore);
    free.push(eb.and([eb('lease_owner', 'is not', null), eb('lease_owner', 'not in', live)]));
  }
  return eb.or(free);
}

/**
 * Lease the picked deliveries. PostgreSQL: the rows are first locked (`FOR UPDATE SKIP LOCKED`, rows
 * another worker is claiming right now are skipped), and only then updated by a statement whose
 * snapshot is newer than every lease it can see, so it also sees the heartbeat the lease holder wrote
 * before claiming: a live worker's fresh lease is never mistaken for a dead one's (issue 18, the
 * "same attempt twice" flake: a worker whose first heartbeat and claim landed while another worker
 * was claiming lost its leases to it, and both sent).
 */
async function takeLeases(db: Executor, ids: number[], input: ClaimInput, dialect: DialectName): Promise<ClaimedDelivery[]> {
  const update = (executor: Executor, targets: number[]) =>
    executor
      .updateTable('webhook_deliveries')
      .set({ locked_until: input.leaseUntil, claim_token: input.token, lease_owner: input.owner ?? null })
      .where('id', 'in', targets)
      .where('status', '=', 'pending')
      .where((eb) => claimable(eb, input.now, input.staleBefore))
      .returning(['id', 'webhook_id', 'msg_id', 'body', 'attempts', 'payload_id', 'priority'])
      .execute();
  const lockThenUpdate = async (trx: Executor) => {
    const locked = await trx.selectFrom('webhook_deliveries').select('id').where('id', 'in', ids).orderBy('id').forUpdate().skipLocked().execute();
    return locked.length === 0 ? [] : update(trx, locked.map((r) => Number(r.id)));
  };
  const taken =
    dialect !== 'postgres' ? await update(db, ids) : db.isTransaction ? await lockThenUpdate(db) : await db.transaction().execute(lockThenUpdate);
  if (taken.length === 0) return [];
  await resolveBodies(db, taken);
  const hooks = await db
    .updateTable('webhooks')
    .set({ last_claimed_at: input.now })
    .where('id', 'in', [...new Set(taken.map((d) => Number(d.webhook_id)))])
    .returning(['id', 'url', 'secret', 'failure_streak', 'previous_secret', 'previous_secret_until'])
    .execute();
  const byId = new Map(hooks.map((h) => [Number(h.id), h]));
  // Live before replays (the pool starts them in this order), each in id order.
  return taken
    .sort((a, b) => Number(a.priority) - Number(b.priority) || Number(a.id) - Number(b.id))
    .filter((d) => byId.has(Number(d.webhook_id)))
    .map((d) => {
      const hook = byId.get(Number(d.webhook_id))!;
      return {
        id: Number(d.id),
        webhook_id: Number(d.webhook_id),
        msg_id: d.msg_id,
        body: d.body,
        attempts: Number(d.attempts),
        url: hook.url,
        secret: hook.secret,
        failure_streak: Number(hook.failure_streak),
        previous_secret: hook.previous_secret,
        previous_secret_until: hook.previous_secret_until === null ? null : Number(hook.previous_secret_until),
      };
    });
}

/** The worker's heartbeat: its leases stay its own while this is recent. */
export async function beat(db: Executor, owner: string, now: number): Promise<void> {
  await db
    .insertInto('delivery_workers')
    .values({ id: owner, heartbeat_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: now }))
    .execute();
}

/** Forget workers silent since `before` (their leases are free anyway). */
export async function forgetWorkers(db: Executor, before: number): Promise<void> {
  await db.deleteFrom('delivery_workers').where('heartbeat_at', '<', before).execute();
}

/** Give a claimed delivery back unsent (only while the lease is still this claim's). */
export async function releaseLease(db: Executor, deliveryId: number, token: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ locked_until: null, claim_token: null, lease_owner: null })
    .where('id', '=', deliveryId)
    .where('claim_token', '=', token)
    .execute();
}

/** SQLite (one process by design): every lease found at start belongs to a process that is gone. */
export async function releaseAllLeases(db: Executor): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ locked_until: null, claim_token: null, lease_owner: null })
    .where('status', '=', 'pending')
    .where('locked_until', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
