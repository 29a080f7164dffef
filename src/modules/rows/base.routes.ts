import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { currentGateway } from '../access/index.js';
import { baseOf, GATEWAY } from './gateway-request.js';
import { metadataForScope } from './scope-metadata.js';
import { presentMetadata } from './structure.present.js';
import { AnyObject, BaseUuidParams, GoneResponse, MetadataResponse } from './rows.schemas.js';
import type { BaseSnapshot, BaseSnapshots } from './base-snapshots.js';
import type { BaseWriter } from './base-writer.js';

const read = { baseAuth: 'read' } as const;
/** Token scopes: the whole base (every table's rows) needs row reading on every table; the structure is read by row readers and structure editors. */
const wholeBase = { baseAuth: 'read', scopeAllTables: true } as const;
const readStructure = { baseAuth: 'read', scope: ['read_rows', 'structure'] } as const;
/** Open to a view share's token too, which reads its table, its view and its visible columns only (view-metadata.ts). */
const readViewStructure = { ...readStructure, viewOpen: true } as const;

/** The base as a whole (metadata, everything), the gateway ping, and the removed pre-gateway prefixes. */
export function baseRoutes({ snapshots, writer }: { snapshots: BaseSnapshots; writer: BaseWriter }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api-gateway/api/v2/ping/',
      { schema: { tags: ['base'], response: { 200: Type.String() } } },
      async (_request, reply) => reply.type('application/json').send(JSON.stringify('pong')),
    );

    // Served from the per-revision cache (without a query when it is known current); the
    // revision doubles as an ETag, so a client polling an unchanged base gets a bodiless 304.
    app.get(
      `${GATEWAY}/`,
      { config: wholeBase, schema: { tags: ['base'], params: BaseUuidParams, response: { 200: AnyObject, 304: Type.Null({ description: 'Not modified: the ETag still names the current revision.' }) } } },
      (request, reply) => {
        const send = (snapshot: BaseSnapshot) => {
          const etag = `"r${snapshot.revision}"`;
          reply.header('etag', etag);
          if (ifNoneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send(null);
          return reply.type('application/json; charset=utf-8').send(snapshot.body);
        };
        const base = baseOf(request);
        const known = snapshots.cached(base);
        // Even a known body goes out a microtask later: answered synchronously, the request has not
        // yet been marked complete (Node marks a GET complete after the 'request' event), so the
        // unread-body hook (plugins/connection-limits.ts) closed the connection after every cached read.
        return known ? Promise.resolve(known).then(send) : snapshots.get(base).then(send);
      },
    );

    app.get(
      `${GATEWAY}/metadata/`,
      { config: readViewStructure, schema: { tags: ['base'], params: BaseUuidParams, response: { 200: MetadataResponse } } },
      async (request) => {
        const meta = await writer.read(baseOf(request));
        // A view share sees its view; a table-scoped token its tables' structure only (not the others'
        // names and columns, nor the columns that reach them: scope-metadata.ts).
        return { metadata: presentMetadata(metadataForScope(meta, currentGateway(request).claims.scope)) };
      },
    );

    // Removed in the original's 6.0: answer 410 naming the /api-gateway/ path to use instead.
    for (const prefix of ['/dtable-server', '/dtable-db']) {
      app.all(`${prefix}/*`, { schema: { tags: ['base'], hide: true, response: { 410: GoneResponse } } }, async (request, reply) => {
        const target = gatewayPathFor(request.url.split('?')[0] ?? '');
        reply.code(410);
        return { error_msg: `${prefix}/ was removed; use ${target} instead.` };
      });
    }
  };
}

/** `If-None-Match` (a list, weak tags, or `*`) names `etag`. */
export function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

const UUID = '[0-9a-fA-F-]{32,36}';
const BATCH_ROW_OPS = /^(batch-append-rows|batch-update-rows|batch-delete-rows|insert-row|append-rows)\/?$/;

/** The `/api-gateway/` path that replaces a removed `/dtable-server/` or `/dtable-db/` one. */
export function gatewayPathFor(path: string): string {
  const server = new RegExp(`^/dtable-server/api/v1/dtables/(${UUID})/(.*)$`).exec(path);
  if (server) {
    const rest = BATCH_ROW_OPS.test(server[2]!) ? 'rows/' : server[2]!;
    return `/api-gateway/api/v2/dtables/${server[1]}/${rest}`;
  }
  const db = new RegExp(`^/dtable-db/api/v1/(?:query|sql)/(${UUID})/?`).exec(path);
  if (db) return `/api-gateway/api/v2/dtables/${db[1]}/sql/`;
  return '/api-gateway/api/v2/dtables/{base_uuid}/…';
}
