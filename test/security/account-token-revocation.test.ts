import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('Account-Token revocation (%s)', (dialect) => {
  let t: TestApp;
  let admin: TestUser;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    admin = await createUser(t, { admin: true });
  });
  afterAll(() => t.close());

  const me = (token: string) => t.request({ method: 'GET', url: '/api/v2.1/user/', token });
  const login = (username: string, password: string) =>
    t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username, password } });

  it('a password change by the user stops the old token at once; the new password gives a new token', async () => {
    const bob = await createUser(t);
    const res = await t.request({
      method: 'PUT',
      url: '/api/v2.1/user/password/',
      token: bob.token,
      payload: { old_password: bob.password, new_password: 'brand-new-pass' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect((await me(bob.token)).statusCode).toBe(401);
    expect((await login(bob.email, bob.password)).statusCode).toBe(400);
    const fresh = await login(bob.email, 'brand-new-pass');
    expect(fresh.statusCode).toBe(200);
    const token = fresh.json<{ token: string }>().token;
    expect(token).not.toBe(bob.token);
    expect((await me(token)).statusCode).toBe(200);
  });

  it('refuses a wrong old password, a short new one and a missing field, changing nothing', async () => {
    const carol = await createUser(t);
    const cases: Array<[Record<string, unknown>, string | null]> = [
      [{ old_password: 'not-my-password', new_password: 'brand-new-pass' }, 'Old password is wrong.'],
      [{ old_password: carol.password, new_password: 'short' }, 'password invalid: 8 to 256 characters.'],
      [{ old_password: carol.password }, null],
      [{ old_password: carol.password, new_password: 'x'.repeat(300) }, null],
    ];
    for (const [payload, message] of cases) {
      const res = await t.request({ method: 'PUT', url: '/api/v2.1/user/password/', token: carol.token, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      if (message) expect(res.json()).toEqual({ error_msg: message });
      else expect(typeof res.json().error_msg).toBe('string');
    }
    expect((await me(carol.token)).statusCode).toBe(200);
    expect((await login(carol.email, carol.password)).json()).toEqual({ token: carol.token });
    const anonymous = await t.request({ method: 'PUT', url: '/api/v2.1/user/password/', payload: { old_password: 'a', new_password: 'b' } });
    expect(anonymous.statusCode).toBe(403);
  });

  it('an admin setting a password rotates the user token; the admin keeps theirs', async () => {
    const dave = await createUser(t);
    const res = await t.request({
      method: 'PUT',
      url: `/api/v2.1/admin/users/${dave.virtualId}/`,
      token: admin.token,
      payload: { password: 'set-by-admin-1' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ email: dave.virtualId, contact_email: dave.email });
    expect((await me(dave.token)).statusCode).toBe(401);
    expect((await me(admin.token)).statusCode).toBe(200);
    const fresh = await login(dave.email, 'set-by-admin-1');
    expect(fresh.statusCode).toBe(200);
    expect(fresh.json().token).not.toBe(dave.token);
  });

  it('admin updates without a password keep the token; bad input, unknown users and non-admins change nothing', async () => {
    const erin = await createUser(t);
    const renamed = await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${erin.email}/`, token: admin.token, payload: { name: 'Erin E.' } });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json().name).toBe('Erin E.');
    expect((await me(erin.token)).statusCode).toBe(200);

    const short = await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${erin.email}/`, token: admin.token, payload: { password: 'short', name: 'Changed' } });
    expect(short.statusCode).toBe(400);
    expect(short.json()).toEqual({ error_msg: 'password invalid: 8 to 256 characters.' });
    expect((await me(erin.token)).json().name).toBe('Erin E.');

    const unknown = await t.request({ method: 'PUT', url: '/api/v2.1/admin/users/nobody@example.com/', token: admin.token, payload: { password: 'whatever-123' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error_msg: 'User nobody@example.com not found.' });

    const notAdmin = await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${admin.email}/`, token: erin.token, payload: { password: 'taken-over-1' } });
    expect(notAdmin.statusCode).toBe(403);
    expect((await me(admin.token)).statusCode).toBe(200);

    const self = await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${admin.email}/`, token: admin.token, payload: { is_active: false } });
    expect(self.statusCode).toBe(400);
    expect((await me(admin.token)).statusCode).toBe(200);
  });

  it('logout revokes the token; the next login gives a new one', async () => {
    const frank = await createUser(t);
    const res = await t.request({ method: 'POST', url: '/api2/logout/', token: frank.token });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    expect((await me(frank.token)).statusCode).toBe(401);
    expect((await t.request({ method: 'POST', url: '/api2/logout/', token: frank.token })).statusCode).toBe(401);
    const fresh = await login(frank.email, frank.password);
    expect(fresh.json().token).toMatch(/^[0-9a-f]{40}$/);
    expect(fresh.json().token).not.toBe(frank.token);
    expect((await me(fresh.json().token)).statusCode).toBe(200);
  });

  it('throttles wrong old passwords like logins: 429 with Retry-After, the right one still refused while blocked', async () => {
    const gina = await createUser(t);
    const change = (old_password: string) =>
      t.app.inject({
        method: 'PUT',
        url: '/api/v2.1/user/password/',
        headers: { authorization: `Token ${gina.token}` },
        payload: { old_password, new_password: 'gina-new-pass' },
        remoteAddress: '10.9.0.1',
      });
    for (let i = 0; i < 5; i++) expect((await change(`wrong-${i}`)).statusCode).toBe(400);
    const blocked = await change(gina.password);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.headers['retry-after']).toBe('1');
    expect((await me(gina.token)).statusCode).toBe(200);
    t.clock.advance(1000);
    expect((await change(gina.password)).statusCode).toBe(200);
    expect((await me(gina.token)).statusCode).toBe(401);
  });
});
