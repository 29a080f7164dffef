import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { currentGateway } from '../access/index.js';
import { AppError } from '../../shared/errors.js';
import { GatewayError, SqlBody, SqlErrorResponse, SqlParams, SqlResponse } from './sql.schemas.js';
import { actorOf, baseOf, parseConvertKeys } from '../rows/index.js';
import type { SqlRequest, SqlService } from './sql.service.js';
import { SqlError } from './sql-error.js';

/**
 * `POST /api-gateway/api/v2/dtables/{base_uuid}/sql[/]`. Any Base-Token may read; INSERT, UPDATE and
 * DELETE need an `rw` one (checked by the service once the statement is parsed). A view share's token
 * sees only its view (its table, rows and visible columns).
 */
export function sqlRoutes(service: SqlService, bodyLimit: number): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/api-gateway/api/v2/dtables/:base_uuid/sql',
      {
        // Open to a view share's token: the statement is limited to the view (view-source.ts).
        config: { baseAuth: 'read', scope: ['sql'], viewOpen: true },
        bodyLimit,
        schema: {
          tags: ['base rows'],
          summary: 'Query or change rows with SQL',
          params: SqlParams,
          body: SqlBody,
          response: { 200: SqlResponse, 400: SqlErrorResponse, 403: GatewayError },
        },
      },
      async (request) => {
        const { claims } = currentGateway(request);
        try {
          const input = sqlRequest(request.body);
          const shared = claims.scope?.view;
          const view = shared ? { table: shared.table, view: shared.view, ...(claims.username ? { currentUser: claims.username } : {}) } : undefined;
          return await service.execute({ base: baseOf(request), permission: claims.permission, actor: actorOf(request), scope: claims.scope, view }, input);
        } catch (error) {
          if (error instanceof SqlError) {
            if (error.cause) request.log.warn({ err: error.cause }, 'SQL statement failed in the database');
            throw new AppError(400, { success: false, error_message: error.message });
          }
          throw error;
        }
      },
    );
  };
}

function sqlRequest(body: Record<string, unknown> | undefined): SqlRequest {
  const sql = body?.sql;
  if (typeof sql !== 'string') throw new SqlError('sql is required and must be a string.');
  const parameters = body?.parameters;
  if (parameters !== undefined && parameters !== null && !Array.isArray(parameters)) throw new SqlError('parameters must be an array.');
  let convertKeys: boolean;
  try {
    convertKeys = parseConvertKeys(body?.convert_keys, false);
  } catch {
    throw new SqlError('convert_keys must be true or false.');
  }
  return { sql, convert_keys: convertKeys, parameters: Array.isArray(parameters) ? parameters : [] };
}
