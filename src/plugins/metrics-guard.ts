import { createHash, timingSafeEqual } from 'node:crypto';
import fp from 'fastify-plugin';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** With METRICS_TOKEN set, `GET /metrics` needs `Authorization: Bearer <token>` (compared in constant time). */
export const metricsGuardPlugin = fp<{ token: string }>(
  async (app, { token }) => {
    const expected = digest(token);
    app.addHook('onRequest', (request, reply, done) => {
      if (request.routeOptions.url !== '/metrics') return done();
      const header = request.headers.authorization;
      const given = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : '';
      if (timingSafeEqual(digest(given), expected)) return done();
      reply.code(401).type('application/json').send({ error_msg: 'A valid metrics token is required.' });
    });
  },
  { name: 'metrics-guard' },
);
