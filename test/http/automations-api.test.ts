import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { gateway, ruleBase, share, type RuleBase } from './notification-fixtures.js';
import { automationsPath, createAutomation, listAutomations, WATCH_ALL_TRIGGER, type AutomationRecord } from './automation-fixtures.js';

describe.each(DIALECTS)('automation rules: the documented API (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let reader: TestUser;
  let outsider: TestUser;
  let admin: TestUser;
  let base: RuleBase;
  let creatorKey: string;

  beforeAll(async () => {
    t = await createTestApp(dialect, { AUTOMATION_RULES_PER_BASE: '12' });
    alice = await createUser(t, { name: 'Alice' });
    bob = await createUser(t, { name: 'Bob' });
    reader = await createUser(t, { name: 'Reader' });
    outsider = await createUser(t, { name: 'Outsider' });
    admin = await createUser(t, { name: 'Admin', admin: true });
    base = await ruleBase(t, alice);
    await share(t, alice, base, bob, 'rw');
    await share(t, alice, base, reader, 'r');
    // The documented example filters on `_creator`; here that is a creator column's key.
    const col = await t.request({ method: 'POST', url: gateway(base, 'columns/'), token: base.token, payload: { table_name: 'Table1', column_name: 'Creator', column_type: 'creator' } });
    expect(col.statusCode, col.body).toBe(200);
    creatorKey = col.json<{ key: string }>().key;
  });
  afterAll(() => t.close());

  const post = (body: unknown, user = alice) => t.request({ method: 'POST', url: automationsPath(base), token: user.token, payload: body as object });

  it('creates each documented request example and answers the documented record', async () => {
    // Request examples of createAutomationRule (user_account_operations.yaml), column keys mapped to this base.
    const examples = [
      { run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'notify', users: [], default_msg: 'look at {Name}.', _id: '740077', users_column_key: base.keys.Assignee }] },
      {
        run_condition: 'per_update',
        trigger: { rule_name: 'Watch Name and Select', table_id: '0000', view_id: '0000', condition: 'filters_satisfy', column_keys: ['0000', base.keys.Status] },
        actions: [{ type: 'update_record', updates: { '0000': 'abc', [base.keys.Priority!]: 123 }, _id: '54696' }],
      },
      {
        run_condition: 'per_update',
        trigger: {
          rule_name: 'test-auto', table_id: '0000', view_id: '0000', condition: 'filters_satisfy',
          filters: [{ column_key: '0000', filter_predicate: 'contains', filter_term: 'yes' }, { column_key: creatorKey, filter_predicate: 'contains', filter_term: [alice.virtualId] }],
          filter_conjunction: 'And',
        },
        actions: [{ type: 'lock_record', is_locked: true, _id: '872510' }],
      },
      { run_condition: 'per_update', trigger: { rule_name: 'added', table_id: '0000', view_id: '0000', condition: 'rows_added' }, actions: [{ type: 'add_record', row: { '0000': 'abc' }, _id: '410993' }] },
      {
        run_condition: 'per_update',
        trigger: WATCH_ALL_TRIGGER,
        actions: [{ type: 'send_email', default_msg: 'Content example.', account_id: 17, subject: 'Subject sample', send_to: 'email@example.com, email2@example.com', copy_to: 'email3@example.com, email4@example.com', _id: '838356' }],
      },
      {
        run_condition: 'per_month',
        trigger: { rule_name: 'Test rule', table_id: '0000', view_id: '0000', condition: 'run_periodically', date_column_name: 'GebDat', notify_month_day: 12, notify_month_hour: 15 },
        actions: [{ type: 'notify', users: [bob.virtualId], default_msg: 'Take a look at this!', _id: '365729', users_column_key: '' }],
      },
      { run_condition: 'per_day', trigger: { rule_name: 'Untitled rule', table_id: '0000', view_id: '0000', condition: 'run_periodically', notify_hour: 14 }, actions: [{ type: 'add_record', row: { Name: 'new record um 15 uhr' }, _id: '548370' }] },
      { run_condition: 'per_week', trigger: { rule_name: 'weekly', table_id: '0000', view_id: '0000', condition: 'run_periodically_by_condition', filters: [{ column_key: base.keys.Status, filter_predicate: 'is', filter_term: 'Open' }], notify_week_day: 1, notify_week_hour: 9 }, actions: [{ type: 'notify', users: [bob.virtualId], default_msg: '{Name} is open', _id: '1' }] },
    ];
    const created: AutomationRecord[] = [];
    for (const body of examples) created.push(await createAutomation(t, alice, base, body));
    const first = created[0]!;
    expect(first).toEqual({
      id: expect.any(Number),
      dtable_uuid: base.uuid,
      run_condition: 'per_update',
      trigger: { ...WATCH_ALL_TRIGGER, filters: [], filter_conjunction: 'And' },
      actions: [{ type: 'notify', users: [], default_msg: 'look at {Name}.', _id: '740077', users_column_key: base.keys.Assignee }],
      creator: 'Alice',
      ctime: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/),
      last_trigger_time: '',
      is_valid: true,
      trigger_count: 0,
    });
    expect(created[5]!.trigger).toMatchObject({ condition: 'run_periodically', notify_month_day: 12, notify_month_hour: 15 });
    expect(created[7]!.trigger).toMatchObject({ notify_week_day: 1, notify_week_hour: 9, filter_conjunction: 'And' });
    const listed = await listAutomations(t, bob, base);
    expect(listed.map((r) => r.id)).toEqual(created.map((r) => r.id));
    expect(await listAutomations(t, reader, base)).toHaveLength(examples.length);
  });

  it('updates a rule (re-validated) and deletes it; unknown ids are 404', async () => {
    const rule = await createAutomation(t, alice, base, { run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'lock_record', is_locked: true, _id: 'a' }] });
    const put = await t.request({
      method: 'PUT',
      url: automationsPath(base, rule.id),
      token: bob.token,
      payload: { run_condition: 'per_day', trigger: { rule_name: 'Daily', table_id: '0000', view_id: '0000', condition: 'run_periodically', notify_hour: 16 }, actions: [{ type: 'notify', users: [alice.virtualId], default_msg: 'hi', _id: 'n' }] },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json<AutomationRecord>()).toMatchObject({ id: rule.id, run_condition: 'per_day', trigger: { notify_hour: 16 }, creator: 'Alice' });
    const badPut = await t.request({ method: 'PUT', url: automationsPath(base, rule.id), token: bob.token, payload: { run_condition: 'per_day', trigger: {}, actions: [] } });
    expect(badPut.statusCode).toBe(400);
    expect((await t.request({ method: 'PUT', url: automationsPath(base, 999999), token: alice.token, payload: { run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'lock_record', is_locked: true }] } })).statusCode).toBe(404);
    expect((await t.request({ method: 'DELETE', url: automationsPath(base, 'abc'), token: alice.token })).statusCode).toBe(404);
    const del = await t.request({ method: 'DELETE', url: automationsPath(base, rule.id), token: alice.token });
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ success: true });
    expect((await listAutomations(t, alice, base)).some((r) => r.id === rule.id)).toBe(false);
  });

  it('refuses bad bodies with a 400 naming the field, and nothing is stored', async () => {
    const before = (await listAutomations(t, alice, base)).length;
    const cases: Array<[unknown, RegExp]> = [
      [{}, /run_condition invalid/],
      [{ run_condition: 'hourly', trigger: WATCH_ALL_TRIGGER, actions: [] }, /run_condition invalid/],
      [{ run_condition: 'per_update', actions: [{ type: 'notify' }] }, /trigger invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER }, /actions invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: 'nope' }, /actions invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: Array.from({ length: 11 }, () => ({ type: 'lock_record', is_locked: true })) }, /at most 10/],
      [{ run_condition: 'per_update', trigger: { ...WATCH_ALL_TRIGGER, condition: 'run_periodically' }, actions: [{ type: 'lock_record', is_locked: true }] }, /trigger\.condition invalid/],
      [{ run_condition: 'per_day', trigger: { ...WATCH_ALL_TRIGGER, condition: 'run_periodically', notify_hour: 24 }, actions: [{ type: 'add_record', row: {} }] }, /trigger\.notify_hour invalid/],
      [{ run_condition: 'per_week', trigger: { ...WATCH_ALL_TRIGGER, condition: 'run_periodically', notify_week_day: 8 }, actions: [{ type: 'add_record', row: {} }] }, /trigger\.notify_week_day invalid/],
      [{ run_condition: 'per_month', trigger: { ...WATCH_ALL_TRIGGER, condition: 'run_periodically', notify_month_day: 0 }, actions: [{ type: 'add_record', row: {} }] }, /trigger\.notify_month_day invalid/],
      [{ run_condition: 'per_update', trigger: { ...WATCH_ALL_TRIGGER, table_id: 'zzzz' }, actions: [{ type: 'lock_record', is_locked: true }] }, /trigger\.table_id invalid/],
      [{ run_condition: 'per_update', trigger: { ...WATCH_ALL_TRIGGER, view_id: 'zzzz' }, actions: [{ type: 'lock_record', is_locked: true }] }, /trigger\.view_id invalid/],
      [{ run_condition: 'per_update', trigger: { ...WATCH_ALL_TRIGGER, filters: [{ column_key: 'nope', filter_predicate: 'is', filter_term: 'x' }] }, actions: [{ type: 'lock_record', is_locked: true }] }, /trigger\.filters invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'post_to_slack' }] }, /actions\.0\.type invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'notify', users: [outsider.virtualId] }] }, /actions\.0\.users invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'notify', users: [] }] }, /actions\.0\.users invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'notify', users_column_key: base.keys.Notes }] }, /not a collaborator column/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'send_email', send_to: 'not an address' }] }, /actions\.0\.send_to invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'send_email', send_to: '' }] }, /actions\.0\.send_to invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'update_record', updates: { nope: 1 } }] }, /actions\.0\.updates invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'lock_record', is_locked: false }] }, /actions\.0\.is_locked invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'add_record', table_id: 'zzzz', row: {} }] }, /actions\.0\.table_id invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'call_webhook', url: 'ftp://example.com' }] }, /actions\.0\.url invalid/],
      [{ run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'lock_record', is_locked: true, _id: 'x' }, { type: 'lock_record', is_locked: true, _id: 'x' }] }, /used twice/],
      [{ run_condition: 'per_day', trigger: { ...WATCH_ALL_TRIGGER, condition: 'run_periodically' }, actions: [{ type: 'update_record', updates: { Name: 'x' } }] }, /needs a triggering row/],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expect(res.statusCode, `${JSON.stringify(body)} → ${res.body}`).toBe(400);
      expect(res.json<{ error_msg: string }>().error_msg).toMatch(message);
    }
    expect(await listAutomations(t, alice, base)).toHaveLength(before);
  });

  it('asks for write access, a known base, and a login', async () => {
    const body = { run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'lock_record', is_locked: true }] };
    expect((await post(body, reader)).statusCode).toBe(403);
    expect((await post(body, outsider)).statusCode).toBe(403);
    expect((await t.request({ method: 'GET', url: automationsPath(base), token: outsider.token })).statusCode).toBe(403);
    expect((await t.request({ method: 'GET', url: automationsPath(base) })).statusCode).toBe(403);
  });

  it('limits the rules of a base (AUTOMATION_RULES_PER_BASE)', async () => {
    const body = { run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'lock_record', is_locked: true }] };
    let res = await post(body);
    while (res.statusCode === 200) res = await post(body);
    expect(res.statusCode).toBe(403);
    expect(res.json<{ error_msg: string }>().error_msg).toMatch(/limit of 12 automation rules/);
    expect(await listAutomations(t, alice, base)).toHaveLength(12);
  });

  it('admin: lists all rules and invalid ones, deletes one and all invalid; other users get 403', async () => {
    const list = await t.request({ method: 'GET', url: '/api/v2.1/admin/automation-rules/?page=1&per_page=5', token: admin.token });
    expect(list.statusCode, list.body).toBe(200);
    const body = list.json<{ automation_rule_list: AutomationRecord[]; count: number }>();
    expect(body.count).toBe(12);
    expect(body.automation_rule_list).toHaveLength(5);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/admin/automation-rules/', token: alice.token })).statusCode).toBe(403);

    const [victim] = await listAutomations(t, alice, base);
    await t.container.db.updateTable('automation_rules').set({ is_valid: 0, invalid_reason: 'test' }).where('id', '=', victim!.id).execute();
    const invalid = await t.request({ method: 'GET', url: '/api/v2.1/admin/invalid-automation-rules/', token: admin.token });
    expect(invalid.json<{ invalid_automation_rule_list: AutomationRecord[]; count: number }>()).toMatchObject({ count: 1, invalid_automation_rule_list: [{ id: victim!.id, is_valid: false }] });
    expect((await t.request({ method: 'DELETE', url: '/api/v2.1/admin/invalid-automation-rules/', token: admin.token })).json()).toEqual({ success: true });
    expect((await listAutomations(t, alice, base)).some((r) => r.id === victim!.id)).toBe(false);

    const [next] = await listAutomations(t, alice, base);
    expect((await t.request({ method: 'DELETE', url: `/api/v2.1/admin/automation-rules/${next!.id}/`, token: admin.token })).statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/v2.1/admin/automation-rules/${next!.id}/`, token: admin.token })).statusCode).toBe(404);
    expect((await t.request({ method: 'DELETE', url: '/api/v2.1/admin/automation-rules/x/', token: admin.token })).statusCode).toBe(400);
    expect(await listAutomations(t, alice, base)).toHaveLength(10);
  });

  it('admin: the rules of a trashed base are not listed nor deleted, and are back after its restore', async () => {
    const [invalid] = await listAutomations(t, alice, base);
    await t.container.db.updateTable('automation_rules').set({ is_valid: 0, invalid_reason: 'test' }).where('id', '=', invalid!.id).execute();
    const trashBase = await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${base.workspaceId}/dtable/`, token: alice.token, payload: { name: base.name } });
    expect(trashBase.statusCode, trashBase.body).toBe(200);
    const asAdmin = (method: 'GET' | 'DELETE', url: string) => t.request({ method, url, token: admin.token });
    expect((await asAdmin('GET', '/api/v2.1/admin/automation-rules/')).json()).toEqual({ automation_rule_list: [], count: 0 });
    expect((await asAdmin('GET', '/api/v2.1/admin/invalid-automation-rules/')).json()).toEqual({ invalid_automation_rule_list: [], count: 0 });
    expect((await asAdmin('DELETE', '/api/v2.1/admin/invalid-automation-rules/')).statusCode).toBe(200);
    expect((await asAdmin('DELETE', `/api/v2.1/admin/automation-rules/${invalid!.id}/`)).statusCode).toBe(404);

    const trashed = (await t.request({ method: 'GET', url: '/api/v2.1/trash-dtables/', token: alice.token })).json().trash_dtable_list[0];
    expect((await t.request({ method: 'PUT', url: `/api/v2.1/trash-dtables/${trashed.id}/`, token: alice.token })).statusCode).toBe(200);
    expect((await asAdmin('GET', '/api/v2.1/admin/automation-rules/')).json().count).toBe(10);
    expect((await asAdmin('GET', '/api/v2.1/admin/invalid-automation-rules/')).json().count).toBe(1);
  });
});
