import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import { Type } from 'typebox';

/** An OpenAPI document generated from the route schemas, served at GET /api/docs/openapi.json. */
export const openApiPlugin = fp<{ version: string; publicUrl: string }>(
  async (app, { version, publicUrl }) => {
    await app.register(swagger, {
      openapi: {
        info: { title: 'basegate', version, description: 'Base Access, Notification and Webhook API' },
        servers: [{ url: publicUrl }],
        components: {
          securitySchemes: {
            AccountToken: { type: 'http', scheme: 'bearer', description: 'Token <account token> or Bearer <account token>' },
          },
        },
      },
    });
    app.get(
      '/api/docs/openapi.json',
      { schema: { hide: true, response: { 200: Type.Object({}, { additionalProperties: true }) } } },
      async () => app.swagger(),
    );
  },
  { name: 'openapi' },
);
