import { Server as HttpServer } from 'node:http';
import fp from 'fastify-plugin';

const SHUTTING_DOWN = JSON.stringify({ error_msg: 'The server is shutting down. Please retry.' });

/**
 * How long a keep-alive connection without a request in progress stays open once a stop began. A
 * client may have sent a request on it that the server has not read yet (the bytes are in the
 * socket buffer or on the wire): closing it at once would reset that request. Within this time such
 * a request is read and answered (with `Connection: close`); connections still idle after it are closed.
 */
export const IDLE_CLOSE_GRACE_MS = 2000;

/**
 * During a stop (`app.close()`): a request that arrives on a connection still open gets an explicit
 * 503 with the API's error body and `Retry-After` (Fastify's own 503 has another shape), and every
 * response, also of requests already in flight, carries `Connection: close`, so a keep-alive
 * connection is closed once its response is sent. Idle keep-alive connections are closed after
 * `IDLE_CLOSE_GRACE_MS`, not at once (see there). Register with `return503OnClosing: false`.
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
    // `server.close()` (Node ≥ 19) calls this at once; Fastify calls it too.
    const server = app.server;
    if (server instanceof HttpServer) {
      let scheduled = false;
      server.closeIdleConnections = function closeIdleLater(this: HttpServer) {
        if (scheduled) return;
        scheduled = true;
        setTimeout(() => HttpServer.prototype.closeIdleConnections.call(server), IDLE_CLOSE_GRACE_MS).unref();
      };
    }
  },
  { name: 'shutdown' },
);
