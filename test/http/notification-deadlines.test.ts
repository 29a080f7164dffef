import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { Scheduler } from '../../src/workers/scheduler.js';
import { acquireLease } from '../../src/modules/notifications/index.js';
import { addRows, createRule, deadlineRule, gateway, inbox, listRules, ruleBase, share, type Notice, type RuleBase } from './notification-fixtures.js';

const TICK = 'notification-deadlines';
/** 2026-01-05 is a Monday; New York is UTC-5 in January. */
const nyTime = (day: number, hour: number, minute = 0) => Date.UTC(2026, 0, day, hour + 5, minute);

describe.each(DIALECTS)('notification rules: deadline reminders in America/New_York (%s)', (dialect) => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let base: RuleBase;
  const rows: Record<string, string> = {};

  const remindersOf = async (user: TestUser, ruleId: number): Promise<Notice[]> =>
    (await inbox(t, user)).filter((n) => n.type === 'notification_rules' && n.detail.rule_id === ruleId);
  const tick = async () => {
    const outcome = await t.container.scheduler.runOnce(TICK);
    expect(outcome.ran).toBe(true);
    return outcome;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect, { TIME_ZONE: 'America/New_York' });
    t.clock.set(nyTime(5, 5)); // Monday 05:00 in New York
    alice = await createUser(t, { name: 'Alice' });
    bob = await createUser(t, { name: 'Bob' });
    base = await ruleBase(t, alice);
    await share(t, alice, base, bob, 'rw');
    const ids = await addRows(t, base, [
      { Name: 'yesterday', Deadline: '2026-01-04' },
      { Name: 'today', Deadline: '2026-01-05' },
      { Name: 'tomorrow', Deadline: '2026-01-06', Status: 'Open' },
      { Name: 'in two days', Deadline: '2026-01-07' },
      { Name: 'in three days', Deadline: '2026-01-08', Status: 'Open' },
      { Name: 'no date' },
    ]);
    ['yesterday', 'today', 'tomorrow', 'plus2', 'plus3', 'none'].forEach((name, i) => {
      rows[name] = ids[i]!;
    });
  });
  afterAll(() => t.close());

  it('fires once a day at notify_hour local time for rows dated today … today + alarm_days', async () => {
    const rule = await createRule(t, alice, base, deadlineRule([bob.virtualId]));
    await tick(); // 05:00: not due yet
    expect(await remindersOf(bob, rule.id)).toEqual([]);

    t.clock.set(nyTime(5, 9)); // 09:00 New York = 14:00 UTC
    await tick();
    let notices = await remindersOf(bob, rule.id);
    expect(notices.map((n) => n.detail.msg).sort()).toEqual([
      'in two days is due on 2026-01-07',
      'today is due on 2026-01-05',
      'tomorrow is due on 2026-01-06',
    ]);
    expect(notices[0]!.detail).toMatchObject({ condition: 'near_deadline', rule_name: 'Due soon', table_id: '0000', view_id: '0000' });
    expect(notices.map((n) => (n.detail.row_id_list as string[])[0]).sort()).toEqual([rows.today, rows.tomorrow, rows.plus2].sort());
    expect((await listRules(t, alice, base)).find((r) => r.id === rule.id)?.last_trigger_time).toBe('2026-01-05T14:00:00+00:00');

    t.clock.set(nyTime(5, 10)); // the next hourly tick the same day sends nothing
    await tick();
    expect(await remindersOf(bob, rule.id)).toHaveLength(3);

    t.clock.set(nyTime(6, 9)); // Tuesday: tomorrow, plus2 and plus3 are in the window now
    await tick();
    notices = await remindersOf(bob, rule.id);
    expect(notices).toHaveLength(6);
    const tuesday = notices.filter((n) => n.time === '2026-01-06T14:00:00+00:00');
    expect(tuesday.map((n) => (n.detail.row_id_list as string[])[0]).sort()).toEqual([rows.tomorrow, rows.plus2, rows.plus3].sort());

    t.clock.set(nyTime(12, 9)); // a week later nothing is due any more
    await tick();
    expect(await remindersOf(bob, rule.id)).toHaveLength(6);
  });

  it('uses the local day, not the UTC one, near midnight', async () => {
    t.clock.set(nyTime(5, 20, 30));
    const rule = await createRule(t, alice, base, deadlineRule([bob.virtualId], { notify_hour: 21, alarm_days: 0 }));
    t.clock.set(nyTime(5, 21)); // 02:00 UTC on the 6th, still the 5th in New York
    await tick();
    const notices = await remindersOf(bob, rule.id);
    expect(notices.map((n) => (n.detail.row_id_list as string[])[0])).toEqual([rows.today]);
  });

  it('is exactly once per rule, row and day even when a run is repeated or runs twice at once', async () => {
    t.clock.set(nyTime(5, 8, 30));
    const rule = await createRule(t, alice, base, deadlineRule([bob.virtualId], { alarm_days: 1 }));
    t.clock.set(nyTime(5, 9));
    await Promise.all([t.container.notifications.deadlines.run(), t.container.notifications.deadlines.run()]);
    expect(await remindersOf(bob, rule.id)).toHaveLength(2);
    // A restarted or second instance with a stale schedule runs the rule again the same day: no repeats.
    await t.container.db.updateTable('notification_rules').set({ next_run_at: nyTime(5, 9) }).where('id', '=', rule.id).execute();
    t.clock.set(nyTime(5, 15));
    await tick();
    expect(await remindersOf(bob, rule.id)).toHaveLength(2);
  });

  it('catches up once after the scheduler was down at notify_hour', async () => {
    t.clock.set(nyTime(5, 8));
    const rule = await createRule(t, alice, base, deadlineRule([bob.virtualId], { alarm_days: 0 }));
    t.clock.set(nyTime(5, 13)); // the 09:00 tick was missed
    await tick();
    await tick();
    expect((await remindersOf(bob, rule.id)).map((n) => (n.detail.row_id_list as string[])[0])).toEqual([rows.today]);
  });

  it('restricts the rows to the rule view and notifies the users of the collaborator column', async () => {
    t.clock.set(nyTime(5, 8));
    const viewName = `Open ${dialect}`;
    const view = await t.request({ method: 'POST', url: gateway(base, 'views/?table_name=Table1'), token: base.token, payload: { name: viewName } });
    await t.request({
      method: 'PUT',
      url: gateway(base, `views/${encodeURIComponent(viewName)}/?table_name=Table1`),
      token: base.token,
      payload: { filters: [{ column_name: 'Status', filter_predicate: 'is', filter_term: 'Open' }] },
    });
    const [assigned] = await addRows(t, base, [{ Name: 'assigned', Deadline: '2026-01-06', Status: 'Open', Assignee: [alice.virtualId] }]);
    const rule = await createRule(
      t,
      alice,
      base,
      deadlineRule([bob.virtualId], { view_id: view.json<{ _id: string }>()._id, alarm_days: 5 }, { users_column_key: base.keys.Assignee }),
    );
    t.clock.set(nyTime(5, 9));
    await tick();
    const bobs = await remindersOf(bob, rule.id);
    expect(bobs.map((n) => (n.detail.row_id_list as string[])[0]).sort()).toEqual([rows.tomorrow, rows.plus3, assigned].sort());
    expect((await remindersOf(alice, rule.id)).map((n) => (n.detail.row_id_list as string[])[0])).toEqual([assigned]);
  });

  it('has no 25-row cap and leaves last_trigger_time empty when nothing matched', async () => {
    const big = await ruleBase(t, alice);
    const dates = Array.from({ length: 60 }, (_, i) => ({ Name: `row ${i}`, Deadline: '2026-01-20' }));
    await addRows(t, big, dates);
    t.clock.set(nyTime(18, 8));
    const rule = await createRule(t, alice, big, deadlineRule([alice.virtualId], { alarm_days: 2 }));
    const idle = await createRule(t, alice, big, deadlineRule([alice.virtualId], { alarm_days: 0 }));
    t.clock.set(nyTime(18, 9));
    await tick();
    expect(await remindersOf(alice, rule.id)).toHaveLength(60);
    const listed = await listRules(t, alice, big);
    expect(listed.find((r) => r.id === idle.id)?.last_trigger_time).toBe('');
    expect(listed.find((r) => r.id === rule.id)?.last_trigger_time).not.toBe('');
  });

  it('runs a tick only on the instance holding its lease', async () => {
    t.clock.set(nyTime(20, 9));
    expect(await acquireLease(t.container.db, TICK, 'another-instance', t.clock.now(), 10 * 60_000)).toBe(true);
    expect(await t.container.scheduler.runOnce(TICK)).toEqual({ ran: false, reason: 'leased' });
    const second = new Scheduler(t.container.db, t.clock, { timeZone: 'America/New_York' });
    second.register({ name: TICK, pattern: '0 0 * * * *', leaseMs: 60_000, run: async () => 'ran' });
    expect(await second.runOnce(TICK)).toEqual({ ran: false, reason: 'leased' });
    t.clock.advance(10 * 60_000); // the other instance's lease expired
    expect(await second.runOnce(TICK)).toEqual({ ran: true, result: 'ran' });
    expect(await t.container.scheduler.runOnce(TICK)).toMatchObject({ ran: true });
    expect(await t.container.scheduler.runOnce('no-such-tick')).toEqual({ ran: false, reason: 'unknown' });
  });

  it('schedules the hourly scan at minute 0 of each hour in TIME_ZONE, and the digest every five minutes', async () => {
    const scheduler = new Scheduler(t.container.db, t.clock, { timeZone: 'Asia/Kolkata' });
    for (const tick of t.container.notifications.ticks) scheduler.register(tick);
    expect(scheduler.nextRuns()).toEqual({});
    scheduler.start();
    try {
      const next = scheduler.nextRuns();
      expect(Object.keys(next).sort()).toEqual(['notification-deadlines', 'notification-email', 'notification-rule-check']);
      // Kolkata is UTC+5:30, so its full hours are at minute 30 UTC.
      expect(next['notification-deadlines']!.getUTCMinutes()).toBe(30);
      expect(next['notification-deadlines']!.getUTCSeconds()).toBe(0);
      expect(next['notification-email']!.getUTCMinutes() % 5).toBe(0);
    } finally {
      await scheduler.stop();
    }
    expect(scheduler.nextRuns()).toEqual({});
  });
});
