import fp from 'fastify-plugin';
import type { FastifyRequest } from 'fastify';
import type { PasswordThrottleService } from '../modules/limits/password-throttle-service.js';

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
    // The virtual id, unique across databases (a Redis shared by several deployments or test runs).
    const subject = `account-id:${request.account.virtualId}`;
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
 * answered 429 with Retry-After before the password is checked; the outcome is counted before the
 * answer is sent (onSend), so with a shared store the next guess, on any instance, already sees it.
 */
export const passwordThrottlePlugin = fp<{ throttle: PasswordThrottleService }>(
  async (app, { throttle }) => {
    // Callback hooks: requests without a password attempt (nearly all) pass without a promise.
    app.addHook('preHandler', (request, reply, done) => {
      const attempt = attemptKeys(request);
      if (attempt === null) return done();
      throttle.retryAfter(attempt.keys, request.log).then((wait) => {
        if (wait === 0) return done();
        reply
          .code(429)
          .header('retry-after', String(wait))
          .type('application/json')
          .send({ error_msg: `Too many wrong passwords. Try again in ${wait} seconds.` });
      }, done);
    });
    app.addHook('onSend', (request, reply, payload, done) => {
      const attempt = attemptKeys(request);
      if (attempt === null || reply.statusCode === 429) return done(null, payload);
      let counted: Promise<void> | null = null;
      if (reply.statusCode === 200) counted = throttle.succeeded([attempt.subject], request.log);
      else if (isFailure(request.routeOptions.url, reply.statusCode)) counted = throttle.failed(attempt.keys, request.log);
      if (counted === null) return done(null, payload);
      counted.then(() => done(null, payload), (error: Error) => done(error));
    });
  },
  { name: 'password-throttle' },
);
