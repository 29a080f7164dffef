import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import {
  DIALECTS,
  basePath,
  baseToken,
  type TestApp,
  type TestBase,
  type TestUser,
} from '../helpers/index.js';
import { NO_USAGE, advance, fakeDateForRateLimits, allowedBefore429, gateway, limitedApp, limitedFixture, statuses, usage } from './rate-limit.support.js';

fakeDateForRateLimits();

describe('configuration of the limits', () => {
  it.each([
    ['self-hosted', { rateLimitAccountPerMinute: 3000, rateLimitBasePerMinute: 500, rateLimitAuthTokenPerMinute: 0 }],
    ['cloud', { rateLimitAccountPerMinute: 1000, rateLimitBasePerMinute: 200, rateLimitAuthTokenPerMinute: 60 }],
  ])('defaults by EDITION=%s', (edition, expected) => {
    expect(loadConfig({ EDITION: edition, SECRET_KEY: 'x'.repeat(32) }, { persistSecret: false })).toMatchObject(expected);
  });

  it('self-hosted is the default edition', () => {
    expect(loadConfig({ SECRET_KEY: 'x'.repeat(32) }, { persistSecret: false })).toMatchObject({
      rateLimitAccountPerMinute: 3000,
      rateLimitBasePerMinute: 500,
      rateLimitAuthTokenPerMinute: 0,
    });
  });

  it('takes each limit from its variable, 0 included, over the edition default', () => {
    const config = loadConfig(
      {
        EDITION: 'cloud',
        SECRET_KEY: 'x'.repeat(32),
        RATE_LIMIT_ACCOUNT_PER_MINUTE: '0',
        RATE_LIMIT_BASE_PER_MINUTE: '42',
        RATE_LIMIT_AUTH_TOKEN_PER_MINUTE: '7',
      },
      { persistSecret: false },
    );
    expect(config).toMatchObject({ rateLimitAccountPerMinute: 0, rateLimitBasePerMinute: 42, rateLimitAuthTokenPerMinute: 7 });
  });

  it.each(['RATE_LIMIT_ACCOUNT_PER_MINUTE', 'RATE_LIMIT_BASE_PER_MINUTE', 'RATE_LIMIT_AUTH_TOKEN_PER_MINUTE'])(
    'refuses a bad %s naming the variable',
    (name) => {
      for (const value of ['-1', 'abc', '1.5', '10000001', '1e3']) {
        const load = () => loadConfig({ SECRET_KEY: 'x'.repeat(32), [name]: value }, { persistSecret: false });
        expect(load).toThrow(ConfigError);
        expect(load).toThrow(name);
      }
    },
  );
});

describe('edition defaults, enforced', () => {
  let t: TestApp;
  afterEach(() => t?.close());

  it('cloud: account 1000, base 200, auth-token 60 per minute, each class counted apart', async () => {
    t = await limitedApp('sqlite', { EDITION: 'cloud' });
    const ip = '10.50.0.1';
    expect(await allowedBefore429(t, 100, { method: 'POST', url: '/api2/auth-token/', payload: {}, remoteAddress: ip })).toBe(60);
    expect(await allowedBefore429(t, 1100, { method: 'GET', url: '/api/v2.1/user/', remoteAddress: ip })).toBe(1000);
    const uuid = randomUUID();
    const first = await t.request({ method: 'GET', url: gateway(uuid), remoteAddress: ip });
    expect(usage(first).limit).toBe('200');
    expect(await allowedBefore429(t, 300, { method: 'GET', url: gateway(uuid), remoteAddress: ip })).toBe(199);
  });

  it('self-hosted: account 3000, base 500 per minute, auth-token unlimited', async () => {
    t = await limitedApp('sqlite');
    const ip = '10.50.0.2';
    expect(await allowedBefore429(t, 3100, { method: 'GET', url: '/api/v2.1/user/', remoteAddress: ip })).toBe(3000);
    expect(await allowedBefore429(t, 600, { method: 'GET', url: gateway(randomUUID()), remoteAddress: ip })).toBe(500);
    // Unlimited: well past the cloud limit and past the other classes' budgets, never a 429.
    const codes = await statuses(t, 700, { method: 'POST', url: '/api2/auth-token', payload: {}, remoteAddress: ip });
    expect(new Set(codes)).toEqual(new Set([400]));
  }, 90_000); // 4,400 requests: over 30 s in CI on a loaded machine

  it('configuration overrides the edition; 0 means unlimited and no usage headers', async () => {
    t = await limitedApp('sqlite', {
      EDITION: 'cloud',
      RATE_LIMIT_ACCOUNT_PER_MINUTE: '0',
      RATE_LIMIT_BASE_PER_MINUTE: '0',
      RATE_LIMIT_AUTH_TOKEN_PER_MINUTE: '3',
    });
    const ip = '10.50.0.3';
    expect(await allowedBefore429(t, 10, { method: 'POST', url: '/api2/auth-token/', payload: {}, remoteAddress: ip })).toBe(3);
    expect(new Set(await statuses(t, 1200, { method: 'GET', url: '/api/v2.1/user/', remoteAddress: ip }))).toEqual(new Set([403]));
    const uuid = randomUUID();
    expect(new Set(await statuses(t, 250, { method: 'GET', url: gateway(uuid), remoteAddress: ip }))).toEqual(new Set([403]));
    expect(usage(await t.request({ method: 'GET', url: gateway(uuid), remoteAddress: ip }))).toEqual(NO_USAGE);
  });
});

describe('exemptions', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await limitedApp('sqlite', {
      RATE_LIMIT_ACCOUNT_PER_MINUTE: '1',
      RATE_LIMIT_BASE_PER_MINUTE: '1',
      RATE_LIMIT_AUTH_TOKEN_PER_MINUTE: '1',
    });
  });
  afterAll(() => t.close());

  it.each(['/ping/', '/ping', '/api2/ping/', '/api2/ping', '/api-gateway/api/v2/ping/', '/api-gateway/api/v2/ping', '/server-info/', '/server-info', '/metrics'])(
    '%s is never limited and carries no usage headers',
    async (url) => {
      for (let i = 0; i < 5; i++) {
        const res = await t.request({ method: 'GET', url, remoteAddress: '10.60.0.1' });
        expect(res.statusCode).toBe(200);
        expect(usage(res)).toEqual(NO_USAGE);
      }
    },
  );

  it('while the same client is limited everywhere else', async () => {
    const ip = '10.60.0.1';
    expect(await statuses(t, 2, { method: 'GET', url: '/api/v2.1/user/', remoteAddress: ip })).toEqual([403, 429]);
    expect(await statuses(t, 2, { method: 'GET', url: '/api-gateway/api/v2/other/', remoteAddress: ip })).toEqual([404, 429]);
    expect(await statuses(t, 2, { method: 'POST', url: '/api2/auth-token/', payload: {}, remoteAddress: ip })).toEqual([400, 429]);
    expect(await statuses(t, 2, { method: 'GET', url: '/unknown/path/', remoteAddress: ip })).toEqual([429, 429]);
  });
});

describe.each(DIALECTS)('rate limits (%s)', (dialect) => {
  let t: TestApp;
  let admin: TestUser;
  let alice: TestUser;
  let a: TestBase;
  let b: TestBase;

  beforeAll(async () => {
    ({ t, admin, alice, a, b } = await limitedFixture(dialect, { RATE_LIMIT_ACCOUNT_PER_MINUTE: '6', RATE_LIMIT_BASE_PER_MINUTE: '3' }));
  });
  afterAll(() => t.close());
  // Every test starts in fresh windows (and with the setup's requests forgotten).
  beforeEach(() => advance(t.clock, 61_000));

  describe('usage headers, 429 and Retry-After', () => {
    it('carries true x-ratelimit-* values on /api-gateway/ responses, errors and 429s included', async () => {
      const token = await baseToken(t, alice, a);
      advance(t.clock, 250); // a window that starts mid-second: reset is rounded up
      const start = t.clock.now();
      const reset = String(Math.ceil((start + 60_000) / 1000));

      const first = await t.request({ method: 'GET', url: gateway(a.uuid), token });
      expect(first.statusCode).toBe(200);
      expect(usage(first)).toEqual({ limit: '3', remaining: '2', reset });

      advance(t.clock, 20_000);
      const second = await t.request({ method: 'GET', url: gateway(a.uuid), token });
      expect(usage(second)).toEqual({ limit: '3', remaining: '1', reset });

      // An error answer is counted and carries the headers too.
      const denied = await t.request({ method: 'GET', url: `${gateway(a.uuid)}rows/?table_name=No%20such%20table`, token });
      expect(denied.statusCode).toBeGreaterThanOrEqual(400);
      expect(denied.statusCode).toBeLessThan(500);
      expect(usage(denied)).toEqual({ limit: '3', remaining: '0', reset });
      // Without a credential the request is counted per IP, and says so in its headers.
      const anonymous = await t.request({ method: 'GET', url: gateway(a.uuid), remoteAddress: '10.84.0.1' });
      expect(anonymous.statusCode).toBe(403);
      expect(usage(anonymous)).toEqual({ limit: '3', remaining: '2', reset: String(Math.ceil((t.clock.now() + 60_000) / 1000)) });

      const limited = await t.request({ method: 'GET', url: gateway(a.uuid), token });
      expect(limited.statusCode).toBe(429);
      expect(limited.body).toBe('');
      expect(limited.headers['content-length']).toBe('0');
      expect(limited.headers['retry-after']).toBe('40');
      expect(usage(limited)).toEqual({ limit: '3', remaining: '0', reset });

      advance(t.clock, 39_000);
      const stillLimited = await t.request({ method: 'GET', url: gateway(a.uuid), token });
      expect(stillLimited.statusCode).toBe(429);
      expect(stillLimited.headers['retry-after']).toBe('1');

      advance(t.clock, 1_000); // exactly the end of the window
      const fresh = await t.request({ method: 'GET', url: gateway(a.uuid), token });
      expect(fresh.statusCode).toBe(200);
      expect(usage(fresh)).toEqual({ limit: '3', remaining: '2', reset: String(Math.ceil((t.clock.now() + 60_000) / 1000)) });
    });

    it('refuses an account operation with an empty 429 and Retry-After, without usage headers', async () => {
      const ip = '10.70.0.1';
      const ok = await t.request({ method: 'GET', url: '/api/v2.1/user/', token: alice.token, remoteAddress: ip });
      expect(ok.statusCode).toBe(200);
      expect(usage(ok)).toEqual(NO_USAGE);
      advance(t.clock, 15_000);
      expect(await statuses(t, 5, { method: 'GET', url: '/api/v2.1/user/', token: alice.token, remoteAddress: ip })).toEqual([
        200, 200, 200, 200, 200,
      ]);
      const limited = await t.request({ method: 'GET', url: '/api/v2.1/user/', token: alice.token, remoteAddress: ip });
      expect(limited.statusCode).toBe(429);
      expect(limited.body).toBe('');
      expect(limited.headers['retry-after']).toBe('45');
      expect(usage(limited)).toEqual(NO_USAGE);
    });

    it('refuses before checking credentials: a bad token over the limit gets 429, not 401', async () => {
      const ip = '10.70.0.2';
      expect(await statuses(t, 7, { method: 'GET', url: '/api/v2.1/user/', token: 'f'.repeat(40), remoteAddress: ip })).toEqual([
        401, 401, 401, 401, 401, 401, 429,
      ]);
    });
  });

  describe('counting keys', () => {
    it('counts per base: one exhausted base blocks no other, and both uuid spellings share a budget', async () => {
      const tokenA = await baseToken(t, alice, a);
      const tokenB = await baseToken(t, alice, b);
      const hex = a.uuid.replace(/-/g, '').toUpperCase();
      expect((await t.request({ method: 'GET', url: gateway(a.uuid), token: tokenA })).statusCode).toBe(200);
      expect(usage(await t.request({ method: 'GET', url: gateway(hex), token: tokenA })).remaining).toBe('1');
      expect((await t.request({ method: 'GET', url: gateway(a.uuid), token: tokenA })).statusCode).toBe(200);
      expect((await t.request({ method: 'GET', url: gateway(hex), token: tokenA })).statusCode).toBe(429);

      const other = await t.request({ method: 'GET', url: gateway(b.uuid), token: tokenB });
      expect(other.statusCode).toBe(200);
      expect(usage(other).remaining).toBe('2');
      // From a different IP base A stays blocked: the key is the base, not the client.
      expect((await t.request({ method: 'GET', url: gateway(a.uuid), token: tokenA, remoteAddress: '10.80.0.9' })).statusCode).toBe(429);
    });

    it('lets nobody spend a base\'s budget without a valid credential', async () => {
      const tokenA = await baseToken(t, alice, a);
      const forged = `${tokenA.slice(0, -4)}AAAA`;
      // Anonymous, forged or unknown credentials naming base A, each from its own IP: counted per IP.
      for (let i = 0; i < 5; i++) {
        const ip = `10.83.0.${i + 1}`;
        expect((await t.request({ method: 'GET', url: gateway(a.uuid), remoteAddress: ip })).statusCode).toBe(403);
        expect((await t.request({ method: 'GET', url: gateway(a.uuid), token: forged, remoteAddress: ip })).statusCode).toBe(403);
        expect((await t.request({ method: 'GET', url: basePath(a, 'api-tokens/'), remoteAddress: ip })).statusCode).toBe(403);
        expect((await t.request({ method: 'GET', url: basePath(a, 'api-tokens/'), token: '0'.repeat(40), remoteAddress: ip })).statusCode).toBe(401);
      }
      // The base's budgets are untouched.
      expect(usage(await t.request({ method: 'GET', url: gateway(a.uuid), token: tokenA })).remaining).toBe('2');
      const owner = await t.request({ method: 'GET', url: basePath(a, 'api-tokens/'), token: alice.token });
      expect(owner.statusCode).toBe(200);
    });

    it('counts a gateway request without a uuid in its path against the base of its Base-Token', async () => {
      const token = await baseToken(t, alice, a);
      const ip = '10.80.0.1';
      expect(usage(await t.request({ method: 'GET', url: gateway(a.uuid), token, remoteAddress: ip })).remaining).toBe('2');
      const noUuid = await t.request({ method: 'GET', url: '/api-gateway/api/v2/no-such-endpoint/', token, remoteAddress: ip });
      expect(noUuid.statusCode).toBe(404);
      expect(usage(noUuid).remaining).toBe('1');
      expect(usage(await t.request({ method: 'GET', url: gateway(a.uuid), token, remoteAddress: ip })).remaining).toBe('0');
      // Without a Base-Token the same path counts against the client IP.
      expect(usage(await t.request({ method: 'GET', url: '/api-gateway/api/v2/no-such-endpoint/', remoteAddress: ip })).remaining).toBe('2');
      // An Account-Token is no Base-Token: per IP as well.
      const account = await t.request({ method: 'GET', url: '/api-gateway/api/v2/no-such-endpoint/', token: alice.token, remoteAddress: ip });
      expect(usage(account).remaining).toBe('1');
    });

    it('counts workspace_id + base_name against the base, the same budget as its uuid, also after a rename', async () => {
      const ip = '10.81.0.1';
      const accessToken = (base: Pick<TestBase, 'workspaceId' | 'name'>) =>
        t.request({ method: 'GET', url: basePath(base, 'access-token/'), token: alice.token, remoteAddress: ip });
      for (let i = 0; i < 3; i++) expect((await accessToken(a)).statusCode).toBe(200);
      // The admin route names the same base by uuid: the same account-class budget.
      const byUuid = await t.request({
        method: 'GET',
        url: `/api/v2.1/admin/rate-limits/bases/${a.uuid}/`,
        token: admin.token,
        remoteAddress: '10.81.0.2',
      });
      expect(byUuid.statusCode).toBe(200);
      const renamed = { ...a, name: `${a.name}-renamed` };
      const rename = (name: string, newName: string) =>
        t.request({
          method: 'PUT',
          url: `/api/v2.1/workspace/${a.workspaceId}/dtable/`,
          token: alice.token,
          payload: { name, new_name: newName },
          remoteAddress: '10.81.0.3',
        });
      expect((await rename(a.name, renamed.name)).statusCode).toBe(200);
      try {
        expect((await accessToken(renamed)).statusCode).toBe(200);
        expect((await accessToken(renamed)).statusCode).toBe(200);
        expect((await accessToken(renamed)).statusCode).toBe(429);
        // Other bases and requests without a base are not affected.
        expect((await accessToken(b)).statusCode).toBe(200);
        expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', token: alice.token, remoteAddress: ip })).statusCode).toBe(200);
        // An unknown base name counts per IP (the route answers 404, not 429).
        const unknown = await accessToken({ workspaceId: a.workspaceId, name: 'no-such-base' });
        expect(unknown.statusCode).toBe(404);
      } finally {
        expect((await rename(renamed.name, a.name)).statusCode).toBe(200);
      }
    });

    it('counts requests without a base per client IP, ignoring X-Forwarded-For without TRUST_PROXY', async () => {
      const one = '10.82.0.1';
      expect(await allowedBefore429(t, 10, { method: 'GET', url: '/api/v2.1/user/', remoteAddress: one })).toBe(6);
      expect((await t.request({ method: 'GET', url: '/api/v2.1/user/', remoteAddress: '10.82.0.2' })).statusCode).toBe(403);
      const spoofed = await t.request({
        method: 'GET',
        url: '/api/v2.1/user/',
        remoteAddress: one,
        headers: { 'x-forwarded-for': '203.0.113.7' },
      });
      expect(spoofed.statusCode).toBe(429);
      // The base class has its own budget per IP.
      expect(usage(await t.request({ method: 'GET', url: '/api-gateway/api/v2/other/', remoteAddress: one })).remaining).toBe('2');
    });
  });

  describe('GET /metrics', () => {
    it('serves Prometheus text with the 429 count by class', async () => {
      const value = async (cls: string): Promise<number> => {
        const res = await t.request({ method: 'GET', url: '/metrics' });
        expect(res.statusCode).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/plain/);
        expect(res.body).toMatch(/^process_cpu_user_seconds_total /m);
        const match = new RegExp(`^basegate_rate_limited_requests_total\\{class="${cls}"\\} (\\d+)$`, 'm').exec(res.body);
        return match ? Number(match[1]) : 0;
      };
      const before = { base: await value('base'), account: await value('account') };
      await statuses(t, 5, { method: 'GET', url: gateway(randomUUID()), remoteAddress: '10.95.0.1' });
      await statuses(t, 7, { method: 'GET', url: '/api/v2.1/user/', remoteAddress: '10.95.0.1' });
      expect(await value('base')).toBe(before.base + 2);
      expect(await value('account')).toBe(before.account + 1);
    });
  });
});
