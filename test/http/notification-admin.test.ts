import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { createRule, deadlineRule, modifiedRule, ruleBase, type RuleBase, type RuleRecord } from './notification-fixtures.js';

describe.each(DIALECTS)('notification rules: system-admin operations (%s)', (dialect) => {
  let t: TestApp;
  let admin: TestUser;
  let alice: TestUser;
  let first: RuleBase;
  let second: RuleBase;
  let rules: RuleRecord[];

  beforeAll(async () => {
    t = await createTestApp(dialect);
    admin = await createUser(t, { admin: true, name: 'Admin' });
    alice = await createUser(t, { name: 'Alice' });
    first = await ruleBase(t, alice);
    second = await ruleBase(t, alice);
  });
  afterAll(() => t.close());

  beforeEach(async () => {
    await t.container.db.deleteFrom('notification_rules').execute();
    rules = [];
    for (const [i, base] of [first, second, first].entries()) {
      t.clock.advance(1000);
      rules.push(await createRule(t, alice, base, i === 1 ? deadlineRule([alice.virtualId]) : modifiedRule(base, [alice.virtualId], { rule_name: `rule ${i}` })));
    }
    await t.container.db.updateTable('notification_rules').set({ is_valid: 0 }).where('id', '=', rules[0]!.id).execute();
  });

  const get = async (url: string, token = admin.token) => {
    const res = await t.request({ method: 'GET', url, token });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };

  it('lists every rule newest first, with its id, base and validity', async () => {
    const body = await get('/api/v2.1/admin/notification-rules/');
    expect(body.count).toBe(3);
    expect(body.notification_rule_list.map((r: RuleRecord) => r.id)).toEqual([rules[2]!.id, rules[1]!.id, rules[0]!.id]);
    expect(body.notification_rule_list[2]).toEqual({ ...rules[0], is_valid: 0 });
    expect(body.notification_rule_list[1]).toMatchObject({ dtable_uuid: second.uuid, run_condition: 'per_day', creator: 'Alice', is_valid: 1 });
  });

  it('pages: page and per_page, defaults for non-numbers, per_page capped at 100', async () => {
    expect((await get('/api/v2.1/admin/notification-rules/?page=2&per_page=2')).notification_rule_list.map((r: RuleRecord) => r.id)).toEqual([rules[0]!.id]);
    const fallback = await get('/api/v2.1/admin/notification-rules/?page=two&per_page=1');
    expect(fallback.notification_rule_list).toHaveLength(3);
    expect((await get('/api/v2.1/admin/notification-rules/?page=9')).notification_rule_list).toEqual([]);
    const template = await t.container.db.selectFrom('notification_rules').selectAll().where('id', '=', rules[1]!.id).executeTakeFirstOrThrow();
    const { id: _id, ...copy } = template;
    for (let i = 0; i < 100; i++) await t.container.db.insertInto('notification_rules').values({ ...copy, ctime: copy.ctime - 1_000_000 - i }).execute();
    const capped = await get('/api/v2.1/admin/notification-rules/?per_page=500');
    expect(capped.notification_rule_list).toHaveLength(100);
    expect(capped.count).toBe(103);
  });

  it('deletes one rule by its integer id', async () => {
    const res = await t.request({ method: 'DELETE', url: `/api/v2.1/admin/notification-rules/${rules[1]!.id}/`, token: admin.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect((await get('/api/v2.1/admin/notification-rules/')).count).toBe(2);
    const again = await t.request({ method: 'DELETE', url: `/api/v2.1/admin/notification-rules/${rules[1]!.id}/`, token: admin.token });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ error_msg: `notification ${rules[1]!.id} not found.` });
  });

  it.each(['abc', '0', '-3', '1.5', '99999999999999999999'])('refuses rule id %s with 400 rid invalid.', async (rid) => {
    const res = await t.request({ method: 'DELETE', url: `/api/v2.1/admin/notification-rules/${rid}/`, token: admin.token });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error_msg: 'rid invalid.' });
  });

  it('lists the invalid rules only', async () => {
    const body = await get('/api/v2.1/admin/invalid-notification-rules/?page=1&per_page=25');
    expect(body).toEqual({ invalid_notification_rule_list: [{ ...rules[0], is_valid: 0 }], count: 1 });
  });

  it('deletes all invalid rules and keeps the valid ones', async () => {
    await t.container.db.updateTable('notification_rules').set({ is_valid: 0 }).where('id', '=', rules[2]!.id).execute();
    const res = await t.request({ method: 'DELETE', url: '/api/v2.1/admin/invalid-notification-rules/', token: admin.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect((await get('/api/v2.1/admin/notification-rules/')).notification_rule_list.map((r: RuleRecord) => r.id)).toEqual([rules[1]!.id]);
    expect((await get('/api/v2.1/admin/invalid-notification-rules/')).count).toBe(0);
  });

  it('leaves out the rules of a trashed base (listed, counted, deleted) and has them again after its restore', async () => {
    const trashBase = await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${first.workspaceId}/dtable/`, token: alice.token, payload: { name: first.name } });
    expect(trashBase.statusCode, trashBase.body).toBe(200);
    // Rules 0 (invalid) and 2 belong to the trashed base; rule 1 to the other.
    const listed = await get('/api/v2.1/admin/notification-rules/');
    expect({ count: listed.count, ids: listed.notification_rule_list.map((r: RuleRecord) => r.id) }).toEqual({ count: 1, ids: [rules[1]!.id] });
    expect(await get('/api/v2.1/admin/invalid-notification-rules/')).toEqual({ invalid_notification_rule_list: [], count: 0 });
    expect((await t.request({ method: 'DELETE', url: '/api/v2.1/admin/invalid-notification-rules/', token: admin.token })).statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url: `/api/v2.1/admin/notification-rules/${rules[2]!.id}/`, token: admin.token })).statusCode).toBe(404);

    const trashed = (await t.request({ method: 'GET', url: '/api/v2.1/trash-dtables/', token: alice.token })).json().trash_dtable_list[0];
    expect((await t.request({ method: 'PUT', url: `/api/v2.1/trash-dtables/${trashed.id}/`, token: alice.token })).statusCode).toBe(200);
    expect((await get('/api/v2.1/admin/notification-rules/')).count).toBe(3);
    expect((await get('/api/v2.1/admin/invalid-notification-rules/')).invalid_notification_rule_list.map((r: RuleRecord) => r.id)).toEqual([rules[0]!.id]);
  });

  it('refuses users who are not system admins (403) and anonymous callers', async () => {
    const calls = [
      ['GET', '/api/v2.1/admin/notification-rules/'],
      ['DELETE', `/api/v2.1/admin/notification-rules/${rules[1]!.id}/`],
      ['GET', '/api/v2.1/admin/invalid-notification-rules/'],
      ['DELETE', '/api/v2.1/admin/invalid-notification-rules/'],
    ] as const;
    for (const [method, url] of calls) {
      const res = await t.request({ method, url, token: alice.token });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json()).toEqual({ detail: 'You do not have permission to perform this action.' });
      expect((await t.request({ method, url })).statusCode).toBe(403);
    }
    expect((await get('/api/v2.1/admin/notification-rules/')).count).toBe(3);
    expect((await get('/api/v2.1/admin/invalid-notification-rules/')).count).toBe(1);
  });
});
