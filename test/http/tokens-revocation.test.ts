import type { LightMyRequestResponse } from 'fastify';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CACHE_TTL_MS } from '../../src/modules/tokens/index.js';
import type { DialectName } from '../../src/db/index.js';
import {
  DIALECTS,
  basePath,
  baseToken,
  createBase,
  createTestApp,
  createUser,
  type TestApp,
  type TestBase,
  type TestUser,
} from '../helpers/index.js';
import { RedisProcess, secondInstance, type Instance } from './rate-limit.helpers.js';

type Requester = (url: string, token: string) => Promise<LightMyRequestResponse>;

const gateway = (b: TestBase) => `/api-gateway/api/v2/dtables/${b.uuid}/`;
const onApp = (t: TestApp): Requester => (url, token) => t.request({ method: 'GET', url, headers: { authorization: `Token ${token}` } });
const onInstance = (i: Instance): Requester => (url, token) => i.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

/** The scenarios every instance setup must pass: revoke on `t`, observe on `observe`. */
function revocationScenarios(ctx: () => { t: TestApp; observe: Requester; settle: (check: () => Promise<void>) => Promise<void> }) {
  let owner: TestUser;
  let guest: TestUser;
  let base: TestBase;

  const setup = async () => {
    const { t } = ctx();
    owner ??= await createUser(t);
    guest = await createUser(t);
    base = await createBase(t, owner);
    const shared = await t.request({ method: 'POST', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email, permission: 'rw' } });
    expect(shared.statusCode).toBe(201);
  };
  const apiToken = async (appName: string, permission: 'r' | 'rw') => {
    const { t } = ctx();
    const res = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: appName, permission } });
    return res.json<{ api_token: string }>().api_token;
  };
  const exchange = async (apiTokenText: string) => {
    const res = await ctx().t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Bearer ${apiTokenText}` } });
    expect(res.statusCode).toBe(200);
    return res.json<{ access_token: string }>().access_token;
  };
  /** Asserts the token works where observed (which also caches what it needs there). */
  const works = async (token: string, b = base) => expect((await ctx().observe(gateway(b), token)).statusCode).toBe(200);
  const refusedSoon = (token: string, b = base, status = 403) =>
    ctx().settle(async () => expect((await ctx().observe(gateway(b), token)).statusCode).toBe(status));

  it('deleting an API-Token revokes its Base-Tokens and no others', async () => {
    await setup();
    const [doomed, kept] = [await exchange(await apiToken('doomed', 'r')), await exchange(await apiToken('kept', 'r'))];
    await works(doomed);
    await works(kept);
    const del = await ctx().t.request({ method: 'DELETE', url: basePath(base, 'api-tokens/doomed/'), token: owner.token });
    expect(del.statusCode).toBe(200);
    await refusedSoon(doomed);
    await works(kept);
  });

  it('changing an API-Token permission revokes its old Base-Tokens; new ones carry the new permission', async () => {
    await setup();
    const text = await apiToken('changing', 'r');
    const before = await exchange(text);
    await works(before);
    const put = await ctx().t.request({ method: 'PUT', url: basePath(base, 'api-tokens/changing/'), token: owner.token, payload: { permission: 'rw' } });
    expect(put.statusCode).toBe(200);
    await refusedSoon(before);
    await works(await exchange(text));
  });

  it('removing or changing a share revokes the user Base-Tokens on that base only', async () => {
    await setup();
    const { t } = ctx();
    const otherBase = await createBase(t, owner);
    await t.request({ method: 'POST', url: basePath(otherBase, 'share/'), token: owner.token, payload: { email: guest.email, permission: 'r' } });
    const fromAccount = await baseToken(t, guest, base);
    const temp = (await t.request({ method: 'GET', url: basePath(base, 'temp-api-token/'), token: guest.token })).json().api_token;
    const fromTemp = await exchange(temp);
    const onOtherBase = await baseToken(t, guest, otherBase);
    const ownerToken = await baseToken(t, owner, base);
    for (const token of [fromAccount, fromTemp]) await works(token);
    await works(onOtherBase, otherBase);

    const changed = await t.request({ method: 'PUT', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email, permission: 'r' } });
    expect(changed.statusCode).toBe(200);
    await refusedSoon(fromAccount);
    await refusedSoon(fromTemp);
    await works(onOtherBase, otherBase);
    await works(ownerToken);

    const readOnly = await baseToken(t, guest, base);
    await works(readOnly);
    const removed = await t.request({ method: 'DELETE', url: basePath(base, 'share/'), token: owner.token, payload: { email: guest.email } });
    expect(removed.statusCode).toBe(200);
    await refusedSoon(readOnly);
    await works(onOtherBase, otherBase);
  });

  it('deleting an external link revokes the Base-Tokens issued from it', async () => {
    await setup();
    const { t } = ctx();
    const link = async () => (await t.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, payload: {} })).json().token;
    const [doomedLink, keptLink] = [await link(), await link()];
    const fromLink = async (token: string) => (await t.request({ method: 'GET', url: `/api/v2.1/external-link-tokens/${token}/access-token/` })).json().access_token;
    const [doomed, kept] = [await fromLink(doomedLink), await fromLink(keptLink)];
    await works(doomed);
    await works(kept);
    const del = await t.request({ method: 'DELETE', url: basePath(base, `external-links/${doomedLink}/`), token: owner.token });
    expect(del.statusCode).toBe(200);
    await refusedSoon(doomed);
    await works(kept);
  });

  it('deleting a user revokes their Base-Tokens on shared bases and voids their own bases', async () => {
    await setup();
    const { t } = ctx();
    const admin = await createUser(t, { admin: true });
    const ownBase = await createBase(t, guest);
    const [onShared, onOwn] = [await baseToken(t, guest, base), await baseToken(t, guest, ownBase)];
    await works(onShared);
    await works(onOwn, ownBase);
    const del = await t.request({ method: 'DELETE', url: `/api/v2.1/admin/users/${guest.email}/`, token: admin.token });
    expect(del.statusCode).toBe(200);
    await refusedSoon(onShared);
    await refusedSoon(onOwn, ownBase, 404);
  });

  /** The guest's Base-Tokens from the Account-Token and a temporary API-Token on a shared base, and from the Account-Token on their own base. */
  const signInTokens = async () => {
    const { t } = ctx();
    const ownBase = await createBase(t, guest);
    const temp = (await t.request({ method: 'GET', url: basePath(base, 'temp-api-token/'), token: guest.token })).json().api_token;
    const tokens = { onShared: await baseToken(t, guest, base), fromTemp: await exchange(temp), onOwn: await baseToken(t, guest, ownBase), ownBase };
    await works(tokens.onShared);
    await works(tokens.fromTemp);
    await works(tokens.onOwn, ownBase);
    return tokens;
  };

  it('deactivating a user revokes every Base-Token from their sign-in (shared and own bases), not the owner\'s', async () => {
    await setup();
    const { t } = ctx();
    const admin = await createUser(t, { admin: true });
    const { onShared, fromTemp, onOwn, ownBase } = await signInTokens();
    const ownerToken = await baseToken(t, owner, base);
    const res = await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${guest.email}/`, token: admin.token, payload: { is_active: false } });
    expect(res.statusCode, res.body).toBe(200);
    await refusedSoon(onShared);
    await refusedSoon(fromTemp);
    await refusedSoon(onOwn, ownBase);
    await works(ownerToken);
  });

  it('a password change (by the user or by an admin) revokes every Base-Token from their sign-in', async () => {
    await setup();
    const { t } = ctx();
    const first = await signInTokens();
    const own = await t.request({ method: 'PUT', url: '/api/v2.1/user/password/', token: guest.token, payload: { old_password: guest.password, new_password: 'changed-pass-1' } });
    expect(own.statusCode, own.body).toBe(200);
    for (const token of [first.onShared, first.fromTemp]) await refusedSoon(token);
    await refusedSoon(first.onOwn, first.ownBase);

    const login = await t.request({ method: 'POST', url: '/api2/auth-token/', payload: { username: guest.email, password: 'changed-pass-1' } });
    guest = { ...guest, token: login.json().token, password: 'changed-pass-1' };
    const second = await signInTokens();
    const admin = await createUser(t, { admin: true });
    const byAdmin = await t.request({ method: 'PUT', url: `/api/v2.1/admin/users/${guest.email}/`, token: admin.token, payload: { password: 'changed-pass-2' } });
    expect(byAdmin.statusCode, byAdmin.body).toBe(200);
    for (const token of [second.onShared, second.fromTemp]) await refusedSoon(token);
    await refusedSoon(second.onOwn, second.ownBase);
  });

  it('deleting a base makes its Base-Tokens fail with 404', async () => {
    await setup();
    const { t } = ctx();
    const token = await baseToken(t, owner, base);
    await works(token);
    const del = await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${base.workspaceId}/dtable/`, token: owner.token, payload: { name: base.name } });
    expect(del.statusCode).toBe(200);
    await refusedSoon(token, base, 404);
  });
}

/** A new owner and base, an `r` API-Token named `appName`, and a Base-Token exchanged from it. */
async function baseTokenFromApiToken(t: TestApp, appName: string): Promise<{ owner: TestUser; base: TestBase; token: string }> {
  const owner = await createUser(t);
  const base = await createBase(t, owner);
  const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: appName, permission: 'r' } });
  const exchange = await t.request({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers: { authorization: `Token ${created.json().api_token}` } });
  return { owner, base, token: exchange.json().access_token };
}

describe.each(DIALECTS)('revocation (%s)', (dialect) => {
  describe('on one instance: at once', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp(dialect);
    });
    afterAll(() => t.close());
    revocationScenarios(() => ({ t, observe: onApp(t), settle: (check) => check() }));
  });

  describe('across two instances through Redis: at once', () => {
    let own: RedisProcess | null = null;
    let t: TestApp;
    let other: Instance;
    beforeAll(async () => {
      let url = process.env.TEST_REDIS_URL;
      if (!url) {
        own = await RedisProcess.start();
        url = own.url;
      }
      ({ t, other } = await instancesOverRedis(dialect, url));
    });
    afterAll(async () => {
      try {
        await closeBoth(t, other);
      } finally {
        await own?.kill();
      }
    });
    // The other instance's clock never moves, so no cache entry there expires: only the message can explain the refusal.
    revocationScenarios(() => ({ t, observe: onInstance(other), settle: (check) => vi.waitFor(check, { timeout: 5000, interval: 10 }) }));

    it('the other instance forgets cached API-Tokens when they change or their base is renamed', async () => {
      const owner = await createUser(t);
      const base = await createBase(t, owner);
      const created = await t.request({ method: 'POST', url: basePath(base, 'api-tokens/'), token: owner.token, payload: { app_name: 'x', permission: 'r' } });
      const headers = { authorization: `Token ${created.json().api_token}` };
      const exchangeThere = () => other.app.inject({ method: 'GET', url: '/api/v2.1/dtable/app-access-token/', headers });
      const first = await exchangeThere();
      expect(first.json()).toMatchObject({ dtable_name: base.name });
      expect(decodeJwt(first.json().access_token).permission).toBe('r');

      await t.request({ method: 'PUT', url: basePath(base, 'api-tokens/x/'), token: owner.token, payload: { permission: 'rw' } });
      await vi.waitFor(async () => expect(decodeJwt((await exchangeThere()).json().access_token).permission).toBe('rw'), { timeout: 5000, interval: 10 });
      expect((await onInstance(other)(gateway(base), (await exchangeThere()).json().access_token)).statusCode).toBe(200);

      const renamed = await t.request({ method: 'PUT', url: `/api/v2.1/workspace/${base.workspaceId}/dtable/`, token: owner.token, payload: { name: base.name, new_name: 'renamed base' } });
      expect(renamed.statusCode).toBe(200);
      await vi.waitFor(async () => expect((await exchangeThere()).json().dtable_name).toBe('renamed base'), { timeout: 5000, interval: 10 });

      await t.request({ method: 'DELETE', url: `/api/v2.1/workspace/${base.workspaceId}/dtable/renamed%20base/api-tokens/x/`, token: owner.token });
      await vi.waitFor(async () => expect((await exchangeThere()).statusCode).toBe(403), { timeout: 5000, interval: 10 });
    });
  });

  describe('across two instances without Redis: within the cache TTL', () => {
    let t: TestApp;
    let other: Instance;
    beforeAll(async () => {
      t = await createTestApp(dialect);
      other = await secondInstance(t);
    });
    afterAll(async () => {
      await other?.close();
      await t?.close();
    });

    it('the other instance accepts a revoked token until its cached version expires', async () => {
      const { owner, base, token } = await baseTokenFromApiToken(t, 'x');
      expect((await onInstance(other)(gateway(base), token)).statusCode).toBe(200);
      await t.request({ method: 'DELETE', url: basePath(base, 'api-tokens/x/'), token: owner.token });
      expect((await onApp(t)(gateway(base), token)).statusCode).toBe(403);
      expect((await onInstance(other)(gateway(base), token)).statusCode).toBe(200); // stale, as documented
      other.clock.advance(CACHE_TTL_MS);
      expect((await onInstance(other)(gateway(base), token)).statusCode).toBe(403);
    });
  });

  describe('after a Redis outage', () => {
    let redis: RedisProcess;
    let t: TestApp;
    let other: Instance;
    // A Redis command nobody awaits (ioredis's own re-subscribe, the socket.io adapter's) must not
    // reject unhandled when Redis goes away or the instances close (it failed CI once).
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    beforeAll(async () => {
      process.on('unhandledRejection', onUnhandled);
      redis = await RedisProcess.start();
      ({ t, other } = await instancesOverRedis(dialect, redis.url));
    });
    afterAll(async () => {
      try {
        await closeBoth(t, other);
        await redis?.kill();
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
        await redis?.kill();
      }
    });

    it('an instance that may have missed revocations drops its caches when it reconnects', async () => {
      const { owner, base, token } = await baseTokenFromApiToken(t, 'x');
      expect((await onInstance(other)(gateway(base), token)).statusCode).toBe(200);

      await redis.kill();
      const del = await t.request({ method: 'DELETE', url: basePath(base, 'api-tokens/x/'), token: owner.token });
      expect(del.statusCode).toBe(200); // revoking works while Redis is away; the message is lost
      expect((await onInstance(other)(gateway(base), token)).statusCode).toBe(200);

      await redis.start();
      await vi.waitFor(async () => expect((await onInstance(other)(gateway(base), token)).statusCode).toBe(403), { timeout: 10_000, interval: 20 });
    });
  });
});

/** Two instances on one database sharing Redis at `redisUrl`, both listening for revocations. */
async function instancesOverRedis(dialect: DialectName, redisUrl: string): Promise<{ t: TestApp; other: Instance }> {
  const t = await createTestApp(dialect, { REDIS_URL: redisUrl });
  const other = await secondInstance(t);
  await Promise.all([t.container.tokens.ready(), other.container.tokens.ready()]);
  return { t, other };
}

async function closeBoth(t: TestApp | undefined, other: Instance | undefined): Promise<void> {
  await other?.close();
  await t?.close();
}
