import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';

describe.each(DIALECTS)('accounts (%s)', (dialect) => {
  let t: TestApp;
  let admin: TestUser;
  let alice: TestUser;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    admin = await createUser(t, { email: 'admin@example.com', admin: true });
    alice = await createUser(t, { email: 'alice@example.com', name: 'Alice' });
  });
  afterAll(() => t.close());

  describe('POST /api2/auth-token/', () => {
    it('returns a stable 40-hex token for JSON, form and multipart bodies', async () => {
      const json = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: alice.email, password: alice.password } });
      const form = await t.request({
        method: 'POST',
        url: '/api2/auth-token',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `username=${encodeURIComponent(alice.email)}&password=${alice.password}`,
      });
      const boundary = 'XyZ';
      const multipart = await t.request({
        method: 'POST',
        url: '/api2/auth-token/',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload:
          `--${boundary}\r\nContent-Disposition: form-data; name="username"\r\n\r\n${alice.email}\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="password"\r\n\r\n${alice.password}\r\n--${boundary}--\r\n`,
      });
      for (const res of [json, form, multipart]) {
        expect(res.statusCode).toBe(200);
        expect(res.json().token).toMatch(/^[0-9a-f]{40}$/);
        expect(res.json().token).toBe(alice.token);
      }
    });

    it('accepts the virtual id and any case of the e-mail as username', async () => {
      for (const username of [alice.virtualId, 'ALICE@example.com']) {
        const res = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username, password: alice.password } });
        expect(res.json()).toEqual({ token: alice.token });
      }
    });

    it('refuses wrong credentials in the DRF shape', async () => {
      for (const payload of [
        { username: alice.email, password: 'wrong-password' },
        { username: 'nobody@example.com', password: 'whatever1' },
      ]) {
        const res = await t.request({ method: 'POST', url: '/api2/auth-token/', payload });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual({ non_field_errors: ['Unable to login with provided credentials.'] });
      }
    });

    it('names missing, blank and wrong-typed fields', async () => {
      const missing = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: alice.email } });
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toEqual({ password: ['This field is required.'] });
      const blank = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: '', password: '' } });
      expect(blank.json()).toEqual({ username: ['This field may not be blank.'], password: ['This field may not be blank.'] });
      const typed = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: 5, password: ['x'] } });
      expect(typed.statusCode).toBe(400);
      expect(Object.keys(typed.json()).sort()).toEqual(['password', 'username']);
    });

    it('refuses incomplete device fields', async () => {
      const res = await t.request({
        method: 'POST',
        url: '/api2/auth-token/',
        payload: { username: alice.email, password: alice.password, platform: 'linux' },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ non_field_errors: ['invalid params'] });
    });

    it('answers malformed JSON, empty and unsupported bodies with a 4xx error_msg', async () => {
      const bad = await t.request({ method: 'POST', url: '/api2/auth-token/', headers: { 'content-type': 'application/json' }, payload: '{"username":' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toHaveProperty('error_msg');
      const xml = await t.request({ method: 'POST', url: '/api2/auth-token/', headers: { 'content-type': 'application/xml' }, payload: '<a/>' });
      expect(xml.statusCode).toBe(415);
      expect(xml.json()).toHaveProperty('error_msg');
      const none = await t.request({ method: 'POST', url: '/api2/auth-token/' });
      expect(none.statusCode).toBe(400);
      for (const contentType of ['multipart/form-data', 'multipart/form-data; boundary=abc']) {
        const truncated = await t.request({
          method: 'POST',
          url: '/api2/auth-token/',
          headers: { 'content-type': contentType },
          payload: '--abc\r\nContent-Disposition: form-data; name="username"\r\n\r\nx',
        });
        expect(truncated.statusCode, contentType).toBe(400);
        expect(truncated.json()).toEqual({ error_msg: 'Request body is not valid multipart/form-data.' });
      }
    });

    it('refuses oversized bodies with 413', async () => {
      const res = await t.request({
        method: 'POST',
        url: '/api2/auth-token/',
        payload: { username: 'x'.repeat(2 * 1024 * 1024), password: 'y' },
      });
      expect(res.statusCode).toBe(413);
      expect(res.json()).toEqual({ error_msg: 'Request body is too large.' });
    });
  });

  describe('Account-Token authentication', () => {
    it('accepts Token and Bearer in any case', async () => {
      for (const scheme of ['Token', 'token', 'Bearer', 'BEARER']) {
        const res = await t.request({ method: 'GET', url: '/api/v2.1/user/', headers: { authorization: `${scheme} ${alice.token}` } });
        expect(res.statusCode, scheme).toBe(200);
      }
    });

    it('answers as DRF does for missing, empty, spaced and unknown tokens', async () => {
      const cases: Array<[Record<string, string>, number, string]> = [
        [{}, 403, 'Authentication credentials were not provided.'],
        [{ authorization: 'Basic abc' }, 403, 'Authentication credentials were not provided.'],
        [{ authorization: 'Token' }, 401, 'Invalid token header. No credentials provided.'],
        [{ authorization: 'Token a b' }, 401, 'Invalid token header. Token string should not contain spaces.'],
        [{ authorization: `Token ${'0'.repeat(40)}` }, 401, 'Invalid token'],
        [{ authorization: 'Token not-hex' }, 401, 'Invalid token'],
      ];
      for (const [headers, status, detail] of cases) {
        const res = await t.request({ method: 'GET', url: '/api/v2.1/user/', headers });
        expect(res.statusCode, JSON.stringify(headers)).toBe(status);
        expect(res.json()).toEqual({ detail });
      }
    });
  });

  describe('/api/v2.1/user/', () => {
    it('returns the caller', async () => {
      const res = await t.request({ method: 'GET', url: '/api/v2.1/user/', token: alice.token });
      expect(res.json()).toMatchObject({
        email: alice.virtualId,
        contact_email: 'alice@example.com',
        name: 'Alice',
        is_staff: false,
        email_notification: true,
      });
    });

    it('changes name and email_notification, and nothing on a bad value', async () => {
      const ok = await t.request({ method: 'PUT', url: '/api/v2.1/user/', token: alice.token, payload: { name: 'Alice B', email_notification: false } });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toMatchObject({ name: 'Alice B', email_notification: false });
      const bad = await t.request({ method: 'PUT', url: '/api/v2.1/user/', token: alice.token, payload: { name: '   ' } });
      expect(bad.statusCode).toBe(400);
      const wrongType = await t.request({ method: 'PUT', url: '/api/v2.1/user/', token: alice.token, payload: { email_notification: 'maybe' } });
      expect(wrongType.statusCode).toBe(400);
      const after = await t.request({ method: 'GET', url: '/api/v2.1/user/', token: alice.token });
      expect(after.json()).toMatchObject({ name: 'Alice B', email_notification: false });
    });
  });

  describe('system-admin user management', () => {
    it('lists, creates and deletes users', async () => {
      const created = await t.request({
        method: 'POST',
        url: '/api/v2.1/admin/users/',
        token: admin.token,
        payload: { email: 'bob@example.com', password: 'bob-password', name: 'Bob' },
      });
      expect(created.statusCode).toBe(200);
      expect(created.json()).toMatchObject({ contact_email: 'bob@example.com', name: 'Bob', is_staff: false });
      const list = await t.request({ method: 'GET', url: '/api/v2.1/admin/users/?page=1&per_page=2', token: admin.token });
      expect(list.json().total_count).toBe(3);
      expect(list.json().data).toHaveLength(2);
      const dup = await t.request({ method: 'POST', url: '/api/v2.1/admin/users/', token: admin.token, payload: { email: 'BOB@example.com', password: 'bob-password' } });
      expect(dup.statusCode).toBe(400);
      const del = await t.request({ method: 'DELETE', url: '/api/v2.1/admin/users/bob@example.com/', token: admin.token });
      expect(del.json()).toEqual({ success: true });
      const gone = await t.request({ method: 'DELETE', url: '/api/v2.1/admin/users/bob@example.com/', token: admin.token });
      expect(gone.statusCode).toBe(404);
      const login = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: 'bob@example.com', password: 'bob-password' } });
      expect(login.statusCode).toBe(400);
    });

    it('validates new users', async () => {
      for (const payload of [{ email: 'not-an-email', password: 'long-enough' }, { email: 'c@example.com', password: 'short' }, { email: 'c@example.com' }]) {
        const res = await t.request({ method: 'POST', url: '/api/v2.1/admin/users/', token: admin.token, payload });
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expect(res.json()).toHaveProperty('error_msg');
      }
    });

    it('refuses non-admins with 403 and the DRF detail', async () => {
      for (const [method, url] of [
        ['GET', '/api/v2.1/admin/users/'],
        ['POST', '/api/v2.1/admin/users/'],
        ['DELETE', `/api/v2.1/admin/users/${admin.email}/`],
      ] as const) {
        const res = await t.request({ method, url, token: alice.token, payload: {} });
        expect(res.statusCode).toBe(403);
        expect(res.json()).toEqual({ detail: 'You do not have permission to perform this action.' });
      }
    });

    it('does not let an admin delete themself', async () => {
      const res = await t.request({ method: 'DELETE', url: `/api/v2.1/admin/users/${admin.email}/`, token: admin.token });
      expect(res.statusCode).toBe(400);
    });
  });
});
