import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { ADMIN, apiCaller, launchBrowser, signIn, startConsoleServer, step } from './browser.js';

const BASE = 'Automated';

/**
 * The automation rule editor and run log in headless Chromium against a real server (API, worker,
 * scheduler): build a rule with a trigger, filters and two actions, let a row added over the API fire
 * it, read the run in the log, then edit the rule.
 */
describe('console: automations (headless Chromium)', () => {
  let server: RunningServer;
  let url: string;
  let browser: Browser;
  let page: Page;
  let adminToken: string;
  let workspaceId: number;
  let baseUuid: string;

  const call = apiCaller(() => url, () => adminToken);
  const rulesPath = () => `/api/v2.1/workspace/${workspaceId}/dtable/${encodeURIComponent(BASE)}/automation-rules/`;
  const gw = async <T>(suffix: string, init: { method?: string; body?: unknown } = {}) => {
    const token = (await call<{ access_token: string }>(`/api/v2.1/workspace/${workspaceId}/dtable/${encodeURIComponent(BASE)}/access-token/`)).data.access_token;
    return call<T>(`/api-gateway/api/v2/dtables/${baseUuid}/${suffix}`, { ...init, token });
  };

  beforeAll(async () => {
    ({ server, url } = await startConsoleServer());
    browser = await launchBrowser();
    const login = await fetch(`${url}/api2/auth-token/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: ADMIN.email, password: ADMIN.password }) });
    adminToken = ((await login.json()) as { token: string }).token;
    expect((await call('/api/v2.1/dtables/', { method: 'POST', body: { name: BASE } })).status).toBeLessThan(300);
    const list = await call<{ workspace_list: Array<{ table_list?: Array<{ name: string; uuid: string; workspace_id: number }> }> }>('/api/v2.1/workspaces/');
    const base = list.data.workspace_list.flatMap((w) => w.table_list ?? []).find((b) => b.name === BASE)!;
    workspaceId = base.workspace_id;
    baseUuid = base.uuid;
    for (const [name, type] of [['Status', 'text'], ['Notes', 'text']]) {
      expect((await gw('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: name, column_type: type } })).status).toBe(200);
    }
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(10_000);
    page.on('dialog', (d) => void d.accept());
    await signIn(page, url, ADMIN.email, ADMIN.password);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('builds a rule with a filter and two actions; a matching new row runs it and the run log shows the outcome; the rule can be edited', async () => {
    await step(page, 'automation-editor', async () => {
      await page.goto(`${url}/#/base/${workspaceId}/${encodeURIComponent(BASE)}/integrations`);
      const form = page.getByRole('form', { name: 'New automation' });
      await form.getByLabel('Automation name').fill('Mark urgent');
      await form.getByLabel('Trigger', { exact: true }).selectOption('rows_added');
      await form.getByRole('button', { name: '+ Filter' }).click();
      await form.getByLabel('Filter 1 column').selectOption({ label: 'Status' });
      await form.getByLabel('Filter 1 predicate').selectOption('is');
      await form.getByLabel('Filter 1 value').fill('urgent');
      // The first action (notify) is replaced by an update of the row and a lock.
      await form.getByLabel('Action to add').selectOption('update_record');
      await form.getByRole('button', { name: 'Add action' }).click();
      await form.getByLabel('Action 2 column').selectOption({ label: 'Notes' });
      await form.getByLabel('Action 2 value').fill('handled {Name}');
      await form.getByLabel('Action to add').selectOption('lock_record');
      await form.getByRole('button', { name: 'Add action' }).click();
      await form.getByRole('button', { name: 'Remove action 1' }).click();
      await form.getByRole('button', { name: 'Create automation' }).click();
      await page.getByRole('list', { name: 'Automations' }).getByText('Mark urgent', { exact: true }).waitFor();
    });
    const created = await call<{ dtable_automation_rule_list: Array<{ id: number; trigger: Record<string, unknown>; actions: Array<Record<string, unknown>> }> }>(rulesPath());
    const [rule] = created.data.dtable_automation_rule_list;
    expect(rule!.trigger).toMatchObject({ condition: 'rows_added', filters: [{ filter_predicate: 'is', filter_term: 'urgent' }] });
    expect(rule!.actions.map((a) => a.type)).toEqual(['update_record', 'lock_record']);

    const added = await gw<{ row_ids: Array<{ _id: string }> }>('rows/', { method: 'POST', body: { table_name: 'Table1', rows: [{ Name: 'Fire', Status: 'urgent' }, { Name: 'Calm', Status: 'later' }] } });
    expect(added.status).toBe(200);
    const fireId = added.data.row_ids[0]!._id;

    await step(page, 'automation-run-log', async () => {
      const item = page.getByRole('list', { name: 'Automations' }).getByRole('listitem').filter({ hasText: 'Mark urgent' });
      await item.getByRole('button', { name: 'Run log' }).click();
      const log = page.getByRole('table', { name: 'Runs of Mark urgent' });
      // The worker runs it after the commit; the log polls.
      await log.getByText(`row ${fireId} updated`, { exact: false }).waitFor({ timeout: 20_000 });
      await log.getByText(`row ${fireId} locked`, { exact: false }).waitFor();
      expect(await log.getByRole('row').count()).toBe(2); // header + one run: the other row did not match
    });
    const row = await gw<Record<string, unknown>>(`rows/${fireId}/?table_name=Table1&convert_keys=true`);
    expect(row.data).toMatchObject({ Notes: 'handled Fire' });

    await step(page, 'automation-edit', async () => {
      const item = page.getByRole('list', { name: 'Automations' }).getByRole('listitem').filter({ hasText: 'Mark urgent' });
      await item.getByRole('button', { name: 'Edit' }).click();
      const form = page.getByRole('form', { name: 'Edit automation' });
      await form.getByLabel('Automation name').fill('Mark very urgent');
      await form.getByRole('button', { name: 'Save automation' }).click();
      await page.getByRole('list', { name: 'Automations' }).getByText('Mark very urgent', { exact: true }).waitFor();
    });
    const edited = await call<{ dtable_automation_rule_list: Array<{ id: number; trigger: Record<string, unknown>; actions: Array<Record<string, unknown>> }> }>(rulesPath());
    expect(edited.data.dtable_automation_rule_list).toHaveLength(1);
    expect(edited.data.dtable_automation_rule_list[0]).toMatchObject({ id: rule!.id, trigger: { rule_name: 'Mark very urgent', condition: 'rows_added' } });
    expect(edited.data.dtable_automation_rule_list[0]!.actions.map((a) => a.type)).toEqual(['update_record', 'lock_record']);

    // A bad rule shows the API's 400 in the form and creates nothing.
    await step(page, 'automation-bad-input', async () => {
      const form = page.getByRole('form', { name: 'New automation' });
      await form.getByLabel('Automation name').fill('Broken hook');
      await form.getByLabel('Action to add').selectOption('call_webhook');
      await form.getByRole('button', { name: 'Add action' }).click();
      await form.getByRole('button', { name: 'Remove action 1' }).click();
      await form.getByLabel('Action 1 URL').fill('ftp://example.com/');
      await form.getByRole('button', { name: 'Create automation' }).click();
      await form.getByText(/actions\.0\.url invalid/).waitFor();
    });
    expect((await call<{ dtable_automation_rule_list: unknown[] }>(rulesPath())).data.dtable_automation_rule_list).toHaveLength(1);
  }, 90_000);
});
