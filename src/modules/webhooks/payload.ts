import { createHash, randomBytes } from 'node:crypto';
import type { ChangeEvent } from '../events/index.js';
import { pythonJsonDumps } from './python-json.js';
import { presentCell } from '../../shared/dates/index.js';

/**
 * The body of a delivery: `{"event": "update", "data": {…}}` with `data` as the original's
 * table-events message (contract §10), except that insert and delete carry the row's cells and
 * modify carries `value` and `old_value` of each changed cell (`row_data` as the event holds it).
 */
export function eventBody(event: ChangeEvent): string {
  return pythonJsonDumps({
    event: 'update',
    data: {
      dtable_uuid: event.baseUuid,
      row_id: event.rowId,
      op_user: event.opUser,
      op_type: event.opType,
      op_time: event.opTime / 1000,
      table_id: event.tableId,
      table_name: event.tableName,
      row_name: event.rowName,
      row_data: presentedRowData(event),
      op_app: event.opApp,
    },
  });
}

/** `row_data` with date cells as every answer shows them (RFC 3339 in TIME_ZONE, src/shared/dates). */
function presentedRowData(event: ChangeEvent): ChangeEvent['rowData'] {
  return event.rowData.map((item) => ({
    ...item,
    value: presentCell(item.column_type, item.column_data, item.value),
    old_value: presentCell(item.column_type, item.column_data, item.old_value),
  }));
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
