import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest, RawRequestDefaultExpression } from 'fastify';

/**
 * The errors Fastify and Node answer before a route runs — a URL that does not decode, a header
 * block too large, a malformed request line — in the contract's `{"error_msg": …}` shape, like every
 * other error (the framework's own bodies are `{"error", "message", "statusCode"}`).
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const message = error.code === 'FST_ERR_BAD_URL' ? 'The URL is not correctly encoded.' : 'Bad request.';
  reply.code(status).type('application/json').send({ error_msg: message });
}

/** Errors of the HTTP parser itself (no request object exists): written on the socket, then closed. */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request header fields are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request timed out.']
        : [400, 'Bad request.'];
  const body = JSON.stringify({ error_msg: message });
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/** A client's X-Request-Id is kept only when it is a short token of safe characters (it reaches logs and headers). */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function requestId(request: RawRequestDefaultExpression): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}
