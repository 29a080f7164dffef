import fp from 'fastify-plugin';
import { apiError } from '../shared/errors.js';
import { normalizeUuid } from '../shared/ids.js';
import { parseAuthorization } from './auth.js';
import type { BaseTokenClaims, BaseTokenVerifier } from '../modules/tokens/index.js';
import type { BaseListing } from '../modules/workspaces/index.js';

/** What a Base-Token-authenticated request may touch. */
export interface GatewayAccess {
  claims: BaseTokenClaims;
  base: BaseListing;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on `/api-gateway/` routes with `config.baseAuth`. */
    gateway: GatewayAccess | null;
  }
  interface FastifyContextConfig {
    /** `read` needs any valid Base-Token for the path's base; `write` needs an `rw` one. */
    baseAuth?: 'read' | 'write';
  }
}

const denied = () => apiError(403, 'Permission denied.');

/**
 * Base-Token enforcement for `/api-gateway/api/v2/dtables/{base_uuid}/…`: signature (HS256 only),
 * expiry (`Token expired.`, which the official Python client matches), revocation, base match,
 * and read-only tokens refused on writes.
 */
export const baseAuthPlugin = fp<{ verifier: BaseTokenVerifier }>(
  async (app, { verifier }) => {
    app.decorateRequest('gateway', null);
    app.addHook('onRequest', async (request) => {
      const mode = request.routeOptions.config.baseAuth;
      if (!mode) return;
      const parsed = parseAuthorization(request.headers.authorization);
      if (parsed.kind !== 'token') throw denied();
      const result = await verifier.verify(parsed.token);
      if (!result.ok) throw result.reason === 'expired' ? apiError(403, 'Token expired.') : denied();
      const claims = result.claims;
      const pathUuid = (request.params as { base_uuid?: string }).base_uuid;
      if (pathUuid !== undefined && normalizeUuid(pathUuid) !== claims.baseUuid) throw denied();
      const base = await verifier.baseOf(claims);
      if (!base) throw apiError(404, 'dtable not found.');
      if (mode === 'write' && claims.permission !== 'rw') {
        throw apiError(403, "You don't have permission to perform this operation on this base.");
      }
      request.gateway = { claims, base };
    });
  },
  { name: 'base-auth' },
);

export function currentGateway(request: { gateway: GatewayAccess | null }): GatewayAccess {
  if (!request.gateway) throw new Error('route is missing config.baseAuth');
  return request.gateway;
}
