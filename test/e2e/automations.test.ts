import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleSuite, step } from './browser.js';

const BASE = 'Automated';

/**
 * The automation rule editor and run log in headless Chromium against a real server (API, worker,
 * scheduler): build a rule with a trigger, filters and two actions, let a row added over the API fire
 * it, read the run in the log, then edit the rule.
 */
describe('console: automations (headless Chromium)', () => {
  let linkId: string;
  let clientIds: string[] = [];
  /** Column keys by "Table.Column". */
  const keys: Record<string, string> = {};

  const s = new ConsoleSuite(BASE);
  const { call, gw } = s;
  const rulesPath = () => `/api/v2.1/workspace/${s.workspaceId}/dtable/${encodeURIComponent(BASE)}/automation-rules/`;

  beforeAll(async () => {
    await s.start();
    await s.createBase();
    for (const [name, type] of [['Status', 'text'], ['Notes', 'text'], ['Code', 'text']]) {
      expect((await gw('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: name, column_type: type } })).status).toBe(200);
    }
    // A linked table for the link_records action: rows are linked when Code = Name and Status = Region, among Tier "gold".
    const clients = { table_name: 'Clients', columns: [{ column_name: 'Name', column_type: 'text' }, { column_name: 'Region', column_type: 'text' }, { column_name: 'Tier', column_type: 'text' }] };
    expect((await gw('tables/', { method: 'POST', body: clients })).status).toBe(200);
    const link = await gw<{ data: { link_id: string } }>('columns/', { method: 'POST', body: { table_name: 'Table1', column_name: 'Clients', column_type: 'link', column_data: { table: 'Table1', other_table: 'Clients' } } });
    expect(link.status).toBe(200);
    linkId = link.data.data.link_id;
    const rows = [{ Name: 'acme', Region: 'north', Tier: 'gold' }, { Name: 'acme', Region: 'south', Tier: 'gold' }, { Name: 'acme', Region: 'north', Tier: 'tin' }, { Name: 'zeta', Region: 'north', Tier: 'gold' }];
    const added = await gw<{ row_ids: Array<{ _id: string }> }>('rows/', { method: 'POST', body: { table_name: 'Clients', rows } });
    expect(added.status).toBe(200);
    clientIds = added.data.row_ids.map((r) => r._id);
    const meta = await gw<{ metadata: { tables: Array<{ name: string; columns: Array<{ name: string; key: string }> }> } }>('metadata/');
    for (const table of meta.data.metadata.tables) for (const column of table.columns) keys[`${table.name}.${column.name}`] = column.key;
    await s.openPage({ viewport: { width: 1280, height: 900 } });
    s.page.on('dialog', (d) => void d.accept());
  }, 90_000);

  afterAll(() => s.close());

  it('builds a rule with a filter and two actions; a matching new row runs it and the run log shows the outcome; the rule can be edited', async () => {
    await step(s.page, 'automation-editor', async () => {
      await s.page.goto(`${s.url}/#/base/${s.workspaceId}/${encodeURIComponent(BASE)}/integrations`);
      const form = s.page.getByRole('form', { name: 'New automation' });
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
      await s.page.getByRole('list', { name: 'Automations' }).getByText('Mark urgent', { exact: true }).waitFor();
    });
    const created = await call<{ dtable_automation_rule_list: Array<{ id: number; trigger: Record<string, unknown>; actions: Array<Record<string, unknown>> }> }>(rulesPath());
    const [rule] = created.data.dtable_automation_rule_list;
    expect(rule!.trigger).toMatchObject({ condition: 'rows_added', filters: [{ filter_predicate: 'is', filter_term: 'urgent' }] });
    expect(rule!.actions.map((a) => a.type)).toEqual(['update_record', 'lock_record']);

    const added = await gw<{ row_ids: Array<{ _id: string }> }>('rows/', { method: 'POST', body: { table_name: 'Table1', rows: [{ Name: 'Fire', Status: 'urgent' }, { Name: 'Calm', Status: 'later' }] } });
    expect(added.status).toBe(200);
    const fireId = added.data.row_ids[0]!._id;

    await step(s.page, 'automation-run-log', async () => {
      const item = s.page.getByRole('list', { name: 'Automations' }).getByRole('listitem').filter({ hasText: 'Mark urgent' });
      await item.getByRole('button', { name: 'Run log' }).click();
      const log = s.page.getByRole('table', { name: 'Runs of Mark urgent' });
      // The worker runs it after the commit; the log polls.
      await log.getByText(`row ${fireId} updated`, { exact: false }).waitFor({ timeout: 20_000 });
      await log.getByText(`row ${fireId} locked`, { exact: false }).waitFor();
      expect(await log.getByRole('row').count()).toBe(2); // header + one run: the other row did not match
    });
    const row = await gw<Record<string, unknown>>(`rows/${fireId}/?table_name=Table1&convert_keys=true`);
    expect(row.data).toMatchObject({ Notes: 'handled Fire' });

    await step(s.page, 'automation-edit', async () => {
      const item = s.page.getByRole('list', { name: 'Automations' }).getByRole('listitem').filter({ hasText: 'Mark urgent' });
      await item.getByRole('button', { name: 'Edit' }).click();
      const form = s.page.getByRole('form', { name: 'Edit automation' });
      await form.getByLabel('Automation name').fill('Mark very urgent');
      await form.getByRole('button', { name: 'Save automation' }).click();
      await s.page.getByRole('list', { name: 'Automations' }).getByText('Mark very urgent', { exact: true }).waitFor();
    });
    const edited = await call<{ dtable_automation_rule_list: Array<{ id: number; trigger: Record<string, unknown>; actions: Array<Record<string, unknown>> }> }>(rulesPath());
    expect(edited.data.dtable_automation_rule_list).toHaveLength(1);
    expect(edited.data.dtable_automation_rule_list[0]).toMatchObject({ id: rule!.id, trigger: { rule_name: 'Mark very urgent', condition: 'rows_added' } });
    expect(edited.data.dtable_automation_rule_list[0]!.actions.map((a) => a.type)).toEqual(['update_record', 'lock_record']);

    // A bad rule shows the API's 400 in the form and creates nothing.
    await step(s.page, 'automation-bad-input', async () => {
      const form = s.page.getByRole('form', { name: 'New automation' });
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

  it('link_records in the editor: several match conditions and filters on the linked table; the run links only the rows passing all of them; the rule loads back into the editor', async () => {
    await step(s.page, 'automation-link-records', async () => {
      await s.page.goto(`${s.url}/#/base/${s.workspaceId}/${encodeURIComponent(BASE)}/integrations`);
      const form = s.page.getByRole('form', { name: 'New automation' });
      await form.getByLabel('Automation name').fill('Link clients');
      await form.getByLabel('Trigger', { exact: true }).selectOption('rows_added');
      await form.getByLabel('Action to add').selectOption('link_records');
      await form.getByRole('button', { name: 'Add action' }).click();
      await form.getByRole('button', { name: 'Remove action 1' }).click();
      await form.getByLabel('Action 1 link column').selectOption({ label: 'Clients' });
      await form.getByLabel('Action 1 match 1 column', { exact: true }).selectOption({ label: 'Code' });
      await form.getByLabel('Action 1 match 1 other column').selectOption({ label: 'Name' });
      await form.getByRole('button', { name: 'Add match condition to action 1' }).click();
      await form.getByLabel('Action 1 match 2 column', { exact: true }).selectOption({ label: 'Status' });
      await form.getByLabel('Action 1 match 2 other column').selectOption({ label: 'Region' });
      await form.getByRole('button', { name: 'Action 1 linked + Filter', exact: true }).click();
      await form.getByLabel('Action 1 linked Filter 1 column').selectOption({ label: 'Tier' });
      await form.getByLabel('Action 1 linked Filter 1 predicate').selectOption('is');
      await form.getByLabel('Action 1 linked Filter 1 value').fill('gold');
      await form.getByRole('button', { name: 'Create automation' }).click();
      await s.page.getByRole('list', { name: 'Automations' }).getByText('Link clients', { exact: true }).waitFor();
    });
    const listed = await call<{ dtable_automation_rule_list: Array<{ id: number; trigger: { rule_name: string }; actions: Array<Record<string, unknown>> }> }>(rulesPath());
    const rule = listed.data.dtable_automation_rule_list.find((r) => r.trigger.rule_name === 'Link clients')!;
    expect(rule.actions).toEqual([
      expect.objectContaining({
        type: 'link_records',
        link_id: linkId,
        match_conditions: [
          { column_key: keys['Table1.Code'], other_column_key: keys['Clients.Name'] },
          { column_key: keys['Table1.Status'], other_column_key: keys['Clients.Region'] },
        ],
        filters: [{ column_key: keys['Clients.Tier'], filter_predicate: 'is', filter_term: 'gold' }],
        filter_conjunction: 'And',
      }),
    ]);

    const added = await gw<{ row_ids: Array<{ _id: string }> }>('rows/', { method: 'POST', body: { table_name: 'Table1', rows: [{ Name: 'Order', Code: 'acme', Status: 'north' }] } });
    expect(added.status).toBe(200);
    const orderId = added.data.row_ids[0]!._id;
    await step(s.page, 'automation-link-records-run', async () => {
      const item = s.page.getByRole('list', { name: 'Automations' }).getByRole('listitem').filter({ hasText: 'Link clients' });
      await item.getByRole('button', { name: 'Run log' }).click();
      await s.page.getByRole('table', { name: 'Runs of Link clients' }).getByText(/\b1 rows? linked/).waitFor({ timeout: 20_000 });
    });
    // Only the client matching both conditions and the filter: not the other region, the other tier or the other name.
    const order = await gw<Record<string, unknown>>(`rows/${orderId}/?table_name=Table1`);
    const linked = JSON.stringify(order.data[keys['Table1.Clients']!] ?? null);
    expect(linked).toContain(clientIds[0]);
    for (const other of clientIds.slice(1)) expect(linked).not.toContain(other);

    await step(s.page, 'automation-link-records-edit', async () => {
      const item = s.page.getByRole('list', { name: 'Automations' }).getByRole('listitem').filter({ hasText: 'Link clients' });
      await item.getByRole('button', { name: 'Edit' }).click();
      const form = s.page.getByRole('form', { name: 'Edit automation' });
      expect(await form.getByLabel('Action 1 match 2 other column').inputValue()).toBe(keys['Clients.Region']);
      expect(await form.getByLabel('Action 1 linked Filter 1 value').inputValue()).toBe('gold');
      await form.getByRole('button', { name: 'Remove match 2 of action 1' }).click();
      await form.getByLabel('Action 1 linked Filter conjunction').selectOption('Or');
      await form.getByRole('button', { name: 'Save automation' }).click();
      await form.waitFor({ state: 'detached' });
    });
    const saved = (await call<{ dtable_automation_rule_list: Array<{ id: number; actions: Array<Record<string, unknown>> }> }>(rulesPath())).data.dtable_automation_rule_list.find((r) => r.id === rule.id)!;
    expect(saved.actions[0]).toMatchObject({ match_conditions: [{ column_key: keys['Table1.Code'], other_column_key: keys['Clients.Name'] }], filter_conjunction: 'Or', filters: [{ filter_term: 'gold' }] });
  }, 90_000);
});
