import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import type { Metrics } from '../platform/metrics.js';

/** `GET /metrics` in the Prometheus text format; no credential, exempt from rate limits, hidden from OpenAPI. */
export function metricsRoutes(metrics: Metrics): FastifyPluginAsync {
  return async (app) => {
    const schema = { hide: true, response: { 200: Type.String({ description: 'Prometheus text exposition format' }) } };
    app.get('/metrics', { schema }, async (_request, reply) => {
      reply.type(metrics.contentType);
      return metrics.render();
    });
  };
}
