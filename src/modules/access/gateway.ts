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
