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

  const UUID = 'b0e5a8a4-0000-4000-8000-000000000001';
  /** The channel opened against a server answering joins as `answer`; the n-th renewal gives the token `renewed-n`. */
  const open = async (answer: Parameters<typeof liveServer>[0]) => {
    server = await liveServer(answer);
    vi.stubGlobal('window', { location: { origin: server.origin } });
    const statuses: Status[] = [];
    let renewed = 0;
    const renew = async () => ({ access_token: `renewed-${++renewed}`, dtable_uuid: UUID });
    close = openLive({ access_token: 'first', dtable_uuid: UUID }, { onStatus: (s) => statuses.push(s) }, renew, { joinTimeoutMs: 300, retryMs: 100 });
    const live = () => vi.waitFor(() => expect(statuses.at(-1)).toBe('live'), { timeout: 8000, interval: 20 });
    return { statuses, joins: server.joins, renewals: () => renewed, live };
  };

  it('an unanswered join is given up after its timeout; the socket connects again with a renewed token and goes live', async () => {
    const channel = await open((join) => (join === 1 ? 'ignore' : { status: true }));
    await channel.live();
    expect(channel.joins).toEqual(['first', 'renewed-1']);
    expect(channel.statuses).toEqual(['connecting', 'offline', 'live']);
  });

  it('a join answered in time goes live at once and is not sent again', async () => {
    const channel = await open(() => ({ status: true }));
    await channel.live();
    // Longer than the join timeout: nothing gives the answered join up.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(channel.joins).toEqual(['first']);
    expect(channel.statuses).toEqual(['connecting', 'live']);
    expect(channel.renewals()).toBe(0);
  });

  it('a join cut by a lost connection is left to socket.io: it reconnects by itself and joins again, no token renewed', async () => {
    const channel = await open((join) => (join === 1 ? 'drop' : { status: true }));
    await channel.live();
    expect(channel.joins).toEqual(['first', 'first']);
    expect(channel.renewals()).toBe(0);
  });

  it('a refused join (the server disconnects) is retried with a renewed token', async () => {
    const channel = await open((join) => ({ status: join > 1 }));
    await channel.live();
    expect(channel.joins).toEqual(['first', 'renewed-1']);
  });
});
