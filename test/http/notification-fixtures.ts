import { expect } from 'vitest';
import { basePath, baseToken, createBase, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

/** Shared set-up for the notification suites: a base with typed columns, rows and rules through HTTP. */

export interface RuleBase extends TestBase {
  /** Base-Token of the owner. */
  token: string;
  /** Column keys by column name. */
  keys: Record<string, string>;
}

const COLUMNS: Array<{ column_name: string; column_type: string; column_data?: unknown }> = [
  { column_name: 'Status', column_type: 'single-select', column_data: { options: [{ id: 'o1', name: 'Open', color: '#FFFFFF', textColor: '#000000' }, { id: 'o2', name: 'Done', color: '#FFFFFF', textColor: '#000000' }] } },
  { column_name: 'Priority', column_type: 'number' },
  { column_name: 'Deadline', column_type: 'date', column_data: { format: 'YYYY-MM-DD' } },
  { column_name: 'Assignee', column_type: 'collaborator' },
  { column_name: 'Notes', column_type: 'text' },
  { column_name: 'Flag', column_type: 'checkbox' },
];

export function gateway(base: Pick<TestBase, 'uuid'>, suffix: string): string {
  return `/api-gateway/api/v2/dtables/${base.uuid}/${suffix}`;
}

/** A base owned by `owner` with Table1 columns Name, Status, Priority, Deadline, Assignee, Notes, Flag. */
export async function ruleBase(t: TestApp, owner: TestUser, name?: string): Promise<RuleBase> {
  const base = await createBase(t, owner, name);
  const token = await baseToken(t, owner, base);
  const keys: Record<string, string> = { Name: '0000' };
  for (const column of COLUMNS) {
    const res = await t.request({ method: 'POST', url: gateway(base, 'columns/'), token, payload: { table_name: 'Table1', ...column } });
    expect(res.statusCode, res.body).toBe(200);
    keys[column.column_name] = res.json<{ key: string }>().key;
  }
  return { ...base, token, keys };
}

export async function share(t: TestApp, owner: TestUser, base: TestBase, user: TestUser, permission: 'r' | 'rw' | 'admin'): Promise<void> {
  const res = await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: user.email, permission } });
  expect(res.statusCode, res.body).toBe(201);
}

export async function unshare(t: TestApp, owner: TestUser, base: TestBase, user: TestUser): Promise<void> {
  const res = await t.request({ method: 'DELETE', url: basePath(base, 'share/'), token: owner.token, payload: { email: user.email } });
  expect(res.statusCode, res.body).toBe(200);
}

export async function addRows(t: TestApp, base: RuleBase, rows: Array<Record<string, unknown>>, token = base.token): Promise<string[]> {
  const res = await t.request({ method: 'POST', url: gateway(base, 'rows/'), token, payload: { table_name: 'Table1', rows } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ row_ids: Array<{ _id: string }> }>().row_ids.map((r) => r._id);
}

export async function updateRow(t: TestApp, base: RuleBase, rowId: string, row: Record<string, unknown>, token = base.token): Promise<void> {
  const res = await t.request({ method: 'PUT', url: gateway(base, 'rows/'), token, payload: { table_name: 'Table1', updates: [{ row_id: rowId, row }] } });
  expect(res.statusCode, res.body).toBe(200);
}

export function rulesPath(base: TestBase, id?: number | string): string {
  return basePath(base, id === undefined ? 'notification-rules/' : `notification-rules/${id}/`);
}

export interface RuleRecord {
  id: number;
  dtable_uuid: string;
  run_condition: string;
  trigger: Record<string, unknown>;
  action: Record<string, unknown>;
  creator: string;
  ctime: string;
  last_trigger_time: string;
  is_valid: number;
}

export async function createRule(t: TestApp, user: TestUser, base: TestBase, body: unknown): Promise<RuleRecord> {
  const res = await t.request({ method: 'POST', url: rulesPath(base), token: user.token, payload: body as object });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<RuleRecord>();
}

export async function listRules(t: TestApp, user: TestUser, base: TestBase): Promise<RuleRecord[]> {
  const res = await t.request({ method: 'GET', url: rulesPath(base), token: user.token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ dtable_notification_rule_list: RuleRecord[] }>().dtable_notification_rule_list;
}

export interface Notice {
  id: number;
  type: string;
  msg_type: string;
  dtable_uuid: string;
  detail: Record<string, unknown>;
  time: string;
  seen: boolean;
}

export async function inbox(t: TestApp, user: TestUser): Promise<Notice[]> {
  const res = await t.request({ method: 'GET', url: '/api/v2.1/notifications/?per_page=100', token: user.token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ notification_list: Notice[] }>().notification_list;
}

/** Hands committed change events to the consumers (the tests' stand-in for the running worker). */
export async function dispatch(t: TestApp): Promise<void> {
  const report = await t.container.dispatcher.runOnce();
  expect(report.failed).toEqual([]);
}

export function modifiedRule(base: RuleBase, users: string[], trigger: Record<string, unknown> = {}, action: Record<string, unknown> = {}) {
  return {
    run_condition: 'per_update',
    trigger: { rule_name: 'Changes', table_id: '0000', view_id: '0000', condition: 'rows_modified', ...trigger },
    action: { type: 'notify', users, default_msg: 'Row {Name} changed', ...action },
  };
}

export function deadlineRule(users: string[], trigger: Record<string, unknown> = {}, action: Record<string, unknown> = {}) {
  return {
    run_condition: 'per_day',
    trigger: { rule_name: 'Due soon', table_id: '0000', view_id: '0000', condition: 'near_deadline', date_column_name: 'Deadline', alarm_days: 2, notify_hour: 9, ...trigger },
    action: { type: 'notify', users, default_msg: '{Name} is due on {Deadline}', ...action },
  };
}
