import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DIALECTS, basePath, createBase, createTestApp, createUser, type TestApp, type TestUser } from '../helpers/index.js';
import { RedisProcess, secondInstance, waitForStatus, type Instance } from '../http/rate-limit.helpers.js';

/*
 * The password back-off shared through Redis by two instances on one database. TEST_REDIS_URL is
 * used when set, else a redis-server of the suite's own; the outage test always has its own, since
 * it kills it. IPs are random per run: a shared Redis keeps the counts of earlier runs for a day.
 */

const randomIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
const ENV = { RATE_LIMIT_AUTH_TOKEN_PER_MINUTE: '0' };

async function metricValue(app: { inject: TestApp['app']['inject'] }, name: string): Promise<number> {
  const body = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(body);
  return match ? Number(match[1]) : 0;
}

describe.each(DIALECTS)('password back-off shared by instances through Redis (%s)', (dialect) => {
  let own: RedisProcess | null = null;
  let a: TestApp;
  let b: Instance;
  let victim: TestUser;

  beforeAll(async () => {
    let url = process.env.TEST_REDIS_URL;
    if (!url) {
      own = await RedisProcess.start();
      url = own.url;
    }
    a = await createTestApp(dialect, { ...ENV, REDIS_URL: url });
    b = await secondInstance(a);
    await waitForStatus(a.container.redis!, (s) => s === 'ready');
    await waitForStatus(b.container.redis!, (s) => s === 'ready');
    victim = await createUser(a);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await own?.kill();
  });

  const advance = (ms: number) => {
    a.clock.advance(ms);
    b.clock.advance(ms);
  };
  const login = (app: TestApp['app'], username: string, password: string, ip = randomIp()) =>
    app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username, password }, remoteAddress: ip });

  it('counts wrong logins on A against the account on B, and a success on B clears them for A', async () => {
    for (let i = 0; i < 3; i++) expect((await login(a.app, victim.email, `wrong-a-${i}`)).statusCode).toBe(400);
    for (let i = 0; i < 2; i++) expect((await login(b.app, victim.email, `wrong-b-${i}`)).statusCode).toBe(400);
    // Five failures in all (the allowance): both instances now hold the account back, even for the right password.
    const onB = await login(b.app, victim.email, victim.password);
    expect(onB.statusCode).toBe(429);
    expect(onB.headers['retry-after']).toBe('1');
    expect((await login(a.app, victim.email, victim.password)).statusCode).toBe(429);
    advance(1000);
    expect((await login(b.app, victim.email, victim.password)).statusCode).toBe(200);
    // The success on B cleared the account's count for A too.
    for (let i = 0; i < 4; i++) expect((await login(a.app, victim.email, `again-${i}`)).statusCode).toBe(400);
    expect((await login(a.app, victim.email, victim.password)).statusCode).toBe(200);
  });

  it('grows the wait across instances, and forgets an account a day after its last failure', async () => {
    const user = await createUser(a);
    for (let i = 0; i < 5; i++) expect((await login(i % 2 === 0 ? a.app : b.app, user.email, `wrong-${i}`)).statusCode).toBe(400);
    expect((await login(a.app, user.email, user.password)).headers['retry-after']).toBe('1');
    advance(1000);
    expect((await login(a.app, user.email, 'wrong-again')).statusCode).toBe(400);
    const longer = await login(b.app, user.email, user.password);
    expect(longer.statusCode).toBe(429);
    expect(longer.headers['retry-after']).toBe('2');
    advance(25 * 3_600_000);
    // A day later the count starts over: one more failure blocks nothing.
    expect((await login(b.app, user.email, 'wrong-later')).statusCode).toBe(400);
    expect((await login(a.app, user.email, user.password)).statusCode).toBe(200);
  });

  it('counts one IP across instances', async () => {
    const ip = randomIp();
    const codes = [];
    for (let i = 0; i < 21; i++) codes.push((await login(i % 2 === 0 ? a.app : b.app, `nobody-${i}-${randomInt(1e9)}@example.com`, 'guess', ip)).statusCode);
    expect(codes.slice(0, 20).every((c) => c === 400)).toBe(true);
    expect(codes[20]).toBe(429);
    expect((await login(a.app, victim.email, victim.password, randomIp())).statusCode).toBe(200);
  });

  it('counts external-link passwords across instances', async () => {
    const owner = await createUser(a);
    const base = await createBase(a, owner);
    const created = await a.request({ method: 'POST', url: basePath(base, 'external-links/'), token: owner.token, payload: { password: 'link-password-1' } });
    const token = created.json().token as string;
    const exchange = (app: TestApp['app'], password: string) =>
      app.inject({ method: 'GET', url: `/api/v2.1/external-link-tokens/${token}/access-token/`, headers: { 'x-link-password': password }, remoteAddress: randomIp() });
    for (let i = 0; i < 5; i++) expect((await exchange(i % 2 === 0 ? a.app : b.app, `wrong-${i}`)).statusCode).toBe(403);
    const blocked = await exchange(b.app, 'link-password-1');
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBe(1);
    expect((await exchange(a.app, 'link-password-1')).statusCode).toBe(429);
    advance(1000);
    expect((await exchange(a.app, 'link-password-1')).statusCode).toBe(200);
    // The link token is not stored in Redis as itself.
    expect(await a.container.redis!.keys(`*${token}*`)).toEqual([]);
  });

  it("counts the old password of a password change across instances", async () => {
    const user = await createUser(a);
    const change = (app: TestApp['app'], old: string) =>
      app.inject({
        method: 'PUT',
        url: '/api/v2.1/user/password/',
        headers: { authorization: `Token ${user.token}` },
        payload: { old_password: old, new_password: 'a-new-password-1' },
        remoteAddress: randomIp(),
      });
    for (let i = 0; i < 5; i++) expect((await change(i % 2 === 0 ? a.app : b.app, `wrong-${i}`)).statusCode).toBe(400);
    expect((await change(b.app, user.password)).statusCode).toBe(429);
    expect((await change(a.app, user.password)).statusCode).toBe(429);
  });
});

describe.each(DIALECTS)('password back-off when Redis fails (%s)', (dialect) => {
  let redis: RedisProcess;
  let t: TestApp;
  let victim: TestUser;

  beforeAll(async () => {
    redis = await RedisProcess.start();
    t = await createTestApp(dialect, { ...ENV, REDIS_URL: redis.url });
    await waitForStatus(t.container.redis!, (s) => s === 'ready');
    victim = await createUser(t);
  });
  afterAll(async () => {
    await t?.close();
    await redis?.kill();
  });

  const login = (password: string) =>
    t.app.inject({ method: 'POST', url: '/api2/auth-token/', payload: { username: victim.email, password }, remoteAddress: randomIp() });

  it('falls back to this instance memory, with a warning and a metric, never open', async () => {
    expect((await login('wrong-0')).statusCode).toBe(400);
    expect((await login('wrong-1')).statusCode).toBe(400);
    expect(await metricValue(t.app, 'basegate_password_throttle_store_errors_total')).toBe(0);
    await redis.kill();
    await waitForStatus(t.container.redis!, (s) => s !== 'ready');

    const warn = vi.spyOn(t.app.log, 'warn');
    try {
      // The memory counted the two failures from before the outage as well: three more reach the allowance.
      for (let i = 2; i < 5; i++) expect((await login(`wrong-${i}`)).statusCode).toBe(400);
      const blocked = await login(victim.password);
      expect(blocked.statusCode).toBe(429);
      expect(blocked.headers['retry-after']).toBe('1');
      expect(await metricValue(t.app, 'basegate_password_throttle_store_errors_total')).toBeGreaterThanOrEqual(4);
      const warnings = warn.mock.calls.filter((call) => /password-throttle store unreachable/.test(String(call[1])));
      expect(warnings).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }

    await redis.start();
    await waitForStatus(t.container.redis!, (s) => s === 'ready');
    t.clock.advance(1000);
    // Redis is back (and lost its counts): answers come from it again.
    expect((await login(victim.password)).statusCode).toBe(200);
    const errors = await metricValue(t.app, 'basegate_password_throttle_store_errors_total');
    expect((await login('wrong-after')).statusCode).toBe(400);
    expect(await metricValue(t.app, 'basegate_password_throttle_store_errors_total')).toBe(errors);
  });
});
