import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountsService } from '../modules/accounts/index.js';
import type { BaseTokenVerifier } from '../modules/tokens/index.js';
import type { BaseTokenClaims } from '../modules/access/index.js';
import { bearerToken } from '../shared/authorization.js';
import {
  baseUuidFromParams,
  classify,
  usageHeaders,
  workspaceBaseFromParams,
  type LimitClass,
  type Limits,
  type CheckResult,
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
  async (app, deps) => {
    const { limits, verifier } = deps;
    const classOfRoute = new Map<string, LimitClass | null>();
    const classOf = (request: FastifyRequest): LimitClass | null => {
      const route = request.routeOptions.url;
      if (route === undefined) return classify(request.url); // no route: the raw URL, not memoized
      let cls = classOfRoute.get(route);
      if (cls === undefined) classOfRoute.set(route, (cls = classify(route)));
      return cls;
    };

    // A callback hook: requests with nothing to count pass without a promise. That is every
    // class configured unlimited (only base operations have per-base overrides), and a base
    // operation whose Base-Token was verified before (kept in memory) when its base's limit is known
    // in memory and the counters are in this process's memory (no Redis): the base's count and the
    // token's own budget are then decided here, without a promise.
    app.addHook('onRequest', (request, reply, done) => {
      const cls = classOf(request);
      if (cls === null) return done();
      if (cls !== 'base' && limits.service.defaults[cls] === 0) return done();
      if (cls === 'base') {
        const admitted = baseCallNow(request, reply, limits, verifier);
        if (admitted === true) return done();
        if (admitted === false) return; // refused: the 429 is sent
      }
      limit(request, reply, cls, deps).then(() => {
        if (!reply.sent) done();
      }, done);
    });
  },
  { name: 'rate-limit' },
);

/**
 * `limit` for a base operation, without a promise, when everything it needs is in memory: the
 * verified Base-Token, its base's limit, the counters (no Redis). True when the request may proceed,
 * false when refused (the 429 is sent); undefined when that cannot be told without waiting (an unknown
 * token, overrides being re-read, counters in Redis): then `limit` decides, counting the same way.
 */
function baseCallNow(request: FastifyRequest, reply: FastifyReply, limits: Limits, verifier: BaseTokenVerifier): boolean | undefined {
  const token = bearerToken(request);
  const verified = token === null ? undefined : verifier.verifyCached(token);
  if (!verified?.ok) return undefined;
  const claims = verified.claims;
  const key: RateKey = { kind: 'base', uuid: claims.baseUuid };
  const baseLimit = limits.service.limitFor('base', key);
  if (typeof baseLimit !== 'number') return undefined;
  const budget = budgetOf(claims);
  if (baseLimit !== 0) {
    const counted = limits.service.checkNow('base', key, baseLimit);
    if (!counted) return undefined;
    // Refused by the base's limit: the budget is not spent. Admitted with a budget: its headers answer.
    if (!counted.decision.allowed || budget === 0) return answer(request, reply, 'base', counted);
  }
  if (budget === 0) return true;
  const spent = limits.service.checkBudgetNow(claims.sourceId, budget);
  return spent && answer(request, reply, 'base', spent);
}

async function limit(
  request: FastifyRequest,
  reply: FastifyReply,
  cls: LimitClass,
  deps: { limits: Limits; accounts: AccountsService; verifier: BaseTokenVerifier },
): Promise<void> {
  const { limits } = deps;
  const key = await keyOf(request, cls, deps);
  const result = await limits.service.check(cls, key);
  if (result.kind !== 'unlimited' && !answer(request, reply, cls, result)) return;
  // A scoped API-Token's own budget (issue 33), spent by every Base-Token issued from it.
  const claims = cls === 'base' ? await verifiedClaims(request, deps.verifier) : null;
  const budget = claims ? budgetOf(claims) : 0;
  if (budget !== 0) answer(request, reply, cls, await limits.service.checkBudget(claims!.sourceId, budget));
}

/** Applies one counted decision: headers on base operations, 429 when over. False when refused. */
function answer(request: FastifyRequest, reply: FastifyReply, cls: LimitClass, result: Exclude<CheckResult, { kind: 'unlimited' }>): boolean {
  if (result.kind === 'counted-locally' && result.warn) {
    request.log.warn({ err: result.error, suppressed: result.suppressed }, 'rate-limit store unreachable: counting on this instance only');
  }
  const decision = result.decision;
  if (cls === 'base') reply.headers(usageHeaders(decision));
  if (!decision.allowed) reply.code(429).header('retry-after', String(decision.retryAfter)).send();
  return decision.allowed;
}

async function verifiedClaims(request: FastifyRequest, verifier: BaseTokenVerifier): Promise<BaseTokenClaims | null> {
  const token = bearerToken(request);
  if (token === null) return null;
  const verified = await verifier.verify(token);
  return verified.ok ? verified.claims : null;
}

/** The requests per minute of the budget a Base-Token spends (its API-Token's `rate_limit`, counted by the token's id); 0 = none. */
function budgetOf(claims: BaseTokenClaims): number {
  return claims.source === 'api-token' && claims.ratePerMinute ? claims.ratePerMinute : 0;
}

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
  if (!request.account) return ip;
  // Only a caller with access to the base (or an admin) spends its budget; anyone else counts per IP.
  if (request.account.isStaff) return { kind: 'base', uuid };
  return (await deps.limits.baseKeys.canUse(uuid, request.account.id)) ? { kind: 'base', uuid } : ip;
}
