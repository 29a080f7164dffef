import type { Generated } from 'kysely';

export interface WebhooksTable {
  id: Generated<number>;
  base_id: number;
  url: string;
  url_hash: string;
  /** Encrypted with a key derived from SECRET_KEY (see secret-box.ts); null when no secret is set. */
  secret: string | null;
  creator_id: number;
  /** The creator's virtual id, as the record shows it. */
  creator: string;
  created_at: number;
  updated_at: number;
  is_valid: Generated<number>;
  /** Deliveries that failed for good in a row; reset by a success or by saving the webhook. */
  failure_streak: Generated<number>;
  invalid_reason: string | null;
  /** The outbox position at creation: only events with a higher id are delivered. */
  start_event_id: Generated<number>;
  /** When the webhook last got a sending slot: the deliverer serves the longest-waiting first. */
  last_claimed_at: number | null;
  /** The resolved subscription (JSON, src/modules/subscriptions); null = every change. */
  subscription: string | null;
  /** The secret a rotation replaced (sealed like `secret`): deliveries are signed with it too until `previous_secret_until`. */
  previous_secret: string | null;
  previous_secret_until: number | null;
  /** Deliveries per second at most (issue 31); null: unpaced. */
  max_rate: number | null;
  /** When the pacing token bucket next allows a delivery; the claim skips the webhook until then. */
  paced_until: number | null;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';
export type DeliveryKind = 'event' | 'ping' | 'redelivery' | 'replay';

/** The live lane and the replay lane behind it (bulk redeliveries, replays of past changes). */
export const LIVE_PRIORITY = 0;
export const REPLAY_PRIORITY = 1;

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: number;
  base_id: number;
  event_id: number | null;
  dedupe_key: string | null;
  /** The `webhook-id` header: the same on every attempt and on redeliveries. */
  msg_id: string;
  kind: DeliveryKind;
  op_type: string | null;
  /** The exact bytes that are sent and signed. */
  body: string;
  status: DeliveryStatus;
  attempts: Generated<number>;
  next_attempt_at: number;
  /** Lease of the worker that claimed it; a crashed worker's lease simply expires. */
  locked_until: number | null;
  claim_token: string | null;
  /** The worker instance holding the lease (its heartbeat in `delivery_workers` keeps the lease alive). */
  lease_owner: string | null;
  /** The changed row: deliveries of one row stay in order; null (pings, redeliveries) is ordered with nothing. */
  row_key: string | null;
  /** The shared body in `webhook_payloads` (then `body` is ''); null: `body` is the body. */
  payload_id: number | null;
  last_status_code: number | null;
  last_error: string | null;
  redelivery_of: number | null;
  created_at: number;
  completed_at: number | null;
  /** The lane: LIVE_PRIORITY (0) first, REPLAY_PRIORITY behind it (migration 0024). */
  priority: Generated<number>;
}

export type AttemptOutcome = 'success' | 'retry' | 'failed' | 'gone';

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempt: number;
  started_at: number;
  duration_ms: number;
  url: string;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
  outcome: AttemptOutcome;
  next_attempt_at: number | null;
}

export interface WebhookAlertsTable {
  id: Generated<number>;
  user_id: number;
  webhook_id: number;
  base_id: number;
  url: string;
  reason: string;
  seen: Generated<number>;
  created_at: number;
}

export interface DeliveryWorkersTable {
  id: string;
  heartbeat_at: number;
}

/** An event's webhook body, stored once for all the webhooks it is delivered to. */
export interface WebhookPayloadsTable {
  id: Generated<number>;
  event_id: number;
  body: string;
  created_at: number;
}
