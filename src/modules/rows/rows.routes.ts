import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiError } from '../../shared/errors.js';
import { currentGateway, imposeView, type TokenScope } from '../access/index.js';
import { actorOf, baseOf, GATEWAY, readGetBody, viewerOf } from './gateway-request.js';
import type { LinksService } from './links.service.js';
import {
  AnyBody,
  AnyObject,
  AppendResponse,
  BaseUuidParams,
  DeleteLinksResponse,
  DeleteRowsResponse,
  GetRowQuery,
  ListRowsQuery,
  QueryLinksResponse,
  RowParams,
  RowsResponse,
  Success,
} from './rows.schemas.js';
import type { ListInput, RowsService } from './rows.service.js';
import type { BaseSnapshots } from './base-snapshots.js';
import type { ViewLimit } from './view-limit.js';

export interface RowRoutesDeps {
  rows: RowsService;
  links: LinksService;
  bodyLimit: number;
  /** Listing pages are cached beside the whole-base body, under the base's revision (BaseSnapshots.page). */
  snapshots?: BaseSnapshots;
}

const read = { baseAuth: 'read' } as const;
const write = { baseAuth: 'write' } as const;
/** Open to a view share's token: listings impose its view (`limited`); row writes stay within its table. */
const viewRead = { baseAuth: 'read', viewOpen: true } as const;
const viewWrite = { baseAuth: 'write', viewOpen: true } as const;
const tags = ['base rows'];

/** Rows, filtered rows and links under `/api-gateway/api/v2/dtables/{base_uuid}/`. */
export function rowRoutes({ rows, links, bodyLimit, snapshots }: RowRoutesDeps): FastifyPluginAsyncTypebox {
  /** The rows of a listing as the JSON body; from the page cache when there is one. */
  const listing = async (request: FastifyRequest, query: ListInput, filter?: Record<string, unknown>): Promise<Buffer> => {
    const base = baseOf(request);
    const viewer = viewerOf(request);
    const scope = currentGateway(request).claims.scope;
    const build = (revision?: number) => rows.listJson(base, scoped(scope, query), viewer, filter, revision);
    if (!snapshots) return Buffer.from(await build());
    // Everything the page depends on besides the base's content: the request, a table-scoped token's tables
    // (and whether it is a view share's), who asks (`include_me`), and today (relative dates). The tables are
    // an element of their own: keying a copy of the query that carries them cost a cached read 11% more CPU.
    const key = JSON.stringify([query, filter ?? null, viewer.currentUser ?? null, rows.today(), scope?.tables ?? null, scope?.tables !== undefined && scope.view !== undefined]);
    return snapshots.page(base, key, build);
  };
  /** A view-limited token (a view share) lists its view's rows only, whatever view the request names. */
  const limited = <Q extends ListInput>(request: Parameters<typeof currentGateway>[0], query: Q): Q => {
    const scope = currentGateway(request).claims.scope;
    if (scope?.view && query.view_id !== undefined && query.view_id !== scope.view.view) throw apiError(403, 'The token is limited to one view.');
    return imposeView(scope, query) ?? query;
  };
  /** A table-scoped token reads no link to a table outside its scope (scope-columns.ts): its tables join the query. */
  const scoped = <Q extends ListInput>(scope: TokenScope | undefined, query: Q): Q => {
    const tables = scope?.tables;
    if (!tables) return query;
    return scope.view ? { ...query, scopeTables: tables, sharedView: true } : { ...query, scopeTables: tables };
  };
  /** A view-limited token's writes stay within its view's rows and visible columns (view-limit.ts). */
  const viewLimit = (request: FastifyRequest): ViewLimit | undefined => {
    const view = currentGateway(request).claims.scope?.view;
    return view ? { table: view.table, view: view.view, viewer: viewerOf(request) } : undefined;
  };
  // The body is JSON already (no response serializer runs; the schema still documents it).
  const sendJson = (reply: FastifyReply, body: Buffer) => reply.type('application/json; charset=utf-8').send(body);
  return async (app) => {
    app.get(
      `${GATEWAY}/rows/`,
      { config: viewRead, schema: { tags, params: BaseUuidParams, querystring: ListRowsQuery, response: { 200: RowsResponse } } },
      async (request, reply) => sendJson(reply, await listing(request, limited(request, request.query))),
    );
    app.get(
      `${GATEWAY}/rows/:row_id/`,
      { config: read, schema: { tags, params: RowParams, querystring: GetRowQuery, response: { 200: AnyObject } } },
      async (request) => rows.get(baseOf(request), request.params.row_id, scoped(currentGateway(request).claims.scope, request.query)),
    );
    app.post(
      `${GATEWAY}/rows/`,
      { config: viewWrite, bodyLimit, schema: { tags, params: BaseUuidParams, body: AnyBody, response: { 200: AppendResponse } } },
      async (request) => rows.append(baseOf(request), actorOf(request), request.body, undefined, viewLimit(request)),
    );
    app.put(
      `${GATEWAY}/rows/`,
      { config: viewWrite, bodyLimit, schema: { tags, params: BaseUuidParams, body: AnyBody, response: { 200: Success } } },
      async (request) => rows.update(baseOf(request), actorOf(request), request.body, undefined, viewLimit(request)),
    );
    app.delete(
      `${GATEWAY}/rows/`,
      { config: viewWrite, bodyLimit, schema: { tags, params: BaseUuidParams, body: AnyBody, response: { 200: DeleteRowsResponse } } },
      async (request) => rows.remove(baseOf(request), actorOf(request), request.body, viewLimit(request)),
    );

    // Filters travel in a JSON body of a GET (the Python client); POST is accepted too.
    app.get(
      `${GATEWAY}/filtered-rows/`,
      { config: viewRead, schema: { tags, params: BaseUuidParams, querystring: ListRowsQuery, response: { 200: RowsResponse } } },
      async (request, reply) => {
        const body = await readGetBody(request, bodyLimit);
        return sendJson(reply, await listing(request, limited(request, request.query), filterSpec(body)));
      },
    );
    app.post(
      `${GATEWAY}/filtered-rows/`,
      { config: viewRead, bodyLimit, schema: { tags, params: BaseUuidParams, querystring: ListRowsQuery, body: AnyBody, response: { 200: RowsResponse } } },
      async (request, reply) => sendJson(reply, await listing(request, limited(request, request.query), filterSpec(request.body))),
    );

    app.post(
      `${GATEWAY}/links/`,
      { config: write, bodyLimit, schema: { tags, params: BaseUuidParams, body: AnyBody, response: { 200: Success } } },
      async (request) => links.change(baseOf(request), actorOf(request), request.body, 'add'),
    );
    app.put(
      `${GATEWAY}/links/`,
      { config: write, bodyLimit, schema: { tags, params: BaseUuidParams, body: AnyBody, response: { 200: Success } } },
      async (request) => links.change(baseOf(request), actorOf(request), request.body, 'replace'),
    );
    app.delete(
      `${GATEWAY}/links/`,
      { config: write, bodyLimit, schema: { tags, params: BaseUuidParams, body: AnyBody, response: { 200: DeleteLinksResponse } } },
      async (request) => links.change(baseOf(request), actorOf(request), request.body, 'remove'),
    );
    app.post(
      `${GATEWAY}/query-links/`,
      { config: read, bodyLimit, schema: { tags, params: BaseUuidParams, body: AnyBody, response: { 200: QueryLinksResponse } } },
      async (request) => links.query(baseOf(request), request.body, currentGateway(request).claims.scope?.tables),
    );
  };
}

/** `{filters, filter_conjunction}` of a filtered-rows body; a missing `filters` means no filter. */
function filterSpec(body: Record<string, unknown>): Record<string, unknown> {
  return { filters: body.filters ?? [], filter_conjunction: body.filter_conjunction };
}
