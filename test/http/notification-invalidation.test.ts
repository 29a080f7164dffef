import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import {
  addRows,
  createRule,
  deadlineRule,
  dispatch,
  gateway,
  inbox,
  listRules,
  modifiedRule,
  ruleBase,
  share,
  unshare,
  updateRow,
  type RuleBase,
  type RuleRecord,
} from './notification-fixtures.js';

describe.each(DIALECTS)('notification rules: invalid rules (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await createUser(t, { name: 'Alice' });
    bob = await createUser(t, { name: 'Bob' });
    carol = await createUser(t, { name: 'Carol' });
  });
  afterAll(() => t.close());

  async function freshBase(): Promise<RuleBase> {
    const base = await ruleBase(t, alice);
    await share(t, alice, base, bob, 'rw');
    return base;
  }

  async function structure(base: RuleBase, method: 'POST' | 'PUT' | 'DELETE', suffix: string, payload: object) {
    const res = await t.request({ method, url: gateway(base, suffix), token: base.token, payload });
    expect(res.statusCode, res.body).toBe(200);
    return res;
  }

  const sweep = async () => expect(await t.container.scheduler.runOnce('notification-rule-check')).toMatchObject({ ran: true });

  /** The rule is invalid, and its creator was told once which rule and why. */
  async function expectInvalid(base: RuleBase, rule: RuleRecord, reason: string) {
    const listed = (await listRules(t, alice, base)).find((r) => r.id === rule.id);
    expect(listed?.is_valid).toBe(0);
    const told = (await inbox(t, alice)).filter((n) => n.type === 'notification_rule_invalid' && n.detail.rule_id === rule.id);
    expect(told).toHaveLength(1);
    expect(told[0]!.dtable_uuid).toBe(base.uuid);
    expect(told[0]!.detail).toEqual({
      rule_id: rule.id,
      rule_name: rule.trigger.rule_name,
      table_id: rule.trigger.table_id,
      view_id: rule.trigger.view_id,
      condition: rule.trigger.condition,
      reason,
      msg: `Notification rule "${String(rule.trigger.rule_name)}" stopped working: ${reason}.`,
    });
    // Other users are not told.
    expect((await inbox(t, bob)).some((n) => n.type === 'notification_rule_invalid' && n.detail.rule_id === rule.id)).toBe(false);
  }

  it('its table is deleted (found at once by the structure-change hook)', async () => {
    const base = await freshBase();
    const created = await structure(base, 'POST', 'tables/', { table_name: 'Extra', columns: [{ column_name: 'Title', column_type: 'text' }] });
    const table = created.json<{ _id: string; views: Array<{ _id: string }> }>();
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], { table_id: table._id, view_id: table.views[0]!._id }));
    await sweep();
    expect((await listRules(t, alice, base))[0]!.is_valid).toBe(1); // nothing changed yet
    await structure(base, 'DELETE', 'tables/', { table_name: 'Extra' });
    await expectInvalid(base, rule, `its table ${table._id} was deleted`);
    await sweep(); // told once only
    await expectInvalid(base, rule, `its table ${table._id} was deleted`);
  });

  it('the scheduled sweep catches a structure change whose hook did not run', async () => {
    const base = await freshBase();
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], { watch_all_columns: false, column_keys: [base.keys.Notes] }));
    // Change the stored structure behind the rows module's back, as a process dying after the commit would leave it.
    const doc = await t.container.db.selectFrom('base_metadata').selectAll().where('base_id', '=', base.id).executeTakeFirstOrThrow();
    const meta = JSON.parse(doc.data) as { tables: Array<{ columns: Array<{ key: string }> }> };
    meta.tables[0]!.columns = meta.tables[0]!.columns.filter((c) => c.key !== base.keys.Notes);
    await t.container.db.updateTable('base_metadata').set({ data: JSON.stringify(meta), version: doc.version + 1 }).where('base_id', '=', base.id).execute();
    expect((await listRules(t, alice, base)).find((r) => r.id === rule.id)?.is_valid).toBe(1);
    await sweep();
    await expectInvalid(base, rule, `the watched column ${base.keys.Notes} was deleted`);
  });

  it('its view is deleted (found at once, and never evaluated)', async () => {
    const base = await freshBase();
    const view = await structure(base, 'POST', 'views/?table_name=Table1', { name: 'Doomed' });
    const viewId = view.json<{ _id: string }>()._id;
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], { view_id: viewId }));
    const del = await t.request({ method: 'DELETE', url: gateway(base, 'views/Doomed/?table_name=Table1'), token: base.token });
    expect(del.statusCode, del.body).toBe(200);
    const [rowId] = await addRows(t, base, [{ Name: 'x' }]);
    await updateRow(t, base, rowId!, { Notes: 'y' });
    await dispatch(t);
    await expectInvalid(base, rule, `its view ${viewId} of table Table1 was deleted`);
    expect((await inbox(t, bob)).filter((n) => n.type === 'notification_rules')).toEqual([]);
  });

  it('its date column is deleted (found by the deadline scan)', async () => {
    const base = await freshBase();
    const rule = await createRule(t, alice, base, deadlineRule([bob.virtualId], { notify_hour: 11 }));
    await structure(base, 'DELETE', 'columns/', { table_name: 'Table1', column: 'Deadline' });
    t.clock.advance(2 * 60 * 60_000);
    expect(await t.container.scheduler.runOnce('notification-deadlines')).toMatchObject({ ran: true });
    await expectInvalid(base, rule, 'its date column Deadline was deleted');
  });

  it('its date column changes type', async () => {
    const base = await freshBase();
    const rule = await createRule(t, alice, base, deadlineRule([bob.virtualId]));
    await structure(base, 'PUT', 'columns/', { op_type: 'modify_column_type', table_name: 'Table1', column: 'Deadline', new_column_type: 'text' });
    await expectInvalid(base, rule, 'its date column Deadline is no longer a date column');
  });

  it('a column its filters use is deleted', async () => {
    const base = await freshBase();
    const rule = await createRule(t, alice, base, {
      run_condition: 'per_update',
      trigger: {
        rule_name: 'Urgent',
        table_id: '0000',
        view_id: '0000',
        condition: 'filters_satisfy',
        filters: [{ column_key: base.keys.Priority, filter_predicate: 'greater', filter_term: 5 }],
      },
      action: { users: [bob.virtualId] },
    });
    await structure(base, 'DELETE', 'columns/', { table_name: 'Table1', column: 'Priority' });
    await expectInvalid(base, rule, `its filters no longer fit table Table1: column ${base.keys.Priority} not found`);
  });

  it('a column of column_keys is deleted', async () => {
    const base = await freshBase();
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId], { watch_all_columns: false, column_keys: [base.keys.Notes] }));
    await structure(base, 'DELETE', 'columns/', { table_name: 'Table1', column: 'Notes' });
    await expectInvalid(base, rule, `the watched column ${base.keys.Notes} was deleted`);
  });

  it('a listed user loses access (found at once when the share is removed)', async () => {
    const base = await freshBase();
    await share(t, alice, base, carol, 'r');
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId, carol.virtualId]));
    const other = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId]));
    await unshare(t, alice, base, carol);
    await expectInvalid(base, rule, `user ${carol.virtualId} no longer has access to the base`);
    expect((await listRules(t, alice, base)).find((r) => r.id === other.id)?.is_valid).toBe(1);
    // An invalid rule never fires; the other rule still does.
    const [rowId] = await addRows(t, base, [{ Name: 'x' }]);
    await updateRow(t, base, rowId!, { Notes: 'y' });
    await dispatch(t);
    const bobs = (await inbox(t, bob)).filter((n) => n.type === 'notification_rules' && n.dtable_uuid === base.uuid);
    expect(bobs.map((n) => n.detail.rule_id)).toEqual([other.id]);
  });

  it('a listed user whose access merely changes keeps the rule valid', async () => {
    const base = await freshBase();
    const rule = await createRule(t, alice, base, modifiedRule(base, [bob.virtualId]));
    const res = await t.request({ method: 'PUT', url: `/api/v2.1/workspace/${base.workspaceId}/dtable/${encodeURIComponent(base.name)}/share/`, token: alice.token, payload: { email: bob.email, permission: 'r' } });
    expect(res.statusCode, res.body).toBe(200);
    expect((await listRules(t, alice, base)).find((r) => r.id === rule.id)?.is_valid).toBe(1);
  });

  it('a deactivated listed user is found at evaluation', async () => {
    const base = await freshBase();
    const dave = await createUser(t, { name: 'Dave' });
    await share(t, alice, base, dave, 'rw');
    const rule = await createRule(t, alice, base, modifiedRule(base, [dave.virtualId]));
    await t.container.db.updateTable('users').set({ is_active: 0 }).where('id', '=', dave.id).execute();
    const [rowId] = await addRows(t, base, [{ Name: 'x' }]);
    await updateRow(t, base, rowId!, { Notes: 'y' });
    await dispatch(t);
    await expectInvalid(base, rule, `user ${dave.virtualId} no longer has access to the base`);
  });
});
