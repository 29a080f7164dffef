import { randomInt, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { STORE_WARNING_INTERVAL_MS } from '../../src/modules/limits/index.js';
import { DIALECTS, baseToken, createBase, createTestApp, createUser, type TestApp, type TestBase, type TestUser } from '../helpers/index.js';
import { RedisProcess, secondInstance, waitForStatus, type Instance } from './rate-limit.helpers.js';

/*
 * Budgets shared through Redis. TEST_REDIS_URL (CI: 127.0.0.1:6379) is used when set; otherwise
 * the suite starts its own redis-server, so it always runs. The outage suite always uses a
 * redis-server of its own, since it kills it. Keys are made unique per run (random base uuids and
 * client IPs) because a shared Redis keeps counters of earlier runs for up to a minute.
 */

const gateway = (uuid: string) => `/api-gateway/api/v2/dtables/${uuid}/`;
const usage = (res: LightMyRequestResponse) => ({
  limit: res.headers['x-ratelimit-limit'],
  remaining: res.headers['x-ratelimit-remaining'],
  reset: res.headers['x-ratelimit-reset'],
});
const randomIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

async function metricValue(t: TestApp, name: string): Promise<number> {
  const body = (await t.request({ method: 'GET', url: '/metrics' })).body;
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(body);
  return match ? Number(match[1]) : 0;
}

describe.each(DIALECTS)('budgets shared through Redis (%s)', (dialect) => {
  let own: RedisProcess | null = null;
  let t: TestApp;
  let other: Instance;
  let alice: TestUser;
  let base: TestBase;

  beforeAll(async () => {
    let url = process.env.TEST_REDIS_URL;
    if (!url) {
      own = await RedisProcess.start();
      url = own.url;
    }
    t = await createTestApp(dialect, { REDIS_URL: url, RATE_LIMIT_BASE_PER_MINUTE: '4' });
    other = await secondInstance(t);
    await waitForStatus(t.container.redis!, (s) => s === 'ready');
    await waitForStatus(other.container.redis!, (s) => s === 'ready');
    alice = await createUser(t);
    base = await createBase(t, alice);
  });
  afterAll(async () => {
    await other?.close();
    await t?.close();
    await own?.kill();
  });

  it('two instances count one budget per base, with true usage headers on both', async () => {
    const token = await baseToken(t, alice, base);
    const headers = { authorization: `Token ${token}` };
    const viaFirst = () => t.request({ method: 'GET', url: gateway(base.uuid), token });
    const viaSecond = () => other.app.inject({ method: 'GET', url: gateway(base.uuid), headers });

    const responses = [await viaFirst(), await viaSecond(), await viaFirst(), await viaSecond()];
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
    expect(responses.map((r) => usage(r).remaining)).toEqual(['3', '2', '1', '0']);
    expect(new Set(responses.map((r) => usage(r).limit))).toEqual(new Set(['4']));
    // One window, so one reset time (both clocks show the same time), within the next minute.
    const resets = new Set(responses.map((r) => Number(usage(r).reset)));
    expect(resets.size).toBe(1);
    const reset = [...resets][0]!;
    expect(reset).toBeGreaterThan(t.clock.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Math.ceil(t.clock.now() / 1000) + 60);

    for (const res of [await viaFirst(), await viaSecond()]) {
      expect(res.statusCode).toBe(429);
      expect(res.body).toBe('');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    // The counter lives in Redis, with the window as its expiry.
    const ttl = await t.container.redis!.pttl(`basegate:rl:base:base:${base.uuid}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('two instances count one budget per client IP', async () => {
    const ip = randomIp();
    const url = '/api-gateway/api/v2/no-such-endpoint/';
    const responses = [
      await t.request({ method: 'GET', url, remoteAddress: ip }),
      await other.app.inject({ method: 'GET', url, remoteAddress: ip }),
      await t.request({ method: 'GET', url, remoteAddress: ip }),
      await other.app.inject({ method: 'GET', url, remoteAddress: ip }),
      await t.request({ method: 'GET', url, remoteAddress: ip }),
    ];
    expect(responses.map((r) => r.statusCode)).toEqual([404, 404, 404, 404, 429]);
    expect(responses.map((r) => usage(r).remaining)).toEqual(['3', '2', '1', '0', '0']);
    expect(usage(await other.app.inject({ method: 'GET', url, remoteAddress: randomIp() })).remaining).toBe('3');
  });

  it('a runtime override applies to both instances', async () => {
    const fresh = await createBase(t, alice);
    const token = await baseToken(t, alice, fresh);
    const admin = await createUser(t, { admin: true });
    const put = await t.request({
      method: 'PUT',
      url: `/api/v2.1/admin/rate-limits/bases/${fresh.uuid}/`,
      token: admin.token,
      payload: { per_minute: 2 },
    });
    expect(put.statusCode).toBe(200);
    other.clock.advance(5_000); // the other instance re-reads overrides after its cache TTL
    const first = await t.request({ method: 'GET', url: gateway(fresh.uuid), token });
    const second = await other.app.inject({ method: 'GET', url: gateway(fresh.uuid), headers: { authorization: `Token ${token}` } });
    const third = await t.request({ method: 'GET', url: gateway(fresh.uuid), token });
    expect([first, second, third].map((r) => r.statusCode)).toEqual([200, 200, 429]);
    expect(usage(second)).toMatchObject({ limit: '2', remaining: '0' });
  });

  it('reports the Redis store in the admin summary', async () => {
    const admin = await createUser(t, { admin: true });
    const res = await t.request({ method: 'GET', url: '/api/v2.1/admin/rate-limits/', token: admin.token, remoteAddress: randomIp() });
    expect(res.json()).toMatchObject({ store: 'redis' });
  });
});

describe.each(DIALECTS)('a Redis outage (%s)', (dialect) => {
  let redis: RedisProcess;
  let t: TestApp;

  beforeAll(async () => {
    redis = await RedisProcess.start();
    t = await createTestApp(dialect, { REDIS_URL: redis.url, RATE_LIMIT_BASE_PER_MINUTE: '2' });
    await waitForStatus(t.container.redis!, (s) => s === 'ready');
  });
  afterAll(async () => {
    await t?.close();
    await redis?.kill();
  });

  it('counts on this instance with a throttled warning and a metric, and in Redis again once it is back', async () => {
    const uuid = randomUUID();
    const hit = () => t.request({ method: 'GET', url: gateway(uuid) });
    const before = [await hit(), await hit(), await hit()];
    expect(before.map((r) => r.statusCode)).toEqual([403, 403, 429]);
    expect(await metricValue(t, 'basegate_rate_limit_store_errors_total')).toBe(0);

    await redis.kill();
    await waitForStatus(t.container.redis!, (s) => s !== 'ready');

    // Fastify's null logger is one shared object: request.log.warn is this spy.
    const warn = vi.spyOn(t.app.log, 'warn');
    try {
      const during = [];
      for (let i = 0; i < 5; i++) during.push(await hit());
      // Counted in this instance's memory: the limit of 2 still holds (base-auth answers 403 below it).
      expect(during.map((r) => r.statusCode)).toEqual([403, 403, 429, 429, 429]);
      expect(usage(during[0]!)).toMatchObject({ limit: '2', remaining: '1' });
      expect(await metricValue(t, 'basegate_rate_limit_store_errors_total')).toBe(5);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]![1]).toMatch(/rate-limit store unreachable: counting on this instance only/);

      // The warning comes back after the interval, telling how many were not logged.
      t.clock.advance(STORE_WARNING_INTERVAL_MS);
      expect((await hit()).statusCode).toBe(429);
      expect(warn).toHaveBeenCalledTimes(2);
      expect(warn.mock.calls[1]![0]).toMatchObject({ suppressed: 4 });
    } finally {
      warn.mockRestore();
    }

    await redis.start();
    await waitForStatus(t.container.redis!, (s) => s === 'ready');
    // The restarted Redis kept nothing: a fresh window, limited again.
    const after = [await hit(), await hit(), await hit()];
    expect(after.map((r) => r.statusCode)).toEqual([403, 403, 429]);
    expect(usage(after[0]!)).toMatchObject({ limit: '2', remaining: '1' });
    expect(await metricValue(t, 'basegate_rate_limit_store_errors_total')).toBe(6);
  });

  it('a hung Redis also falls back to local counts, after the command timeout', async () => {
    const client = t.container.redis!;
    await waitForStatus(client, (s) => s === 'ready');
    // Simulate a server that accepts commands but never answers.
    const errors = await metricValue(t, 'basegate_rate_limit_store_errors_total');
    await client.call('CLIENT', 'PAUSE', '3000', 'ALL');
    // (A client address not counted yet in this instance's memory.)
    const res = await t.request({ method: 'GET', url: gateway(randomUUID()), remoteAddress: randomIp() });
    expect(res.statusCode).toBe(403);
    expect(usage(res)).toMatchObject({ limit: '2', remaining: '1' });
    expect(await metricValue(t, 'basegate_rate_limit_store_errors_total')).toBe(errors + 1);
  });
});
