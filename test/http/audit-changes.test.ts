import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { modifiedRule, ruleBase, rulesPath, type RuleBase } from './notification-fixtures.js';
import { automationsPath, WATCH_ALL_TRIGGER } from './automation-fixtures.js';

interface Detail {
  target: string;
  before?: Record<string, unknown>;
  after?: Record<string, unknown>;
}

/**
 * The audit rows of webhook and rule changes carry the stored object before and after (issue 33 item 5):
 * create → after (the created object), update → before and after as stored, delete → before; a refused
 * change leaves no row. No secret enters a row.
 */
describe.each(DIALECTS)('audit log before/after of webhooks and rules (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let base: RuleBase;
  const last = async () => {
    await t.container.audit.seal();
    const row = await t.container.db.selectFrom('audit_log').selectAll().orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
    return { ...row, detail: JSON.parse(row.detail) as Detail };
  };
  const count = async () => {
    await t.container.audit.seal();
    return (await t.container.db.selectFrom('audit_log').select('id').execute()).length;
  };

  beforeAll(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    owner = await createUser(t, { email: 'owner@example.com' });
    admin = await createUser(t, { email: 'admin@example.com', admin: true });
    base = await ruleBase(t, owner, 'Rules');
  });
  afterAll(() => t.close());

  it('webhook update and delete: before and after as stored, secrets redacted', async () => {
    const created = await t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: owner.token, payload: { url: 'http://127.0.0.1:9/a', secret: 'first-secret-value' } });
    expect(created.statusCode, created.body).toBeLessThan(300);
    const id = created.json<{ webhook: { id: number } } & { id?: number }>().webhook?.id ?? created.json<{ id: number }>().id;
    const createRow = await last();
    expect(createRow.action).toBe('webhook.create');
    expect(JSON.stringify(createRow.detail.after)).toContain('http://127.0.0.1:9/a');

    const before = await count();
    expect((await t.request({ method: 'PUT', url: basePath(base, `webhooks/${id}/`), token: owner.token, payload: { url: 'not a url' } })).statusCode).toBe(400);
    expect(await count()).toBe(before);

    const updated = await t.request({ method: 'PUT', url: basePath(base, `webhooks/${id}/`), token: owner.token, payload: { url: 'http://127.0.0.1:9/b', secret: 'second-secret-value' } });
    expect(updated.statusCode, updated.body).toBe(200);
    const update = await last();
    expect(update).toMatchObject({ action: 'webhook.update', base_id: base.id, actor: owner.email });
    expect(update.detail.before).toMatchObject({ id, url: 'http://127.0.0.1:9/a', secret: '[redacted]' });
    expect(update.detail.after).toMatchObject({ id, url: 'http://127.0.0.1:9/b', secret: '[redacted]' });

    expect((await t.request({ method: 'DELETE', url: basePath(base, `webhooks/${id}/`), token: owner.token })).statusCode).toBe(200);
    const removed = await last();
    expect(removed.action).toBe('webhook.delete');
    expect(removed.detail.before).toMatchObject({ id, url: 'http://127.0.0.1:9/b' });
    expect(removed.detail.after).toBeUndefined();
    const all = JSON.stringify(await t.container.db.selectFrom('audit_log').selectAll().execute());
    expect(all).not.toContain('first-secret-value');
    expect(all).not.toContain('second-secret-value');
  });

  it('notification rule create, update, delete (and an admin delete)', async () => {
    const created = await t.request({ method: 'POST', url: rulesPath(base), token: owner.token, payload: modifiedRule(base, [owner.virtualId]) });
    expect(created.statusCode, created.body).toBe(200);
    const rule = created.json<{ id: number }>();
    const create = await last();
    expect(create).toMatchObject({ action: 'notification_rule.create', base_id: base.id });
    expect(create.detail.after).toMatchObject({ id: rule.id, run_condition: 'per_update' });

    const body = modifiedRule(base, [owner.virtualId], { rule_name: 'Renamed' }, { default_msg: 'Now {Name}' });
    expect((await t.request({ method: 'PUT', url: rulesPath(base, rule.id), token: owner.token, payload: body })).statusCode).toBe(200);
    const update = await last();
    expect(update.action).toBe('notification_rule.update');
    expect(update.detail.before).toMatchObject({ id: rule.id, trigger: { rule_name: 'Changes' }, action: { default_msg: 'Row {Name} changed' } });
    expect(update.detail.after).toMatchObject({ id: rule.id, trigger: { rule_name: 'Renamed' }, action: { default_msg: 'Now {Name}' } });

    const before = await count();
    expect((await t.request({ method: 'PUT', url: rulesPath(base, rule.id), token: owner.token, payload: { ...body, run_condition: 'sometimes' } })).statusCode).toBe(400);
    expect((await t.request({ method: 'DELETE', url: rulesPath(base, 987654), token: owner.token })).statusCode).toBe(404);
    expect(await count()).toBe(before);

    expect((await t.request({ method: 'DELETE', url: rulesPath(base, rule.id), token: owner.token })).statusCode).toBe(200);
    const removed = await last();
    expect(removed.action).toBe('notification_rule.delete');
    expect(removed.detail.before).toMatchObject({ id: rule.id, trigger: { rule_name: 'Renamed' } });

    const other = await t.request({ method: 'POST', url: rulesPath(base), token: owner.token, payload: modifiedRule(base, [owner.virtualId], { rule_name: 'Admin target' }) });
    const otherId = other.json<{ id: number }>().id;
    expect((await t.request({ method: 'DELETE', url: `/api/v2.1/admin/notification-rules/${otherId}/`, token: admin.token })).statusCode).toBe(200);
    const adminRow = await last();
    expect(adminRow).toMatchObject({ action: 'admin.notification_rule_delete', actor: admin.email });
    expect(adminRow.detail.before).toMatchObject({ id: otherId, trigger: { rule_name: 'Admin target' } });
  });

  it('automation rule create, update, delete', async () => {
    const body = { run_condition: 'per_update', trigger: WATCH_ALL_TRIGGER, actions: [{ type: 'lock_record', is_locked: true, _id: 'a' }] };
    const created = await t.request({ method: 'POST', url: automationsPath(base), token: owner.token, payload: body });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json<{ id: number }>().id;
    expect(await last()).toMatchObject({ action: 'automation_rule.create', detail: { after: { id } } });

    const changed = { ...body, trigger: { ...WATCH_ALL_TRIGGER, rule_name: 'Lock all' } };
    expect((await t.request({ method: 'PUT', url: automationsPath(base, id), token: owner.token, payload: changed })).statusCode).toBe(200);
    const update = await last();
    expect(update.action).toBe('automation_rule.update');
    expect(update.detail.before).toMatchObject({ id, trigger: { rule_name: 'Watch all' } });
    expect(update.detail.after).toMatchObject({ id, trigger: { rule_name: 'Lock all' } });

    const before = await count();
    expect((await t.request({ method: 'PUT', url: automationsPath(base, id), token: owner.token, payload: { ...body, actions: [] } })).statusCode).toBe(400);
    expect(await count()).toBe(before);

    expect((await t.request({ method: 'DELETE', url: automationsPath(base, id), token: owner.token })).statusCode).toBe(200);
    const removed = await last();
    expect(removed.action).toBe('automation_rule.delete');
    expect(removed.detail.before).toMatchObject({ id, trigger: { rule_name: 'Lock all' }, actions: [expect.objectContaining({ type: 'lock_record' })] });

    // An admin's deletion of a rule: before as stored, the admin as actor.
    const other = await t.request({ method: 'POST', url: automationsPath(base), token: owner.token, payload: { ...body, trigger: { ...WATCH_ALL_TRIGGER, rule_name: 'Admin removes' } } });
    const otherId = other.json<{ id: number }>().id;
    expect((await t.request({ method: 'DELETE', url: `/api/v2.1/admin/automation-rules/${otherId}/`, token: admin.token })).statusCode).toBe(200);
    const adminRow = await last();
    expect(adminRow).toMatchObject({ action: 'admin.automation_rule_delete', actor: admin.email });
    expect(adminRow.detail.before).toMatchObject({ id: otherId, trigger: { rule_name: 'Admin removes' } });
    expect(await t.container.audit.verify()).toMatchObject({ ok: true });
  });
});
