import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { ArchivedRowsService } from './archived-rows.js';
import { actorOf, baseOf, GATEWAY } from './gateway-request.js';
import { AnyBody, BaseUuidParams } from './rows.schemas.js';

const write = { baseAuth: 'write' } as const;
const Inserted = Type.Object({ inserted_row_count: Type.Integer() });

/** `POST add-archived-rows/` and its alias `POST insert-archived-rows/` `{table_name|table_id, rows}` (rw). */
export function archivedRowsRoutes({ archived, bodyLimit }: { archived: ArchivedRowsService; bodyLimit: number }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const schema = { tags: ['base rows'], params: BaseUuidParams, body: AnyBody, response: { 200: Inserted } };
    for (const path of ['add-archived-rows/', 'insert-archived-rows/']) {
      app.post(`${GATEWAY}/${path}`, { config: write, bodyLimit, schema }, async (request) => archived.add(baseOf(request), actorOf(request), request.body));
    }
  };
}
