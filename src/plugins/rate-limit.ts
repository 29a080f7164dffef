import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import {
  baseUuidFromBaseToken,
  baseUuidFromParams,
  classify,
  usageHeaders,
  workspaceBaseFromParams,
  type LimitClass,
  type Limits,
  type RateKey,
} from '../modules/limits/index.js';

/**
 * The rate limiter, as the first onRequest hook: registered before the auth plugins, so a client
 * over its budget is refused before any token check or database read, and the usage headers are
 * already on the reply when an auth or validation error answers. The class comes from the route
 * pattern (so percent-encoded spellings of a path cannot switch class), the raw URL for unknown
 * routes. Over the limit: 429, empty body, `Retry-After` in seconds.
 */
export const rateLimitPlugin = fp<{ limits: Limits }>(
  async (app, { limits }) => {
    app.addHook('onRequest', async (request, reply) => {
      const cls = classify(request.routeOptions.url ?? request.url);
      if (cls === null) return;
      const key = await keyOf(request, cls, limits);
      const result = await limits.service.check(cls, key);
      if (result.kind === 'failed-open') {
        if (result.warn) {
          request.log.warn(
            { err: result.error, suppressed: result.suppressed },
            'rate-limit store unreachable: allowing requests uncounted',
          );
        }
        return;
      }
      if (result.kind === 'unlimited') return;
      const decision = result.decision;
      if (cls === 'base') reply.headers(usageHeaders(decision));
      if (!decision.allowed) {
        reply.code(429).header('retry-after', String(decision.retryAfter)).send();
        return reply;
      }
    });
  },
  { name: 'rate-limit' },
);

/** The base the request addresses (path uuid, Base-Token, or workspace + base name), else the client IP. */
async function keyOf(request: FastifyRequest, cls: LimitClass, limits: Limits): Promise<RateKey> {
  let uuid = baseUuidFromParams(request.params);
  if (uuid === null && cls === 'base') uuid = baseUuidFromBaseToken(request.headers.authorization);
  if (uuid === null && cls !== 'auth-token') {
    const ref = workspaceBaseFromParams(request.params);
    if (ref) uuid = await limits.baseKeys.uuidOf(ref);
  }
  return uuid === null ? { kind: 'ip', ip: request.ip } : { kind: 'base', uuid };
}
