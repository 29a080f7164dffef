import type { AccountUser } from './accounts.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The Account-Token's user, set by `src/plugins/auth.ts` on routes with `config.auth` of `account` or `admin`. */
    account: AccountUser | null;
  }
}

/** The authenticated account of a route declared with `config.auth`; throws if misused. */
export function currentAccount(request: { account: AccountUser | null }): AccountUser {
  if (!request.account) throw new Error('route is missing config.auth');
  return request.account;
}
