import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';

const Pong = Type.String();
const PONG_JSON = JSON.stringify('pong');

/** Liveness and identity endpoints; no credential, exempt from rate limits. */
export function systemRoutes(info: { version: string; edition: string }): FastifyPluginAsyncTypebox {
  return async (app) => {
    const pong = { schema: { tags: ['service'], response: { 200: Pong } } };
    app.get('/ping/', pong, async (_request, reply) => reply.type('application/json').send(PONG_JSON));
    app.get('/api2/ping/', pong, async (_request, reply) => reply.type('application/json').send(PONG_JSON));
    app.get(
      '/server-info/',
      { schema: { tags: ['service'], response: { 200: Type.Object({ version: Type.String(), edition: Type.String() }) } } },
      async () => ({ version: info.version, edition: info.edition }),
    );
  };
}
