import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { atLeast, currentGateway, type BaseAccess } from '../access/index.js';
import { actorOf, baseOf } from '../rows/index.js';
import { apiError } from '../../shared/errors.js';
import { intParam, timeParam } from '../../shared/query-params.js';
import { MAX_PER_PAGE, type HistoryService, type Paging } from './history.service.js';
import type { OperationFilter } from './history.types.js';

const GATEWAY = '/api-gateway/api/v2/dtables/:base_uuid';
const tags = ['history'];
const read = { baseAuth: 'read' } as const;
const write = { baseAuth: 'write' } as const;
/** Deleted tables are outside every table scope's reach (their names and rows): not for a table-scoped token. */
const readAllTables = { baseAuth: 'read', scopeAllTables: true } as const;
const BaseParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });
const OpParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }), op_id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) });
const Num = Type.Optional(Type.String({ maxLength: 20 }));
const Id = Type.Optional(Type.String({ maxLength: 255 }));
const ListQuery = Type.Object({
  page: Num,
  per_page: Num,
  table_id: Type.Optional(Type.String({ maxLength: 8 })),
  row_id: Type.Optional(Type.String({ maxLength: 32 })),
  author: Id,
  start_time: Num,
  end_time: Num,
  before_op_id: Num,
});
const RowParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }), row_id: Type.String({ minLength: 1, maxLength: 32 }) });
const TrashParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }), trash_id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }) });
const RestoreBody = Type.Optional(Type.Record(Type.String(), Type.Unknown()));

function paging(q: { page?: string; per_page?: string }, perPage: number): Paging {
  return { page: intParam(q.page, 'page', 1, 1, 1_000_000), perPage: intParam(q.per_page, 'per_page', perPage, 1, MAX_PER_PAGE) };
}

type ListQueryValue = Partial<Record<'page' | 'per_page' | 'table_id' | 'row_id' | 'author' | 'start_time' | 'end_time' | 'before_op_id', string>>;

function filterOf(q: ListQueryValue): OperationFilter {
  const filter: OperationFilter = {};
  if (q.table_id) filter.tableId = q.table_id;
  if (q.row_id) filter.rowId = q.row_id;
  if (q.author) filter.author = q.author;
  const from = timeParam(q.start_time, 'start_time');
  const to = timeParam(q.end_time, 'end_time');
  if (from !== undefined) filter.from = from;
  if (to !== undefined) filter.to = to;
  if (q.before_op_id) filter.beforeId = intParam(q.before_op_id, 'before_op_id', 0, 1, 2 ** 53 - 1);
  return filter;
}

/** Restoring changes data others wrote: the base's owner and admins only (a user's Base-Token). */
async function assertMayRestore(request: FastifyRequest, access: BaseAccess): Promise<void> {
  const { claims, base } = currentGateway(request);
  const userId = claims.source === 'account' || claims.source === 'temp-api-token' ? claims.sourceId : undefined;
  if (userId === undefined || !atLeast(await access.permissionOf(base, userId), 'admin')) {
    throw apiError(403, 'Only the owner or an admin of the base can restore operations.');
  }
}

/** A table-scoped token's tables, as ids of the base's tables (its listings show only theirs); undefined when unscoped. */
async function scopeTableIds(request: FastifyRequest, history: HistoryService): Promise<string[] | undefined> {
  const tables = currentGateway(request).claims.scope?.tables;
  return tables === undefined ? undefined : history.tableIdsIn(baseOf(request), tables);
}

async function scopedFilter(request: FastifyRequest, history: HistoryService, q: ListQueryValue): Promise<OperationFilter> {
  const filter = filterOf(q);
  const tableIds = await scopeTableIds(request, history);
  return tableIds === undefined ? filter : { ...filter, tableIds };
}

/** `operations/`, `db-operations/`, `activities/`, `trash/rows/`, `trash/tables/` (read); restores and purges (owner, admin). */
export function historyRoutes({ history, access }: { history: HistoryService; access: BaseAccess }): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(`${GATEWAY}/operations/`, { config: read, schema: { tags, params: BaseParams, querystring: ListQuery } }, async (request) =>
      history.operations(baseOf(request), await scopedFilter(request, history, request.query), paging(request.query, 25)),
    );
    app.get(`${GATEWAY}/db-operations/`, { config: read, schema: { tags, params: BaseParams, querystring: ListQuery } }, async (request) =>
      history.dbOperations(baseOf(request), await scopedFilter(request, history, request.query), paging(request.query, 25)),
    );
    app.get(`${GATEWAY}/activities/`, { config: read, schema: { tags, params: BaseParams, querystring: ListQuery } }, async (request) =>
      history.activities(baseOf(request), request.query.row_id || undefined, paging(request.query, 25), await scopeTableIds(request, history)),
    );
    app.put(`${GATEWAY}/restore-operations/:op_id/`, { config: write, bodyLimit: 4096, schema: { tags, params: OpParams, body: RestoreBody } }, async (request) => {
      await assertMayRestore(request, access);
      const body = request.body ?? {};
      const overwrite = body.overwrite === true || body.overwrite === 'true';
      return history.restore(baseOf(request), actorOf(request), request.params.op_id, overwrite);
    });
    // The row trash: a view over the log (deleted rows not restored since), restored like an operation.
    app.get(`${GATEWAY}/trash/rows/`, { config: read, schema: { tags, params: BaseParams, querystring: ListQuery } }, async (request) =>
      history.trashRows(baseOf(request), request.query.table_id || undefined, paging(request.query, 25), currentGateway(request).claims.scope?.tables),
    );
    app.put(`${GATEWAY}/trash/rows/:row_id/`, { config: write, bodyLimit: 4096, schema: { tags, params: RowParams, body: RestoreBody } }, async (request) => {
      await assertMayRestore(request, access);
      return history.restoreTrashRow(baseOf(request), actorOf(request), request.params.row_id);
    });
    app.delete(`${GATEWAY}/trash/rows/:row_id/`, { config: write, schema: { tags, params: RowParams } }, async (request) => {
      await assertMayRestore(request, access);
      return history.purgeTrashRow(baseOf(request), request.params.row_id);
    });
    // The table trash: deleted tables with their rows and links, restorable until TRASH_RETENTION_DAYS.
    app.get(`${GATEWAY}/trash/tables/`, { config: readAllTables, schema: { tags, params: BaseParams, querystring: ListQuery } }, async (request) =>
      history.trashTables(baseOf(request), paging(request.query, 25)),
    );
    app.put(`${GATEWAY}/trash/tables/:trash_id/`, { config: write, bodyLimit: 4096, schema: { tags, params: TrashParams, body: RestoreBody } }, async (request) => {
      await assertMayRestore(request, access);
      return history.restoreTrashTable(baseOf(request), actorOf(request), request.params.trash_id);
    });
    app.delete(`${GATEWAY}/trash/tables/:trash_id/`, { config: write, schema: { tags, params: TrashParams } }, async (request) => {
      await assertMayRestore(request, access);
      return history.purgeTrashTable(baseOf(request), request.params.trash_id);
    });
  };
}
