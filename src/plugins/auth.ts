import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import { parseAuthorization } from '../shared/authorization.js';
import { detailError } from '../shared/errors.js';
import { mayAdminister } from '../modules/access/index.js';
import type { AccountsService } from '../modules/accounts/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Which credential the route requires; checked in onRequest, before the body is validated. */
    auth?: 'account' | 'admin';
    /**
     * On an `auth: 'account'` route naming `:base_uuid`: a Base-Token of that base is accepted instead of an
     * Account-Token, needing this permission (checked by the base-auth plugin; see `currentCaller`).
     */
    baseToken?: 'read' | 'write';
    /**
     * The route serves a user whom an admin forced to two-factor sign-in before they enrolled (the
     * enrolment itself, the profile, logout); every other Account-Token route refuses them with 403.
     */
    beforeTwoFactor?: boolean;
  }
}

/**
 * `force_2fa` takes effect: the original's web UI sends a forced user who has not enrolled to the
 * enrolment page on every page; here every Account-Token route but enrolment answers this.
 */
const TWO_FACTOR_SETUP_REQUIRED = () =>
  detailError(403, 'Two-factor authentication is required for this account: set it up at /api/v2.1/user/two-factor-auth/ first.');

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
  if (user.twoFactorSetupRequired && !request.routeOptions.config.beforeTwoFactor) throw TWO_FACTOR_SETUP_REQUIRED();
  if (mode === 'admin' && !mayAdminister(user)) {
    throw detailError(403, 'You do not have permission to perform this action.');
  }
  request.account = user;
}
