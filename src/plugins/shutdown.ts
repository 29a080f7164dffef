import fp from 'fastify-plugin';

const SHUTTING_DOWN = JSON.stringify({ error_msg: 'The server is shutting down. Please retry.' });

/**
 * During a stop (`app.close()`): a request that arrives on a connection still open gets an explicit
 * 503 with the API's error body and `Retry-After` (Fastify's own 503 has another shape), and every
 * response, also of requests already in flight, carries `Connection: close`, so a keep-alive
 * connection is closed once its response is sent. Register with `return503OnClosing: false`.
 */
export const shutdownPlugin = fp(
  async (app) => {
    let closing = false;
    app.addHook('preClose', (done) => {
      closing = true;
      done();
    });
    app.addHook('onRequest', (_request, reply, done) => {
      if (!closing) return done();
      reply.code(503).header('retry-after', '5').type('application/json').send(SHUTTING_DOWN);
    });
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (closing) reply.header('connection', 'close');
      done(null, payload);
    });
  },
  { name: 'shutdown' },
);
