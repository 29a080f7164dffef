import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Db } from '../../db/index.js';
import { currentGateway } from '../../plugins/base-auth.js';

const BaseUuidParams = Type.Object({ base_uuid: Type.String({ maxLength: 64 }) });
const AnyObject = Type.Object({}, { additionalProperties: true });

/** Base data routes under `/api-gateway/api/v2/`. */
export function rowsRoutes(db: Db): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api-gateway/api/v2/ping/',
      { schema: { tags: ['base'], response: { 200: Type.String() } } },
      async (_request, reply) => reply.type('application/json').send(JSON.stringify('pong')),
    );

    app.get(
      '/api-gateway/api/v2/dtables/:base_uuid/',
      { config: { baseAuth: 'read' }, schema: { tags: ['base'], params: BaseUuidParams, response: { 200: AnyObject } } },
      async (request) => {
        const { base } = currentGateway(request);
        const row = await db.selectFrom('base_metadata').select('data').where('base_id', '=', base.id).executeTakeFirst();
        const metadata = row ? (JSON.parse(row.data) as { tables: Array<Record<string, unknown>> }) : { tables: [] };
        return { ...metadata, tables: metadata.tables.map((t) => ({ ...t, rows: [] })) };
      },
    );
  };
}
