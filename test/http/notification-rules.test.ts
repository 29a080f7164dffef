import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { createRule, deadlineRule, gateway, listRules, modifiedRule, ruleBase, rulesPath, share, type RuleBase } from './notification-fixtures.js';

describe.each(DIALECTS)('notification rules: CRUD (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let reader: TestUser;
  let stranger: TestUser;
  let base: RuleBase;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await createUser(t, { name: 'Alice' });
    bob = await createUser(t, { name: 'Bob' });
    reader = await createUser(t, { name: 'Reader' });
    stranger = await createUser(t, { name: 'Stranger' });
    base = await ruleBase(t, alice);
    await share(t, alice, base, bob, 'rw');
    await share(t, alice, base, reader, 'r');
  });
  afterAll(() => t.close());

  it('creates a rule and returns the contract record (top-level JSON in, bare object out)', async () => {
    const res = await t.request({ method: 'POST', url: rulesPath(base), token: bob.token, payload: modifiedRule(base, [alice.virtualId]) });
    expect(res.statusCode, res.body).toBe(200);
    const rule = res.json();
    expect(rule).toEqual({
      id: expect.any(Number),
      dtable_uuid: base.uuid,
      run_condition: 'per_update',
      trigger: { rule_name: 'Changes', table_id: '0000', view_id: '0000', condition: 'rows_modified' },
      action: { type: 'notify', users: [alice.virtualId], default_msg: 'Row {Name} changed' },
      creator: 'Bob',
      ctime: '2026-01-05T10:00:00+00:00',
      last_trigger_time: '',
      is_valid: 1,
    });
    const list = await listRules(t, reader, base);
    expect(list.map((r) => r.id)).toContain(rule.id);
  });

  it('keeps unknown trigger and action keys and normalizes known ones', async () => {
    const rule = await createRule(t, alice, base, {
      run_condition: 'per_update',
      trigger: {
        rule_name: '  Spaced  ',
        table_id: '0000',
        view_id: '0000',
        condition: 'filters_satisfy',
        filters: [{ column_name: 'Priority', filter_predicate: 'greater', filter_term: 3 }],
        filter_conjunction: 'or',
        column_keys: [base.keys.Priority, base.keys.Priority],
        watch_all_columns: false,
        ui_hint: 'kept',
      },
      action: { users: [alice.virtualId], users_column_key: base.keys.Assignee, extra: 1 },
    });
    expect(rule.trigger).toEqual({
      rule_name: 'Spaced',
      table_id: '0000',
      view_id: '0000',
      condition: 'filters_satisfy',
      filters: [{ column_name: 'Priority', filter_predicate: 'greater', filter_term: 3 }],
      filter_conjunction: 'Or',
      column_keys: [base.keys.Priority],
      watch_all_columns: false,
      ui_hint: 'kept',
    });
    expect(rule.action).toEqual({ type: 'notify', users: [alice.virtualId], users_column_key: base.keys.Assignee, default_msg: '', extra: 1 });
  });

  it('fills in deadline defaults: the first date column, alarm_days 0, notify_hour 12', async () => {
    const rule = await createRule(t, alice, base, {
      run_condition: 'per_day',
      trigger: { rule_name: 'D', table_id: '0000', view_id: '0000', condition: 'near_deadline', date_column_name: '' },
      action: { users: [alice.virtualId] },
    });
    expect(rule.trigger).toMatchObject({ date_column_name: 'Deadline', alarm_days: 0, notify_hour: 12 });
    const numeric = await createRule(t, alice, base, deadlineRule([alice.virtualId], { alarm_days: '3', notify_hour: '7' }));
    expect(numeric.trigger).toMatchObject({ alarm_days: 3, notify_hour: 7 });
  });

  it('accepts the rows_added extension', async () => {
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], { condition: 'rows_added' }));
    expect(rule.trigger.condition).toBe('rows_added');
  });

  it('updates a rule with PUT and re-validates it', async () => {
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId]));
    const body = modifiedRule(base, [bob.virtualId, alice.virtualId], { rule_name: 'Renamed' }, { default_msg: 'new' });
    const res = await t.request({ method: 'PUT', url: rulesPath(base, rule.id), token: bob.token, payload: body });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ id: rule.id, creator: 'Alice', trigger: { rule_name: 'Renamed' }, action: { users: [bob.virtualId, alice.virtualId], default_msg: 'new' } });
    const bad = await t.request({ method: 'PUT', url: rulesPath(base, rule.id), token: bob.token, payload: { ...body, trigger: { ...body.trigger, view_id: 'nope' } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ error_msg: 'trigger.view_id invalid: view nope not found in table Table1.' });
  });

  it('a valid PUT re-activates an invalid rule', async () => {
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId]));
    await t.container.db.updateTable('notification_rules').set({ is_valid: 0, invalid_reason: 'test' }).where('id', '=', rule.id).execute();
    expect((await listRules(t, alice, base)).find((r) => r.id === rule.id)?.is_valid).toBe(0);
    const res = await t.request({ method: 'PUT', url: rulesPath(base, rule.id), token: alice.token, payload: modifiedRule(base, [bob.virtualId]) });
    expect(res.json().is_valid).toBe(1);
  });

  it('resets last_trigger_time when a deadline rule changes its hour, not otherwise', async () => {
    const rule = await createRule(t, alice, base, deadlineRule([bob.virtualId]));
    const setTriggered = () => t.container.db.updateTable('notification_rules').set({ last_trigger_time: Date.UTC(2026, 0, 4) }).where('id', '=', rule.id).execute();
    await setTriggered();
    let res = await t.request({ method: 'PUT', url: rulesPath(base, rule.id), token: alice.token, payload: deadlineRule([bob.virtualId], { alarm_days: 5 }) });
    expect(res.json().last_trigger_time).toBe('2026-01-04T00:00:00+00:00');
    res = await t.request({ method: 'PUT', url: rulesPath(base, rule.id), token: alice.token, payload: deadlineRule([bob.virtualId], { notify_hour: 10 }) });
    expect(res.json().last_trigger_time).toBe('');
  });

  it('deletes a rule; deleting it again is 404 Not found.', async () => {
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId]));
    const res = await t.request({ method: 'DELETE', url: rulesPath(base, rule.id), token: bob.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect((await listRules(t, alice, base)).some((r) => r.id === rule.id)).toBe(false);
    const again = await t.request({ method: 'DELETE', url: rulesPath(base, rule.id), token: bob.token });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ error_msg: 'Not found.' });
  });

  it('unknown rule ids are 404, also ids of another base and non-numeric ids', async () => {
    const other = await createBase(t, alice);
    const foreign = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId]));
    for (const id of ['999999', String(foreign.id), 'abc']) {
      const put = await t.request({ method: 'PUT', url: rulesPath(other, id), token: alice.token, payload: modifiedRule(base, [alice.virtualId]) });
      expect(put.statusCode).toBe(404);
      expect(put.json()).toEqual({ error_msg: `notification_rule ${id} not found.` });
      const del = await t.request({ method: 'DELETE', url: rulesPath(other, id), token: alice.token });
      expect(del.statusCode).toBe(404);
    }
  });

  it('lets read-only users list but not create, change or delete', async () => {
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId]));
    expect((await t.request({ method: 'GET', url: rulesPath(base), token: reader.token })).statusCode).toBe(200);
    for (const [method, url] of [['POST', rulesPath(base)], ['PUT', rulesPath(base, rule.id)], ['DELETE', rulesPath(base, rule.id)]] as const) {
      const res = await t.request({ method, url, token: reader.token, payload: modifiedRule(base, [bob.virtualId]) });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json()).toEqual({ error_msg: 'Permission denied.' });
    }
  });

  it('refuses users without access, unknown bases and workspaces, and missing tokens', async () => {
    expect((await t.request({ method: 'GET', url: rulesPath(base), token: stranger.token })).statusCode).toBe(403);
    const missingBase = await t.request({ method: 'GET', url: basePath({ workspaceId: base.workspaceId, name: 'nope' }, 'notification-rules/'), token: alice.token });
    expect(missingBase.statusCode).toBe(404);
    const missingWs = await t.request({ method: 'GET', url: '/api/v2.1/workspace/99999/dtable/x/notification-rules/', token: alice.token });
    expect(missingWs.json()).toEqual({ error_msg: 'Workspace 99999 not found.' });
    const anonymous = await t.request({ method: 'GET', url: rulesPath(base) });
    expect(anonymous.statusCode).toBe(403);
    expect(anonymous.json()).toEqual({ detail: 'Authentication credentials were not provided.' });
  });

  it('checks run_condition, trigger and action before it looks the base up (contract order)', async () => {
    const url = basePath({ workspaceId: 99999, name: 'nope' }, 'notification-rules/');
    const res = await t.request({ method: 'POST', url, token: alice.token, payload: { run_condition: 'hourly', trigger: {}, action: {} } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error_msg: 'run_condition hourly invalid.' });
  });

  it('accepts trigger and action as JSON text in a form body', async () => {
    const body = modifiedRule(base, [bob.virtualId]);
    const res = await t.request({
      method: 'POST',
      url: rulesPath(base),
      token: alice.token,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ run_condition: 'per_update', trigger: JSON.stringify(body.trigger), action: JSON.stringify(body.action) }).toString(),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().trigger.rule_name).toBe('Changes');
  });

  describe('validation: every failure is a 400 naming the field', () => {
    type Body = { run_condition: unknown; trigger: Record<string, unknown> | unknown; action: Record<string, unknown> | unknown };
    const update = (trigger: Record<string, unknown> = {}, action: Record<string, unknown> = {}, run = 'per_update'): ((b: RuleBase, u: TestUser) => Body) =>
      (b, u) => {
        const body = modifiedRule(b, [u.virtualId]);
        return { run_condition: run, trigger: { ...body.trigger, ...trigger }, action: { ...body.action, ...action } };
      };
    const deadline = (trigger: Record<string, unknown> = {}): ((b: RuleBase, u: TestUser) => Body) => (_b, u) => deadlineRule([u.virtualId], trigger);
    const filterRule = (trigger: Record<string, unknown>) => update({ condition: 'filters_satisfy', ...trigger });

    const cases: Array<[string, (b: RuleBase, u: TestUser) => Body, string]> = [
      ['missing run_condition', (b, u) => ({ ...update()(b, u), run_condition: undefined }), 'run_condition invalid.'],
      ['per_week (not a combination we run)', update({}, {}, 'per_week'), 'run_condition per_week invalid.'],
      ['trigger not an object', (b, u) => ({ ...update()(b, u), trigger: 'x' }), 'trigger invalid.'],
      ['empty trigger', (b, u) => ({ ...update()(b, u), trigger: {} }), 'trigger invalid.'],
      ['action not an object', (b, u) => ({ ...update()(b, u), action: [1] }), 'action invalid.'],
      ['unknown condition', update({ condition: 'rows_deleted' }), 'trigger.condition invalid: must be rows_modified, filters_satisfy, rows_added or near_deadline.'],
      ['per_update with near_deadline', update({ condition: 'near_deadline' }), 'trigger.condition invalid: near_deadline needs run_condition per_day, not per_update.'],
      ['per_day with rows_modified', update({}, {}, 'per_day'), 'trigger.condition invalid: rows_modified needs run_condition per_update, not per_day.'],
      ['blank rule_name', update({ rule_name: ' ' }), 'trigger.rule_name invalid: must be text of 1 to 255 characters.'],
      ['long rule_name', update({ rule_name: 'x'.repeat(256) }), 'trigger.rule_name invalid: must be text of 1 to 255 characters.'],
      ['missing table_id', update({ table_id: undefined }), 'trigger.table_id invalid: must be a table id.'],
      ['unknown table_id', update({ table_id: 'zzzz' }), 'trigger.table_id invalid: table zzzz not found.'],
      ['missing view_id', update({ view_id: 7 }), 'trigger.view_id invalid: must be a view id.'],
      ['unknown view_id', update({ view_id: 'zzzz' }), 'trigger.view_id invalid: view zzzz not found in table Table1.'],
      ['watch_all_columns not boolean', update({ watch_all_columns: 'yes' }), 'trigger.watch_all_columns invalid: must be true or false.'],
      ['column_keys not a list', update({ column_keys: 'abc' }), 'trigger.column_keys invalid: must be a list of column keys.'],
      ['unknown column key', update({ column_keys: ['zzzz'] }), 'trigger.column_keys invalid: column zzzz not found in table Table1.'],
      ['watch nothing', update({ watch_all_columns: false, column_keys: [] }), 'trigger.column_keys invalid: name at least one column when watch_all_columns is false.'],
      ['filters_satisfy without filters', filterRule({}), 'trigger.filters invalid: filters_satisfy needs at least one filter.'],
      ['filters not a list', filterRule({ filters: { column_name: 'Name' } }), 'trigger.filters invalid: must be a list of filters.'],
      ['filter on unknown column', filterRule({ filters: [{ column_name: 'Nope', filter_predicate: 'is', filter_term: 'x' }] }), 'trigger.filters invalid: column Nope not found.'],
      [
        'unsupported predicate',
        filterRule({ filters: [{ column_name: 'Priority', filter_predicate: 'contains', filter_term: 'x' }] }),
        "trigger.filters invalid: Filter on Priority invalid: number type column 'Priority' does not support 'contains', available predicates are ['equal', 'not_equal', 'greater', 'greater_or_equal', 'less', 'less_or_equal', 'is_empty', 'is_not_empty'].",
      ],
      ['bad filter term', filterRule({ filters: [{ column_name: 'Priority', filter_predicate: 'greater', filter_term: 'many' }] }), 'trigger.filters invalid: Filter on Priority invalid: filter_term must be a number.'],
      ['bad conjunction', filterRule({ filters: [{ column_name: 'Name', filter_predicate: 'is', filter_term: 'x' }], filter_conjunction: 'Xor' }), 'trigger.filter_conjunction invalid: must be And or Or.'],
      ['date column not found', deadline({ date_column_name: 'Nope' }), 'trigger.date_column_name invalid: column Nope not found.'],
      ['date column of another type', deadline({ date_column_name: 'Notes' }), 'trigger.date_column_name invalid: column Notes is not a date column.'],
      ['date column name not text', deadline({ date_column_name: 5 }), 'trigger.date_column_name invalid: must be a column name.'],
      ['negative alarm_days', deadline({ alarm_days: -1 }), 'trigger.alarm_days invalid: must be a whole number of days from 0 to 3650.'],
      ['fractional alarm_days', deadline({ alarm_days: 1.5 }), 'trigger.alarm_days invalid: must be a whole number of days from 0 to 3650.'],
      ['text alarm_days', deadline({ alarm_days: 'soon' }), 'trigger.alarm_days invalid: must be a whole number of days from 0 to 3650.'],
      ['notify_hour 24', deadline({ notify_hour: 24 }), 'trigger.notify_hour invalid: must be a whole number from 0 to 23.'],
      ['notify_hour -1', deadline({ notify_hour: -1 }), 'trigger.notify_hour invalid: must be a whole number from 0 to 23.'],
      ['notify_hour as a boolean', deadline({ notify_hour: true }), 'trigger.notify_hour invalid: must be a whole number from 0 to 23.'],
      ['action type other than notify', update({}, { type: 'email' }), 'action.type invalid: the only action type is notify.'],
      ['users not a list', update({}, { users: 'someone' }), 'action.users invalid: must be a list of user ids.'],
      ['users with a number', update({}, { users: [1] }), 'action.users invalid: must be a list of user ids.'],
      ['users_column_key not text', update({}, { users_column_key: 5 }), 'action.users_column_key invalid: must be a column key.'],
      ['users_column_key unknown', update({}, { users_column_key: 'zzzz' }), 'action.users_column_key invalid: column zzzz not found.'],
      ['users_column_key not a user column', (b, u) => update({}, { users_column_key: b.keys.Notes })(b, u), 'action.users_column_key invalid: column Notes is not a collaborator column.'],
      ['nobody to notify', update({}, { users: [] }), 'action.users invalid: name at least one user or a users_column_key.'],
      ['default_msg not text', update({}, { default_msg: { text: 'x' } }), 'action.default_msg invalid: must be text of at most 10000 characters.'],
      ['default_msg too long', update({}, { default_msg: 'x'.repeat(10_001) }), 'action.default_msg invalid: must be text of at most 10000 characters.'],
    ];

    it.each(cases)('%s', async (_label, make, message) => {
      const res = await t.request({ method: 'POST', url: rulesPath(base), token: alice.token, payload: make(base, alice) as object });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ error_msg: message });
    });

    it('a listed user without access to the base', async () => {
      const res = await t.request({ method: 'POST', url: rulesPath(base), token: alice.token, payload: modifiedRule(base, [stranger.virtualId]) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error_msg: `action.users invalid: user ${stranger.virtualId} has no access to this base.` });
    });

    it('a table without a date column has no default date column', async () => {
      const res = await t.request({ method: 'POST', url: gateway(base, 'tables/'), token: base.token, payload: { table_name: 'Plain', columns: [{ column_name: 'Title', column_type: 'text' }] } });
      expect(res.statusCode, res.body).toBe(200);
      const tableId = res.json<{ _id: string; views: Array<{ _id: string }> }>();
      const bad = await t.request({
        method: 'POST',
        url: rulesPath(base),
        token: alice.token,
        payload: deadlineRule([alice.virtualId], { table_id: tableId._id, view_id: tableId.views[0]!._id, date_column_name: '' }),
      });
      expect(bad.json()).toEqual({ error_msg: 'trigger.date_column_name invalid: table Plain has no date column.' });
    });

    it('a body that is not an object', async () => {
      const res = await t.request({ method: 'POST', url: rulesPath(base), token: alice.token, payload: '[1,2]', headers: { 'content-type': 'application/json' } });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toHaveProperty('error_msg');
    });
  });
});
