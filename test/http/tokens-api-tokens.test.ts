import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DIALECTS,
  basePath,
  createBase,
  createTestApp,
  createUser,
  type TestApp,
  type TestBase,
  type TestUser,
} from '../helpers/index.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+00:00$/;

describe.each(DIALECTS)('API-Tokens (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let writer: TestUser;
  let reader: TestUser;
  let stranger: TestUser;
  let base: TestBase;

  const tokensPath = (suffix = '') => basePath(base, `api-tokens/${suffix}`);
  const create = (payload: unknown, token = owner.token) => t.request({ method: 'POST', url: tokensPath(), token, payload: payload as object });

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
    admin = await createUser(t);
    writer = await createUser(t);
    reader = await createUser(t);
    stranger = await createUser(t);
    base = await createBase(t, owner, 'Token base');
    for (const [user, permission] of [
      [admin, 'admin'],
      [writer, 'rw'],
      [reader, 'r'],
    ] as const) {
      const res = await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: user.email, permission } });
      expect(res.statusCode).toBe(201);
    }
  });
  afterAll(() => t.close());

  describe('POST …/api-tokens/', () => {
    it('creates a token from JSON and returns the record with the plaintext once (201)', async () => {
      const res = await create({ app_name: 'json app', permission: 'rw' });
      expect(res.statusCode).toBe(201);
      const record = res.json();
      expect(record).toEqual({
        app_name: 'json app',
        api_token: expect.stringMatching(/^[0-9a-f]{40}$/),
        generated_by: owner.virtualId,
        generated_at: expect.stringMatching(ISO),
        last_access: expect.stringMatching(ISO),
        permission: 'rw',
      });
      expect(record.generated_at).toBe(new Date(t.clock.now()).toISOString().replace(/\.\d{3}Z$/, '+00:00'));
      // Never used yet: the creation time, as the original (a typed client throws on "").
      expect(record.last_access).toBe(record.generated_at);
    });

    it('accepts form and multipart bodies', async () => {
      const form = await t.request({
        method: 'POST',
        url: tokensPath(),
        token: owner.token,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'app_name=form%20app&permission=r',
      });
      expect(form.statusCode).toBe(201);
      expect(form.json()).toMatchObject({ app_name: 'form app', permission: 'r' });

      const boundary = 'tokenBoundary';
      const multipart = await t.request({
        method: 'POST',
        url: tokensPath(),
        token: owner.token,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload:
          `--${boundary}\r\nContent-Disposition: form-data; name="app_name"\r\n\r\nmultipart app\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="permission"\r\n\r\nrw\r\n--${boundary}--\r\n`,
      });
      expect(multipart.statusCode).toBe(201);
      expect(multipart.json()).toMatchObject({ app_name: 'multipart app', permission: 'rw' });
    });

    it('issues a different random token each time', async () => {
      const a = (await create({ app_name: 'random-a', permission: 'r' })).json().api_token;
      const b = (await create({ app_name: 'random-b', permission: 'r' })).json().api_token;
      expect(a).not.toBe(b);
    });

    it('lets a base admin create tokens, but not rw, r or unrelated users (403)', async () => {
      expect((await create({ app_name: 'by admin', permission: 'r' }, admin.token)).statusCode).toBe(201);
      for (const user of [writer, reader, stranger]) {
        const res = await create({ app_name: `by ${user.email}`, permission: 'r' }, user.token);
        expect(res.statusCode).toBe(403);
        expect(res.json()).toEqual({ error_msg: 'Permission denied.' });
      }
    });

    it('refuses a bad app_name with 400 app_name invalid.', async () => {
      for (const app_name of [undefined, '', '   ', 5, ['x'], 'x'.repeat(256), 'tab\there', '.', '..']) {
        const res = await create({ app_name, permission: 'r' });
        expect(res.statusCode, JSON.stringify(app_name)).toBe(400);
        expect(res.json()).toEqual({ error_msg: 'app_name invalid.' });
      }
      // A NUL is refused by the app-wide text guard before the route runs (docs/security.md).
      const nul = await create({ app_name: 'nul\u0000', permission: 'r' });
      expect(nul.statusCode).toBe(400);
      expect(nul.json().error_msg).toMatch(/cannot be stored/);
      expect((await create({ app_name: 'é'.repeat(255), permission: 'r' })).statusCode).toBe(201);
    });

    it('refuses a bad permission with 400 permission invalid.', async () => {
      for (const permission of [undefined, '', 'w', 'admin', 'RW', 1]) {
        const res = await create({ app_name: 'perm check', permission });
        expect(res.statusCode, JSON.stringify(permission)).toBe(400);
        expect(res.json()).toEqual({ error_msg: 'permission invalid.' });
      }
    });

    it('refuses a duplicate app_name on the same base, but not on another base', async () => {
      expect((await create({ app_name: 'dup', permission: 'r' })).statusCode).toBe(201);
      const again = await create({ app_name: 'dup', permission: 'rw' });
      expect(again.statusCode).toBe(400);
      expect(again.json()).toEqual({ error_msg: 'api token already exist.' });
      const other = await createBase(t, owner);
      const elsewhere = await t.request({ method: 'POST', url: basePath(other, 'api-tokens/'), token: owner.token, payload: { app_name: 'dup', permission: 'r' } });
      expect(elsewhere.statusCode).toBe(201);
    });

    it('validates arguments before looking up the base, and the base before the permission', async () => {
      const badArgs = await t.request({ method: 'POST', url: `/api/v2.1/workspace/999999/dtable/x/api-tokens/`, token: stranger.token, payload: { permission: 'r' } });
      expect(badArgs.statusCode).toBe(400);
      const noWorkspace = await t.request({ method: 'POST', url: `/api/v2.1/workspace/999999/dtable/x/api-tokens/`, token: stranger.token, payload: { app_name: 'a', permission: 'r' } });
      expect(noWorkspace.statusCode).toBe(404);
      expect(noWorkspace.json()).toEqual({ error_msg: 'Workspace 999999 not found.' });
      const noBase = await t.request({
        method: 'POST',
        url: `/api/v2.1/workspace/${base.workspaceId}/dtable/nope/api-tokens/`,
        token: stranger.token,
        payload: { app_name: 'a', permission: 'r' },
      });
      expect(noBase.statusCode).toBe(404);
      expect(noBase.json()).toEqual({ error_msg: 'dtable nope not found.' });
    });

    it('requires an Account-Token', async () => {
      const missing = await t.request({ method: 'POST', url: tokensPath(), payload: { app_name: 'a', permission: 'r' } });
      expect(missing.statusCode).toBe(403);
      expect(missing.json()).toEqual({ detail: 'Authentication credentials were not provided.' });
      const wrong = await t.request({ method: 'POST', url: tokensPath(), token: 'f'.repeat(40), payload: { app_name: 'a', permission: 'r' } });
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json()).toEqual({ detail: 'Invalid token' });
    });
  });

  describe('GET …/api-tokens/', () => {
    it('lists every token of the base with the token masked', async () => {
      const b = await createBase(t, owner);
      const created: Array<{ api_token: string }> = [];
      for (const [app_name, permission] of [
        ['one', 'r'],
        ['two', 'rw'],
      ]) {
        const res = await t.request({ method: 'POST', url: basePath(b, 'api-tokens/'), token: owner.token, payload: { app_name, permission } });
        created.push(res.json());
      }
      const res = await t.request({ method: 'GET', url: basePath(b, 'api-tokens/'), token: admin.token });
      expect(res.statusCode).toBe(403); // admin of the other base only
      const list = await t.request({ method: 'GET', url: basePath(b, 'api-tokens/'), token: owner.token });
      expect(list.statusCode).toBe(200);
      const tokens = list.json().api_tokens;
      expect(tokens).toHaveLength(2);
      tokens.forEach((record: Record<string, string>, i: number) => {
        const original = created[i]!;
        expect(record).toEqual({ ...original, api_token: '*'.repeat(36) + original.api_token.slice(-4) });
        expect(record.api_token).not.toContain(original.api_token.slice(0, 8));
      });
    });

    it('is open to the owner and base admins only', async () => {
      for (const [user, status] of [
        [owner, 200],
        [admin, 200],
        [writer, 403],
        [reader, 403],
        [stranger, 403],
      ] as const) {
        expect((await t.request({ method: 'GET', url: tokensPath(), token: user.token })).statusCode).toBe(status);
      }
    });

    it('answers 404 for an unknown workspace or base', async () => {
      const ws = await t.request({ method: 'GET', url: '/api/v2.1/workspace/abc/dtable/x/api-tokens/', token: owner.token });
      expect(ws.statusCode).toBe(404);
      expect(ws.json()).toEqual({ error_msg: 'Workspace abc not found.' });
      const b = await t.request({ method: 'GET', url: `/api/v2.1/workspace/${base.workspaceId}/dtable/missing/api-tokens/`, token: owner.token });
      expect(b.json()).toEqual({ error_msg: 'dtable missing not found.' });
    });
  });

  describe('PUT and DELETE …/api-tokens/{app_name}/', () => {
    it('changes only the permission and returns the masked record', async () => {
      const created = (await create({ app_name: 'to update', permission: 'r' })).json();
      const res = await t.request({ method: 'PUT', url: tokensPath('to%20update/'), token: owner.token, payload: { permission: 'rw', app_name: 'renamed' } });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...created, permission: 'rw', api_token: '*'.repeat(36) + created.api_token.slice(-4) });
      const listed = (await t.request({ method: 'GET', url: tokensPath(), token: owner.token })).json().api_tokens;
      expect(listed.find((r: { app_name: string }) => r.app_name === 'to update').permission).toBe('rw');
      expect(listed.some((r: { app_name: string }) => r.app_name === 'renamed')).toBe(false);
    });

    it('accepts form and multipart bodies on PUT', async () => {
      await create({ app_name: 'put-forms', permission: 'r' });
      const form = await t.request({
        method: 'PUT',
        url: tokensPath('put-forms/'),
        token: owner.token,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'permission=rw',
      });
      expect(form.json().permission).toBe('rw');
      const boundary = 'b0und';
      const multipart = await t.request({
        method: 'PUT',
        url: tokensPath('put-forms/'),
        token: owner.token,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        payload: `--${boundary}\r\nContent-Disposition: form-data; name="permission"\r\n\r\nr\r\n--${boundary}--\r\n`,
      });
      expect(multipart.json().permission).toBe('r');
    });

    it('refuses the permission the token already has, and bad permissions', async () => {
      await create({ app_name: 'same', permission: 'r' });
      const same = await t.request({ method: 'PUT', url: tokensPath('same/'), token: owner.token, payload: { permission: 'r' } });
      expect(same.statusCode).toBe(400);
      expect(same.json()).toEqual({ error_msg: 'api token already has r permission.' });
      for (const payload of [{ permission: 'x' }, {}]) {
        const bad = await t.request({ method: 'PUT', url: tokensPath('same/'), token: owner.token, payload });
        expect(bad.statusCode).toBe(400);
        expect(bad.json()).toEqual({ error_msg: 'permission invalid.' });
      }
      const noBody = await t.request({ method: 'PUT', url: tokensPath('same/'), token: owner.token });
      expect(noBody.statusCode).toBe(400);
      expect(noBody.json()).toEqual({ error_msg: 'permission invalid.' });
    });

    it('answers 404 api token not found. for an unknown app_name', async () => {
      const put = await t.request({ method: 'PUT', url: tokensPath('ghost/'), token: owner.token, payload: { permission: 'rw' } });
      expect(put.statusCode).toBe(404);
      expect(put.json()).toEqual({ error_msg: 'api token not found.' });
      const del = await t.request({ method: 'DELETE', url: tokensPath('ghost/'), token: owner.token });
      expect(del.statusCode).toBe(404);
      expect(del.json()).toEqual({ error_msg: 'api token not found.' });
    });

    it('refuses users who are not owner or admin', async () => {
      await create({ app_name: 'guarded', permission: 'r' });
      for (const user of [writer, reader, stranger]) {
        const put = await t.request({ method: 'PUT', url: tokensPath('guarded/'), token: user.token, payload: { permission: 'rw' } });
        expect(put.statusCode).toBe(403);
        const del = await t.request({ method: 'DELETE', url: tokensPath('guarded/'), token: user.token });
        expect(del.statusCode).toBe(403);
        expect(del.json()).toEqual({ error_msg: 'Permission denied.' });
      }
    });

    it('deletes a token once', async () => {
      await create({ app_name: 'to delete', permission: 'r' });
      const res = await t.request({ method: 'DELETE', url: tokensPath('to%20delete/'), token: admin.token });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ success: true });
      const again = await t.request({ method: 'DELETE', url: tokensPath('to%20delete'), token: admin.token });
      expect(again.statusCode).toBe(404);
    });

    it('handles URL-encoded app names with slashes, percent signs, unicode and spaces', async () => {
      for (const name of ['a/b', '100% sure', 'Äpp ✓', 'q?x=1#frag', '...', 'a/../b']) {
        expect((await create({ app_name: name, permission: 'r' })).statusCode, name).toBe(201);
        const put = await t.request({ method: 'PUT', url: tokensPath(`${encodeURIComponent(name)}/`), token: owner.token, payload: { permission: 'rw' } });
        expect(put.statusCode, name).toBe(200);
        expect(put.json().app_name).toBe(name);
        const del = await t.request({ method: 'DELETE', url: tokensPath(`${encodeURIComponent(name)}/`), token: owner.token });
        expect(del.statusCode, name).toBe(200);
      }
    });

    it('answers 404 for an unknown base on PUT and DELETE', async () => {
      const url = `/api/v2.1/workspace/${base.workspaceId}/dtable/none/api-tokens/x/`;
      expect((await t.request({ method: 'PUT', url, token: owner.token, payload: { permission: 'r' } })).statusCode).toBe(404);
      expect((await t.request({ method: 'DELETE', url, token: owner.token })).json()).toEqual({ error_msg: 'dtable none not found.' });
    });
  });
});
