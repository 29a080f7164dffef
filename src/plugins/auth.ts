import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { detailError } from '../shared/errors.js';
import type { AccountsService, AccountUser } from '../modules/accounts/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The Account-Token's user on routes with `config.auth` of `account` or `admin`. */
    account: AccountUser | null;
  }
  interface FastifyContextConfig {
    /** Which credential the route requires; checked in onRequest, before the body is validated. */
    auth?: 'account' | 'admin';
    /**
     * On an `auth: 'account'` route naming `:base_uuid`: a Base-Token of that base is accepted instead of an
     * Account-Token, needing this permission (checked by the base-auth plugin; see `currentCaller`).
     */
    baseToken?: 'read' | 'write';
  }
}

export type ParsedAuthorization =
  | { kind: 'token'; token: string }
  | { kind: 'missing' }
  | { kind: 'empty' }
  | { kind: 'spaces' };

/** Parse `Authorization: Token|Bearer <t>` (scheme in any case), as the original's DRF authentication. */
export function parseAuthorization(header: string | undefined): ParsedAuthorization {
  if (!header) return { kind: 'missing' };
  const parts = header.trim().split(/\s+/);
  const scheme = parts[0]?.toLowerCase();
  if (scheme !== 'token' && scheme !== 'bearer') return { kind: 'missing' };
  if (parts.length === 1) return { kind: 'empty' };
  if (parts.length > 2) return { kind: 'spaces' };
  return { kind: 'token', token: parts[1]! };
}

/** The token of an `Authorization` header, or null when absent or malformed. */
export function bearerToken(request: FastifyRequest): string | null {
  const parsed = parseAuthorization(request.headers.authorization);
  return parsed.kind === 'token' ? parsed.token : null;
}

export const authPlugin = fp<{ accounts: AccountsService }>(
  async (app, { accounts }) => {
    app.decorateRequest('account', null);
    // A callback hook, so routes without `config.auth` pass without a promise.
    app.addHook('onRequest', (request, _reply, done) => {
      const mode = request.routeOptions.config.auth;
      if (!mode) return done();
      authenticate(request, mode, accounts).then(() => done(), done);
    });
  },
  { name: 'auth' },
);

async function authenticate(request: FastifyRequest, mode: 'account' | 'admin', accounts: AccountsService): Promise<void> {
  const parsed = parseAuthorization(request.headers.authorization);
  switch (parsed.kind) {
    case 'missing':
      throw detailError(403, 'Authentication credentials were not provided.');
    case 'empty':
      throw detailError(401, 'Invalid token header. No credentials provided.');
    case 'spaces':
      throw detailError(401, 'Invalid token header. Token string should not contain spaces.');
  }
  // The rate limiter may have looked the token up already (requests naming a base).
  const user = request.account ?? (await accounts.authenticate(parsed.token));
  // Not an Account-Token: the base-auth plugin, next, tries it as a Base-Token where the route takes one.
  if (!user && mode === 'account' && request.routeOptions.config.baseToken) return;
  if (!user) throw detailError(401, 'Invalid token');
  if (mode === 'admin' && !user.isStaff) {
    throw detailError(403, 'You do not have permission to perform this action.');
  }
  request.account = user;
}

/** The authenticated account of a route declared with `config.auth`; throws if misused. */
export function currentAccount(request: FastifyRequest): AccountUser {
  if (!request.account) throw new Error('route is missing config.auth');
  return request.account;
}
