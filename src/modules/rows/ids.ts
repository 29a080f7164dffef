import { randomInt } from 'node:crypto';
import { randomUrlSafeId } from '../../shared/ids.js';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` random characters of `alphabet` (letters and digits by default). */
export function randomAlnum(length: number, alphabet = ALNUM): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** A 4-character id (table id, column key, view id, link id) not in `taken`. */
export function newShortId(taken: Iterable<string>): string {
  const used = new Set(taken);
  for (;;) {
    const id = randomAlnum(4);
    if (!used.has(id)) return id;
  }
}

/** 22 url-safe characters, as the original's row ids. */
export function newRowId(): string {
  return randomUrlSafeId(22);
}
