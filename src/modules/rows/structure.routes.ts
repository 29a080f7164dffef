import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ColumnsService } from './columns.service.js';
import { currentGateway } from '../access/index.js';
import { actorOf, baseOf, GATEWAY } from './gateway-request.js';
import { AnyBody, AnyObject, BaseUuidParams, ColumnsResponse, Success, TableQuery, ViewParams, ViewsResponse } from './rows.schemas.js';
import type { TablesService } from './tables.service.js';
import type { ViewsService } from './views.service.js';

export interface StructureRoutesDeps {
  tables: TablesService;
  columns: ColumnsService;
  views: ViewsService;
  bodyLimit: number;
}

/** Token scopes: changing tables, columns and views is `structure`; reading them, `read_rows` or `structure`. */
const read = { baseAuth: 'read', scope: ['read_rows', 'structure'] } as const;
const write = { baseAuth: 'write', scope: ['structure'] } as const;
/** Open to a view share's token too: it reads its view and the columns that view shows only (view-metadata.ts). */
const readView = { ...read, viewOpen: true } as const;

/** Tables, columns and views under `/api-gateway/api/v2/dtables/{base_uuid}/`. */
export function structureRoutes({ tables, columns, views, bodyLimit }: StructureRoutesDeps): FastifyPluginAsyncTypebox {
  /** A scoped token reads the structure its scope shows: a view share's one view, a table scope's tables and columns (scope-metadata.ts). */
  const scopeOf = (request: Parameters<typeof currentGateway>[0]) => currentGateway(request).claims.scope;
  return async (app) => {
    const tableSchema = (response: object) => ({ tags: ['base tables'], params: BaseUuidParams, body: AnyBody, response: { 200: response } });
    app.post(`${GATEWAY}/tables/`, { config: write, bodyLimit, schema: tableSchema(AnyObject) }, async (request) =>
      tables.create(baseOf(request), actorOf(request), request.body),
    );
    app.post(`${GATEWAY}/tables/duplicate-table/`, { config: write, bodyLimit, schema: tableSchema(AnyObject) }, async (request) =>
      tables.duplicate(baseOf(request), actorOf(request), request.body),
    );
    app.put(`${GATEWAY}/tables/`, { config: write, bodyLimit, schema: tableSchema(Success) }, async (request) =>
      tables.rename(baseOf(request), actorOf(request), request.body),
    );
    app.delete(`${GATEWAY}/tables/`, { config: write, bodyLimit, schema: tableSchema(Success) }, async (request) =>
      tables.remove(baseOf(request), actorOf(request), request.body),
    );

    const columnTags = ['base columns'];
    app.get(
      `${GATEWAY}/columns/`,
      { config: readView, schema: { tags: columnTags, params: BaseUuidParams, querystring: TableQuery, response: { 200: ColumnsResponse } } },
      async (request) => columns.list(baseOf(request), request.query, scopeOf(request)),
    );
    const columnSchema = (response: object) => ({ tags: columnTags, params: BaseUuidParams, body: AnyBody, response: { 200: response } });
    app.post(`${GATEWAY}/columns/`, { config: write, bodyLimit, schema: columnSchema(AnyObject) }, async (request) =>
      columns.insert(baseOf(request), actorOf(request), request.body),
    );
    app.put(`${GATEWAY}/columns/`, { config: write, bodyLimit, schema: columnSchema(AnyObject) }, async (request) =>
      columns.update(baseOf(request), actorOf(request), request.body),
    );
    app.delete(`${GATEWAY}/columns/`, { config: write, bodyLimit, schema: columnSchema(Success) }, async (request) =>
      columns.remove(baseOf(request), actorOf(request), request.body),
    );
    app.post(`${GATEWAY}/batch-append-columns/`, { config: write, bodyLimit, schema: columnSchema(ColumnsResponse) }, async (request) =>
      columns.batchAppend(baseOf(request), actorOf(request), request.body),
    );

    const viewTags = ['base views'];
    app.get(
      `${GATEWAY}/views/`,
      { config: readView, schema: { tags: viewTags, params: BaseUuidParams, querystring: TableQuery, response: { 200: ViewsResponse } } },
      async (request) => views.list(baseOf(request), request.query, scopeOf(request)),
    );
    app.post(
      `${GATEWAY}/views/`,
      { config: write, bodyLimit, schema: { tags: viewTags, params: BaseUuidParams, querystring: TableQuery, body: AnyBody, response: { 200: AnyObject } } },
      async (request) => views.create(baseOf(request), actorOf(request), request.query, request.body),
    );
    app.get(
      `${GATEWAY}/views/:view_name/`,
      { config: readView, schema: { tags: viewTags, params: ViewParams, querystring: TableQuery, response: { 200: AnyObject } } },
      async (request) => views.get(baseOf(request), request.params.view_name, request.query, scopeOf(request)),
    );
    app.put(
      `${GATEWAY}/views/:view_name/`,
      { config: write, bodyLimit, schema: { tags: viewTags, params: ViewParams, querystring: TableQuery, body: AnyBody, response: { 200: AnyObject } } },
      async (request) => views.update(baseOf(request), actorOf(request), request.params.view_name, request.query, request.body),
    );
    app.delete(
      `${GATEWAY}/views/:view_name/`,
      { config: write, schema: { tags: viewTags, params: ViewParams, querystring: TableQuery, response: { 200: Success } } },
      async (request) => views.remove(baseOf(request), actorOf(request), request.params.view_name, request.query),
    );
  };
}
