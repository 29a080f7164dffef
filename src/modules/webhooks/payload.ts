import { createHash, randomBytes } from 'node:crypto';
import type { ChangeEvent } from '../events/index.js';
import { pythonJsonDumps } from './python-json.js';
import { changeData } from '../subscriptions/index.js';

/**
 * The body of a delivery: `{"event": "update", "data": {…}}` with `data` as the original's
 * table-events message (contract §10), except that insert and delete carry the row's cells and
 * modify carries `value` and `old_value` of each changed cell (`row_data` as the event holds it).
 */
export function eventBody(event: ChangeEvent): string {
  return pythonJsonDumps({ event: 'update', data: changeData(event) });
}

/** The body of `POST …/ping/`: a test event receivers can tell apart by its `event` field. */
export function pingBody(input: { baseUuid: string; webhookId: number; opUser: string; now: number }): string {
  return pythonJsonDumps({
    event: 'ping',
    data: {
      dtable_uuid: input.baseUuid,
      webhook_id: input.webhookId,
      op_user: input.opUser,
      op_type: 'ping',
      op_time: input.now / 1000,
    },
  });
}

/** A `webhook-id`: `msg_` and 24 random URL-safe characters, fixed for the delivery's lifetime (pings). */
export function newMessageId(): string {
  return `msg_${randomBytes(18).toString('base64url')}`;
}

/**
 * The `webhook-id` of a change's delivery to a webhook: `msg_` and 24 URL-safe characters derived from
 * the webhook, the change event and its write, so whoever sends it — again after a crash, or after a
 * restore from a backup made before it was recorded as delivered — sends the id the receiver already
 * saw, and the receiver can drop the repeat. The write's random id (`events.write_id`) keeps a change
 * made anew after a restore (which may get the event id of a lost one) apart from the lost one.
 */
export function changeMessageId(webhookId: number, eventId: number, writeId: string | null | undefined): string {
  return `msg_${createHash('sha256').update(`${webhookId}:${eventId}:${writeId ?? ''}`).digest().subarray(0, 18).toString('base64url')}`;
}
