import { randomBytes, randomFillSync, randomUUID } from 'node:crypto';

const UUID_DASHED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const UUID_HEX = /^[0-9a-f]{32}$/;

export function newBaseUuid(): string {
  return randomUUID();
}

/** Accept a dashed or 32-hex uuid (any case) and return the dashed lowercase form, or null. */
export function normalizeUuid(input: string): string | null {
  const value = input.trim().toLowerCase();
  if (UUID_DASHED.test(value)) return value;
  if (UUID_HEX.test(value)) {
    return `${value.slice(0, 8)}-${value.slice(8, 12)}-${value.slice(12, 16)}-${value.slice(16, 20)}-${value.slice(20)}`;
  }
  return null;
}

/** A user's public id, `<32 hex>@auth.local`, as the original's virtual ids. */
export function newUserVirtualId(): string {
  return `${randomBytes(16).toString('hex')}@auth.local`;
}

const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Random bytes drawn from the CSPRNG 8 KB at a time: one call per id cost about as much as inserting
 * the row (a 1,000-row append draws 1,000 ids). Each byte is handed out once.
 */
const pool = Buffer.alloc(8192);
let poolUsed = pool.length;

/** Random id of `length` characters from the URL-safe alphabet (row ids are 22). */
export function randomUrlSafeId(length: number): string {
  if (length > pool.length) return randomUrlSafeIdFrom(randomBytes(length), 0, length);
  if (poolUsed + length > pool.length) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  const start = poolUsed;
  poolUsed += length;
  return randomUrlSafeIdFrom(pool, start, length);
}

function randomUrlSafeIdFrom(bytes: Buffer, start: number, length: number): string {
  let out = '';
  for (let i = start; i < start + length; i++) out += URL_SAFE[bytes[i]! & 63];
  return out;
}

/** A positive integer id from a path or body value (`"12"` or `12`), or null when it is not one. */
export function parsePositiveId(value: unknown): number | null {
  const text = typeof value === 'number' || typeof value === 'string' ? String(value).trim() : '';
  if (!/^\d{1,15}$/.test(text)) return null;
  const id = Number(text);
  return id > 0 ? id : null;
}
