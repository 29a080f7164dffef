import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/index.js';
import { RedisProcess } from '../http/rate-limit.helpers.js';
import { joined, type LiveClient } from '../realtime/live.support.js';
import { ADMIN, appendRow, baseWithWebhook, killHard, serverEnv, startServerProcess, waitUntil, type ServerProcess } from './processes.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

async function redisGauge(server: ServerProcess, client: string): Promise<number | null> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const match = new RegExp(`^basegate_redis_connected\\{client="${client}"\\} (\\d)`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

const changes = (c: LiveClient) => c.messages('update-dtable') as Array<{ row_name?: string }>;

/**
 * Issue 25.1: a server started while Redis is unreachable serves (rate limits counted locally, the live
 * channel to this instance's clients), says so in a metric and the log, stays up past the point where
 * the live channel's Redis client used to end the process (~7 s), and uses Redis once it comes up.
 */
describe.each(DIALECTS)('start while Redis is unreachable (%s)', (dialect) => {
  it('serves without Redis, says so, and uses Redis once it is up', async () => {
    const redis = await RedisProcess.start();
    await redis.kill(); // its port is known, nothing listens there
    cleanup.push(() => redis.kill());
    const { env, drop } = await serverEnv(dialect, { REDIS_URL: redis.url, RATE_LIMIT_BASE_PER_MINUTE: '1000' });
    cleanup.push(drop);
    const startedAt = Date.now();
    const server = await startServerProcess(env);
    cleanup.push(() => killHard(server));

    const base = await baseWithWebhook(server, ADMIN, null);
    const live = await joined(server.url, base.uuid, base.baseToken);
    cleanup.push(async () => live.close());
    await appendRow(server, base, 'without redis');
    await waitUntil(() => changes(live).some((op) => op.row_name === 'without redis'), 'the change on this instance');
    expect(await redisGauge(server, 'realtime')).toBe(0);
    expect(await redisGauge(server, 'shared')).toBe(0);

    // Past the point where the process used to exit (an unhandled MaxRetriesPerRequestError after ~7 s).
    await new Promise((r) => setTimeout(r, Math.max(0, startedAt + 9_000 - Date.now())));
    expect(server.child.exitCode).toBeNull();
    expect((await fetch(`${server.url}/health/live/`)).status).toBe(200);
    const limited = await fetch(`${server.url}/api-gateway/api/v2/dtables/${base.uuid}/rows/?table_name=Table1`, {
      headers: { authorization: `Token ${base.baseToken}` },
    });
    expect(limited.status).toBe(200);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('1000'); // counted on this instance
    expect(server.output()).toMatch(/realtime Redis unreachable/);
    expect(server.output()).toMatch(/rate-limit store unreachable: counting on this instance only/);

    await redis.start();
    for (const client of ['realtime', 'realtime-reader', 'shared', 'tokens-subscribe']) {
      await waitUntil(async () => (await redisGauge(server, client)) === 1, `the ${client} connection to Redis`, 20_000);
    }
    const probe = new Redis(redis.url);
    cleanup.push(async () => probe.disconnect());
    await fetch(`${server.url}/api-gateway/api/v2/dtables/${base.uuid}/rows/?table_name=Table1`, { headers: { authorization: `Token ${base.baseToken}` } });
    expect(await probe.keys('basegate:rl:base:*')).not.toHaveLength(0); // counted in Redis again
    await appendRow(server, base, 'with redis');
    await waitUntil(() => changes(live).some((op) => op.row_name === 'with redis'), 'a change through the Redis adapter');
    expect(await probe.xlen('basegate:realtime')).toBeGreaterThan(0); // the broadcast went through the stream
    expect(server.child.exitCode).toBeNull();
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
  }, 120_000);
});
