import { createRequire } from 'node:module';
import type { FastifyRequest, FastifyServerOptions } from 'fastify';

const require = createRequire(import.meta.url);

/**
 * Log lines for a person at a terminal: pino-pretty's coloured one-liners (synchronous, in this
 * thread). Loaded only when stdout is a TTY; anywhere else (files, pipes, containers) logs stay JSON.
 */
function prettyStream(): { write(line: string): void } {
  const pretty = require('pino-pretty') as (options: Record<string, unknown>) => { write(line: string): void };
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', sync: true });
}

/** A parameter or query name that may carry a secret, once decoded (`pass%77ord`, `Token[]`, …). */
const SECRET_NAME = /pass|pwd|token|secret|key|signature|auth/i;
/** Path segments followed by an external-link token, once decoded. */
const SECRET_SEGMENT_BEFORE = new Set(['external-link-tokens', 'external-links']);

function decode(text: string): string {
  let out = text.replace(/\+/g, ' ');
  // Decoded until stable (at most a few rounds), so double encodings are seen through too.
  for (let i = 0; i < 3; i++) {
    try {
      const next = decodeURIComponent(out);
      if (next === out) break;
      out = next;
    } catch {
      break;
    }
  }
  return out;
}

/** The query string with the value of every secret-looking name (as decoded) replaced by `***`. */
function redactQuery(query: string): string {
  return query
    .split(/([&;])/)
    .map((part) => {
      if (part === '&' || part === ';') return part;
      const eq = part.indexOf('=');
      const name = eq < 0 ? part : part.slice(0, eq);
      if (!SECRET_NAME.test(decode(name))) return part;
      return eq < 0 ? part : `${name}=***`;
    })
    .join('');
}

/** The path with each segment after `external-link-tokens` / `external-links` (as decoded) replaced. */
function redactPath(path: string, secretParams: ReadonlySet<string>): string {
  const segments = path.split('/');
  return segments
    .map((segment, i) => {
      const previous = i > 0 ? decode(segments[i - 1]!).toLowerCase() : '';
      if (segment !== '' && SECRET_SEGMENT_BEFORE.has(previous)) return '***';
      if (segment !== '' && secretParams.has(decode(segment))) return '***';
      return segment;
    })
    .join('/');
}

/**
 * A URL fit for logs: external-link tokens, the values of secret-looking route parameters, and the
 * values of secret-looking query names replaced by `***` — judged on the decoded text, so
 * percent-encoded spellings are caught. `params` are the parsed route parameters, when known.
 */
export function redactUrl(url: string, params: Record<string, unknown> = {}): string {
  const secretParams = new Set<string>();
  for (const [name, value] of Object.entries(params)) {
    if (SECRET_NAME.test(name) && typeof value === 'string' && value !== '') secretParams.add(value);
  }
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return redactPath(path, secretParams) + (q < 0 ? '' : `?${redactQuery(url.slice(q + 1))}`);
}

/**
 * pino options for Fastify: structured JSON with the request id (human-readable when stdout is a
 * terminal); the Authorization header, cookies and any field named like a secret are redacted, and
 * URLs are logged redacted.
 */
export function loggerOptions(level: string, stream?: { write(line: string): void }, isTty = process.stdout.isTTY === true): FastifyServerOptions['logger'] {
  const out = stream ?? (isTty && level !== 'silent' ? prettyStream() : undefined);
  return {
    level,
    ...(out ? { stream: out } : {}),
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
        '*.old_password',
        '*.new_password',
      ],
      censor: '***',
    },
    serializers: {
      req(request: FastifyRequest) {
        const params = (request.params ?? {}) as Record<string, unknown>;
        return { id: request.id, method: request.method, url: redactUrl(request.url ?? '', params), remoteAddress: request.ip };
      },
    },
  };
}
