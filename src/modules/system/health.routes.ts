import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';

export interface HealthOptions {
  /** Whether the database answers now (bounded by its own timeout). */
  databaseReady(): Promise<boolean>;
}

const Health = Type.Object({ status: Type.String(), database: Type.Optional(Type.String()) });

/**
 * Health endpoints for a load balancer or orchestrator; no credential, never rate limited.
 * Liveness (`/health/live/`) says the process serves HTTP: restart it when this fails.
 * Readiness (`/health/ready/`) also asks the database: while it fails, send no traffic here
 * (the API would answer 503), but do not restart — the server reconnects by itself.
 */
export function healthRoutes(options: HealthOptions): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/health/live/', { schema: { tags: ['service'], response: { 200: Health } } }, async () => ({ status: 'ok' }));
    app.get(
      '/health/ready/',
      { schema: { tags: ['service'], response: { 200: Health, 503: Health } } },
      async (_request, reply) => {
        if (await options.databaseReady()) return { status: 'ok', database: 'ok' };
        return reply.code(503).header('retry-after', '5').send({ status: 'unavailable', database: 'unavailable' });
      },
    );
  };
}
