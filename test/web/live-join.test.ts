import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Server } from 'socket.io';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

const WEB = path.resolve(import.meta.dirname, '../../web/src');

type Access = { access_token: string; dtable_uuid: string };
type Status = 'connecting' | 'live' | 'offline';
let openLive: (access: Access, handlers: { onStatus?(s: Status): void }, renew: () => Promise<Access>, options?: { joinTimeoutMs?: number; retryMs?: number }) => () => void;

/**
 * The live channel's server side as the console meets it: socket.io at /api-gateway/socket.io, `join-room`
 * answered as `answer` says ('drop': the connection is cut instead, as a network failure would).
 */
async function liveServer(answer: (join: number, token: string) => 'ignore' | 'drop' | { status: boolean }) {
  const http: HttpServer = createServer();
  const io = new Server(http, { path: '/api-gateway/socket.io' });
  const joins: string[] = [];
  io.on('connection', (socket) => {
    socket.on('join-room', (_uuid: string, token: string, ack: (a: object) => void) => {
      joins.push(token);
      const a = answer(joins.length, token);
      if (a === 'ignore') return;
      if (a === 'drop') return void socket.conn.close();
      ack(a);
      if (!a.status) socket.disconnect(true);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { io, joins, origin: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => io.close(() => resolve())) };
}

describe('the console live channel joins again when a join goes unanswered (web/src/live.ts)', () => {
  let server: Awaited<ReturnType<typeof liveServer>> | undefined;
  let close: (() => void) | undefined;

  beforeAll(async () => {
    ({ openLive } = (await import(/* @vite-ignore */ path.join(WEB, 'live.ts'))) as { openLive: typeof openLive });
  });
  afterEach(async () => {
    close?.();
    await server?.close();
    vi.unstubAllGlobals();
  });
  afterAll(() => vi.unstubAllGlobals());

  const open = (origin: string, renew: () => Promise<Access>) => {
    vi.stubGlobal('window', { location: { origin } });
    const statuses: Status[] = [];
    close = openLive({ access_token: 'first', dtable_uuid: 'b0e5a8a4-0000-4000-8000-000000000001' }, { onStatus: (s) => statuses.push(s) }, renew, { joinTimeoutMs: 300, retryMs: 100 });
    return statuses;
  };

  it('an unanswered join is given up after its timeout; the socket connects again with a renewed token and goes live', async () => {
    server = await liveServer((join) => (join === 1 ? 'ignore' : { status: true }));
    let renewed = 0;
    const statuses = open(server.origin, async () => ({ access_token: `renewed-${++renewed}`, dtable_uuid: 'b0e5a8a4-0000-4000-8000-000000000001' }));
    await vi.waitFor(() => expect(statuses.at(-1)).toBe('live'), { timeout: 5000, interval: 20 });
    expect(server.joins).toEqual(['first', 'renewed-1']);
    expect(statuses).toEqual(['connecting', 'offline', 'live']);
  });

  it('a join answered in time goes live at once and is not sent again', async () => {
    server = await liveServer(() => ({ status: true }));
    const statuses = open(server.origin, async () => {
      throw new Error('not renewed');
    });
    await vi.waitFor(() => expect(statuses.at(-1)).toBe('live'), { timeout: 5000, interval: 20 });
    // Longer than the join timeout: nothing gives the answered join up.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(server.joins).toEqual(['first']);
    expect(statuses).toEqual(['connecting', 'live']);
  });

  it('a join cut by a lost connection is left to socket.io: it reconnects by itself and joins again, no token renewed', async () => {
    server = await liveServer((join) => (join === 1 ? 'drop' : { status: true }));
    let renewed = 0;
    const statuses = open(server.origin, async () => ({ access_token: `renewed-${++renewed}`, dtable_uuid: 'b0e5a8a4-0000-4000-8000-000000000001' }));
    await vi.waitFor(() => expect(statuses.at(-1)).toBe('live'), { timeout: 8000, interval: 20 });
    expect(server.joins).toEqual(['first', 'first']);
    expect(renewed).toBe(0);
  });

  it('a refused join (the server disconnects) is retried with a renewed token', async () => {
    server = await liveServer((join) => ({ status: join > 1 }));
    const statuses = open(server.origin, async () => ({ access_token: 'fresh', dtable_uuid: 'b0e5a8a4-0000-4000-8000-000000000001' }));
    await vi.waitFor(() => expect(statuses.at(-1)).toBe('live'), { timeout: 5000, interval: 20 });
    expect(server.joins).toEqual(['first', 'fresh']);
  });
});
