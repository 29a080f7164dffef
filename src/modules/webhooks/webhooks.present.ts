import type { AttemptRow, DeliveryRow } from './deliveries.repository.js';
import { SECRET_MASK } from './secret-box.js';
import type { WebhookRow } from './webhooks.repository.js';
import { presentSubscription, readSubscription } from '../subscriptions/index.js';

/** `"2021-03-16T14:27:58.873621"`: the original renders a webhook's created_at as a naive UTC datetime. */
export function naiveDatetime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23) + '000';
}

/** ISO-8601 with milliseconds and offset; "" for none. */
export function isoMillis(ms: number | null): string {
  return ms === null ? '' : new Date(ms).toISOString().replace('Z', '+00:00');
}

/**
 * The webhook record of contract §6; the secret is never shown, only that one is set. A subscription
 * (issue 31), a running secret rotation and a pacing rate add their fields; without them the record is the original's.
 */
export function webhookRecord(row: WebhookRow, baseUuid: string) {
  const subscription = readSubscription(row.subscription);
  const rotationEnds = row.previous_secret_until === null ? null : Number(row.previous_secret_until);
  return {
    ...(subscription ? { subscription: presentSubscription(subscription) } : {}),
    ...(rotationEnds !== null && row.previous_secret !== null ? { previous_secret_valid_until: isoMillis(rotationEnds) } : {}),
    ...(row.max_rate !== null ? { max_rate: Number(row.max_rate) } : {}),
    id: Number(row.id),
    dtable_uuid: baseUuid,
    url: row.url,
    creator: row.creator,
    created_at: naiveDatetime(Number(row.created_at)),
    is_valid: Number(row.is_valid) === 1,
    settings: row.secret === null ? {} : { secret: SECRET_MASK },
  };
}

export function deliveryRecord(row: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: Number(row.id),
    webhook_id: Number(row.webhook_id),
    webhook_msg_id: row.msg_id,
    event_id: row.event_id === null ? null : Number(row.event_id),
    kind: row.kind,
    op_type: row.op_type,
    status: row.status,
    attempt_count: Number(row.attempts),
    next_attempt_at: row.status === 'pending' ? isoMillis(Number(row.next_attempt_at)) : '',
    created_at: isoMillis(Number(row.created_at)),
    completed_at: isoMillis(row.completed_at === null ? null : Number(row.completed_at)),
    redelivery_of: row.redelivery_of === null ? null : Number(row.redelivery_of),
    last_status_code: row.last_status_code === null ? null : Number(row.last_status_code),
    last_error: row.last_error,
    request_body: row.body,
    attempts: attempts.map((a) => ({
      attempt: Number(a.attempt),
      time: isoMillis(Number(a.started_at)),
      url: a.url,
      status_code: a.status_code === null ? null : Number(a.status_code),
      latency_ms: Number(a.duration_ms),
      outcome: a.outcome,
      error: a.error,
      response_excerpt: a.response_excerpt,
      next_attempt_at: isoMillis(a.next_attempt_at === null ? null : Number(a.next_attempt_at)),
    })),
  };
}
