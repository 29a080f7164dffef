import type { Socket } from 'node:net';
import fp from 'fastify-plugin';
import type { FastifyContextConfig, FastifyRequest } from 'fastify';
import { apiError, detailError, type AppError } from '../shared/errors.js';
import { normalizeUuid } from '../shared/ids.js';
import { parseAuthorization } from '../shared/authorization.js';
import { decide, listedInScope, namedOutsideScope, scopeRefusal, tableRefusal, type ScopeTable, type TokenOperation, type TokenScope } from '../modules/access/index.js';
import type { BaseTokenVerifier, GatewayCheck } from '../modules/tokens/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `read` needs any valid Base-Token for the path's base; `write` needs an `rw` one. */
    baseAuth?: 'read' | 'write';
    /**
     * The token-scope operations that admit a scoped Base-Token here (any one suffices); 'any' for
     * reads every scope allows. Default: `read_rows` for `baseAuth: 'read'`, `write_rows` for writes.
     */
    scope?: readonly TokenOperation[] | 'any';
    /** The route answers with every table at once (the whole base): a table-scoped token may not call it. */
    scopeAllTables?: boolean;
    /** The route is open to a view-limited token (a view share's): row listings, which impose the view, and row writes. */
    viewOpen?: boolean;
  }
}

/** Where requests name tables: checked against a table-scoped token once the body is parsed. */
const TABLE_FIELDS = ['table_name', 'table_id', 'other_table_name', 'other_table_id'] as const;

const denied = () => apiError(403, 'Permission denied.');
/** A route's config as Fastify keeps it (its `url` is the route's pattern). */
type RouteConfig = FastifyContextConfig & { url?: string };
/** The operations a route asks of a scope when it declares none. */
const READ_ROWS: readonly TokenOperation[] = ['read_rows'];
const WRITE_ROWS: readonly TokenOperation[] = ['write_rows'];
const GATEWAY_BASES = '/api-gateway/api/v2/dtables/';

/**
 * Base-Token enforcement for `/api-gateway/api/v2/dtables/{base_uuid}/…`: signature (HS256 only),
 * expiry (`Token expired.`, which the official Python client matches), base match, revocation,
 * and read-only tokens refused on writes. A route under that prefix that forgot `config.baseAuth`
 * fails closed: it is treated as a write.
 */
export const baseAuthPlugin = fp<{
  verifier: BaseTokenVerifier;
  /** TRUST_PROXY: the client address is the forwarded one, per request; otherwise the connection's, kept on its socket. */
  trustProxy?: boolean;
  onApiTokenUse?: (tokenId: number, ip: string) => void;
  /** The base's tables (ids and names): a table named by id is in a scope that lists its name (and the other way round). */
  tablesOf?: (baseId: number) => Promise<readonly ScopeTable[]>;
}>(
  async (app, { verifier, trustProxy, onApiTokenUse, tablesOf }) => {
    const clientAddress = trustProxy ? (request: FastifyRequest) => request.ip : connectionAddress;
    app.decorateRequest('gateway', null);
    // A table-scoped token: the tables a request names are known only once its body is parsed.
    app.addHook('preHandler', (request, _reply, done) => {
      const gateway = request.gateway;
      const tables = gateway?.claims.scope?.tables;
      if (!gateway || !tables) return done();
      // The common case, judged without building anything: every table named is listed as spelled.
      if (allListed(tables, request.query) && allListed(tables, request.body)) return done();
      const named = namedTables(request.query, request.body);
      // Tables only: operations and networks were judged in onRequest (with the client address).
      const refusal = scopeRefusal({ tables }, { tables: named });
      if (!refusal) return done();
      // Spelled otherwise than the scope lists it (an id for a listed name, or the other way round)?
      if (!tablesOf) return done(apiError(403, refusal));
      tablesOf(gateway.base.id).then((all) => {
        const outside = namedOutsideScope({ tables }, named, all);
        done(outside.length > 0 ? apiError(403, tableRefusal(outside[0]!)) : undefined);
      }, done);
    });
    // A callback hook: routes without Base-Token auth, and repeat callers whose token, base and
    // credential version are all in memory, pass without a promise.
    app.addHook('onRequest', (request, _reply, done) => {
      // `routeOptions` is a getter that builds an object per access: read once, and the route's config passed on.
      const config: RouteConfig = request.routeOptions.config;
      const mode = config.baseAuth ?? (config.url?.startsWith(GATEWAY_BASES) ? 'write' : undefined);
      if (mode) return verify(request, config, mode, denied, done);
      // A web-API route that takes a Base-Token too, and the auth plugin found no Account-Token.
      if (config.baseToken && config.auth === 'account' && request.account === null) return verify(request, config, config.baseToken, invalidToken, done);
      done();
    });

    // `refusal` makes the error only when one is answered: an error's stack costs more than the rest of a cached check.
    function verify(request: FastifyRequest, config: RouteConfig, mode: 'read' | 'write', refusal: () => AppError, done: (error?: Error) => void): void {
      const parsed = parseAuthorization(request.headers.authorization);
      if (parsed.kind !== 'token') return done(refusal());
      const pathUuid = (request.params as { base_uuid?: string }).base_uuid;
      const wanted = pathUuid === undefined ? null : normalizeUuid(pathUuid);
      if (wanted === null && pathUuid !== undefined) return done(refusal());
      const cached = verifier.checkCached(parsed.token, wanted);
      if (cached) return done(admitted(request, config, mode, cached, refusal));
      verifier.check(parsed.token, wanted).then((result) => done(admitted(request, config, mode, result, refusal)), done);
    }

    function admitted(request: FastifyRequest, config: RouteConfig, mode: 'read' | 'write', result: GatewayCheck, refusal: () => AppError): AppError | undefined {
      if (!result.ok) return admit(request, config, mode, result, refusal, undefined);
      const claims = result.claims;
      const counted = onApiTokenUse !== undefined && claims.source === 'api-token';
      // The client address, read once: for a token limited to networks, and for an API-Token's use.
      const ip = counted || claims.scope?.networks ? clientAddress(request) : undefined;
      const error = admit(request, config, mode, result, refusal, ip);
      if (!error && counted) onApiTokenUse(claims.sourceId, ip!);
      return error;
    }
  },
  { name: 'base-auth' },
);

const ADDRESS = Symbol('client address');

/**
 * The connection's peer address (`request.ip` without a trusted proxy), kept on the socket for its other
 * requests: Node's getter goes through the socket's handle on every read (~60 ns hot, several times that
 * on a gateway call), a property is one load.
 */
function connectionAddress(request: FastifyRequest): string {
  const socket = request.raw.socket as Socket & { [ADDRESS]?: string };
  return (socket[ADDRESS] ??= socket.remoteAddress) ?? request.ip;
}

/** What a web-API route answers for a credential that is neither an Account-Token nor a Base-Token of its base. */
const invalidToken = () => detailError(401, 'Invalid token');

/** Sets `request.gateway` for a passing check; else the error to answer with (`refusal` for a bad token). */
function admit(request: FastifyRequest, config: RouteConfig, mode: 'read' | 'write', result: GatewayCheck, refusal: () => AppError, ip: string | undefined): AppError | undefined {
  if (!result.ok) {
    if (result.reason === 'expired') return apiError(403, 'Token expired.');
    if (result.reason === 'base-gone') return apiError(404, 'dtable not found.');
    return refusal();
  }
  if (mode === 'write' && !decide({ kind: 'base-token', permission: result.claims.permission }).canWrite) {
    return apiError(403, "You don't have permission to perform this operation on this base.");
  }
  const scopeError = result.claims.scope && operationRefusal(config, mode, result.claims.scope, ip);
  if (scopeError) return apiError(403, scopeError);
  request.gateway = { claims: result.claims, base: result.base };
  return undefined;
}

/** A scoped token's operations and networks, judged by the access policy (`ip`: the client's, read when the scope names networks). */
function operationRefusal(config: RouteConfig, mode: 'read' | 'write', scope: TokenScope, ip: string | undefined): string | null {
  const declared = config.scope;
  const operations = declared === 'any' ? undefined : (declared ?? (mode === 'read' ? READ_ROWS : WRITE_ROWS));
  return scopeRefusal(scope, { operations, ip, allTables: config.scopeAllTables === true, viewOpen: config.viewOpen === true });
}

/** Every table the query string or body names (single values only; anything else names none). */
function namedTables(query: unknown, body: unknown): string[] {
  const names: string[] = [];
  addNamed(names, query);
  addNamed(names, body);
  return names;
}

/** Whether every table `source` names (as `addNamed` reads it) is listed by the scope as spelled. */
function allListed(tables: readonly string[], source: unknown): boolean {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return true;
  // The fields by name, not by a loop over TABLE_FIELDS: a named read of many objects' shapes is cheaper than a keyed one (every scoped call).
  const s = source as Partial<Record<(typeof TABLE_FIELDS)[number], unknown>>;
  return listed(tables, s.table_name) && listed(tables, s.table_id) && listed(tables, s.other_table_name) && listed(tables, s.other_table_id);
}

function listed(tables: readonly string[], value: unknown): boolean {
  return value === undefined || value === null || listedInScope(tables, String(value));
}

function addNamed(names: string[], source: unknown): void {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return;
  for (const field of TABLE_FIELDS) {
    const value = (source as Record<string, unknown>)[field];
    if (value !== undefined && value !== null) names.push(String(value));
  }
}
