import { randomBytes } from 'node:crypto';
import type { Db, DialectName, Executor } from '../../db/index.js';
import type { OutboundHttp, OutboundResult } from '../../platform/http/index.js';
import type { Clock } from '../../shared/clock.js';
import * as deliveries from './deliveries.repository.js';
import type { ClaimedDelivery } from './deliveries.repository.js';
import { decideAfterAttempt, type Decision } from './retry-policy.js';
import type { SecretBox } from './secret-box.js';
import { deliveryHeaders } from './signing.js';
import * as webhooks from './webhooks.repository.js';
import { beat, forgetWorkers, releaseAllLeases, releaseLease } from './claim.repository.js';
import { AttemptRecorder } from './attempt-recorder.js';
import type { HandoffLease, HandoffWorker } from './handoff.js';

export { attemptRow } from './attempt-recorder.js';

/** `msg_type` of the inbox notice sent when a webhook is disabled. */
export const MSG_TYPE_WEBHOOK_INVALID = 'webhook_invalid';

export type WebhookNotifier = (
  trx: Executor,
  notice: { userId: number; msgType: string; detail: Record<string, unknown>; baseId: number; dtableUuid: string },
) => Promise<unknown>;

/**
 * PostgreSQL: after how long without a heartbeat a worker counts as dead and its leases are taken over
 * (WEBHOOK_WORKER_STALE_MS). A running worker beats every third of it, so two missed beats are tolerated.
 */
export const HEARTBEAT_STALE_MS = 3_000;

/** How often a worker beats for a given stale time. */
export function heartbeatInterval(staleMs: number): number {
  return Math.max(250, Math.floor(staleMs / 3));
}

/** This many deliveries failing for good in a row make a webhook invalid. */
export const DISABLE_AFTER_FAILURES = 5;

export interface DeliveryServiceDeps {
  db: Db;
  dialect: DialectName;
  clock: Clock;
  http: OutboundHttp;
  secrets: SecretBox;
  retrySchedule: readonly number[];
  timeoutMs: number;
  concurrency: number;
  /** Deliveries of one webhook in flight at once (different rows); 1 = strict order. Default 1. */
  lanes?: number;
  /** PostgreSQL: a worker silent this long loses its leases (default HEARTBEAT_STALE_MS). */
  staleMs?: number;
  retentionDays: number;
  random?: () => number;
  onError?: (error: unknown, context: string) => void;
  /** Told when the SSRF guard refused an attempt's target (logged at warn level). */
  onBlocked?: (message: string) => void;
  /** Puts a notice into a user's inbox inside the caller's transaction (the notifications module). */
  notify?: WebhookNotifier;
  /** Observes every queued attempt (metrics). */
  onAttempt?: (outcome: Decision['outcome'], durationMs: number) => void;
}

/** One attempt's result and the decision taken on it. */
export interface AttemptReport {
  startedAt: number;
  result: OutboundResult;
  decision: Decision;
}

/**
 * Sends queued deliveries: claim due heads (one per webhook), sign, POST, record the attempt, then
 * succeed, schedule the retry, or fail — and apply the disable policy. The loop lives in
 * src/workers/webhook-deliverer.ts; this offers one round (`runOnce`) and the refilling pool (`runPool`).
 */
export class WebhookDeliveryService implements HandoffWorker {
  private readonly random: () => number;
  /** This worker instance: its heartbeat keeps its leases (PostgreSQL); a restart is a new instance. */
  readonly instanceId = randomBytes(12).toString('hex');
  /** When this instance's last heartbeat was written (PostgreSQL). */
  private lastBeat = Number.NEGATIVE_INFINITY;
  private readonly staleMs: number;
  private recovered = false;
  /** The start-up recovery has finished (SQLite: a hand-off's lease would otherwise be freed by it). */
  private recoveredDone = false;
  /**
   * Attempts being sent by this process (claimed or handed off): the slots of WEBHOOK_CONCURRENCY. A
   * slot frees when the answer is in; the delivery keeps its lease (and lane) until its outcome is
   * committed, counted in `unrecorded` until then. Also the slots reserved for a hand-off.
   */
  private inFlight = 0;
  private unrecorded = 0;
  private reserved = 0;
  private readonly attempts = new Set<Promise<void>>();
  /** Finished claims (the hand-off's backlog hints are valid until the next one). */
  claimEpoch = 0;
  /** Whether this process runs the delivery loop (the `worker` role): only then are deliveries handed off. */
  private running: () => boolean = () => false;
  private wakeUp: (() => void) | null = null;
  /** A slot freed or work came while the pool was not waiting. */
  private signalled = false;
  /** Attempt outcomes are written in batches (one transaction for the attempts that end together). */
  private readonly recorder: AttemptRecorder;

  constructor(private readonly deps: DeliveryServiceDeps) {
    this.random = deps.random ?? Math.random;
    this.staleMs = deps.staleMs ?? HEARTBEAT_STALE_MS;
    this.recorder = new AttemptRecorder({
      db: deps.db,
      dialect: deps.dialect,
      clock: deps.clock,
      applyPolicy: (trx, delivery, decision, now) => this.applyDisablePolicy(trx, delivery, decision, now),
    });
  }

  /** How often the worker loop calls `heartbeat()`. */
  get heartbeatMs(): number {
    return heartbeatInterval(this.staleMs);
  }

  /** Enable the in-process hand-off while `running()` (the started delivery loop). */
  useHandoff(running: () => boolean): void {
    this.running = running;
  }

  openLease(now: number): HandoffLease | null {
    if (!this.running() || !this.recoveredDone) return null;
    // PostgreSQL: the lease is safe from takeover only while this instance's heartbeat is recent.
    if (this.deps.dialect === 'postgres' && now - this.lastBeat >= this.staleMs - this.heartbeatMs) return null;
    return {
      token: randomBytes(12).toString('hex'),
      owner: this.instanceId,
      leaseUntil: now + this.deps.timeoutMs + 60_000,
      lanes: this.deps.lanes ?? 1,
    };
  }

  reserve(n: number): number {
    const granted = Math.max(0, Math.min(n, this.deps.concurrency - this.inFlight - this.reserved));
    this.reserved += granted;
    return granted;
  }

  accept(list: ClaimedDelivery[], token: string, reserved: number): void {
    this.reserved -= reserved;
    if (this.running()) {
      for (const delivery of list) this.launch(delivery, token);
    } else {
      // The loop stopped meanwhile: given back unsent, for the next claim (the stop waits for this).
      for (const delivery of list) this.track(releaseLease(this.deps.db, delivery.id, token).catch((error: unknown) => this.deps.onError?.(error, `webhook delivery ${delivery.id}`)));
    }
    if (list.length < reserved || !this.running()) this.signal();
  }

  release(reserved: number): void {
    this.reserved -= reserved;
    this.signal();
  }

  /** Resolves once no attempt is in flight (the loop's stop waits for handed-off attempts too). */
  async settled(): Promise<void> {
    while (this.attempts.size > 0) await Promise.allSettled([...this.attempts]);
  }

  private launch(delivery: ClaimedDelivery, token: string): void {
    this.inFlight++;
    this.unrecorded++;
    let sending = true;
    const sent = () => {
      if (!sending) return;
      sending = false;
      // A pool waiting for a slot claims again; otherwise the record's commit wakes it (one claim, not two).
      const full = this.inFlight + this.reserved >= this.deps.concurrency;
      this.inFlight--;
      if (full) this.signal();
    };
    this.track(
      this.deliver(delivery, token, sent).finally(() => {
        sent();
        this.unrecorded--;
        this.signal();
      }),
    );
  }

  /** Work the loop's stop waits for. */
  private track(work: Promise<void>): void {
    const tracked = work.finally(() => this.attempts.delete(tracked));
    this.attempts.add(tracked);
  }

  /** New deliveries were queued: a pool waiting for its attempts claims again at once. */
  nudge(): void {
    this.signal();
  }

  /** Refresh this instance's heartbeat (the worker loop calls it every `heartbeatMs` while running). */
  async heartbeat(): Promise<void> {
    if (this.deps.dialect !== 'postgres') return;
    const now = this.deps.clock.now();
    await beat(this.deps.db, this.instanceId, now);
    this.lastBeat = now;
  }

  /**
   * PostgreSQL: this instance has not proved it is alive for the stale time (a stalled event loop or
   * database), so other workers may have taken its leases over: it must not send what it claimed.
   */
  private mayHaveLostLeases(): boolean {
    return this.deps.dialect === 'postgres' && this.deps.clock.now() - this.lastBeat >= this.staleMs;
  }

  /**
   * One round: claim up to WEBHOOK_CONCURRENCY due heads (one per webhook), send them all, record.
   * Returns how many attempts were made. Tests drive delivery with this.
   */
  async runOnce(): Promise<number> {
    const token = randomBytes(12).toString('hex');
    const claimed = await this.claim(this.deps.concurrency, token);
    await Promise.all(claimed.map((delivery) => this.deliver(delivery, token)));
    return claimed.length;
  }

  /**
   * The worker loop's mode: keep up to WEBHOOK_CONCURRENCY attempts in flight, claiming again as
   * soon as one finishes (so a webhook's next delivery goes out right after the previous one, not
   * after the slowest of a round). Returns when nothing more is claimable or `keepGoing()` turns
   * false, once the attempts in flight have finished.
   */
  async runPool(keepGoing: () => boolean): Promise<number> {
    const token = randomBytes(12).toString('hex');
    let attempts = 0;
    for (;;) {
      // Wake-ups until now are answered by this claim (it sees every slot freed so far).
      this.signalled = false;
      const free = this.deps.concurrency - this.inFlight - this.reserved;
      const claimed = free > 0 && keepGoing() ? await this.claim(free, token) : [];
      // A hand-off may have taken slots while the claim ran: what no longer fits is given back unsent.
      const excess = claimed.splice(Math.max(0, this.deps.concurrency - this.inFlight - this.reserved));
      for (const delivery of excess) {
        void releaseLease(this.deps.db, delivery.id, token).catch((error: unknown) => this.deps.onError?.(error, `webhook delivery ${delivery.id}`));
      }
      for (const delivery of claimed) this.launch(delivery, token);
      attempts += claimed.length;
      // Handed-off attempts count too: when one is recorded, the next delivery of its row may be claimable.
      if (this.unrecorded === 0) return attempts;
      // Wait for a slot to free or for new work (one waiter, not a race over every attempt in flight).
      if (!this.signalled) await new Promise<void>((resolve) => (this.wakeUp = resolve));
      // Let attempts finishing at the same moment land, so one claim refills several slots.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** A slot freed or work was queued: wake the pool, or let it skip its next wait. */
  private signal(): void {
    const wake = this.wakeUp;
    this.wakeUp = null;
    if (wake) wake();
    else this.signalled = true;
  }

  private async claim(limit: number, token: string): Promise<ClaimedDelivery[]> {
    const { db, dialect, clock, timeoutMs } = this.deps;
    await this.recover();
    const now = clock.now();
    if (dialect === 'postgres' && now - this.lastBeat >= this.heartbeatMs) await this.heartbeat();
    // The lease outlives the attempt's own timeout; on PostgreSQL a silent worker's lease is taken over sooner.
    const input = {
      now,
      limit,
      leaseUntil: now + timeoutMs + 60_000,
      token,
      lanes: this.deps.lanes ?? 1,
      owner: this.instanceId,
      ...(dialect === 'postgres' ? { staleBefore: now - this.staleMs } : {}),
    };
    const claimed = await (dialect === 'postgres'
      ? deliveries.claimDue(db, dialect, input)
      : db.transaction().execute((trx) => deliveries.claimDue(trx, dialect, input)));
    this.claimEpoch++;
    return claimed;
  }

  /**
   * Once per process, before the first claim. SQLite runs in one process by design, so every lease
   * found now was held by a process that died: free them (its in-flight attempts are sent again).
   */
  private async recover(): Promise<void> {
    if (this.recovered) return;
    this.recovered = true;
    if (this.deps.dialect === 'sqlite') await releaseAllLeases(this.deps.db);
    this.recoveredDone = true;
  }

  /** When the next queued delivery becomes due, or null when nothing is queued. */
  nextDueAt(): Promise<number | null> {
    return deliveries.nextDueAt(this.deps.db);
  }

  /** One POST with every header; `secretSealed` is the stored (encrypted) secret. */
  async attempt(input: {
    url: string;
    secretSealed: string | null;
    msgId: string;
    body: string;
    attempt: number;
    /** A rotated-out secret that still signs until `previousUntil` (ms). */
    previousSealed?: string | null;
    previousUntil?: number | null;
  }): Promise<AttemptReport> {
    const startedAt = this.deps.clock.now();
    const secret = input.secretSealed === null ? null : this.deps.secrets.open(input.secretSealed);
    const inWindow = input.previousSealed && input.previousUntil !== null && input.previousUntil !== undefined && input.previousUntil > startedAt;
    const previousSecret = inWindow ? this.deps.secrets.open(input.previousSealed!) : null;
    let result: OutboundResult;
    if (input.secretSealed !== null && secret === null) {
      // Nothing was sent; recorded like a refused target (a failure that is not retried).
      result = {
        ok: false,
        kind: 'invalid_url',
        message: 'the secret cannot be decrypted (SECRET_KEY changed?); save the webhook with its secret again',
        durationMs: 0,
      };
    } else {
      const headers = deliveryHeaders({ msgId: input.msgId, timestampSeconds: Math.floor(startedAt / 1000), body: input.body, secret, previousSecret });
      result = await this.deps.http.post(input.url, headers, input.body);
      if (!result.ok && result.kind === 'blocked') this.deps.onBlocked?.(result.message);
    }
    const decision = decideAfterAttempt({
      result,
      attempt: input.attempt,
      schedule: this.deps.retrySchedule,
      now: this.deps.clock.now(),
      random: this.random,
    });
    return { startedAt, result, decision };
  }

  /** Delete finished deliveries older than the retention period; for the scheduler. */
  async prune(): Promise<number> {
    const now = this.deps.clock.now();
    // Rows of workers gone for a day (each restart is a new instance); their leases are free anyway.
    if (this.deps.dialect === 'postgres') await forgetWorkers(this.deps.db, now - 86_400_000);
    return deliveries.pruneFinished(this.deps.db, now - this.deps.retentionDays * 86_400_000);
  }

  private async deliver(delivery: ClaimedDelivery, token: string, sent: () => void = () => {}): Promise<void> {
    try {
      if (this.mayHaveLostLeases()) {
        // Not sent (another worker may be sending it): given back, to whichever worker claims it next.
        await releaseLease(this.deps.db, delivery.id, token);
        return;
      }
      const attempt = delivery.attempts + 1;
      const report = await this.attempt({
        url: delivery.url,
        secretSealed: delivery.secret,
        previousSealed: delivery.previous_secret ?? null,
        previousUntil: delivery.previous_secret_until ?? null,
        msgId: delivery.msg_id,
        body: delivery.body,
        attempt,
      });
      sent();
      await this.recorder.record(delivery, token, attempt, report);
      this.deps.onAttempt?.(report.decision.outcome, report.result.durationMs);
    } catch (error) {
      // The lease stays; the delivery is attempted again once it expires.
      this.deps.onError?.(error, `webhook delivery ${delivery.id}`);
    }
  }

  private async applyDisablePolicy(trx: Executor, delivery: ClaimedDelivery, decision: Decision, now: number): Promise<void> {
    if (decision.outcome === 'success') return webhooks.resetFailureStreak(trx, delivery.webhook_id);
    if (decision.outcome === 'retry') return;
    let reason: string | null = null;
    if (decision.outcome === 'gone') {
      reason = 'The receiver answered 410 Gone.';
    } else {
      const streak = await webhooks.bumpFailureStreak(trx, delivery.webhook_id);
      if (streak >= DISABLE_AFTER_FAILURES) reason = `${streak} deliveries in a row failed; the last: ${decision.error}.`;
    }
    if (reason === null) return;
    await this.disableAndTell(trx, delivery.webhook_id, delivery.url, reason, now);
  }

  /**
   * Mark the webhook invalid (its queue pauses until it is saved again) and tell the base's owner and
   * the webhook's creator, once, in the caller's transaction. Used by the disable policy and the backlog cap.
   */
  async disableAndTell(trx: Executor, webhookId: number, url: string, reason: string, now: number): Promise<void> {
    if (!(await webhooks.disableWebhook(trx, webhookId, reason, now))) return;
    const target = await webhooks.alertTarget(trx, webhookId);
    if (!target) return;
    const { userIds, baseId, baseUuid } = target;
    await webhooks.insertAlerts(
      trx,
      userIds.map((userId) => ({ user_id: userId, webhook_id: webhookId, base_id: baseId, url, reason, created_at: now })),
    );
    const detail = { webhook_id: webhookId, url, reason, msg: `Webhook ${url} was disabled: ${reason} Save it again to re-enable it.` };
    for (const userId of userIds) {
      await this.deps.notify?.(trx, { userId, msgType: MSG_TYPE_WEBHOOK_INVALID, detail, baseId, dtableUuid: baseUuid });
    }
  }
}
