import { randomUUID } from 'node:crypto';
import type { DialectName, Executor } from '../../db/index.js';
import type { Mailer } from '../../platform/mail/index.js';
import type { OutboundHttp } from '../../platform/http/index.js';
import type { StoredRow } from '../filters/index.js';
import { recipientsFor, renderMessage, writeNotices, type Members, type MetaDoc, type MetaTable, type PreparedRule } from '../notifications/index.js';
import type { ScopedRowWriter } from '../rows/index.js';
import { deliveryHeaders, type SecretBox } from '../webhooks/index.js';
import { linkRecords } from './link-records.js';
import { openSecret } from './secrets.js';
import { MSG_TYPE_AUTOMATION_NOTIFY, type AutomationAction, type AutomationRule } from './model.js';

/** What an action sees: the rule, the triggering row (null for a periodic run without rows), the base. */
export interface ActionInput {
  rule: AutomationRule;
  row: StoredRow | null;
  table: MetaTable;
  members: Members;
  timeZone: string;
  now: number;
  /** The base's structure (link_records finds the linked table in it) and the database dialect. */
  doc: MetaDoc;
  dialect: DialectName;
}

const EMAIL = /^[^\s@,;]+@[^\s@,;]+\.[^\s@,;]+$/;

/** `{Column}` placeholders filled from the row (the notification rules' templating). */
export function render(template: string, input: ActionInput): string {
  if (!input.row) return template;
  const userName = (id: string) => input.members.get(id)?.name ?? id;
  return renderMessage(template, input.table, input.row, { userName, timeZone: input.timeZone });
}

/** `notify`: inbox notices (and their e-mail fallback) in the caller's transaction; returns a summary. */
export async function notify(trx: Executor, action: AutomationAction, input: ActionInput, emailDelayMs: number): Promise<string> {
  const { rule, row } = input;
  const users = (action.users as string[] | undefined) ?? [];
  const key = typeof action.users_column_key === 'string' && action.users_column_key !== '' ? action.users_column_key : undefined;
  const pseudo = { rule: { action: { users, users_column_key: key } }, table: input.table } as unknown as PreparedRule;
  const recipients = row
    ? recipientsFor(pseudo, row, input.members, { now: input.now, timeZone: input.timeZone })
    : [...new Set(users.map((u) => input.members.get(u)?.userId).filter((id): id is number => id !== undefined))];
  const detail = {
    table_id: rule.trigger.table_id,
    view_id: rule.trigger.view_id,
    condition: rule.trigger.condition,
    rule_id: rule.id,
    rule_name: rule.trigger.rule_name,
    msg: render(String(action.default_msg ?? ''), input),
    row_id_list: row ? [row._id] : [],
    automation: true,
  };
  const notices = recipients.map((userId) => ({ userId, baseId: rule.baseId, dtableUuid: rule.dtableUuid, msgType: MSG_TYPE_AUTOMATION_NOTIFY, detail }));
  await writeNotices(trx, notices, input.now, emailDelayMs);
  return `${notices.length} notified`;
}

/** The row-writing actions, inside the rows module's write (events, webhooks and rules fire as for any write). */
export async function writeRow(w: ScopedRowWriter, action: AutomationAction, input: ActionInput): Promise<string> {
  const tableId = input.table._id;
  switch (action.type) {
    case 'update_record':
      if (!input.row) return 'no row';
      await w.update({ table_id: tableId, updates: [{ row_id: input.row._id, row: filled(action.updates, input) }] });
      return `row ${input.row._id} updated`;
    case 'lock_record':
      if (!input.row) return 'no row';
      await w.lock({ table_id: tableId, row_ids: [input.row._id] }, true);
      return `row ${input.row._id} locked`;
    case 'add_record': {
      const cells = filled(action.row, input);
      const result = (await w.append({ table_id: String(action.table_id ?? tableId), rows: [cells] })) as { row_ids?: Array<{ _id: string }> };
      return `row ${result.row_ids?.[0]?._id ?? ''} added`;
    }
    case 'link_records': {
      if (!input.row) return 'no row';
      const creator = [...input.members.entries()].find(([, m]) => m.userId === input.rule.creatorId)?.[0];
      return linkRecords(w, input.rule.baseId, action, { ...input, row: input.row, currentUser: creator });
    }
    default:
      throw new Error(`${action.type} is not a row action`);
  }
}

/** Cell values with `{Column}` placeholders in text values filled from the triggering row. */
function filled(cells: unknown, input: ActionInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries((cells as Record<string, unknown> | undefined) ?? {})) out[key] = typeof value === 'string' ? render(value, input) : value;
  return out;
}

function addressList(template: unknown, input: ActionInput): string[] {
  const text = render(typeof template === 'string' ? template : '', input);
  return [...new Set(text.split(/[,;\s]+/).map((s) => s.trim()).filter((s) => EMAIL.test(s)))];
}

/** `send_email` through the configured mailer (SMTP_URL, else the spool); copy_to receives the same message. */
export async function sendEmail(mailer: Mailer, action: AutomationAction, input: ActionInput): Promise<string> {
  const to = [...addressList(action.send_to, input), ...addressList(action.copy_to, input)];
  if (to.length === 0) throw new PermanentError('no valid recipient address after filling in the row');
  await mailer.send({ to: to.join(', '), subject: render(String(action.subject ?? ''), input) || '(no subject)', text: render(String(action.default_msg ?? ''), input) });
  return `sent to ${to.length}`;
}

/** `call_webhook`: POST the templated body (or the run as JSON), signed like webhooks, through the SSRF guard. */
export async function callWebhook(http: OutboundHttp, action: AutomationAction, input: ActionInput, secrets: SecretBox): Promise<string> {
  const secret = openSecret(secrets, action);
  if (secret === null && typeof action.secret === 'string' && action.secret !== '') throw new PermanentError('the webhook secret cannot be decrypted (SECRET_KEY changed?); save the rule with its secret again');
  const template = typeof action.body === 'string' ? action.body : '';
  const body =
    template !== ''
      ? render(template, input)
      : JSON.stringify({ rule_id: input.rule.id, rule_name: input.rule.trigger.rule_name, dtable_uuid: input.rule.dtableUuid, row: input.row });
  const headers = deliveryHeaders({
    msgId: `msg_${randomUUID()}`,
    timestampSeconds: Math.floor(input.now / 1000),
    body,
    secret,
  });
  const result = await http.post(String(action.url), headers, body);
  if (!result.ok) {
    if (result.kind === 'blocked' || result.kind === 'invalid_url') throw new PermanentError(result.message);
    throw new Error(`${result.kind}: ${result.message}`);
  }
  if (result.status >= 200 && result.status < 300) return `HTTP ${result.status}`;
  const message = `HTTP ${result.status}`;
  if (result.status >= 400 && result.status < 500 && result.status !== 408 && result.status !== 429) throw new PermanentError(message);
  throw new Error(message);
}

/** A failure retrying cannot fix (blocked address, no recipient, 4xx). */
export class PermanentError extends Error {}
