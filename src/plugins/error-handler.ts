import fp from 'fastify-plugin';
import type { FastifyError } from 'fastify';
import { AppError } from '../shared/errors.js';
import { databaseFault } from '../db/faults.js';
import { STORABLE_TEXT_MESSAGE } from './text-guard.js';

/**
 * One place turns every error into the contract's body: AppError carries its own; framework
 * errors (validation, parsing, size) become `{"error_msg": …}` 4xx; anything else is a logged,
 * generic 500 that never leaks a stack or message.
 */
export const errorHandlerPlugin = fp<{ onServerError?: (error: unknown) => void }>(
  async (app, { onServerError }) => {
    app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
      if (error instanceof AppError) {
        reply.headers(error.headers).code(error.statusCode);
        return error.body === null ? reply.send() : reply.type('application/json').send(error.body);
      }
      if (isUnstorableTextError(error)) {
        return reply.code(400).type('application/json').send({ error_msg: STORABLE_TEXT_MESSAGE });
      }
      const status = clientStatus(error);
      if (status !== null) {
        return reply.code(status).type('application/json').send({ error_msg: clientMessage(error, status) });
      }
      const fault = databaseFault(error);
      if (fault) {
        request.log.error({ err: error, cause: fault.cause }, `database unavailable (${fault.status})`);
        return reply
          .code(fault.status)
          .header('retry-after', String(fault.retryAfter))
          .type('application/json')
          .send({ error_msg: fault.message });
      }
      request.log.error({ err: error }, 'unhandled error');
      onServerError?.(error);
      return reply.code(500).type('application/json').send({ error_msg: 'Internal Server Error' });
    });

    app.setNotFoundHandler((request, reply) => {
      reply.code(404).type('application/json').send({ error_msg: 'Not found.' });
    });
  },
  { name: 'error-handler' },
);

function clientStatus(error: FastifyError): number | null {
  if (error.validation) return 400;
  const status = error.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return status;
  return null;
}

function clientMessage(error: FastifyError, status: number): string {
  if (error.validation) {
    const first = error.validation[0];
    const field = first?.instancePath?.replace(/^\//, '').replace(/\//g, '.') || first?.params?.missingProperty;
    const where = error.validationContext ?? 'body';
    if (first?.keyword === 'required') return `${String(first.params.missingProperty)} is required.`;
    return field ? `${field} invalid: ${first?.message ?? 'bad value'}.` : `${where} invalid: ${first?.message ?? 'bad value'}.`;
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'Request body is too large.';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported content type.';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Request body is empty.';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return 'Request body is not valid JSON.';
  }
  if (error.name === 'SyntaxError') return 'Request body is not valid JSON.';
  return status === 404 ? 'Not found.' : error.message || 'Bad request.';
}

/**
 * PostgreSQL's encoding refusals (a NUL or an invalid sequence that slipped past the text guard):
 * 22021 character_not_in_repertoire, 22P05 untranslatable_character. The client's text, not the server.
 */
function isUnstorableTextError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '22021' || code === '22P05';
}
