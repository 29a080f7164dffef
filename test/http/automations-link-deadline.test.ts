import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, baseToken, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { addRows, gateway, ruleBase, updateRow, type RuleBase } from './notification-fixtures.js';
import { automationsPath, createAutomation, listAutomations, runsOf, settle } from './automation-fixtures.js';

/** `link_records` (through the rows module's link write, in the run's transaction) and the `near_deadline` trigger. */
describe.each(DIALECTS)('automation rules: link_records and near_deadline (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let base: RuleBase;
  let linkId: string;
  let linkKey: string;
  let projectActive: string;
  let projectCode: string;
  let projects: Record<string, string>;

  const post = (body: unknown) => t.request({ method: 'POST', url: automationsPath(base), token: alice.token, payload: body as object });
  const linkedOf = async (rowId: string): Promise<string[]> => {
    const res = await t.request({ method: 'GET', url: gateway(base, `rows/${rowId}/?table_name=Table1`), token: base.token });
    expect(res.statusCode, res.body).toBe(200);
    const cell = (res.json<Record<string, unknown>>()[linkKey] ?? []) as Array<{ row_id: string }>;
    return cell.map((c) => c.row_id).sort();
  };
  const linkRule = (action: Record<string, unknown>) => ({
    run_condition: 'per_update',
    trigger: { rule_name: 'Link on add', table_id: '0000', view_id: '0000', condition: 'rows_added' },
    actions: [{ _id: 'l', type: 'link_records', link_id: linkId, ...action }],
  });

  beforeAll(async () => {
    t = await createTestApp(dialect, {});
    alice = await createUser(t, { name: 'Alice' });
    base = await ruleBase(t, alice, 'Linked');
    const table = await t.request({ method: 'POST', url: gateway(base, 'tables/'), token: base.token, payload: { table_name: 'Projects', columns: [{ column_name: 'Code', column_type: 'text' }, { column_name: 'Active', column_type: 'checkbox' }] } });
    expect(table.statusCode, table.body).toBe(200);
    const meta = await t.request({ method: 'GET', url: gateway(base, 'metadata/'), token: base.token });
    const projectsTable = meta.json<{ metadata: { tables: Array<{ name: string; _id: string; columns: Array<{ name: string; key: string }> }> } }>().metadata.tables.find((x) => x.name === 'Projects')!;
    projectCode = projectsTable.columns.find((c) => c.name === 'Code')!.key;
    projectActive = projectsTable.columns.find((c) => c.name === 'Active')!.key;
    const column = await t.request({ method: 'POST', url: gateway(base, 'columns/'), token: base.token, payload: { table_name: 'Table1', column_name: 'Projects', column_type: 'link', column_data: { table: 'Table1', other_table: 'Projects' } } });
    expect(column.statusCode, column.body).toBe(200);
    linkId = column.json<{ data: { link_id: string } }>().data.link_id;
    linkKey = column.json<{ key: string }>().key;
    const added = await t.request({
      method: 'POST',
      url: gateway(base, 'rows/'),
      token: base.token,
      payload: { table_name: 'Projects', rows: [{ Code: 'A1', Active: true }, { Code: 'A1', Active: false }, { Code: 'B2', Active: true }, { Code: 'A1', Active: true }] },
    });
    expect(added.statusCode, added.body).toBe(200);
    const ids = added.json<{ row_ids: Array<{ _id: string }> }>().row_ids.map((r) => r._id);
    projects = { a1: ids[0]!, a1Inactive: ids[1]!, b2: ids[2]!, a1Second: ids[3]! };
  });
  afterAll(() => t.close());
  beforeEach(async () => {
    await settle(t);
    await t.container.db.deleteFrom('automation_rules').execute();
    // Tests move the clock on by days: a fresh Base-Token each time.
    base.token = await baseToken(t, alice, base);
  });

  it('link_records links the new row to the rows whose column matches and that pass the filters, as a link event', async () => {
    const rule = await createAutomation(
      t,
      alice,
      base,
      linkRule({ match_conditions: [{ column_key: base.keys.Notes, other_column_key: projectCode }], filters: [{ column_key: projectActive, filter_predicate: 'is', filter_term: true }] }),
    );
    expect(rule.actions[0]).toMatchObject({ type: 'link_records', link_id: linkId, match_conditions: [{ column_key: base.keys.Notes, other_column_key: projectCode }] });
    const [row, empty, none] = await addRows(t, base, [{ Name: 'task', Notes: 'A1' }, { Name: 'no code' }, { Name: 'unknown', Notes: 'Z9' }]);
    await settle(t);
    expect(await linkedOf(row!)).toEqual([projects.a1!, projects.a1Second!].sort());
    expect(await linkedOf(empty!)).toEqual([]);
    expect(await linkedOf(none!)).toEqual([]);
    const runs = await runsOf(t, alice, base, rule.id);
    const byRow = new Map(runs.map((r) => [r.row_ids[0], r]));
    expect(byRow.get(row!)).toMatchObject({ status: 'done', actions: [{ _id: 'l', status: 'done', detail: '2 rows linked' }] });
    expect(byRow.get(none!)).toMatchObject({ status: 'done', actions: [{ detail: 'no matching rows' }] });
    // The links were written as the automation's write: a link event with its op_app.
    const events = await t.container.db.selectFrom('events').select(['op_type', 'op_app']).where('row_id', '=', row!).execute();
    expect(events).toContainEqual({ op_type: 'add_link', op_app: `automation:${rule.id}:1` });
    expect(runs).toHaveLength(3); // its own link write did not trigger it again
  });

  it('link_records bad bodies get a 400 naming the field and create nothing', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ link_id: 'nope', match_conditions: [{ column_key: '0000', other_column_key: projectCode }] }, /actions\.0\.link_id invalid/],
      [{ match_conditions: [{ column_key: 'zzzz', other_column_key: projectCode }] }, /actions\.0\.match_conditions\.0\.column_key invalid/],
      [{ match_conditions: [{ column_key: '0000', other_column_key: 'zzzz' }] }, /other_column_key invalid/],
      [{ match_conditions: [] }, /actions\.0\.match_conditions invalid: give at least one/],
      [{ match_conditions: 'x' }, /actions\.0\.match_conditions invalid/],
      [{ linked_table_id: '0000', match_conditions: [{ column_key: '0000', other_column_key: projectCode }] }, /actions\.0\.linked_table_id invalid/],
      [{ filters: [{ column_key: 'zzzz', filter_predicate: 'is', filter_term: 'x' }] }, /actions\.0\.filters invalid/],
    ];
    for (const [action, message] of cases) {
      const res = await post(linkRule(action));
      expect(res.statusCode, JSON.stringify(action)).toBe(400);
      expect(res.json<{ error_msg: string }>().error_msg).toMatch(message);
    }
    const periodic = await post({ run_condition: 'per_day', trigger: { rule_name: 'p', table_id: '0000', view_id: '0000', condition: 'run_periodically', notify_hour: 9 }, actions: [{ _id: 'l', type: 'link_records', link_id: linkId, match_conditions: [{ column_key: '0000', other_column_key: projectCode }] }] });
    expect(periodic.statusCode).toBe(400);
    expect(await listAutomations(t, alice, base)).toEqual([]);
  });

  it('near_deadline: fires once per row and deadline at notify_hour, again only when the deadline changes', async () => {
    // A day of its own at 06:00 UTC (TIME_ZONE is UTC in tests); dates are days after it.
    const DAY = 86_400_000;
    const start = Math.ceil(t.clock.now() / DAY) * DAY + DAY + 6 * 3_600_000;
    t.clock.set(start);
    const day = (offset: number) => new Date(start + offset * DAY).toISOString().slice(0, 10);
    const rule = await createAutomation(t, alice, base, {
      run_condition: 'per_day',
      trigger: { rule_name: 'Due soon', table_id: '0000', view_id: '0000', condition: 'near_deadline', date_column_name: 'Deadline', alarm_days: 2, notify_hour: 9 },
      actions: [{ _id: 'u', type: 'update_record', updates: { Notes: 'due {Deadline}' } }],
    });
    expect(rule.trigger).toMatchObject({ condition: 'near_deadline', date_column_name: 'Deadline', alarm_days: 2, notify_hour: 9 });
    const [soon, later, undated] = await addRows(t, base, [{ Name: 'soon', Deadline: day(1) }, { Name: 'later', Deadline: day(20) }, { Name: 'undated' }]);
    await settle(t);
    const due = async () => Number((await t.container.db.selectFrom('automation_rules').select('next_run_at').where('id', '=', rule.id).executeTakeFirstOrThrow()).next_run_at);
    let at = await due();
    expect(at).toBe(start + 3 * 3_600_000); // 09:00 the same day
    t.clock.set(at + 1000);
    expect((await t.container.automations.periodic.run()).runs).toBe(1);
    await settle(t);
    let runs = await runsOf(t, alice, base, rule.id);
    expect(runs.map((r) => [r.trigger, r.row_ids[0], r.status])).toEqual([['near_deadline', soon, 'done']]);

    // The next day the row is still within the window (today … today + 2), with the same deadline: it does not fire again.
    at = await due();
    t.clock.set(at + 1000);
    expect((await t.container.automations.periodic.run()).runs).toBe(0);
    // Its deadline moves (still near): it fires for the new deadline; the far and undated rows never.
    await updateRow(t, base, soon!, { Deadline: day(3) });
    at = await due();
    t.clock.set(at + 1000);
    expect((await t.container.automations.periodic.run()).runs).toBe(1);
    await settle(t);
    runs = await runsOf(t, alice, base, rule.id);
    expect(runs.map((r) => r.row_ids[0])).toEqual([soon, soon]);
    expect(runs.flatMap((r) => r.row_ids)).not.toContain(later);
    expect(runs.flatMap((r) => r.row_ids)).not.toContain(undated);
  });

  it('near_deadline bad bodies get a 400', async () => {
    const trigger = { rule_name: 'd', table_id: '0000', view_id: '0000', condition: 'near_deadline', date_column_name: 'Deadline', alarm_days: 1, notify_hour: 9 };
    const actions = [{ _id: 'u', type: 'update_record', updates: { Notes: 'x' } }];
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ run_condition: 'per_week', trigger: { ...trigger, notify_week_day: 1, notify_week_hour: 9 }, actions }, /trigger\.condition invalid/],
      [{ run_condition: 'per_update', trigger, actions }, /trigger\.condition invalid/],
      [{ run_condition: 'per_day', trigger: { ...trigger, date_column_name: 'Notes' }, actions }, /trigger\.date_column_name invalid: column Notes is not a date column/],
      [{ run_condition: 'per_day', trigger: { ...trigger, alarm_days: -1 }, actions }, /trigger\.alarm_days invalid/],
      [{ run_condition: 'per_day', trigger: { ...trigger, notify_hour: 24 }, actions }, /trigger\.notify_hour invalid/],
    ];
    for (const [body, message] of cases) {
      const res = await post(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json<{ error_msg: string }>().error_msg).toMatch(message);
    }
    expect(await listAutomations(t, alice, base)).toEqual([]);
  });

  it('deleting the link column makes a link_records rule invalid with the reason (runs last: it removes the link)', async () => {
    const rule = await createAutomation(t, alice, base, linkRule({ match_conditions: [{ column_key: base.keys.Notes, other_column_key: projectCode }] }));
    const del = await t.request({ method: 'DELETE', url: gateway(base, 'columns/'), token: base.token, payload: { table_name: 'Table1', column: 'Projects' } });
    expect(del.statusCode, del.body).toBe(200);
    const [listed] = await listAutomations(t, alice, base);
    expect(listed).toMatchObject({ id: rule.id, is_valid: false });
    expect(listed!.invalid_reason).toMatch(new RegExp(`the link ${linkId} of action l was deleted`));
  });
});

describe.each(DIALECTS)('automation rules: near_deadline past AUTOMATION_PERIODIC_MAX_ROWS (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let base: RuleBase;
  beforeAll(async () => {
    t = await createTestApp(dialect, { AUTOMATION_PERIODIC_MAX_ROWS: '2' });
    alice = await createUser(t, { name: 'Alice' });
    base = await ruleBase(t, alice, 'Capped');
  });
  afterAll(() => t.close());

  it('runs at most the limit per day; the rows left over keep no mark and fire at the next run, each once', async () => {
    const DAY = 86_400_000;
    const start = Math.ceil(t.clock.now() / DAY) * DAY + DAY + 6 * 3_600_000;
    t.clock.set(start);
    const day = (offset: number) => new Date(start + offset * DAY).toISOString().slice(0, 10);
    base.token = await baseToken(t, alice, base);
    const rule = await createAutomation(t, alice, base, {
      run_condition: 'per_day',
      trigger: { rule_name: 'Capped', table_id: '0000', view_id: '0000', condition: 'near_deadline', date_column_name: 'Deadline', alarm_days: 5, notify_hour: 9 },
      actions: [{ _id: 'u', type: 'update_record', updates: { Notes: 'reminded' } }],
    });
    const ids = await addRows(t, base, [1, 2, 3].map((i) => ({ Name: `due ${i}`, Deadline: day(3) })));
    await settle(t);
    const runDay = async () => {
      const due = Number((await t.container.db.selectFrom('automation_rules').select('next_run_at').where('id', '=', rule.id).executeTakeFirstOrThrow()).next_run_at);
      t.clock.set(due + 1000);
      const report = await t.container.automations.periodic.run();
      await settle(t);
      return report.runs;
    };
    expect(await runDay()).toBe(2);
    expect(await runDay()).toBe(1);
    expect(await runDay()).toBe(0);
    const runs = await runsOf(t, alice, base, rule.id);
    expect(runs.map((r) => r.row_ids[0]).sort()).toEqual([...ids].sort());
  });
});
