import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../config/index.js';

/** Node checks request timeouts on this interval (default 30 s, far too coarse for a 30 s limit). */
const CHECK_INTERVAL_MS = 1_000;

/**
 * Server timeouts so a slow client cannot hold a connection: the whole request (headers and body)
 * must arrive within REQUEST_TIMEOUT_MS, the headers within at most 60 s, else Node answers 408 and
 * closes the connection. Time spent by the handler is not limited here (the database has its own bounds).
 */
export function connectionLimits(config: Pick<Config, 'requestTimeoutMs'>): Partial<FastifyServerOptions> {
  const headersTimeout = Math.min(60_000, config.requestTimeoutMs);
  return {
    requestTimeout: config.requestTimeoutMs,
    http: { headersTimeout, connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, headersTimeout) },
  } as Partial<FastifyServerOptions>;
}
