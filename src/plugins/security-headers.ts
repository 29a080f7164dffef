import fp from 'fastify-plugin';

/** Routes whose responses carry a credential (Account-, Base-, API-Tokens, external-link tokens). */
function carriesToken(route: string | undefined): boolean {
  return route !== undefined && (route.includes('token') || route.includes('external-links'));
}

/**
 * `X-Content-Type-Options: nosniff` on every response; `Cache-Control: no-store` on every response of
 * a route that hands out tokens, so no shared or browser cache keeps one.
 */
export const securityHeadersPlugin = fp(
  async (app) => {
    app.addHook('onSend', (request, reply, payload, done) => {
      reply.header('x-content-type-options', 'nosniff');
      if (carriesToken(request.routeOptions.url)) reply.header('cache-control', 'no-store');
      done(null, payload);
    });
  },
  { name: 'security-headers' },
);
