import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type { PasswordThrottle } from '../modules/limits/password-throttle.js';

const LOGIN = '/api2/auth-token/';
const LINK = '/api/v2.1/external-link-tokens/:external_link_token/access-token/';
const PASSWORD_CHANGE = '/api/v2.1/user/password/';

/** The keys a password attempt counts against: the client IP and the account or link; null for other routes. */
function attemptKeys(request: FastifyRequest): { keys: string[]; subject: string } | null {
  const route = request.routeOptions.url;
  // Only attempts that carry a password count: a request without one guesses nothing.
  if (route === LOGIN) {
    const body = request.body as { username?: unknown; password?: unknown } | undefined;
    const username = body?.username;
    if (typeof username !== 'string' || typeof body?.password !== 'string' || body.password === '') return null;
    const subject = `account:${username.trim().toLowerCase()}`;
    return { keys: [`login-ip:${request.ip}`, subject], subject };
  }
  if (route === PASSWORD_CHANGE && request.method === 'PUT') {
    // The caller is logged in (auth ran in onRequest); a stolen Account-Token must not guess the password.
    const body = request.body as { old_password?: unknown } | undefined;
    if (!request.account || typeof body?.old_password !== 'string' || body.old_password === '') return null;
    const subject = `account-id:${request.account.id}`;
    return { keys: [`login-ip:${request.ip}`, subject], subject };
  }
  if (route === LINK) {
    const header = request.headers['x-link-password'];
    const query = (request.query as { password?: unknown } | undefined)?.password;
    if (!(typeof header === 'string' && header !== '') && !(typeof query === 'string' && query !== '')) return null;
    const token = (request.params as { external_link_token?: unknown }).external_link_token;
    const subject = `link:${String(token)}`;
    return { keys: [`link-ip:${request.ip}`, subject], subject };
  }
  return null;
}

/** A wrong password: 400 from login and the password change, 403 from the link exchange (password missing or wrong). */
function isFailure(route: string | undefined, status: number): boolean {
  return route === LOGIN || route === PASSWORD_CHANGE ? status === 400 || status === 401 : status === 403;
}

/**
 * Brute-force protection of login and external-link passwords, on every edition: a blocked key is
 * answered 429 with Retry-After before the password is checked; the outcome is counted after.
 */
export const passwordThrottlePlugin = fp<{ throttle: PasswordThrottle }>(
  async (app, { throttle }) => {
    app.addHook('preHandler', (request, reply, done) => {
      const attempt = attemptKeys(request);
      if (attempt === null) return done();
      const wait = throttle.retryAfter(attempt.keys);
      if (wait === 0) return done();
      reply
        .code(429)
        .header('retry-after', String(wait))
        .type('application/json')
        .send({ error_msg: `Too many wrong passwords. Try again in ${wait} seconds.` });
    });
    app.addHook('onResponse', (request, reply, done) => {
      const attempt = attemptKeys(request);
      if (attempt === null || reply.statusCode === 429) return done();
      if (reply.statusCode === 200) throttle.succeeded([attempt.subject]);
      else if (isFailure(request.routeOptions.url, reply.statusCode)) throttle.failed(attempt.keys);
      done();
    });
  },
  { name: 'password-throttle' },
);
