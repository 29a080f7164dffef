import type { FastifyRequest, FastifyServerOptions } from 'fastify';

const SECRET_QUERY = /([?&](?:password|token|secret|api_token|access_token)=)[^&]*/gi;
const SECRET_PATH = /(\/external-link-tokens\/)[^/?]+/;

/** A URL fit for logs: external-link tokens and secret-looking query values replaced by `***`. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_PATH, '$1***').replace(SECRET_QUERY, '$1***');
}

/**
 * pino options for Fastify: structured JSON with the request id; the Authorization header,
 * cookies and any field named like a secret are redacted, and URLs are logged redacted.
 */
export function loggerOptions(level: string, stream?: { write(line: string): void }): FastifyServerOptions['logger'] {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        '*.password',
        '*.secret',
        '*.token',
        '*.api_token',
        '*.access_token',
      ],
      censor: '***',
    },
    serializers: {
      req(request: FastifyRequest) {
        return { id: request.id, method: request.method, url: redactUrl(request.url ?? ''), remoteAddress: request.ip };
      },
    },
  };
}
