import { afterEach, describe, expect, it } from 'vitest';
import { ADMIN, baseWithWebhook, killHard, serverEnv, startServerProcess, waitUntil } from '../faults/processes.js';
import { client, joined, type LiveClient } from './live.support.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});

/** Sequential `GET /ping/` answer times in ms, until `until()`. */
async function pings(url: string, until: () => boolean): Promise<number[]> {
  const times: number[] = [];
  while (!until()) {
    const started = performance.now();
    const res = await fetch(`${url}/ping/`);
    await res.text();
    times.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 20));
  }
  return times;
}

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;

/**
 * Issue 24.6: a live client that stops reading while large changes are broadcast is dropped as soon
 * as its queue passes REALTIME_MAX_BUFFERED_BYTES (not left to grow the server's memory), and the
 * server keeps answering others: `/ping/` from a second client during the attack is compared with the
 * same measurement without it, in the same run. A socket's `join-room` calls are rate-limited.
 */
describe('a live client that stops reading', () => {
  it('is dropped at the byte bound while others are served', async () => {
    const { env, drop } = await serverEnv('sqlite', { REALTIME_MAX_BUFFERED_BYTES: String(4 * 2 ** 20), REALTIME_MAX_OPERATION_BYTES: String(8 * 2 ** 20) });
    cleanup.push(drop);
    const server = await startServerProcess(env);
    cleanup.push(() => killHard(server));
    const base = await baseWithWebhook(server, ADMIN, null);
    const reader = await joined(server.url, base.uuid, base.baseToken);
    cleanup.push(async () => reader.close());
    const WRITES = 20; // 5 rows of 200 KB each: 1 MB a change, 20 MB in all
    let written = 0;
    const write = () =>
      fetch(`${server.url}/api-gateway/api/v2/dtables/${base.uuid}/rows/`, {
        method: 'POST',
        headers: { authorization: `Token ${base.baseToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ table_name: 'Table1', rows: Array.from({ length: 5 }, (_, r) => ({ Name: `${written++}-${r} ${'x'.repeat(200_000)}` })) }),
      }).then((res) => expect(res.status).toBe(200));
    /** `/ping/` answer times while the writes are made and the reading client received them all. */
    const pingsDuringWrites = async () => {
      let done = false;
      const measured = pings(server.url, () => done);
      const before = reader.messages('update-dtable').length;
      for (let i = 0; i < WRITES; i++) await write();
      await waitUntil(() => reader.messages('update-dtable').length >= before + WRITES, 'the reading client to get every change', 60_000);
      done = true;
      return measured;
    };
    const quiet = await pingsDuringWrites();

    const stalled = await joined(server.url, base.uuid, base.baseToken);
    cleanup.push(async () => stalled.close());
    // The stalled client's TCP socket stops reading: what the server sends it piles up.
    const engine = stalled.socket.io.engine as unknown as { transport: { ws: { _socket: { pause(): void } } } };
    engine.transport.ws._socket.pause();
    const attacked = await pingsDuringWrites();
    const max = (list: number[]) => Math.max(...list);
    console.info(
      `/ping/ during the writes without a stalled client: median ${median(quiet).toFixed(0)} ms, max ${max(quiet).toFixed(0)} ms (${quiet.length}); ` +
        `with one: median ${median(attacked).toFixed(0)} ms, max ${max(attacked).toFixed(0)} ms (${attacked.length})`,
    );
    // No stall of seconds beyond what the same writes cost without the attack.
    expect(max(attacked)).toBeLessThan(2 * max(quiet) + 1000);
    expect(server.output()).toMatch(/"bufferedBytes":\d+[^\n]*dropping a live client that stopped reading/);
    expect(reader.disconnectReason).toBeNull();
  }, 120_000);

  it('refuses join-room calls past the per-minute budget and drops the socket', async () => {
    const { env, drop } = await serverEnv('sqlite', { REALTIME_JOINS_PER_MINUTE: '20' });
    cleanup.push(drop);
    const server = await startServerProcess(env);
    cleanup.push(() => killHard(server));
    const base = await baseWithWebhook(server, ADMIN, null);
    const c: LiveClient = client(server.url, base.uuid);
    cleanup.push(async () => c.close());
    const joinOnce = () => c.socket.timeout(8000).emitWithAck('join-room', base.uuid, base.baseToken) as Promise<{ status: boolean; error_msg?: string }>;
    for (let i = 0; i < 20; i++) expect(await joinOnce()).toEqual({ status: true });
    expect(await joinOnce()).toEqual({ status: false, error_msg: 'Too many requests.' });
    await waitUntil(() => c.disconnectReason !== null, 'the socket to be dropped', 10_000);
    expect(c.messages('error')).toContainEqual({ error_msg: 'Too many requests.' });
  }, 60_000);
});
