import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/index.js';
import { ADMIN, appendRow, baseWithWebhook, killHard, serverEnv, startServerProcess, waitUntil } from '../faults/processes.js';
import { RedisProcess } from '../http/rate-limit.helpers.js';
import { client, join } from './live.support.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

/** A TCP front (a load balancer's part) whose backend can be switched; connections to a dead backend end. */
async function front(target: () => number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((downstream) => {
    const upstream = net.connect(target(), '127.0.0.1');
    for (const s of [downstream, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        sockets.delete(s);
        downstream.destroy();
        upstream.destroy();
      });
    }
    downstream.pipe(upstream);
    upstream.pipe(downstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Issue 25.3: a client of an instance killed with SIGKILL reconnects 6 s later to the other instance
 * and resumes where it left off (`recovered`), missing none of the changes made meanwhile. The joined
 * socket's session is kept in Redis while it is connected, not only written on a disconnect the dead
 * process never makes.
 */
describe.each(DIALECTS.filter((d) => d === 'postgres'))('kill -9 of one of two instances with live clients (%s)', (dialect) => {
  it('the clients resume on the other instance after 6 s without missing a change', async () => {
    let redisUrl = process.env.TEST_REDIS_URL;
    if (!redisUrl) {
      const own = await RedisProcess.start();
      cleanup.push(() => own.kill());
      redisUrl = own.url;
    }
    const { env, drop } = await serverEnv(dialect, { REDIS_URL: redisUrl });
    cleanup.push(drop);
    const first = await startServerProcess(env);
    cleanup.push(() => killHard(first));
    const second = await startServerProcess(env);
    cleanup.push(() => killHard(second));
    const portOf = (url: string) => Number(new URL(url).port);
    let backend = portOf(first.url);
    const balancer = await front(() => backend);
    cleanup.push(() => balancer.close());
    const base = await baseWithWebhook(first, ADMIN, null);

    const c = client(balancer.url, base.uuid, { reconnection: true, reconnectionDelay: 6000, reconnectionDelayMax: 6000, randomizationFactor: 0 });
    cleanup.push(async () => c.close());
    const connects: boolean[] = [];
    c.socket.on('connect', () => {
      connects.push(c.socket.recovered);
      if (!c.socket.recovered) void join(c, base.uuid, base.baseToken).catch(() => undefined);
    });
    const names = () => (c.messages('update-dtable') as Array<{ row_name?: string }>).map((op) => op.row_name);
    await waitUntil(() => connects.length === 1, 'the client to connect');
    await new Promise((r) => setTimeout(r, 500)); // (joined)
    await appendRow(second, base, 'r0'); // made on the other instance: it comes through Redis
    await waitUntil(() => names().includes('r0'), 'the first change');

    await killHard(first);
    backend = portOf(second.url);
    const expected = ['r0'];
    for (let i = 1; i <= 10; i++) {
      await appendRow(second, base, `r${i}`);
      expected.push(`r${i}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    await waitUntil(() => connects.length === 2, 'the client to reconnect', 30_000);
    await waitUntil(() => names().length >= expected.length, 'the missed changes', 20_000);
    expect(connects).toEqual([false, true]); // resumed, not a fresh connection
    expect(names()).toEqual(expected);
  }, 120_000);
});
