import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, baseToken, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import {
  addRows,
  createRule,
  dispatch,
  gateway,
  inbox,
  listRules,
  modifiedRule,
  ruleBase,
  share,
  updateRow,
  type RuleBase,
} from './notification-fixtures.js';

describe.each(DIALECTS)('notification rules: the engine end to end through HTTP (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let outsider: TestUser;
  let base: RuleBase;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await createUser(t, { name: 'Alice' });
    bob = await createUser(t, { name: 'Bob' });
    carol = await createUser(t, { name: 'Carol' });
    outsider = await createUser(t, { name: 'Outsider' });
    base = await ruleBase(t, alice);
    await share(t, alice, base, bob, 'rw');
    await share(t, alice, base, carol, 'r');
  });
  afterAll(() => t.close());

  beforeEach(async () => {
    // Each test starts without rules or notifications, a few minutes after the previous one.
    await dispatch(t);
    await t.container.db.deleteFrom('notification_rules').execute();
    await t.container.db.deleteFrom('notifications').execute();
    t.clock.advance(60 * 60_000);
  });

  const bobsRuleNotices = async (user = bob) => (await inbox(t, user)).filter((n) => n.type === 'notification_rules');

  it('rows_modified: a change through /api-gateway/ reaches the listed users with the rendered message', async () => {
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId, carol.virtualId], {}, { default_msg: '{Name} is now {Status} (prio {Priority})' }));
    const [rowId] = await addRows(t, base, [{ Name: 'Ship it', Status: 'Open', Priority: 2 }]);
    await dispatch(t);
    expect(await bobsRuleNotices()).toEqual([]); // an insert is not a modification

    await updateRow(t, base, rowId!, { Priority: 5 });
    await dispatch(t);
    const [notice] = await bobsRuleNotices();
    expect(notice).toEqual({
      id: expect.any(Number),
      type: 'notification_rules',
      msg_type: 'notification_rules',
      dtable_uuid: base.uuid,
      detail: {
        table_id: '0000',
        view_id: '0000',
        condition: 'rows_modified',
        rule_id: rule.id,
        rule_name: 'Changes',
        msg: 'Ship it is now Open (prio 5)',
        row_id_list: [rowId],
      },
      time: expect.any(String),
      seen: false,
    });
    expect(await bobsRuleNotices(carol)).toHaveLength(1);
    expect(await bobsRuleNotices(alice)).toEqual([]);
    expect((await listRules(t, alice, base))[0]!.last_trigger_time).not.toBe('');
  });

  it('a user with only a view shared with them is notified of the rows that view shows only', async () => {
    const dave = await createUser(t, { name: 'Dave' });
    const view = await t.request({
      method: 'POST',
      url: gateway(base, 'views/?table_name=Table1'),
      token: base.token,
      payload: { name: `Dave's open ${dialect}`, filters: [{ column_name: 'Status', filter_predicate: 'is', filter_term: 'Open' }] },
    });
    expect(view.statusCode, view.body).toBe(200);
    const viewShare = await t.request({
      method: 'POST',
      url: basePath(base, 'user-view-shares/'),
      token: alice.token,
      payload: { table_id: '0000', view_id: view.json<{ _id: string }>()._id, permission: 'r', to_user: dave.email },
    });
    expect(viewShare.statusCode, viewShare.body).toBe(200);
    // The rule watches the whole table (view 0000) and names Bob (a user share) and Dave (the view only).
    await createRule(t, alice, base, modifiedRule(base, [bob.virtualId, dave.virtualId]));
    const [open, done] = await addRows(t, base, [{ Name: 'open one', Status: 'Open' }, { Name: 'done one', Status: 'Done' }]);
    await updateRow(t, base, done!, { Priority: 1 });
    await dispatch(t);
    expect((await bobsRuleNotices()).map((n) => n.detail.row_id_list)).toEqual([[done]]);
    expect(await bobsRuleNotices(dave)).toEqual([]);
    await updateRow(t, base, open!, { Priority: 2 });
    await dispatch(t);
    expect((await bobsRuleNotices(dave)).map((n) => n.detail.row_id_list)).toEqual([[open]]);
    // The view share removed: Dave no longer reaches the base, so the rule naming him turns invalid (as
    // for any listed user who loses access) and notifies nobody, Bob included.
    const shareId = viewShare.json<{ id: number }>().id;
    expect((await t.request({ method: 'DELETE', url: basePath(base, `user-view-shares/${shareId}/`), token: alice.token })).statusCode).toBe(200);
    await updateRow(t, base, open!, { Priority: 3 });
    await dispatch(t);
    expect(await bobsRuleNotices(dave)).toHaveLength(1);
    expect(await bobsRuleNotices()).toHaveLength(2);
  });

  it('rows_modified: watches only column_keys when watch_all_columns is false', async () => {
    await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], { watch_all_columns: false, column_keys: [base.keys.Status] }));
    const [rowId] = await addRows(t, base, [{ Name: 'a' }]);
    await updateRow(t, base, rowId!, { Notes: 'not watched' });
    await dispatch(t);
    expect(await bobsRuleNotices()).toEqual([]);
    await updateRow(t, base, rowId!, { Status: 'Done' });
    await dispatch(t);
    expect(await bobsRuleNotices()).toHaveLength(1);
  });

  it('rows_modified: only rows in the rule view (by the view filters) count', async () => {
    const view = await t.request({ method: 'POST', url: gateway(base, 'views/?table_name=Table1'), token: base.token, payload: { name: `Open only ${dialect}` } });
    expect(view.statusCode, view.body).toBe(200);
    const viewId = view.json<{ _id: string }>()._id;
    const put = await t.request({
      method: 'PUT',
      url: gateway(base, `views/${encodeURIComponent(`Open only ${dialect}`)}/?table_name=Table1`),
      token: base.token,
      payload: { filters: [{ column_name: 'Status', filter_predicate: 'is', filter_term: 'Open' }], filter_conjunction: 'And' },
    });
    expect(put.statusCode, put.body).toBe(200);
    await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], { view_id: viewId }));
    const [open, done] = await addRows(t, base, [{ Name: 'open', Status: 'Open' }, { Name: 'done', Status: 'Done' }]);
    await updateRow(t, base, open!, { Notes: 'x' });
    await updateRow(t, base, done!, { Notes: 'x' });
    await dispatch(t);
    const notices = await bobsRuleNotices();
    expect(notices.map((n) => n.detail.row_id_list)).toEqual([[open]]);
  });

  it('filters_satisfy: fires when a watched change leaves the row matching the filters', async () => {
    await createRule(t, alice, base, {
      run_condition: 'per_update',
      trigger: {
        rule_name: 'Urgent',
        table_id: '0000',
        view_id: '0000',
        condition: 'filters_satisfy',
        filters: [
          { column_name: 'Priority', filter_predicate: 'greater_or_equal', filter_term: 8 },
          { column_name: 'Status', filter_predicate: 'is', filter_term: 'Open' },
        ],
        filter_conjunction: 'And',
      },
      action: { type: 'notify', users: [bob.virtualId], default_msg: '{Name} became urgent' },
    });
    const [a, b] = await addRows(t, base, [{ Name: 'A', Status: 'Open' }, { Name: 'B', Status: 'Done' }]);
    await updateRow(t, base, a!, { Priority: 3 }); // does not match
    await updateRow(t, base, b!, { Priority: 9 }); // Status Done: does not match
    await dispatch(t);
    expect(await bobsRuleNotices()).toEqual([]);
    await updateRow(t, base, a!, { Priority: 9 });
    await dispatch(t);
    const notices = await bobsRuleNotices();
    expect(notices).toHaveLength(1);
    expect(notices[0]!.detail).toMatchObject({ condition: 'filters_satisfy', rule_name: 'Urgent', msg: 'A became urgent', row_id_list: [a] });
  });

  it('rows_added: a new row notifies, with condition rows_added', async () => {
    await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], { condition: 'rows_added', rule_name: 'New' }, { default_msg: 'New: {Name}' }));
    const ids = await addRows(t, base, [{ Name: 'one' }, { Name: 'two' }]);
    await dispatch(t);
    const notices = await bobsRuleNotices();
    expect(notices.map((n) => n.detail.msg).sort()).toEqual(['New: one', 'New: two']);
    expect(notices.every((n) => n.detail.condition === 'rows_added')).toBe(true);
    expect(notices.map((n) => (n.detail.row_id_list as string[])[0]).sort()).toEqual([...ids].sort());
  });

  it('recipients: action.users ∪ the collaborator cell, once each, only users with access', async () => {
    await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], {}, { users_column_key: base.keys.Assignee, default_msg: 'For {Assignee}' }));
    const [rowId] = await addRows(t, base, [{ Name: 'x' }]);
    await updateRow(t, base, rowId!, { Assignee: [bob.virtualId, carol.virtualId, outsider.virtualId] });
    await dispatch(t);
    expect(await bobsRuleNotices()).toHaveLength(1);
    const carols = await bobsRuleNotices(carol);
    expect(carols).toHaveLength(1);
    expect(carols[0]!.detail.msg).toBe(`For Bob, Carol, ${outsider.virtualId}`);
    expect(await bobsRuleNotices(outsider)).toEqual([]);
  });

  it('changes by an API-Token app are seen too', async () => {
    await createRule(t, alice, base, modifiedRule(base, [bob.virtualId]));
    const bobsToken = await baseToken(t, bob, base);
    const [rowId] = await addRows(t, base, [{ Name: 'by bob' }], bobsToken);
    await updateRow(t, base, rowId!, { Notes: 'edited' }, bobsToken);
    await dispatch(t);
    expect(await bobsRuleNotices()).toHaveLength(1);
  });

  it('de-duplicates per rule and row within the window, never across rows', async () => {
    await createRule(t, alice, base, modifiedRule(base, [bob.virtualId]));
    const [a, b] = await addRows(t, base, [{ Name: 'a' }, { Name: 'b' }]);
    await updateRow(t, base, a!, { Notes: '1' });
    await updateRow(t, base, b!, { Notes: '1' }); // another row: not swallowed (the original's rule throttle would)
    t.clock.advance(60_000);
    await updateRow(t, base, a!, { Notes: '2' }); // same row within 5 minutes
    await dispatch(t);
    expect((await bobsRuleNotices()).map((n) => (n.detail.row_id_list as string[])[0]).sort()).toEqual([a, b].sort());
    t.clock.advance(5 * 60_000);
    await updateRow(t, base, a!, { Notes: '3' });
    await dispatch(t);
    expect(await bobsRuleNotices()).toHaveLength(3);
  });

  it('an invalid rule never fires', async () => {
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId]));
    await t.container.db.updateTable('notification_rules').set({ is_valid: 0 }).where('id', '=', rule.id).execute();
    const [rowId] = await addRows(t, base, [{ Name: 'x' }]);
    await updateRow(t, base, rowId!, { Notes: 'y' });
    await dispatch(t);
    expect(await bobsRuleNotices()).toEqual([]);
  });

  it('rules of another table do not fire, and deletions notify nobody', async () => {
    const table = await t.request({ method: 'POST', url: gateway(base, 'tables/'), token: base.token, payload: { table_name: `Other ${Date.now()}`, columns: [{ column_name: 'Title', column_type: 'text' }] } });
    const other = table.json<{ _id: string; name: string; views: Array<{ _id: string }> }>();
    await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], { table_id: other._id, view_id: other.views[0]!._id }));
    await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], { condition: 'rows_added' }));
    const [rowId] = await addRows(t, base, [{ Name: 'x' }]);
    await dispatch(t);
    expect(await bobsRuleNotices()).toHaveLength(1); // the rows_added rule only
    await updateRow(t, base, rowId!, { Notes: 'y' });
    const del = await t.request({ method: 'DELETE', url: gateway(base, 'rows/'), token: base.token, payload: { table_name: 'Table1', row_ids: [rowId] } });
    expect(del.statusCode).toBe(200);
    await dispatch(t);
    expect(await bobsRuleNotices()).toHaveLength(1);
  });

  it('notifies the rule creator when evaluation finds the rule invalid, and only once', async () => {
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], { watch_all_columns: false, column_keys: [base.keys.Flag] }));
    // The column disappears behind the API's back (as a structure change would do); the next change notices.
    const meta = await t.container.db.selectFrom('base_metadata').select('data').where('base_id', '=', base.id).executeTakeFirstOrThrow();
    const doc = JSON.parse(meta.data) as { tables: Array<{ columns: Array<{ key: string }> }> };
    doc.tables[0]!.columns = doc.tables[0]!.columns.filter((c) => c.key !== base.keys.Flag);
    await t.container.db.updateTable('base_metadata').set({ data: JSON.stringify(doc) }).where('base_id', '=', base.id).execute();
    const [rowId] = await addRows(t, base, [{ Name: 'x' }]);
    await updateRow(t, base, rowId!, { Notes: 'a' });
    await dispatch(t);
    await updateRow(t, base, rowId!, { Notes: 'b' });
    await dispatch(t);
    expect(await bobsRuleNotices()).toEqual([]);
    const aliceNotices = (await inbox(t, alice)).filter((n) => n.type === 'notification_rule_invalid');
    expect(aliceNotices).toHaveLength(1);
    expect(aliceNotices[0]!.detail).toMatchObject({ rule_id: rule.id, rule_name: 'Changes', reason: `the watched column ${base.keys.Flag} was deleted` });
    expect((await listRules(t, alice, base)).find((r) => r.id === rule.id)?.is_valid).toBe(0);
    // Put the column back for the following tests.
    const restore = await t.request({ method: 'POST', url: gateway(base, 'columns/'), token: base.token, payload: { table_name: 'Table1', column_name: 'Flag2', column_type: 'checkbox' } });
    expect(restore.statusCode).toBe(200);
  });
});
