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
  const redisOptions: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2000,
    commandTimeout: options.commandTimeoutMs ?? 500,
    retryStrategy: (attempt) => Math.min(50 * 2 ** Math.min(attempt, 10), maxDelay),
    connectionName: options.name ? `basegate:${options.name}` : 'basegate',
  };
  const client = new (loadIoredis().Redis)(url, redisOptions);
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
  // Connect in the background; failures are reported through 'error' and retried by retryStrategy.
  client.connect().catch(() => undefined);
  return client;
}

/** ioredis is loaded on first use: a server without REDIS_URL never pays its memory (about 9 MB). */
export function loadIoredis(): typeof import('ioredis') {
  return createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
}
