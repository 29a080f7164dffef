import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/**
 * Text neither database can store: U+0000 (PostgreSQL TEXT/JSONB refuse it) and unpaired UTF-16
 * surrogates (not valid UTF-8). Refused with 400 before any database work, on every route: params and
 * query are checked first thing on request (before the token checks, which query the database), the
 * parsed body before validation. Object keys are checked too.
 */
export const STORABLE_TEXT_MESSAGE = 'Text contains characters that cannot be stored (U+0000 or an unpaired surrogate).';

/** Depth the walk follows; deeper values are left to the body limit and the services. */
const MAX_DEPTH = 64;

// A NUL, or a high surrogate not followed by a low one, or a low one not preceded by a high one.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** The dotted path of the first unstorable string in `value`, or null if there is none. */
export function findUnstorable(value: unknown, where: string, depth = 0): string | null {
  if (typeof value === 'string') return isStorableText(value) ? null : where;
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorable(value[i], `${where}[${i}]`, depth + 1);
      if (found !== null) return found;
    }
    return null;
  }
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    if (!isStorableText(key)) return where;
    const found = findUnstorable((value as Record<string, unknown>)[key], `${where}.${key}`, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

function refuse(request: FastifyRequest, reply: FastifyReply, where: string): void {
  const message = `${where}: ${STORABLE_TEXT_MESSAGE}`;
  // The SQL endpoint's errors have a body of their own (contract §8.4).
  const body = request.routeOptions.url?.endsWith('/sql') ? { success: false, error_message: message } : { error_msg: message };
  reply.code(400).type('application/json').send(body);
}

export const textGuardPlugin = fp(
  async (app) => {
    // Callback hooks: no promise per request on the hot path.
    app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const where = findUnstorable(request.params, 'params') ?? findUnstorable(request.query, 'query');
      if (where !== null) return refuse(request, reply, where);
      done();
    });
    app.addHook('preValidation', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
      const where = findUnstorable(request.body, 'body');
      if (where !== null) return refuse(request, reply, where);
      done();
    });
  },
  { name: 'text-guard' },
);
