import { isIP } from 'node:net';
import { blockedAddressReason } from '../../platform/http/index.js';
import { badRequest } from '../../shared/errors.js';

export const MAX_URL_LENGTH = 2000;

/**
 * The `url` of a webhook: a string, at most 2000 characters, an absolute http:// or https:// URL
 * with a host. Returned trimmed; the text is kept as given (uniqueness compares it as is).
 */
export function checkWebhookUrl(input: unknown, options: { allowPrivate: boolean } = { allowPrivate: false }): string {
  if (input === undefined || input === null || (typeof input === 'string' && input.trim() === '')) {
    throw badRequest('url is required.');
  }
  if (typeof input !== 'string') throw badRequest('url invalid.');
  const url = input.trim();
  if (url.length > MAX_URL_LENGTH) throw badRequest(`url is too long (at most ${MAX_URL_LENGTH} characters).`);
  if (!/^https?:\/\//i.test(url)) throw badRequest('url invalid: it must start with http:// or https://.');
  if (/\s/.test(url)) throw badRequest('url invalid: it contains white space.');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest('url invalid.');
  }
  if (!parsed.hostname || parsed.hostname.length > 253) throw badRequest('url invalid: it has no valid host.');
  if (!options.allowPrivate) refuseLiteralPrivateHost(parsed.hostname);
  return url;
}

/**
 * Refuses a host that is a literal loopback, private, link-local or metadata address (the URL
 * parser has already turned spellings like `0x7f.1` or `2130706433` into dotted IPv4), or
 * `localhost`. Names that resolve to such addresses are caught by the delivery-time guard.
 */
function refuseLiteralPrivateHost(hostname: string): void {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const reason = isIP(host) !== 0 ? blockedAddressReason(host) : /(^|\.)localhost\.?$/.test(host) ? 'loopback' : null;
  if (reason) {
    throw badRequest(`url invalid: ${host} is refused (${reason}); set WEBHOOK_ALLOW_PRIVATE=true to allow it.`);
  }
}

export const MAX_SECRET_LENGTH = 1000;

/**
 * The `secret` field: undefined = not given; '' or null = no secret; a string or a number (the
 * original's documentation types it as integer) = the secret, at most 1000 characters.
 */
export function checkSecret(input: unknown): string | null | undefined {
  if (input === undefined) return undefined;
  if (input === null || input === '') return null;
  if (typeof input === 'number' && Number.isFinite(input)) return String(input);
  if (typeof input !== 'string') throw badRequest('secret invalid: it must be a string.');
  if (input.length > MAX_SECRET_LENGTH) throw badRequest(`secret is too long (at most ${MAX_SECRET_LENGTH} characters).`);
  return input;
}
