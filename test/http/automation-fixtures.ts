import { expect } from 'vitest';
import { basePath, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

/** Shared set-up for the automation suites (the notification suites' base with typed columns). */

export interface AutomationRecord {
  id: number;
  dtable_uuid: string;
  run_condition: string;
  trigger: Record<string, unknown>;
  actions: Array<Record<string, unknown>>;
  creator: string;
  ctime: string;
  last_trigger_time: string;
  is_valid: boolean;
  trigger_count: number;
  invalid_reason?: string;
}

export interface RunRecord {
  id: number;
  rule_id: number;
  trigger: string;
  row_ids: string[];
  depth: number;
  status: string;
  actions: Array<{ _id: string; type: string; status: string; detail?: string; error?: string; attempts?: number; output?: string }>;
  error: string;
  attempts: number;
  duration_ms: number;
}

export function automationsPath(base: TestBase, id?: number | string, suffix = ''): string {
  return basePath(base, id === undefined ? 'automation-rules/' : `automation-rules/${id}/${suffix}`);
}

export async function createAutomation(t: TestApp, user: TestUser, base: TestBase, body: unknown): Promise<AutomationRecord> {
  const res = await t.request({ method: 'POST', url: automationsPath(base), token: user.token, payload: body as object });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<AutomationRecord>();
}

export async function listAutomations(t: TestApp, user: TestUser, base: TestBase): Promise<AutomationRecord[]> {
  const res = await t.request({ method: 'GET', url: automationsPath(base), token: user.token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ dtable_automation_rule_list: AutomationRecord[] }>().dtable_automation_rule_list;
}

export async function runsOf(t: TestApp, user: TestUser, base: TestBase, id: number): Promise<RunRecord[]> {
  const res = await t.request({ method: 'GET', url: automationsPath(base, id, 'runs/'), token: user.token });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<{ run_list: RunRecord[] }>().run_list;
}

/** Hands committed changes to the consumers, then performs the queued runs (as the worker does after the commit). */
export async function settle(t: TestApp): Promise<void> {
  // Runs' own writes are changes again (chains): repeat until neither side has anything left.
  for (let i = 0; i < 10; i++) {
    const report = await t.container.dispatcher.runOnce();
    expect(report.failed).toEqual([]);
    const ran = await t.container.automations.runner.runDue();
    if (ran === 0 && report.handed === 0) return;
  }
}

/** The documented "Watch all" trigger (user_account_operations.yaml, createAutomationRule). */
export const WATCH_ALL_TRIGGER = { rule_name: 'Watch all', table_id: '0000', view_id: '0000', condition: 'filters_satisfy', watch_all_columns: true };
