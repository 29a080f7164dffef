import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { OVERRIDES_TTL_MS } from '../../src/modules/limits/index.js';
import {
  DIALECTS,
  baseToken,
  type TestApp,
  type TestBase,
  type TestUser,
} from '../helpers/index.js';
import { secondInstance } from './rate-limit.helpers.js';
import { NO_USAGE, advance, fakeDateForRateLimits, gateway, limitedApp, limitedFixture, usage } from './rate-limit.support.js';

fakeDateForRateLimits();

describe.each(DIALECTS)('per-base override at runtime (%s)', (dialect) => {
  // Its own app: the admin routes name a base by uuid, so they spend that base's account-class budget.
  let t: TestApp;
  let admin: TestUser;
  let alice: TestUser;
  let a: TestBase;
  let b: TestBase;
  beforeAll(async () => {
    ({ t, admin, alice, a, b } = await limitedFixture(dialect, { RATE_LIMIT_ACCOUNT_PER_MINUTE: '1000', RATE_LIMIT_BASE_PER_MINUTE: '3' }));
  });
  afterAll(() => t.close());
  beforeEach(() => advance(t.clock, 61_000));

  const overridePath = (uuid: string) => `/api/v2.1/admin/rate-limits/bases/${uuid}/`;
  const put = (uuid: string, payload: unknown, token = admin.token) =>
    t.request({ method: 'PUT', url: overridePath(uuid), token, payload: payload as Record<string, unknown>, remoteAddress: '10.90.0.1' });
  const del = (uuid: string, token = admin.token) =>
    t.request({ method: 'DELETE', url: overridePath(uuid), token, remoteAddress: '10.90.0.2' });
  const get = (uuid: string, token = admin.token) => t.request({ method: 'GET', url: overridePath(uuid), token, remoteAddress: '10.90.0.3' });
  afterEach(async () => {
    await del(a.uuid);
    await del(b.uuid);
  });

  it('applies to the next request without a restart, keeps the count, and goes away on DELETE', async () => {
    const token = await baseToken(t, alice, a);
    const hit = () => t.request({ method: 'GET', url: gateway(a.uuid), token });
    expect(usage(await hit())).toMatchObject({ limit: '3', remaining: '2' });
    expect(usage(await hit())).toMatchObject({ limit: '3', remaining: '1' });

    const set = await put(a.uuid, { per_minute: 5 });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toEqual({ base_uuid: a.uuid, base_name: a.name, per_minute: 5, default_per_minute: 3, overridden: true });
    expect(usage(await hit())).toMatchObject({ limit: '5', remaining: '2' });
    expect(usage(await hit())).toMatchObject({ limit: '5', remaining: '1' });
    expect((await get(a.uuid)).json()).toMatchObject({ per_minute: 5, overridden: true });

    // Base B and base A's account-class budget keep their defaults.
    const tokenB = await baseToken(t, alice, b);
    expect(usage(await t.request({ method: 'GET', url: gateway(b.uuid), token: tokenB }))).toMatchObject({ limit: '3', remaining: '2' });

    expect((await put(a.uuid, { per_minute: '2' })).json()).toMatchObject({ per_minute: 2 }); // form-style string
    const over = await hit();
    expect(over.statusCode).toBe(429);
    expect(usage(over)).toMatchObject({ limit: '2', remaining: '0' });

    expect((await del(a.uuid)).json()).toEqual({ success: true });
    expect((await get(a.uuid)).json()).toEqual({ base_uuid: a.uuid, base_name: a.name, per_minute: 3, default_per_minute: 3, overridden: false });
    expect(usage(await hit())).toMatchObject({ limit: '3', remaining: '0' });
    // Deleting again is harmless.
    expect((await del(a.uuid)).statusCode).toBe(200);
  });

  it('0 makes a base unlimited: no 429 and no usage headers', async () => {
    const token = await baseToken(t, alice, a);
    expect((await put(a.uuid, { per_minute: 0 })).json()).toMatchObject({ per_minute: 0, overridden: true });
    const codes: number[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await t.request({ method: 'GET', url: gateway(a.uuid), token });
      codes.push(res.statusCode);
      expect(usage(res)).toEqual(NO_USAGE);
    }
    expect(new Set(codes)).toEqual(new Set([200]));
  });

  it('is listed in the admin summary with the configured defaults', async () => {
    await put(b.uuid.replace(/-/g, ''), { per_minute: 9 });
    const res = await t.request({ method: 'GET', url: '/api/v2.1/admin/rate-limits/', token: admin.token, remoteAddress: '10.90.0.4' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      edition: 'self-hosted',
      store: 'memory',
      window_seconds: 60,
      account_per_minute: 1000,
      base_per_minute: 3,
      auth_token_per_minute: 0,
      base_overrides: [{ base_uuid: b.uuid, per_minute: 9, updated_at: expect.stringMatching(/^2026-01-0\dT.*\+00:00$/) }],
    });
  });

  it('reaches another instance on the same database within the cache TTL', async () => {
    const other = await secondInstance(t);
    try {
      const token = await baseToken(t, alice, a);
      const hit = () => other.app.inject({ method: 'GET', url: gateway(a.uuid), headers: { authorization: `Token ${token}` } });
      expect(usage(await hit())).toMatchObject({ limit: '3', remaining: '2' });
      expect((await put(a.uuid, { per_minute: 8 })).statusCode).toBe(200);
      advance(other.clock, OVERRIDES_TTL_MS - 1);
      expect(usage(await hit()).limit).toBe('3'); // still its cached copy
      advance(other.clock, 1);
      expect(usage(await hit())).toMatchObject({ limit: '8', remaining: '5' });
      await del(a.uuid);
      advance(other.clock, OVERRIDES_TTL_MS);
      expect(usage(await hit()).limit).toBe('3');
    } finally {
      await other.close();
      vi.setSystemTime(t.clock.now());
    }
  });

  it('refuses bad input and non-admins', async () => {
    for (const payload of [{}, { per_minute: -1 }, { per_minute: 1.5 }, { per_minute: 'abc' }, { per_minute: '' }, { per_minute: 10_000_001 }, { per_minute: true }, { per_minute: null }, { per_minute: [5] }]) {
      const res = await put(a.uuid, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error_msg).toMatch(/per_minute/);
    }
    const unknown = randomUUID();
    for (const res of [await put(unknown, { per_minute: 5 }), await get(unknown), await del(unknown), await get('not-a-uuid'), await put('not-a-uuid', { per_minute: 5 })]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error_msg: 'dtable not found.' });
    }
    for (const res of [await put(a.uuid, { per_minute: 5 }, alice.token), await get(a.uuid, alice.token), await del(a.uuid, alice.token)]) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ detail: 'You do not have permission to perform this action.' });
    }
    const anonymous = await t.request({ method: 'GET', url: '/api/v2.1/admin/rate-limits/', remoteAddress: '10.90.0.5' });
    expect(anonymous.statusCode).toBe(403);
    expect((await get(a.uuid)).json()).toMatchObject({ overridden: false });
  });
});

describe.each(DIALECTS)('TRUST_PROXY (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await limitedApp(dialect, { TRUST_PROXY: 'true', RATE_LIMIT_ACCOUNT_PER_MINUTE: '2', RATE_LIMIT_BASE_PER_MINUTE: '2' });
  });
  afterAll(() => t.close());

  it('counts per X-Forwarded-For client, whichever proxy it came through', async () => {
    const req = (remoteAddress: string, forwarded: string) =>
      t.request({ method: 'GET', url: '/api/v2.1/user/', remoteAddress, headers: { 'x-forwarded-for': forwarded } });
    expect((await req('10.0.0.9', '198.51.100.1')).statusCode).toBe(403);
    expect((await req('10.0.0.9', '198.51.100.1')).statusCode).toBe(403);
    expect((await req('10.0.0.9', '198.51.100.1')).statusCode).toBe(429);
    expect((await req('10.0.0.9', '198.51.100.2')).statusCode).toBe(403); // another client, same proxy
    expect((await req('10.0.0.10', '198.51.100.1')).statusCode).toBe(429); // same client, another proxy
    const gatewayReq = await t.request({
      method: 'GET',
      url: '/api-gateway/api/v2/other/',
      remoteAddress: '10.0.0.9',
      headers: { 'x-forwarded-for': '198.51.100.1' },
    });
    expect(usage(gatewayReq).remaining).toBe('1');
  });
});
