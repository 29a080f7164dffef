import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sql } from 'kysely';
import { totpCode } from '../../src/modules/accounts/index.js';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('audit log (%s)', (dialect) => {
  let t: TestApp;
  let admin: TestUser;
  let owner: TestUser;
  let guest: TestUser;
  let base: TestBase;
  // The chain as sealed (a row is sealed shortly after its action commits; `seal` does it now).
  const rows = async () => {
    await t.container.audit.seal();
    return t.container.db.selectFrom('audit_log').selectAll().orderBy('seq').execute();
  };
  const last = async () => (await rows()).at(-1)!;

  beforeAll(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    admin = await createUser(t, { email: 'admin@example.com', admin: true });
    owner = await createUser(t, { email: 'owner@example.com' });
    guest = await createUser(t, { email: 'guest@example.com' });
    base = await createBase(t, owner, 'Audited');
  });
  afterAll(() => t.close());

  it('records sign-ins, succeeded and failed, with the client address and no password', async () => {
    const ok = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: owner.email, password: owner.password }, remoteAddress: '10.1.2.3' });
    expect(ok.statusCode).toBe(200);
    expect(await last()).toMatchObject({ action: 'login.success', actor: owner.email, ip: '10.1.2.3', target: 'account' });
    const bad = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: owner.email, password: 'wrong-password-1' }, remoteAddress: '10.1.2.4' });
    expect(bad.statusCode).toBe(400);
    const row = await last();
    expect(row).toMatchObject({ action: 'login.failed', actor: owner.email, ip: '10.1.2.4' });
    expect(JSON.stringify(await rows())).not.toContain('wrong-password-1');
    expect(JSON.stringify(await rows())).not.toContain(owner.password);
  });

  // Each action through the HTTP API, and the row it leaves (table-driven).
  const actions: Array<[string, () => Promise<{ statusCode: number; body: string }>, string, 'base' | null]> = [
    ['api_token.create', () => t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: 'app1', permission: 'rw' } }), 'POST /api/v2.1/workspace/', 'base'],
    ['api_token.update', () => t.request({ method: 'PUT', url: basePath(base, 'api-tokens/app1/'), token: owner.token, payload: { permission: 'r' } }), 'api-tokens/app1', 'base'],
    ['api_token.rotate', () => t.request({ method: 'POST', url: basePath(base, 'api-tokens/app1/rotate/'), token: owner.token, payload: { overlap_seconds: 60 } }), 'rotate', 'base'],
    ['temp_api_token.create', () => t.request({ method: 'GET', url: basePath(base, 'temp-api-token/'), token: owner.token }), 'temp-api-token', 'base'],
    ['share.create', () => t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email, permission: 'r' } }), 'share', 'base'],
    ['share.update', () => t.request({ method: 'PUT', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email, permission: 'rw' } }), 'share', 'base'],
    ['share.delete', () => t.request({ method: 'DELETE', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email } }), 'share', 'base'],
    ['external_link.create', () => t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, payload: {} }), 'external-links', 'base'],
    ['webhook.create', () => t.request({ method: 'POST', url: basePath(base, 'webhooks/'), token: owner.token, payload: { url: 'http://127.0.0.1:9/hook', secret: 'hook-secret-value' } }), 'webhooks', 'base'],
    ['admin.user_create', () => t.request({ method: 'POST', url: '/api/v2.1/admin/users/', token: admin.token, payload: { email: 'new@example.com', password: 'new-password-9' } }), 'admin/users', null],
    ['admin.user_update', () => t.request({ method: 'PUT', url: '/api/v2.1/admin/users/new@example.com/', token: admin.token, payload: { name: 'Newer' } }), 'new@example.com', null],
    ['admin.user_reset_password', () => t.request({ method: 'PUT', url: '/api/v2.1/admin/users/new@example.com/reset-password/', token: admin.token }), 'new@example.com/reset-password', null],
    ['admin.user_delete', () => t.request({ method: 'DELETE', url: '/api/v2.1/admin/users/new@example.com/', token: admin.token }), 'new@example.com', null],
    ['admin.limits_override', () => t.request({ method: 'PUT', url: `/api/v2.1/admin/rate-limits/bases/${base.uuid}/`, token: admin.token, payload: { per_minute: 50 } }), 'rate-limits/bases', 'base'],
    ['admin.limits_override_delete', () => t.request({ method: 'DELETE', url: `/api/v2.1/admin/rate-limits/bases/${base.uuid}/`, token: admin.token }), 'DELETE /api/v2.1/admin/rate-limits/bases/', 'base'],
    ['admin.invalid_notification_rules_delete', () => t.request({ method: 'DELETE', url: '/api/v2.1/admin/invalid-notification-rules/', token: admin.token }), 'invalid-notification-rules', null],
    ['admin.invalid_automation_rules_delete', () => t.request({ method: 'DELETE', url: '/api/v2.1/admin/invalid-automation-rules/', token: admin.token }), 'invalid-automation-rules', null],
    [
      'webhook.rotate_secret',
      async () => {
        const hook = await t.container.db.selectFrom('webhooks').select('id').where('base_id', '=', base.id).orderBy('id', 'desc').executeTakeFirstOrThrow();
        return t.request({ method: 'POST', url: basePath(base, `webhooks/${hook.id}/rotate-secret/`), token: owner.token, payload: { secret: 'rotated-secret-value', grace_seconds: 60 } });
      },
      'rotate-secret',
      'base',
    ],
    ['base.export_table', () => t.request({ method: 'GET', url: `/api/v2.1/workspace/${base.workspaceId}/synchronous-export/export-table-to-excel/?dtable_name=Audited&table_name=Table1&format=csv`, token: owner.token }), 'export-table-to-excel', 'base'],
    ['base.export_view', () => t.request({ method: 'GET', url: `/api/v2.1/workspace/${base.workspaceId}/synchronous-export/export-view-to-excel/?dtable_name=Audited&table_name=Table1&view_name=Default%20View&format=csv`, token: owner.token }), 'export-view-to-excel', 'base'],
    ['base.export', () => t.request({ method: 'GET', url: `/api/v2.1/workspace/${base.workspaceId}/synchronous-export/export-dtable/?dtable_name=Audited`, token: owner.token }), 'export-dtable', 'base'],
    ['base.copy', () => t.request({ method: 'POST', url: '/api/v2.1/dtable-copy/', token: owner.token, payload: { src_workspace_id: base.workspaceId, dst_workspace_id: base.workspaceId, name: 'Audited' } }), 'dtable-copy', 'base'],
    ['api_token.delete', () => t.request({ method: 'DELETE', url: basePath(base, 'api-tokens/app1/'), token: owner.token }), 'api-tokens/app1', 'base'],
  ];
  it.each(actions)('%s', async (action, perform, target, scope) => {
    const res = await perform();
    expect(res.statusCode, res.body).toBeLessThan(300);
    const row = await last();
    expect(row.action).toBe(action);
    expect(row.target).toContain(target);
    expect(row.actor).toBe(action.startsWith('admin.') ? admin.email : owner.email);
    expect(row.base_id).toBe(scope === 'base' ? base.id : null);
    // Nothing secret: no password, webhook secret or token value in the stored row.
    const stored = JSON.stringify(row);
    expect(stored).not.toContain('new-password-9');
    expect(stored).not.toContain('hook-secret-value');
    expect(stored).not.toContain('rotated-secret-value');
    const password = /"password"\s*:\s*"([^"]+)"/.exec(res.body);
    if (password) expect(stored).not.toContain(password[1]);
    const answer = /"(?:api_token|token)"\s*:\s*"([^"]+)"/.exec(res.body);
    if (answer) expect(stored).not.toContain(answer[1]);
  });

  it("records a user's own security changes: password, two-factor enrolment and recovery codes, a device's revocation", async () => {
    const user = await createUser(t, { email: 'self@example.com' });
    const mine = async (action: string) => {
      const row = await last();
      expect(row).toMatchObject({ action, actor: user.email, base_id: null });
      return row;
    };
    const begun = await t.request({ method: 'POST', url: '/api/v2.1/user/two-factor-auth/', token: user.token });
    expect(begun.statusCode).toBe(200);
    const { secret } = begun.json<{ secret: string }>();
    expect((await mine('two_factor.enrol_start')).target).toBe('POST /api/v2.1/user/two-factor-auth/');
    const enabled = await t.request({ method: 'PUT', url: '/api/v2.1/user/two-factor-auth/', token: user.token, payload: { code: totpCode(secret, t.clock.now()) } });
    expect(enabled.statusCode).toBe(200);
    await mine('two_factor.enable');
    t.clock.advance(30_000);
    const renewed = await t.request({ method: 'POST', url: '/api/v2.1/user/two-factor-auth/recovery-codes/', token: user.token, payload: { code: totpCode(secret, t.clock.now()) } });
    expect(renewed.statusCode).toBe(200);
    await mine('two_factor.recovery_codes');
    t.clock.advance(30_000);
    const device = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: user.email, password: user.password, platform: 'ios', device_id: 'pad', device_name: 'Pad' }, headers: { 'x-seafile-otp': totpCode(secret, t.clock.now()) } });
    expect(device.statusCode).toBe(200);
    expect((await t.request({ method: 'DELETE', url: '/api2/devices/', token: user.token, payload: { platform: 'ios', device_id: 'pad' } })).statusCode).toBe(200);
    expect((await mine('account.device_revoke')).detail).toContain('"device_id":"pad"');
    expect((await t.request({ method: 'PUT', url: '/api/v2.1/user/password/', token: user.token, payload: { old_password: user.password, new_password: 'self-new-password' } })).statusCode).toBe(200);
    await mine('account.password_change');
    // No secret, code, recovery code or password in any of these rows.
    const stored = JSON.stringify(await rows());
    for (const value of [secret, user.password, 'self-new-password', device.json<{ token: string }>().token, ...renewed.json<{ recovery_codes: string[] }>().recovery_codes]) expect(stored).not.toContain(value);
  });

  it('records a base deletion (its id found before it is gone), and an external link by a redacted target', async () => {
    const link = await t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, payload: {} });
    const linkToken = link.json<{ token: string }>().token;
    expect((await t.request({ method: 'DELETE', url: basePath(base, `external-links/${linkToken}/`), token: owner.token })).statusCode).toBe(200);
    const removed = await last();
    expect(removed).toMatchObject({ action: 'external_link.delete', base_id: base.id });
    expect(removed.target).toContain('[redacted]');
    expect(removed.target).not.toContain(linkToken);
    const doomed = await createBase(t, owner, 'Doomed');
    expect((await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${doomed.workspaceId}/dtable/`, token: owner.token, payload: { name: 'Doomed' } })).statusCode).toBe(200);
    expect(await last()).toMatchObject({ action: 'base.delete', base_id: doomed.id, actor: owner.email });
  });

  it('records the first use of an API-Token from each network, once', async () => {
    const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: 'net', permission: 'r' } });
    const apiToken = created.json<{ api_token: string }>().api_token;
    const use = (ip: string) => t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', token: apiToken, remoteAddress: ip });
    // Back to a known address (the check keeps each token's last one), then a third: one row per address.
    for (const ip of ['192.0.2.1', '192.0.2.1', '192.0.2.2', '192.0.2.1', '192.0.2.2', '192.0.2.3']) expect((await use(ip)).statusCode).toBe(200);
    // The record is written off the request path.
    const seen = await vi.waitFor(
      async () => {
        const found = (await rows()).filter((r) => r.action === 'api_token.new_network');
        expect(found.map((r) => r.ip).sort()).toEqual(['192.0.2.1', '192.0.2.2', '192.0.2.3']);
        return found;
      },
      { timeout: 5000, interval: 20 },
    );
    expect(seen.every((r) => r.base_id === base.id)).toBe(true);
    expect(JSON.stringify(seen)).not.toContain(apiToken);
  });

  it('serves admin audit and login logs, paged and filtered; a base owner sees their base only', async () => {
    const list = await t.request({ method: 'GET', url: '/api/v2.1/admin/audit-logs/?per_page=2&page=1', token: admin.token });
    expect(list.statusCode).toBe(200);
    const body = list.json<{ audit_log_list: Array<{ operation: string; created_at: string }>; total_count: number }>();
    expect(body.audit_log_list).toHaveLength(2);
    expect(body.total_count).toBe((await rows()).length);
    expect(body.audit_log_list[0]!.created_at).toMatch(/\+00:00$/);
    const byAction = await t.request({ method: 'GET', url: '/api/v2.1/admin/audit-logs/?operation=share.create', token: admin.token });
    expect(byAction.json().audit_log_list.map((r: { operation: string }) => r.operation)).toEqual(['share.create']);
    const byUser = await t.request({ method: 'GET', url: `/api/v2.1/admin/audit-logs/?user=${admin.email}`, token: admin.token });
    expect(byUser.json().audit_log_list.every((r: { username: string }) => r.username === admin.email)).toBe(true);
    const future = await t.request({ method: 'GET', url: `/api/v2.1/admin/audit-logs/?start=${t.clock.now() + 1000}`, token: admin.token });
    expect(future.json().total_count).toBe(0);
    const logins = await t.request({ method: 'GET', url: '/api/v2.1/admin/logs/login-logs/', token: admin.token });
    const entries = logins.json<{ login_log_list: Array<{ log_success: boolean; login_ip: string }> }>().login_log_list;
    expect(entries.some((e) => !e.log_success && e.login_ip === '10.1.2.4')).toBe(true);
    expect(entries.some((e) => e.log_success)).toBe(true);
    // Permissions and bad input.
    expect((await t.request({ method: 'GET', url: '/api/v2.1/admin/audit-logs/', token: owner.token })).statusCode).toBe(403);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/admin/logs/login-logs/', token: owner.token })).statusCode).toBe(403);
    const badPage = await t.request({ method: 'GET', url: '/api/v2.1/admin/audit-logs/?per_page=0', token: admin.token });
    expect(badPage.statusCode).toBe(400);
    expect(badPage.json().error_msg).toContain('per_page');
    expect((await t.request({ method: 'GET', url: '/api/v2.1/admin/audit-logs/?format=xml', token: admin.token })).statusCode).toBe(400);
    const own = await t.request({ method: 'GET', url: `/api/v2.1/dtables/${base.uuid}/audit-logs/`, token: owner.token });
    expect(own.statusCode).toBe(200);
    const ownRows = own.json<{ audit_log_list: unknown[]; total_count: number }>();
    expect(ownRows.total_count).toBe((await rows()).filter((r) => r.base_id === base.id).length);
    expect((await t.request({ method: 'GET', url: `/api/v2.1/dtables/${base.uuid}/audit-logs/`, token: guest.token })).statusCode).toBe(403);
    expect((await t.request({ method: 'GET', url: '/api/v2.1/dtables/nope/audit-logs/', token: owner.token })).statusCode).toBe(404);
  });

  it('exports JSON lines, oldest first', async () => {
    const res = await t.request({ method: 'GET', url: '/api/v2.1/admin/audit-logs/?format=jsonl', token: admin.token });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('application/x-ndjson');
    const lines = res.body.trim().split('\n').map((line) => JSON.parse(line) as { seq: number });
    expect(lines.map((l) => l.seq)).toEqual((await rows()).map((r) => r.seq));
  });

  it('verify passes on the intact chain, then names the first edited row and a deleted row', async () => {
    expect(await t.container.audit.verify()).toMatchObject({ ok: true });
    const all = await rows();
    const victim = all[3]!;
    await sql`UPDATE audit_log SET actor = 'someone-else' WHERE seq = ${victim.seq}`.execute(t.container.db);
    const edited = await t.container.audit.verify();
    expect(edited.ok).toBe(false);
    expect(edited.broken).toMatchObject({ seq: victim.seq });
    expect(edited.broken!.reason).toContain('edited');
    await sql`UPDATE audit_log SET actor = ${victim.actor} WHERE seq = ${victim.seq}`.execute(t.container.db);
    expect((await t.container.audit.verify()).ok).toBe(true);
    await sql`DELETE FROM audit_log WHERE seq = ${all[5]!.seq}`.execute(t.container.db);
    const deleted = await t.container.audit.verify();
    expect(deleted).toMatchObject({ ok: false, broken: { seq: all[5]!.seq } });
    expect(deleted.broken!.reason).toContain('deleted');
  });
});

describe.each(DIALECTS)('audit log chain and retention (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect, { AUDIT_LOG_RETENTION_DAYS: '30' });
  });
  afterAll(() => t.close());

  it('joins the caller’s transaction (rolled back with it), keeps the chain linear under concurrent appends, and prunes to an anchor', async () => {
    const audit = t.container.audit;
    await t.container.db
      .transaction()
      .execute(async (trx) => {
        await audit.record({ action: 'test.rolled_back', actor: 'a', ip: '::1', target: 'x' }, trx);
        throw new Error('roll back');
      })
      .catch(() => undefined);
    await Promise.all(Array.from({ length: 20 }, (_, i) => audit.record({ action: 'test.concurrent', actor: `a${i}`, ip: '::1', target: 'x', after: { password: 'p', nested: { client_secret: 's', ok: i } } })));
    await audit.seal();
    let all = await t.container.db.selectFrom('audit_log').selectAll().orderBy('seq').execute();
    expect(all.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(all.some((r) => r.action === 'test.rolled_back')).toBe(false);
    expect(JSON.parse(all[0]!.detail).after).toMatchObject({ password: '[redacted]', nested: { client_secret: '[redacted]' } });
    expect(await audit.verify()).toEqual({ ok: true, rows: 20, pending: 0 });
    // 40 days on: the old rows go; the last pruned row anchors the chain.
    t.clock.advance(40 * 86_400_000);
    await audit.record({ action: 'test.later', actor: 'b', ip: '::1', target: 'y' });
    expect(await audit.prune(t.clock.now())).toBe(20);
    all = await t.container.db.selectFrom('audit_log').selectAll().orderBy('seq').execute();
    expect(all.map((r) => r.action)).toEqual(['test.later']);
    expect(await audit.verify()).toEqual({ ok: true, rows: 1, pending: 0 });
    // Deleting the newest row is caught by the head.
    await t.container.db.deleteFrom('audit_log').where('seq', '=', 21).execute();
    expect(await audit.verify()).toMatchObject({ ok: false, broken: { seq: 21 } });
  });
});
