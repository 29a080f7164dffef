import { hash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scrypt = promisify(scryptCb) as (pw: string, salt: Buffer, keylen: number, opts: object) => Promise<Buffer>;

/** 40 lowercase hex characters from the CSPRNG: the shape of Account- and API-Tokens. */
export function randomHex(bytes = 20): string {
  return randomBytes(bytes).toString('hex');
}

export function sha256Hex(value: string): string {
  // One-shot `hash` (Node 20.12+): about a third of createHash's cost for short inputs (an audit row's link).
  return hash('sha256', value, 'hex');
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) {
    // Compare against itself so the time spent does not reveal the length mismatch early.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

const SCRYPT_PARAMS = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_LENGTH = 32;
/** The cost (scrypt's N) of new hashes; only the test apps lower it (usePasswordHashCost). */
let costOfNewHashes = SCRYPT_PARAMS.N;

/**
 * For the test suite's in-process apps only: hash new passwords at a lower cost (a power of two,
 * at least 1024). Every stored hash names its own cost, so verification is the same code either way;
 * the suite hashes thousands of passwords and each costs ~50 ms of CPU at the real cost.
 */
export function usePasswordHashCost(n: number): void {
  if (!Number.isInteger(Math.log2(n)) || n < 1024 || n > SCRYPT_PARAMS.N) throw new Error(`password hash cost must be a power of two from 1024 to ${SCRYPT_PARAMS.N}`);
  costOfNewHashes = n;
}

/** Hash a password as `scrypt$N$r$p$salt$hash` (base64 parts). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const { r, p, maxmem } = SCRYPT_PARAMS;
  const N = costOfNewHashes;
  const key = await scrypt(password, salt, KEY_LENGTH, { N, r, p, maxmem });
  return ['scrypt', N, r, p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, saltB64, keyB64] = stored.split('$');
  if (scheme !== 'scrypt' || !saltB64 || !keyB64) return false;
  const expected = Buffer.from(keyB64, 'base64');
  const actual = await scrypt(password, Buffer.from(saltB64, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT_PARAMS.maxmem,
  });
  return timingSafeEqual(actual, expected);
}
