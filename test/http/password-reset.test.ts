import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('admin password reset and the API reference (%s)', (dialect) => {
  let t: TestApp;
  let admin: TestUser;
  let alice: TestUser;
  const reset = (login: string, token: string) =>
    t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${encodeURIComponent(login)}/reset-password/`, headers: { authorization: `Token ${token}` } });
  const signIn = (username: string, password: string) => t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username, password } });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    admin = await createUser(t, { email: 'admin@example.com', admin: true });
    alice = await createUser(t, { email: 'alice@example.com', name: 'Alice' });
  });
  afterAll(() => t.close());

  it('PUT …/admin/users/{user_id}/reset-password/ sets a new random password, returned once, and signs the user out', async () => {
    const res = await reset(alice.email, admin.token);
    expect(res.statusCode).toBe(200);
    const body = res.json() as { new_password: string; reset_tip: string };
    expect(body.new_password).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(body.reset_tip).toContain(body.new_password);
    // The old token and the old password stop working; the new password signs in.
    expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', headers: { authorization: `Token ${alice.token}` } })).statusCode).toBe(401);
    expect((await signIn(alice.email, alice.password)).statusCode).toBe(400);
    const fresh = await signIn(alice.email, body.new_password);
    expect(fresh.statusCode).toBe(200);
    // By user id (virtual id) too, and each reset gives another password.
    const again = await reset(alice.virtualId, admin.token);
    expect(again.statusCode).toBe(200);
    expect(again.json().new_password).not.toBe(body.new_password);
  });

  it('refuses non-admins and unknown users, changing nothing', async () => {
    const bob = await createUser(t, { email: 'bob@example.com' });
    const denied = await reset(admin.email, bob.token);
    expect(denied.statusCode).toBe(403);
    expect((await signIn(admin.email, admin.password)).statusCode).toBe(200);
    const missing = await reset('nobody@example.com', admin.token);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error_msg: 'User nobody@example.com not found.' });
    expect((await t.request({ method: 'PUT', url: '/api/v2.1/admin/users/x/reset-password/' })).statusCode).toBeGreaterThanOrEqual(401);
  });

  it('serves a browsable API reference at /api/docs/ with its own scripts only', async () => {
    const page = await t.request({ method: 'GET', url: '/api/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('swagger-ui');
    expect(String(page.headers['content-security-policy'])).toContain("script-src 'self'");
    const spec = await t.request({ method: 'GET', url: '/api/docs/json' });
    expect(spec.statusCode).toBe(200);
    const operation = (spec.json() as { paths: Record<string, Record<string, { summary?: string }>> }).paths['/api/v2.1/admin/users/{user_id}/reset-password/']?.put;
    expect(operation?.summary).toBe("Reset a user's password");
  });
});
