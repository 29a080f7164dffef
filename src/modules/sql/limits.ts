import { isNode } from './parser.js';
import { sqlError } from './sql-error.js';
import { constantOf, describe, type Bindings } from './values.js';

/** Rows a SELECT returns without LIMIT (the original's default). */
export const DEFAULT_LIMIT = 100;
/** Rows any SELECT returns at most, whatever its LIMIT says. */
export const MAX_LIMIT = 10_000;

export interface Window {
  limit: number;
  offset: number;
}

function count(value: unknown, bindings: Bindings, what: string): number {
  const constant = isNode(value) ? constantOf(value, bindings) : undefined;
  const n = typeof constant === 'string' && /^\s*\d{1,30}\s*$/.test(constant) ? Number(constant) : constant;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    throw sqlError(`${what} must be a whole number of 0 or more${constant === undefined ? '' : `, got ${describe(constant)}`}.`);
  }
  if (what === 'LIMIT') return Math.min(n, MAX_LIMIT);
  if (!Number.isSafeInteger(n)) throw sqlError(`${what} is too large.`);
  return n;
}

/** `LIMIT n`, `LIMIT n OFFSET m` and `LIMIT m, n`; the count is capped at MAX_LIMIT. */
export function selectWindow(limit: unknown, bindings: Bindings): Window {
  if (limit === null || limit === undefined) return { limit: DEFAULT_LIMIT, offset: 0 };
  const node = limit as { seperator?: unknown; value?: unknown };
  const values = Array.isArray(node.value) ? node.value : [];
  if (values.length === 0) return { limit: DEFAULT_LIMIT, offset: 0 };
  let n: number;
  let offset = 0;
  if (values.length === 1) n = count(values[0], bindings, 'LIMIT');
  else if (values.length === 2 && node.seperator === ',') {
    offset = count(values[0], bindings, 'OFFSET');
    n = count(values[1], bindings, 'LIMIT');
  } else if (values.length === 2 && String(node.seperator).toLowerCase() === 'offset') {
    n = count(values[0], bindings, 'LIMIT');
    offset = count(values[1], bindings, 'OFFSET');
  } else {
    throw sqlError('Unsupported LIMIT clause.');
  }
  return { limit: Math.min(n, MAX_LIMIT), offset };
}
