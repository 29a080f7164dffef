import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PasswordThrottleService } from '../modules/limits/password-throttle-service.js';

const LOGIN = '/api2/auth-token/';
const LINK = '/api/v2.1/external-link-tokens/:external_link_token/access-token/';
const PASSWORD_CHANGE = '/api/v2.1/user/password/';
/** Routes that check a two-factor code of the logged-in user (confirm, turn off, new recovery codes). */
const TWO_FACTOR_CODE = new Set(['PUT /api/v2.1/user/two-factor-auth/', 'DELETE /api/v2.1/user/two-factor-auth/', 'POST /api/v2.1/user/two-factor-auth/recovery-codes/']);

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
  if (TWO_FACTOR_CODE.has(`${request.method} ${route}`)) {
    // A stolen Account-Token must not guess the second factor either: counted like passwords.
    const code = (request.body as { code?: unknown } | undefined)?.code;
    if (!request.account || typeof code !== 'string' || code === '') return null;
    const subject = `two-factor:${request.account.virtualId}`;
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

/** A wrong password or code: 400 from login, the password change and the two-factor routes, 403 from the link exchange (password missing or wrong). */
function isFailure(request: FastifyRequest, reply: FastifyReply): boolean {
  const route = request.routeOptions.url;
  const status = reply.statusCode;
  // The first step of a two-factor sign-in (password right, asked for the code) guesses nothing.
  if (route === LOGIN && request.headers['x-seafile-otp'] === undefined && reply.getHeader('x-seafile-otp') === 'required') return false;
  return route === LINK ? status === 403 : status === 400 || status === 401;
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
      else if (isFailure(request, reply)) counted = throttle.failed(attempt.keys, request.log);
      if (counted === null) return done(null, payload);
      counted.then(() => done(null, payload), (error: Error) => done(error));
    });
  },
  { name: 'password-throttle' },
);
