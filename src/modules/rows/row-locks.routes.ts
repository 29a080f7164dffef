import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { actorOf, baseOf, GATEWAY } from './gateway-request.js';
import type { RowLocksService } from './row-locks.js';
import { AnyBody, BaseUuidParams, Success } from './rows.schemas.js';

const write = { baseAuth: 'write' } as const;

/** `PUT lock-rows/` and `PUT unlock-rows/` `{table_name|table_id, row_ids}` (rw). */
export function rowLockRoutes({ locks, bodyLimit }: { locks: RowLocksService; bodyLimit: number }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const schema = { tags: ['base rows'], params: BaseUuidParams, body: AnyBody, response: { 200: Success } };
    app.put(`${GATEWAY}/lock-rows/`, { config: write, bodyLimit, schema }, async (request) => locks.set(baseOf(request), actorOf(request), request.body, true));
    app.put(`${GATEWAY}/unlock-rows/`, { config: write, bodyLimit, schema }, async (request) => locks.set(baseOf(request), actorOf(request), request.body, false));
  };
}
