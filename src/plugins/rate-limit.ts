import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type { AccountsService } from '../modules/accounts/index.js';
import type { BaseTokenVerifier } from '../modules/tokens/index.js';
import { bearerToken } from './auth.js';
import {
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
export const rateLimitPlugin = fp<{ limits: Limits; accounts: AccountsService; verifier: BaseTokenVerifier }>(
  async (app, { limits, accounts, verifier }) => {
    app.addHook('onRequest', async (request, reply) => {
      const cls = classify(request.routeOptions.url ?? request.url);
      if (cls === null) return;
      // Unlimited by configuration, and only base operations have per-base overrides: nothing to count.
      if (cls !== 'base' && limits.service.defaults[cls] === 0) return;
      const key = await keyOf(request, cls, { limits, accounts, verifier });
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

/**
 * The base the request addresses (path uuid, Base-Token, or workspace + base name), else the client IP.
 * A base's budget is spent only by requests with a valid credential (a verified Base-Token, or an
 * Account-Token of an active user): anyone could name a base in a path, and must not be able to
 * exhaust its budget without logging in. Anonymous or badly authenticated requests count per IP.
 */
async function keyOf(
  request: FastifyRequest,
  cls: LimitClass,
  deps: { limits: Limits; accounts: AccountsService; verifier: BaseTokenVerifier },
): Promise<RateKey> {
  const ip: RateKey = { kind: 'ip', ip: request.ip };
  if (cls === 'auth-token') return ip;
  const token = bearerToken(request);
  if (token === null) return ip;
  if (cls === 'base') {
    const verified = await deps.verifier.verify(token);
    return verified.ok ? { kind: 'base', uuid: verified.claims.baseUuid } : ip;
  }
  let uuid = baseUuidFromParams(request.params);
  if (uuid === null) {
    const ref = workspaceBaseFromParams(request.params);
    if (ref) uuid = await deps.limits.baseKeys.uuidOf(ref);
  }
  if (uuid === null) return ip;
  // The auth hook reuses this lookup instead of repeating it.
  request.account = await deps.accounts.authenticate(token);
  return request.account ? { kind: 'base', uuid } : ip;
}
