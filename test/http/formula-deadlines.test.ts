import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { addRows, createRule, deadlineRule, gateway, inbox, ruleBase, rulesPath, share, type RuleBase } from './notification-fixtures.js';

/** 2026-01-05 is a Monday; New York is UTC-5 in January. */
const nyTime = (day: number, hour: number) => Date.UTC(2026, 0, day, hour + 5);

describe.each(DIALECTS)('deadline reminders on a date formula column (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let base: RuleBase;

  beforeAll(async () => {
    t = await createTestApp(dialect, { TIME_ZONE: 'America/New_York' });
    t.clock.set(nyTime(5, 5));
    alice = await createUser(t, { name: 'Alice' });
    bob = await createUser(t, { name: 'Bob' });
    base = await ruleBase(t, alice);
    await share(t, alice, base, bob, 'rw');
    const res = await t.request({
      method: 'POST',
      url: gateway(base, 'columns/'),
      token: base.token,
      payload: { table_name: 'Table1', column_name: 'Follow-up', column_type: 'formula', column_data: { formula: 'dateAdd({Deadline}, 1, "days")' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    await addRows(t, base, [
      { Name: 'due yesterday', Deadline: '2026-01-04' },
      { Name: 'due today', Deadline: '2026-01-05' },
      { Name: 'due in three days', Deadline: '2026-01-08' },
      { Name: 'no date' },
    ]);
  });
  afterAll(() => t.close());

  it('accepts a date formula as the deadline column and reminds of rows whose formula date is near', async () => {
    const rule = await createRule(t, alice, base, deadlineRule([bob.virtualId], { date_column_name: 'Follow-up', alarm_days: 1 }, { default_msg: '{Name} needs a follow-up' }));
    t.clock.set(nyTime(5, 9));
    expect((await t.container.scheduler.runOnce('notification-deadlines')).ran).toBe(true);
    const notices = (await inbox(t, bob)).filter((n) => n.type === 'notification_rules' && n.detail.rule_id === rule.id);
    // Follow-ups: Jan 5 (today), Jan 6 (tomorrow) are within [today, today + 1]; Jan 9 is not.
    expect(notices.map((n) => n.detail.msg).sort()).toEqual(['due today needs a follow-up', 'due yesterday needs a follow-up']);
  });

  it('refuses a formula column whose result is not a date', async () => {
    await t.request({ method: 'POST', url: gateway(base, 'columns/'), token: base.token, payload: { table_name: 'Table1', column_name: 'Shout', column_type: 'formula', column_data: { formula: 'upper({Name})' } } });
    const res = await t.request({ method: 'POST', url: rulesPath(base), token: alice.token, payload: deadlineRule([bob.virtualId], { date_column_name: 'Shout' }) as object });
    expect(res.statusCode).toBe(400);
    expect(res.json().error_msg).toMatch(/Shout is not a date column/);
  });
});
