import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DIALECTS,
  TEST_PUBLIC_URL,
  basePath,
  createBase,
  createTestApp,
  createUser,
  type TestApp,
  type TestBase,
  type TestUser,
} from '../helpers/index.js';

const DAY = 86_400;

describe.each(DIALECTS)('Base-Tokens and temporary API-Tokens (%s)', (dialect) => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let writer: TestUser;
  let reader: TestUser;
  let stranger: TestUser;
  let base: TestBase;

  const nowSeconds = () => Math.floor(t.clock.now() / 1000);
  /** Each user with access and the Base-Token permission their access gives. */
  const permissionsByShare = () =>
    [
      [owner, 'rw'],
      [admin, 'rw'],
      [writer, 'rw'],
      [reader, 'r'],
    ] as const;
  /** The contract's access-token answer for `base` (every kind adds `app_name` where it applies). */
  const accessResponse = () => ({
    access_token: expect.any(String),
    dtable_uuid: base.uuid,
    dtable_server: `${TEST_PUBLIC_URL}/api-gateway/`,
    dtable_socket: `${TEST_PUBLIC_URL}/`,
    dtable_db: `${TEST_PUBLIC_URL}/dtable-db/`,
    workspace_id: base.workspaceId,
    dtable_name: 'Access base',
    use_api_gateway: true,
  });
  const appAccess = (authorization?: string) =>
    t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: authorization === undefined ? {} : { authorization } });
  const newApiToken = async (app_name: string, permission: 'r' | 'rw', on = base) => {
    const res = await t.request({ method: 'POST', url: basePath(on, 'api-tokens/'), token: owner.token, payload: { app_name, permission } });
    expect(res.statusCode).toBe(201);
    return res.json<{ api_token: string }>().api_token;
  };
  const tempToken = async (user: TestUser, on = base) => {
    const res = await t.request({ method: 'GET', url: basePath(on, 'temp-api-token/'), token: user.token });
    expect(res.statusCode).toBe(200);
    return res.json<{ api_token: string }>().api_token;
  };
  const share = async (user: TestUser, permission: string, on = base) => {
    const res = await t.request({ method: 'POST', url: basePath(on, 'share/'), token: owner.token, payload: { email: user.email, permission } });
    expect(res.statusCode).toBe(201);
  };

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await createUser(t);
    admin = await createUser(t);
    writer = await createUser(t);
    reader = await createUser(t);
    stranger = await createUser(t);
    base = await createBase(t, owner, 'Access base');
    await share(admin, 'admin');
    await share(writer, 'rw');
    await share(reader, 'r');
  });
  afterAll(() => t.close());

  describe('GET …/access-token/ (Account-Token)', () => {
    it('returns the contract fields and an HS256 JWT valid three days', async () => {
      const res = await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: owner.token });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toEqual(accessResponse());
      expect(decodeProtectedHeader(body.access_token)).toMatchObject({ alg: 'HS256', typ: 'JWT' });
      const claims = decodeJwt(body.access_token);
      expect(claims).toMatchObject({
        dtable_uuid: base.uuid,
        permission: 'rw',
        username: owner.virtualId,
        owner_id: owner.virtualId,
        app_name: '',
        exp: nowSeconds() + 3 * DAY,
      });
    });

    it('carries the user permission: owner, admin and rw get rw, r gets r', async () => {
      for (const [user, permission] of permissionsByShare()) {
        const res = await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: user.token });
        expect(res.statusCode).toBe(200);
        const claims = decodeJwt(res.json().access_token);
        expect(claims.permission).toBe(permission);
        expect(claims.username).toBe(user.virtualId);
        expect(claims.owner_id).toBe(owner.virtualId);
      }
    });

    it('refuses users without access (403), unknown bases (404) and bad tokens (401)', async () => {
      const none = await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: stranger.token });
      expect(none.statusCode).toBe(403);
      expect(none.json()).toEqual({ error_msg: 'Permission denied.' });
      const missing = await t.request({ method: 'GET', url: `/api/v2.1/workspace/${base.workspaceId}/dtable/ghost/access-token/`, token: owner.token });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ error_msg: 'dtable ghost not found.' });
      const ws = await t.request({ method: 'GET', url: '/api/v2.1/workspace/0/dtable/ghost/access-token/', token: owner.token });
      expect(ws.json()).toEqual({ error_msg: 'Workspace 0 not found.' });
      const bad = await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: '0'.repeat(40) });
      expect(bad.statusCode).toBe(401);
      expect(bad.json()).toEqual({ detail: 'Invalid token' });
    });
  });

  describe('GET /api/v2.1/dtable/app-access-token/ (API-Token)', () => {
    it('accepts Token and Bearer in any case and answers the contract fields with app_name', async () => {
      const token = await newApiToken('exchange', 'rw');
      for (const scheme of ['Token', 'Bearer', 'token', 'BEARER']) {
        const res = await appAccess(`${scheme} ${token}`);
        expect(res.statusCode, scheme).toBe(200);
        expect(res.json()).toEqual({ ...accessResponse(), app_name: 'exchange' });
        expect(res.json().dtable_server.endsWith('/api-gateway/')).toBe(true);
      }
    });

    it('gives the token its own permission, an empty username and the app name', async () => {
      for (const permission of ['r', 'rw'] as const) {
        const token = await newApiToken(`perm-${permission}`, permission);
        const claims = decodeJwt((await appAccess(`Token ${token}`)).json().access_token);
        expect(claims).toMatchObject({ permission, username: '', app_name: `perm-${permission}`, owner_id: owner.virtualId, dtable_uuid: base.uuid });
        expect(claims.exp).toBe(nowSeconds() + 3 * DAY);
      }
    });

    it('hands out the same token for the same grant within a second, and a new one after a change or a second', async () => {
      const token = await newApiToken('bursts', 'rw');
      const issue = async () => (await appAccess(`Token ${token}`)).json<{ access_token: string }>().access_token;
      const first = await issue();
      expect(await issue()).toBe(first); // byte for byte what signing again in this second would give
      t.clock.advance(1000);
      const later = await issue();
      expect(later).not.toBe(first);
      expect(decodeJwt(later).iat).toBe(nowSeconds());

      // A permission change within the same second revokes the old grant: a new token with the new permission.
      const put = await t.request({ method: 'PUT', url: basePath(base, 'api-tokens/bursts/'), token: owner.token, payload: { permission: 'r' } });
      expect(put.statusCode).toBe(200);
      const changed = await issue();
      expect(changed).not.toBe(later);
      expect(decodeJwt(changed).permission).toBe('r');
      const gateway = await t.request({ method: 'GET', url: `/api-gateway/api/v2/dtables/${base.uuid}/`, headers: { authorization: `Token ${later}` } });
      expect(gateway.statusCode).toBe(403);
    });

    it('refuses anything else with 403 Permission denied.', async () => {
      const token = await newApiToken('refusals', 'r');
      const accountBaseToken = (await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: owner.token })).json().access_token;
      for (const header of [
        undefined,
        '',
        'Token',
        `Basic ${token}`,
        `Token ${token} extra`,
        `Token ${token.toUpperCase()}`,
        `Token ${token.slice(0, 39)}`,
        `Token ${'0'.repeat(40)}`,
        `Token ${owner.token}`, // an Account-Token is not an API-Token
        `Token ${accountBaseToken}`, // nor is a Base-Token
        'Token a.b.c',
      ]) {
        const res = await appAccess(header);
        expect(res.statusCode, String(header)).toBe(403);
        expect(res.json()).toEqual({ error_msg: 'Permission denied.' });
      }
    });

    it('stops working when the token is deleted, and when its base is deleted', async () => {
      const token = await newApiToken('short-lived', 'r');
      expect((await appAccess(`Token ${token}`)).statusCode).toBe(200);
      await t.request({ method: 'DELETE', url: basePath(base, 'api-tokens/short-lived/'), token: owner.token });
      expect((await appAccess(`Token ${token}`)).statusCode).toBe(403);

      const doomed = await createBase(t, owner);
      const doomedToken = await newApiToken('x', 'rw', doomed);
      const del = await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${doomed.workspaceId}/dtable/`, token: owner.token, payload: { name: doomed.name } });
      expect(del.statusCode).toBe(200);
      expect((await appAccess(`Token ${doomedToken}`)).statusCode).toBe(403);
    });

    it('writes last_access on first use, then at most once a minute, while lists show every use', async () => {
      const createdAt = t.clock.now();
      const token = await newApiToken('usage', 'r');
      const stored = async () =>
        (await t.container.db.selectFrom('api_tokens').select('last_access').where('app_name', '=', 'usage').executeTakeFirstOrThrow()).last_access;
      const listed = async () =>
        (await t.request({ method: 'GET', url: basePath(base, 'api-tokens/'), token: owner.token }))
          .json()
          .api_tokens.find((r: { app_name: string }) => r.app_name === 'usage').last_access;
      const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');

      expect(await stored()).toBeNull();
      expect(await listed()).toBe(iso(createdAt)); // never used: the creation time, as the original
      const first = t.clock.now();
      await appAccess(`Token ${token}`);
      expect(Number(await stored())).toBe(first);

      t.clock.advance(30_000);
      await appAccess(`Token ${token}`);
      expect(Number(await stored())).toBe(first); // not written again within the minute
      expect(await listed()).toBe(iso(first + 30_000)); // but shown

      t.clock.advance(30_000);
      await appAccess(`Token ${token}`);
      expect(Number(await stored())).toBe(first + 60_000);
      expect(await listed()).toBe(iso(first + 60_000));

      t.clock.advance(5_000);
      await appAccess(`Token ${token}`);
      await t.container.tokens.close(); // flushes what is pending (as at shutdown)
      expect(Number(await stored())).toBe(first + 65_000);
    });
  });

  describe('GET …/temp-api-token/ and using it', () => {
    it('returns a JWT valid one hour, bound to the base and the user', async () => {
      const token = await tempToken(reader);
      const claims = decodeJwt(token);
      expect(decodeProtectedHeader(token).alg).toBe('HS256');
      expect(claims).toMatchObject({ dtable_uuid: base.uuid, username: reader.virtualId });
      expect(claims.exp).toBe(nowSeconds() + 3600);
    });

    it('exchanges for a Base-Token with the user permission and app_name "scripts"', async () => {
      for (const [user, permission] of permissionsByShare()) {
        const res = await appAccess(`Bearer ${await tempToken(user)}`);
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ app_name: 'scripts', dtable_uuid: base.uuid, workspace_id: base.workspaceId });
        expect(decodeJwt(res.json().access_token)).toMatchObject({ permission, username: user.virtualId, app_name: 'scripts' });
      }
    });

    it('is refused like an unknown token once the hour is over', async () => {
      const token = await tempToken(writer);
      t.clock.advance(3599_000);
      expect((await appAccess(`Token ${token}`)).statusCode).toBe(200);
      t.clock.advance(1_000);
      const expired = await appAccess(`Token ${token}`);
      expect(expired.statusCode).toBe(403);
      expect(expired.json()).toEqual({ error_msg: 'Permission denied.' });
    });

    it('stops working when the user loses access to the base', async () => {
      const guest = await createUser(t);
      await share(guest, 'rw');
      const token = await tempToken(guest);
      expect((await appAccess(`Token ${token}`)).statusCode).toBe(200);
      const removed = await t.request({ method: 'DELETE', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email } });
      expect(removed.statusCode).toBe(200);
      expect((await appAccess(`Token ${token}`)).statusCode).toBe(403);
    });

    it('is refused when forged, tampered or signed with the Base-Token key', async () => {
      const token = await tempToken(reader);
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const tampered = Buffer.from(JSON.stringify({ ...decodeJwt(token), username: owner.virtualId })).toString('base64url');
      const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      const accountBaseToken = (await t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: reader.token })).json().access_token;
      for (const forged of [`${header}.${tampered}.${signature}`, `${none}.${payload}.`, `${header}.${payload}.${'A'.repeat(43)}`, accountBaseToken]) {
        expect((await appAccess(`Token ${forged}`)).statusCode).toBe(403);
      }
    });

    it('needs access to the base: 403 without, 404 for unknown bases, 401 for bad Account-Tokens', async () => {
      const none = await t.request({ method: 'GET', url: basePath(base, 'temp-api-token/'), token: stranger.token });
      expect(none.statusCode).toBe(403);
      expect(none.json()).toEqual({ error_msg: 'Permission denied.' });
      const missing = await t.request({ method: 'GET', url: `/api/v2.1/workspace/${base.workspaceId}/dtable/ghost/temp-api-token/`, token: owner.token });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ error_msg: 'dtable ghost not found.' });
      const unauth = await t.request({ method: 'GET', url: basePath(base, 'temp-api-token/') });
      expect(unauth.statusCode).toBe(403);
      const temp = await tempToken(owner);
      const asAccount = await t.request({ method: 'GET', url: basePath(base, 'temp-api-token/'), token: temp });
      expect(asAccount.statusCode).toBe(401);
    });
  });

  describe('GET /api/v2.1/external-link-tokens/{token}/access-token/', () => {
    const createLink = async (payload: Record<string, unknown> = {}) => {
      const res = await t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, payload });
      expect(res.statusCode).toBe(200);
      return res.json<{ token: string }>().token;
    };
    const linkAccess = (token: string, options: { query?: string; password?: string } = {}) =>
      t.request({
        method: 'GET',
        url: `/api/v2.1/external-link-tokens/${encodeURIComponent(token)}/access-token/${options.query ?? ''}`,
        headers: options.password === undefined ? {} : { 'x-link-password': options.password },
      });

    it('issues a read-only Base-Token for a standard and a custom link, without any credential', async () => {
      for (const token of [await createLink(), await createLink({ token: 'my-custom-link' })]) {
        const res = await linkAccess(token);
        expect(res.statusCode).toBe(200);
        const body = res.json();
        expect(body).toEqual(accessResponse()); // no app_name
        expect(decodeJwt(body.access_token)).toMatchObject({ permission: 'r', username: 'dtable-web', exp: nowSeconds() + 3 * DAY });
      }
    });

    it('answers 404 Token X not found for unknown, deleted and expired links', async () => {
      const unknown = await linkAccess('doesnotexist0000');
      expect(unknown.statusCode).toBe(404);
      expect(unknown.json()).toEqual({ error_msg: 'Token doesnotexist0000 not found' });

      const deleted = await createLink();
      await t.request({ method: 'DELETE', url: basePath(base, `external-links/${deleted}/`), token: owner.token });
      expect((await linkAccess(deleted)).json()).toEqual({ error_msg: `Token ${deleted} not found` });

      const expiring = await createLink({ expire_days: 1 });
      const ok = await linkAccess(expiring);
      expect(ok.statusCode).toBe(200);
      // The Base-Token never outlives its link.
      expect(decodeJwt(ok.json().access_token).exp).toBe(nowSeconds() + DAY);
      t.clock.advance(DAY * 1000);
      expect((await linkAccess(expiring)).statusCode).toBe(404);
    });

    it('takes the password of a protected link in X-Link-Password or ?password=', async () => {
      const token = await createLink({ password: 'correct horse' });
      const none = await linkAccess(token);
      expect(none.statusCode).toBe(403);
      expect(none.json()).toEqual({ error_msg: 'Password required.' });
      for (const wrong of [linkAccess(token, { password: 'wrong pass' }), linkAccess(token, { query: '?password=wrong' })]) {
        const res = await wrong;
        expect(res.statusCode).toBe(403);
        expect(res.json()).toEqual({ error_msg: 'Password is incorrect.' });
      }
      expect((await linkAccess(token, { password: 'correct horse' })).statusCode).toBe(200);
      expect((await linkAccess(token, { query: '?password=correct%20horse' })).statusCode).toBe(200);
      // The header wins over the query.
      expect((await linkAccess(token, { password: 'correct horse', query: '?password=wrong' })).statusCode).toBe(200);
    });

    it('refuses an absurdly long token with 404, not 500', async () => {
      const res = await linkAccess('x'.repeat(1500));
      expect(res.statusCode).toBe(404);
    });
  });
});
