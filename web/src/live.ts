/**
 * The real-time channel (socket.io at /api-gateway/socket.io, docs/realtime.md). socket.io-client is
 * imported on first use, so it stays out of the first-load JavaScript.
 */
import type { BaseAccess } from './grid/base';

export type LiveStatus = 'connecting' | 'live' | 'offline';

/** One `update-dtable` message: a dtable-store operation plus op_user/op_time. */
export interface LiveOperation {
  op_type: string;
  table_id?: string;
  other_table_id?: string;
  table1_id?: string;
  table2_id?: string;
  row_id?: string;
  row_ids?: string[];
  [key: string]: unknown;
}

export interface LiveHandlers {
  onStatus?(status: LiveStatus): void;
  onUpdate?(op: LiveOperation): void;
  onNotification?(notice: Record<string, unknown>): void;
  /** Reconnected without recovering the missed messages: reload what is shown. */
  onResync?(): void;
}

const RETRY_MS = 3000;
const RETRY_MAX_MS = 60_000;
/** A join the server has not answered in this time is given up: the socket reconnects and joins again. */
const JOIN_TIMEOUT_MS = 15_000;

function parse<T>(data: unknown): T | null {
  try {
    return (typeof data === 'string' ? JSON.parse(data) : data) as T;
  } catch {
    return null;
  }
}

/**
 * Joins the base's room (and, with a user's Base-Token, the user's room) and calls the handlers.
 * A server-side disconnect (expired or revoked token), or a join left unanswered for `joinTimeoutMs`,
 * retries after `retryMs` (doubling up to a minute) with a fresh token from `renew`.
 * Returns the function that closes the connection.
 */
export function openLive(access: BaseAccess, handlers: LiveHandlers, renew: () => Promise<BaseAccess>, { joinTimeoutMs = JOIN_TIMEOUT_MS, retryMs = RETRY_MS } = {}): () => void {
  let closed = false;
  let close = () => {
    closed = true;
  };
  let current = access;
  handlers.onStatus?.('connecting');
  void import('socket.io-client').then(({ io }) => {
    if (closed) return;
    const socket = io(window.location.origin, {
      path: '/api-gateway/socket.io',
      query: { dtable_uuid: access.dtable_uuid },
      transports: ['websocket', 'polling'],
    });
    let joined = false;
    let failures = 0;
    let retry: ReturnType<typeof setTimeout> | undefined;
    close = () => {
      closed = true;
      clearTimeout(retry);
      socket.close();
    };
    /** Connects again after a backoff, with a fresh token from `renew`. */
    const retryLater = () => {
      failures += 1;
      clearTimeout(retry);
      retry = setTimeout(async () => {
        try {
          current = await renew();
        } catch {
          // keep the old token: the next refusal retries again
        }
        if (!closed) socket.connect();
      }, Math.min(retryMs * 2 ** (failures - 1), RETRY_MAX_MS));
    };
    socket.on('connect', () => {
      if (socket.recovered) {
        handlers.onStatus?.('live');
        return;
      }
      socket.timeout(joinTimeoutMs).emit('join-room', current.dtable_uuid, current.access_token, (timedOut: Error | null, ack: { status?: boolean } | undefined) => {
        if (closed) return;
        if (timedOut) {
          // Unanswered on a socket still connected (a server too busy, a lost answer): without this the
          // channel stayed "connecting" for good. The client's own disconnect is not retried by the handler
          // below. (A socket that lost its connection meanwhile errs here too: socket.io reconnects it by
          // itself, recovering its session, and it joins again on connect.)
          if (socket.connected) {
            socket.disconnect();
            retryLater();
          }
          return;
        }
        if (!ack?.status) return; // the server disconnects; the retry below renews the token
        failures = 0;
        handlers.onStatus?.('live');
        if (joined) handlers.onResync?.();
        joined = true;
      });
    });
    socket.on('update-dtable', (data: unknown) => {
      const op = parse<LiveOperation>(data);
      if (op && typeof op.op_type === 'string') handlers.onUpdate?.(op);
    });
    socket.on('new-notification', (data: unknown) => {
      const notice = parse<Record<string, unknown>>(data);
      if (notice) handlers.onNotification?.(notice);
    });
    socket.on('disconnect', (reason) => {
      handlers.onStatus?.('offline');
      // socket.io reconnects by itself after network trouble, not after the server ended the socket.
      if (reason !== 'io server disconnect' || closed) return;
      retryLater();
    });
  });
  return () => close();
}
