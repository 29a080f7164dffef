import { createRequire } from 'node:module';
import type { Redis, RedisOptions } from 'ioredis';
import { systemClock, type Clock } from '../shared/clock.js';

export type { Redis } from 'ioredis';

export interface RedisConnectionOptions {
  /** Shown in `CLIENT LIST` and in warnings, e.g. `rate-limit`. */
  name?: string;
  /** Called with connection errors, at most once per `errorLogIntervalMs` (default 30 s). */
  onError?: (error: Error, suppressed: number) => void;
  errorLogIntervalMs?: number;
  clock?: Clock;
  /** A command that gets no answer within this many ms fails (default 500), so a hung server fails fast too. */
  commandTimeoutMs?: number;
  /** Upper bound of the reconnect back-off in ms (default 1000), so service resumes quickly. */
  maxReconnectDelayMs?: number;
  /**
   * For a reader that blocks (XREAD BLOCK, SUBSCRIBE): its commands wait for Redis to come back
   * instead of failing, and have no command timeout. Default false: commands fail at once.
   */
  waitWhileAway?: boolean;
}

/** Every client made here, by name, and whether it is connected now (the `basegate_redis_connected` metric). */
const clients = new Map<Redis, string>();

/** The Redis connections of this process and their state (`ready` = connected and usable). */
export function redisConnections(): Array<{ name: string; ready: boolean }> {
  return [...clients].map(([client, name]) => ({ name, ready: client.status === 'ready' }));
}

/**
 * A Redis connection that never blocks or crashes the process when Redis is away: it connects in
 * the background (startup does not wait), commands fail at once while it is disconnected
 * (`enableOfflineQueue: false`) or after `commandTimeoutMs` when it hangs, and it keeps
 * reconnecting forever with a short back-off. Callers decide what a failed command means
 * (the rate limiter allows the request). Each caller that needs SUBSCRIBE opens its own.
 */
export function createRedis(url: string, options: RedisConnectionOptions = {}): Redis {
  const maxDelay = options.maxReconnectDelayMs ?? 1000;
  const waits = options.waitWhileAway ?? false;
  const redisOptions: RedisOptions = {
    // Connects in the background at once (startup does not wait); failures go to 'error' below.
    lazyConnect: false,
    enableOfflineQueue: waits,
    maxRetriesPerRequest: waits ? null : 1,
    connectTimeout: 2000,
    ...(waits ? {} : { commandTimeout: options.commandTimeoutMs ?? 500 }),
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 10), maxDelay),
    connectionName: options.name ? `basegate:${options.name}` : 'basegate',
  };
  const client = new (loadIoredis().Redis)(url, redisOptions);
  markEveryCommandHandled(client);
  const interval = options.errorLogIntervalMs ?? 30_000;
  const clock = options.clock ?? systemClock;
  let lastLogged = -Infinity;
  let suppressed = 0;
  // Without an 'error' listener ioredis would crash the process on the first refused connection.
  client.on('error', (error: Error) => {
    const now = clock.now();
    if (now - lastLogged < interval) {
      suppressed += 1;
      return;
    }
    lastLogged = now;
    options.onError?.(error, suppressed);
    suppressed = 0;
  });
  const name = options.name ?? 'default';
  clients.set(client, name);
  client.on('end', () => clients.delete(client));
  return client;
}

/**
 * Some commands are sent without anyone awaiting them: ioredis re-subscribes on its own after a
 * reconnect, and the socket.io adapter subscribes without a catch. When such a command fails
 * (Redis killed, or `disconnect()` flushing the queue with "Connection is closed."), its rejection
 * would be unhandled and could end the process. Every command's promise gets a no-op handler here;
 * a caller that awaits it still sees the error.
 */
function markEveryCommandHandled(client: Redis): void {
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    const reply = send(...args);
    if (reply instanceof Promise) reply.catch(() => undefined);
    return reply;
  }) as Redis['sendCommand'];
}

/** ioredis is loaded on first use: a server without REDIS_URL never pays its memory (about 9 MB). */
export function loadIoredis(): typeof import('ioredis') {
  return createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
}
