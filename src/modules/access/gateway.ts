import type { AccountUser } from '../accounts/index.js';
import type { BaseListing } from './access.repository.js';
import type { BaseTokenClaims } from './credentials.js';

/** What a Base-Token-authenticated request may touch. */
export interface GatewayAccess {
  claims: BaseTokenClaims;
  base: BaseListing;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the Base-Token plugin (`src/plugins/base-auth.ts`) on `/api-gateway/` routes with `config.baseAuth`. */
    gateway: GatewayAccess | null;
  }
}

/** The Base-Token access of a route declared with `config.baseAuth`; throws if misused. */
export function currentGateway(request: { gateway: GatewayAccess | null }): GatewayAccess {
  if (!request.gateway) throw new Error('route is missing config.baseAuth');
  return request.gateway;
}

/** Who called a route declared with `config.auth: 'account'` and `config.baseToken`: a user, or a Base-Token of the path's base. */
export type Caller = { kind: 'account'; user: AccountUser } | { kind: 'base-token'; gateway: GatewayAccess };

export function currentCaller(request: { account: AccountUser | null; gateway: GatewayAccess | null }): Caller {
  if (request.account) return { kind: 'account', user: request.account };
  return { kind: 'base-token', gateway: currentGateway(request) };
}
