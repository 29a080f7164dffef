import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from 'typebox';
import { OPERATION_DOCS, operationKey } from './operation-docs.js';

/**
 * The browsable API reference (Swagger UI, served from the package itself: no CDN) at /api/docs/.
 * Scripts and styles only from this origin; the UI fetches the document from /api/docs/json.
 */
const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'; font-src 'self' data:; frame-ancestors 'none'";

/** An OpenAPI document generated from the route schemas, served at GET /api/docs/openapi.json and browsable at /api/docs/. */
export const openApiPlugin = fp<{ version: string; publicUrl: string }>(
  async (app, { version, publicUrl }) => {
    // Every operation's summary and description: the route's own, else the catalogue's (operation-docs.ts).
    app.addHook('onRoute', (route) => {
      const schema = route.schema as { hide?: boolean; summary?: string; description?: string } | undefined;
      if (schema?.hide) return;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const doc = methods.map((m) => OPERATION_DOCS[operationKey(m, route.url)]).find((d) => d !== undefined);
      if (!doc) return;
      route.schema = { ...(route.schema ?? {}), summary: schema?.summary ?? doc[0], description: schema?.description ?? doc[1] };
    });
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
    await app.register(swaggerUi, {
      routePrefix: '/api/docs',
      staticCSP: DOCS_CSP,
      uiConfig: { docExpansion: 'list', deepLinking: true, displayOperationId: false, filter: true },
    });
    app.get(
      '/api/docs/openapi.json',
      { schema: { hide: true, response: { 200: Type.Object({}, { additionalProperties: true }) } } },
      async () => app.swagger(),
    );
  },
  { name: 'openapi' },
);
