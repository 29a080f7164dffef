import type { ChangeEvent } from '../events/index.js';
import { presentCell } from '../../shared/dates/index.js';
import type { StreamMessage } from '../../platform/nats.js';

/** A subject token: NATS separates tokens by `.` and reserves `*` and `>`; anything but [A-Za-z0-9_-] becomes `_`. */
function token(value: string): string {
  const cleaned = value.replace(/[^A-Za-z0-9_-]/g, '_');
  return cleaned === '' ? '_' : cleaned;
}

/** `<prefix>.<base_uuid>.<table_id>.<op>`: subscribers filter by base, table or operation with wildcards. */
export function changeSubject(prefix: string, event: Pick<ChangeEvent, 'baseUuid' | 'tableId' | 'opType'>): string {
  return `${prefix}.${token(event.baseUuid)}.${token(event.tableId)}.${token(event.opType)}`;
}

/**
 * The message body: the change as a webhook's `data` carries it (dates presented as every answer
 * shows them), plus `id`, the outbox's id of the change (also the message's `Nats-Msg-Id`), and `row`.
 * A body over `maxBytes` goes without its cells (`truncated: true`): the server would refuse it, and a
 * refused change would hold back every later one.
 */
export function changeBody(event: ChangeEvent, maxBytes: number): string {
  const head = {
    id: event.id,
    dtable_uuid: event.baseUuid,
    table_id: event.tableId,
    table_name: event.tableName,
    row_id: event.rowId,
    row_name: event.rowName,
    op_type: event.opType,
    op_user: event.opUser,
    op_app: event.opApp,
    op_time: event.opTime / 1000,
  };
  const rowData = event.rowData.map((item) => ({
    ...item,
    value: presentCell(item.column_type, item.column_data, item.value),
    old_value: presentCell(item.column_type, item.column_data, item.old_value),
  }));
  const body = JSON.stringify({ ...head, row_data: rowData, row: event.row });
  if (Buffer.byteLength(body) <= maxBytes) return body;
  return JSON.stringify({ ...head, row_data: null, row: null, truncated: true });
}

export function changeMessage(prefix: string, event: ChangeEvent, maxBytes: number): StreamMessage {
  return { subject: changeSubject(prefix, event), data: changeBody(event, maxBytes), id: String(event.id) };
}
