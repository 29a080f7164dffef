import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, type TestApp, type TestBase } from '../helpers/index.js';
import { listen, rawRequest } from '../helpers/raw-http.js';
import { baseWithRoles, type GatewayRole, type RoleSet } from '../helpers/roles.js';

describe.each(DIALECTS)('account/info, related-users, app-user-info (%s)', (dialect) => {
  let t: TestApp;
  let server: string;
  let base: TestBase;
  let roles: RoleSet;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    server = await listen(t);
    ({ base, roles } = await baseWithRoles(t));
  });
  afterAll(() => t.close());

  const expectedUsers = () =>
    (['owner', 'admin', 'rw', 'r'] as const).map((role) => ({
      email: roles.users[role].virtualId,
      name: expect.any(String),
      contact_email: roles.users[role].email,
      avatar_url: '',
      id_in_org: '',
    }));

  describe('GET /api2/account/info/', () => {
    it('answers the user record with the Python client\'s headers', async () => {
      const user = roles.users.rw;
      const res = await rawRequest(server, 'GET', '/api2/account/info/', { 'Content-Type': 'application/json', Authorization: `Token ${user.token}` });
      expect(res.status).toBe(200);
      const info = res.json<Record<string, unknown>>();
      expect(info).toMatchObject({ email: user.virtualId, contact_email: user.email, is_staff: false, login_id: '', avatar_url: '' });
      const me = await t.request({ method: 'GET', url: '/api/v2.1/user/', token: user.token });
      expect(info.name).toBe(me.json().name);
    });

    it('403 without a credential, 401 with a bad one', async () => {
      const none = await rawRequest(server, 'GET', '/api2/account/info/', {});
      expect(none.status).toBe(403);
      expect(none.json()).toEqual({ detail: 'Authentication credentials were not provided.' });
      const bad = await rawRequest(server, 'GET', '/api2/account/info/', { Authorization: 'Token 0000000000000000000000000000000000000000' });
      expect(bad.status).toBe(401);
      expect(bad.json()).toEqual({ detail: 'Invalid token' });
    });
  });

  describe('GET …/related-users/', () => {
    it.each(['owner', 'admin', 'rw', 'r', 'api-rw', 'api-r', 'link'] as GatewayRole[])('a Base-Token of %s lists everyone with access', async (role) => {
      const res = await rawRequest(server, 'GET', `/api-gateway/api/v2/dtables/${base.uuid}/related-users/`, { 'Content-Type': 'application/json', Authorization: `Token ${roles.tokens[role]}` });
      expect(res.status).toBe(200);
      const list = res.json<{ user_list: unknown[] }>().user_list;
      expect(list).toEqual(expectedUsers());
    });

    it.each(['owner', 'admin', 'rw', 'r'] as const)('an Account-Token of %s lists them under /api/v2.1/dtables/{uuid}/', async (role) => {
      const res = await t.request({ method: 'GET', url: `/api/v2.1/dtables/${base.uuid}/related-users/`, token: roles.users[role].token });
      expect(res.statusCode).toBe(200);
      expect(res.json().user_list).toEqual(expectedUsers());
      const named = await t.request({ method: 'GET', url: basePath(base, 'related-users/'), token: roles.users[role].token });
      expect(named.statusCode).toBe(200);
      expect(named.json().user_list).toEqual(expectedUsers());
    });

    it('refuses a user without access (403), an unknown base (404), no credential (403), a bad Base-Token', async () => {
      const stranger = roles.users.none;
      expect((await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: stranger.token })).statusCode).toBe(403);
      const denied = await t.request({ method: 'GET', url: `/api/v2.1/dtables/${base.uuid}/related-users/`, token: stranger.token });
      expect(denied.statusCode).toBe(403);
      expect(denied.json()).toEqual({ error_msg: 'Permission denied.' });
      expect((await t.request({ method: 'GET', url: basePath(base, 'related-users/'), token: stranger.token })).statusCode).toBe(403);
      expect((await t.request({ method: 'GET', url: basePath({ ...base, name: 'nope' }, 'related-users/'), token: stranger.token })).statusCode).toBe(404);
      const unknown = await t.request({ method: 'GET', url: '/api/v2.1/dtables/00000000-0000-0000-0000-000000000000/related-users/', token: stranger.token });
      expect(unknown.statusCode).toBe(404);
      expect((await t.request({ method: 'GET', url: `/api/v2.1/dtables/${base.uuid}/related-users/` })).statusCode).toBe(403);
      const badGateway = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/related-users/`, headers: { authorization: 'Token x.y.z' } });
      expect([401, 403]).toContain(badGateway.statusCode);
      const otherBase = await createBase(t, stranger);
      const wrongBase = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${otherBase.uuid}/related-users/`, headers: { authorization: `Token ${roles.tokens.owner}` } });
      expect([401, 403]).toContain(wrongBase.statusCode);
    });
  });

  describe('GET /api/v2.1/dtable/app-user-info/', () => {
    it.each(['rw', 'r'] as const)('an API-Token (%s) finds a user with access by id or e-mail', async (permission) => {
      const token = roles.apiTokens[permission];
      const user = roles.users.admin;
      for (const username of [user.virtualId, user.email]) {
        const res = await rawRequest(server, 'GET', `/api/v2.1/dtable/app-user-info/?username=${encodeURIComponent(username)}`, { 'Content-Type': 'application/json', Authorization: `Token ${token}` });
        expect(res.status).toBe(200);
        expect(res.json()).toEqual({ email: user.virtualId, name: expect.any(String), contact_email: user.email, avatar_url: '', id_in_org: '' });
      }
    });

    it('404 for a user without access, 400 without username, 403 for anything but an API-Token', async () => {
      const token = roles.apiTokens.r;
      const stranger = await t.request({ method: 'GET', url: `/api/v2.1/dtable/app-user-info/?username=${encodeURIComponent(roles.users.none.email)}`, headers: { authorization: `Token ${token}` } });
      expect(stranger.statusCode).toBe(404);
      expect(stranger.json()).toEqual({ error_msg: `User ${roles.users.none.email} not found.` });
      const missing = await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-user-info/', headers: { authorization: `Token ${token}` } });
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toEqual({ error_msg: 'username invalid.' });
      for (const authorization of [undefined, 'Token 0000000000000000000000000000000000000000', `Token ${roles.users.owner.token}`, `Token ${roles.tokens.owner}`]) {
        const res = await t.request({ method: 'GET', url: `/api/v2.1/dtable/app-user-info/?username=${roles.users.owner.email}`, headers: authorization ? { authorization } : {} });
        expect(res.statusCode, authorization).toBe(403);
        expect(res.json()).toEqual({ error_msg: 'Permission denied.' });
      }
    });
  });
});
