import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../helpers/index.js';
import { client, join, waitFor, type LiveClient } from '../realtime/live.support.js';
import { ADMIN, appendRow, baseWithWebhook, freePort, killHard, serverEnv, startServerProcess, waitUntil } from './processes.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => undefined);
});


/** One request through `agent`; resolves with the status, or the error code when the connection failed. */
function request(agent: http.Agent, url: string, method: string, headers: Record<string, string> = {}, body?: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request(url, { agent, method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
      res.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end(body);
  });
}

/**
 * Issue 25.4: writes sent on idle keep-alive connections just as SIGTERM arrives are read and
 * answered (their real answer, or 503 "shutting down"), never reset; the process exits 0. (Idle
 * connections used to be closed at once, resetting requests already sent on them.)
 */
describe.each(DIALECTS)('SIGTERM with 50 writes in flight on keep-alive connections (%s)', (dialect) => {
  it('answers all 50 and exits 0', async () => {
    const { env, drop } = await serverEnv(dialect);
    cleanup.push(drop);
    const server = await startServerProcess(env);
    cleanup.push(() => killHard(server));
    const base = await baseWithWebhook(server, ADMIN, null);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
    cleanup.push(async () => agent.destroy());
    const url = `${server.url}/api-gateway/api/v2/dtables/${base.uuid}/rows/`;
    const headers = { authorization: `Token ${base.baseToken}`, 'content-type': 'application/json' };
    const write = (name: string) => request(agent, url, 'POST', headers, JSON.stringify({ table_name: 'Table1', rows: [{ Name: name }] }));
    // 50 open keep-alive connections, idle once answered.
    expect(await Promise.all(Array.from({ length: 50 }, (_, i) => write(`warm-up ${i}`)))).toEqual(Array(50).fill(200));
    await waitUntil(() => Object.values(agent.freeSockets).flat().length === 50, 'the 50 connections to be idle', 10_000);

    // Half sent just before the signal, half on the idle connections right after the stop began
    // (before the client can know they are closing: the race a client meets on every deploy).
    const writes = Array.from({ length: 25 }, (_, i) => write(`before the stop ${i}`));
    server.child.kill('SIGTERM');
    await waitUntil(() => /shutting down/.test(server.output()), 'the stop to begin', 10_000);
    writes.push(...Array.from({ length: 25 }, (_, i) => write(`at the stop ${i}`)));
    const answers = await Promise.all(writes);
    expect(await server.exited).toBe(0);
    // Each one answered over HTTP: done, or refused as the stop had begun; none reset.
    expect(answers.filter((a) => a !== 200 && a !== 503)).toEqual([]);
    console.info(`[${dialect}] 50 writes at SIGTERM: ${answers.filter((a) => a === 200).length} done, ${answers.filter((a) => a === 503).length} refused with 503`);
    expect(server.output()).not.toMatch(/shutdown forced|error during shutdown/);
  }, 120_000);
});

/**
 * Issue 25.2: a stop closes the live clients' transports without socket.io's final disconnect, so
 * they reconnect by themselves — here to the same instance once it is back — and get later changes.
 */
describe.each(DIALECTS)('SIGTERM with live clients connected (%s)', (dialect) => {
  it('the clients reconnect to the restarted instance and receive later changes', async () => {
    const port = await freePort();
    const { env, drop } = await serverEnv(dialect, { PORT: String(port) });
    cleanup.push(drop);
    const first = await startServerProcess(env);
    cleanup.push(() => killHard(first));
    const base = await baseWithWebhook(first, ADMIN, null);
    const clients: LiveClient[] = [];
    const joins: number[] = [];
    for (let i = 0; i < 3; i++) {
      const c = client(first.url, base.uuid, { reconnection: true, reconnectionDelay: 100, reconnectionDelayMax: 500 });
      joins.push(0);
      // As the original's clients do: join the base's room on every (re)connect.
      c.socket.on('connect', () => void join(c, base.uuid, base.baseToken).then((ack) => ack.status && joins[i]!++, () => undefined));
      clients.push(c);
      cleanup.push(async () => c.close());
    }
    await waitFor(() => joins.every((n) => n === 1), 'the clients to join');
    await appendRow(first, base, 'before the stop');
    const names = (c: LiveClient) => (c.messages('update-dtable') as Array<{ row_name?: string }>).map((op) => op.row_name);
    await waitFor(() => clients.every((c) => names(c).includes('before the stop')), 'the first change');

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    await waitFor(() => clients.every((c) => c.disconnectReason !== null), 'the clients to see the stop');
    // Not "io server disconnect" (final: the client would not reconnect).
    expect(clients.map((c) => c.disconnectReason)).toEqual(Array(3).fill('transport close'));

    const second = await startServerProcess(env);
    cleanup.push(() => killHard(second));
    await waitUntil(() => joins.every((n) => n === 2), 'the clients to reconnect and join again', 30_000);
    await appendRow(second, base, 'after the restart');
    await waitFor(() => clients.every((c) => names(c).includes('after the restart')), 'the change after the restart');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 120_000);
});
