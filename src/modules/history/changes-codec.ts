import { deflateRawSync, inflateRawSync } from 'node:zlib';

/** Logged changes longer than this (characters of JSON) are stored compressed. */
export const COMPRESS_ABOVE = 2048;
/** Marks a compressed entry; JSON text always starts with `{`, so the two never mix. */
const PREFIX = 'z:';

/**
 * The operation log's `changes` text: JSON as it is when small, else raw deflate in base64 behind
 * `z:` (a text column on both engines). Large deletes and wide rows shrink several times.
 */
export function encodeChanges(json: string): string {
  if (json.length <= COMPRESS_ABOVE) return json;
  // Level 1: about half the time of the default level for ~7% more bytes (paid inside every large write).
  const packed = PREFIX + deflateRawSync(Buffer.from(json, 'utf8'), { level: 1 }).toString('base64');
  return packed.length < json.length ? packed : json;
}

export function decodeChanges(stored: string): string {
  return stored.startsWith(PREFIX) ? inflateRawSync(Buffer.from(stored.slice(PREFIX.length), 'base64')).toString('utf8') : stored;
}
