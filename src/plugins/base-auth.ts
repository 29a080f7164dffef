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
const GATEWAY_BASES = '/api-gateway/api/v2/dtables/';

/**
 * Base-Token enforcement for `/api-gateway/api/v2/dtables/{base_uuid}/…`: signature (HS256 only),
 * expiry (`Token expired.`, which the official Python client matches), base match, revocation,
 * and read-only tokens refused on writes. A route under that prefix that forgot `config.baseAuth`
 * fails closed: it is treated as a write.
 */
export const baseAuthPlugin = fp<{ verifier: BaseTokenVerifier }>(
  async (app, { verifier }) => {
    app.decorateRequest('gateway', null);
    app.addHook('onRequest', async (request) => {
      const mode = request.routeOptions.config.baseAuth ?? (request.routeOptions.url?.startsWith(GATEWAY_BASES) ? 'write' : undefined);
      if (!mode) return;
      const parsed = parseAuthorization(request.headers.authorization);
      if (parsed.kind !== 'token') throw denied();
      const pathUuid = (request.params as { base_uuid?: string }).base_uuid;
      const wanted = pathUuid === undefined ? null : normalizeUuid(pathUuid);
      if (wanted === null && pathUuid !== undefined) throw denied();
      const result = await verifier.check(parsed.token, wanted);
      if (!result.ok) {
        if (result.reason === 'expired') throw apiError(403, 'Token expired.');
        if (result.reason === 'base-gone') throw apiError(404, 'dtable not found.');
        throw denied();
      }
      if (mode === 'write' && result.claims.permission !== 'rw') {
        throw apiError(403, "You don't have permission to perform this operation on this base.");
      }
      request.gateway = { claims: result.claims, base: result.base };
    });
  },
  { name: 'base-auth' },
);

export function currentGateway(request: { gateway: GatewayAccess | null }): GatewayAccess {
  if (!request.gateway) throw new Error('route is missing config.baseAuth');
  return request.gateway;
}
