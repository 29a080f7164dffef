import { io as connect, type Socket } from 'socket.io-client';
import type { TestApp } from '../helpers/index.js';

export const SOCKET_PATH = '/api-gateway/socket.io';
const WAIT_MS = 8000;

/** Listens on a free local port (the test app is built but not listening); returns its URL. */
export async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  return `http://127.0.0.1:${address.port}`;
}

export interface LiveClient {
  socket: Socket;
  /** The first argument of every message received so far, by event name, in arrival order (JSON strings parsed). */
  received: Map<string, unknown[]>;
  messages(event: string): unknown[];
  /** Why the server or transport ended the connection, once it did. */
  disconnectReason: string | null;
  close(): void;
}

/** A socket.io-client connected as the original's clients connect (`?dtable_uuid=`). */
export function client(url: string, baseUuid: string, options: Record<string, unknown> = {}): LiveClient {
  const socket = connect(url, {
    path: SOCKET_PATH,
    query: { dtable_uuid: baseUuid },
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    timeout: WAIT_MS,
    ...options,
  });
  const received = new Map<string, unknown[]>();
  socket.onAny((event: string, ...args: unknown[]) => {
    const list = received.get(event) ?? [];
    const [first] = args;
    // (With connection-state recovery a broadcast also carries its offset as the last argument.)
    list.push(typeof first === 'string' && (event === 'update-dtable' || event === 'new-notification' || event === 'ui-toast') ? JSON.parse(first) : first);
    received.set(event, list);
  });
  const live: LiveClient = { socket, received, messages: (event) => received.get(event) ?? [], disconnectReason: null, close: () => socket.close() };
  socket.on('disconnect', (reason) => {
    live.disconnectReason = reason;
  });
  return live;
}

/** Emits `join-room` and resolves with the server's acknowledgement. */
export function join(c: LiveClient, baseUuid: string, token: string): Promise<{ status: boolean; error_msg?: string }> {
  return c.socket.timeout(WAIT_MS).emitWithAck('join-room', baseUuid, token);
}

/** A connected client that joined the base's room. */
export async function joined(url: string, baseUuid: string, token: string, options: Record<string, unknown> = {}): Promise<LiveClient> {
  const c = client(url, baseUuid, options);
  const ack = await join(c, baseUuid, token);
  if (!ack.status) throw new Error(`join failed: ${ack.error_msg}`);
  return c;
}

/** Polls `check` until it is true; fails after `timeoutMs`. */
export async function waitFor(check: () => boolean, what: string, timeoutMs = WAIT_MS): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Resolves when the socket is disconnected (with the reason). */
export async function disconnected(c: LiveClient, timeoutMs = WAIT_MS): Promise<string> {
  await waitFor(() => c.disconnectReason !== null, 'the disconnect', timeoutMs);
  return c.disconnectReason!;
}

/** A little while for messages that must NOT arrive (there is no event to wait for). */
export const settle = (ms = 300) => new Promise((resolve) => setTimeout(resolve, ms));
