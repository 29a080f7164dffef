import fp from 'fastify-plugin';
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

/**
 * A response sent before the request body was read (a 413 on a declared oversized body, a route
 * that ignores a GET's body, an early 401) closes the connection: otherwise Node keeps it and
 * waits to discard the rest of the body, which a client that never sends it wedges until the
 * request timeout, and one that does send it makes the server read megabytes for nothing.
 */
export const unreadBodyPlugin = fp(
  async (app) => {
    app.addHook('onSend', (request, reply, payload, done) => {
      if (!request.raw.complete) reply.header('connection', 'close');
      done(null, payload);
    });
  },
  { name: 'unread-body' },
);
