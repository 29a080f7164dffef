import { createHmac } from 'node:crypto';
import { VERSION } from '../../version.js';

/**
 * Every header of a delivery attempt. The signatures cover the exact bytes of `body`:
 * - `X-Service-Signature: sha1=<hex HMAC-SHA1>` — the name the specification documents;
 * - `X-Service-Signature-256` and `X-SeaTable-Signature: sha256=<hex HMAC-SHA256>` — the latter is what
 *   receivers written for the original API check;
 * - `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">` — Standard Webhooks, whose
 *   key here is the UTF-8 bytes of the secret. During a secret rotation's window a second `v1,` entry,
 *   space-separated, signs with the previous secret (Standard Webhooks allows several).
 */
export function deliveryHeaders(input: { msgId: string; timestampSeconds: number; body: string; secret: string | null; previousSecret?: string | null }): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': `basegate/${VERSION}`,
    'webhook-id': input.msgId,
    'webhook-timestamp': String(input.timestampSeconds),
  };
  if (input.secret === null || input.secret === '') return headers;
  const sha256 = createHmac('sha256', input.secret).update(input.body, 'utf8').digest('hex');
  headers['x-service-signature'] = `sha1=${createHmac('sha1', input.secret).update(input.body, 'utf8').digest('hex')}`;
  headers['x-service-signature-256'] = `sha256=${sha256}`;
  headers['x-seatable-signature'] = `sha256=${sha256}`;
  // HMAC of "{id}.{timestamp}.{body}", fed in parts (no copy of the body).
  const standard = (key: string) => createHmac('sha256', key).update(`${input.msgId}.${input.timestampSeconds}.`, 'utf8').update(input.body, 'utf8').digest('base64');
  headers['webhook-signature'] = `v1,${standard(input.secret)}`;
  if (input.previousSecret) headers['webhook-signature'] += ` v1,${standard(input.previousSecret)}`;
  return headers;
}
