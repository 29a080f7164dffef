import { badRequest } from '../../shared/errors.js';
import {
  MAX_SCOPE_NETWORKS,
  MAX_SCOPE_TABLES,
  TOKEN_OPERATIONS,
  isTokenOperation,
  parseNetwork,
  type TokenOperation,
  type TokenScope,
} from '../access/index.js';

/** The scope fields of an API-Token's create or update body, checked (issue 33). */
export interface ScopeInput {
  scope: TokenScope | null;
  expiresAt: number | null;
  ratePerMinute: number | null;
}

export const MAX_TOKEN_RATE_PER_MINUTE = 1_000_000;
const MAX_NAME = 1024;

/** True when the body carries any scope field (an update that names none keeps the scope). */
export function hasScopeFields(body: Record<string, unknown>): boolean {
  return ['tables', 'operations', 'allowed_networks', 'expires_at', 'rate_limit'].some((k) => body[k] !== undefined);
}

/**
 * Reads `tables`, `operations`, `allowed_networks` (arrays, or comma-separated strings from forms),
 * `expires_at` (ISO 8601 or seconds since the epoch, in the future) and `rate_limit` (requests per
 * minute). Empty or absent means "no restriction" for that dimension.
 */
export function parseScopeInput(body: Record<string, unknown>, nowMs: number): ScopeInput {
  const tables = list(body.tables, 'tables', MAX_SCOPE_TABLES);
  if (tables?.some((t) => t.length > MAX_NAME)) throw badRequest('tables invalid.');
  const ops = list(body.operations, 'operations', TOKEN_OPERATIONS.length);
  if (ops && !ops.every(isTokenOperation)) throw badRequest(`operations invalid: use ${TOKEN_OPERATIONS.join(', ')}.`);
  const networks = list(body.allowed_networks, 'allowed_networks', MAX_SCOPE_NETWORKS);
  if (networks && !networks.every((n) => parseNetwork(n) !== null)) throw badRequest('allowed_networks invalid: use CIDR such as 203.0.113.0/24.');
  const scope: TokenScope = {
    ...(tables ? { tables } : {}),
    ...(ops ? { operations: [...new Set(ops)] as TokenOperation[] } : {}),
    ...(networks ? { networks: networks.map((n) => n.trim()) } : {}),
  };
  return {
    scope: Object.keys(scope).length > 0 ? scope : null,
    expiresAt: expiry(body.expires_at, nowMs),
    ratePerMinute: rate(body.rate_limit),
  };
}

function list(value: unknown, field: string, max: number): string[] | null {
  if (value === undefined || value === null || value === '') return null;
  const items = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(items) || items.length > max || !items.every((i) => typeof i === 'string' && i.trim() !== '')) {
    throw badRequest(`${field} invalid: a list of at most ${max} non-empty strings.`);
  }
  return items.map((i: string) => i.trim());
}

function expiry(value: unknown, nowMs: number): number | null {
  if (value === undefined || value === null || value === '') return null;
  let ms: number;
  if (typeof value === 'number' || (typeof value === 'string' && /^\d{1,12}$/.test(value))) ms = Number(value) * 1000;
  else if (typeof value === 'string' && value.length <= 64 && /^\d{4}-\d{2}-\d{2}T/.test(value)) ms = Date.parse(value);
  else throw badRequest('expires_at invalid: ISO 8601 or seconds since the epoch.');
  if (!Number.isFinite(ms)) throw badRequest('expires_at invalid: ISO 8601 or seconds since the epoch.');
  if (ms <= nowMs) throw badRequest('expires_at must be in the future.');
  return ms;
}

function rate(value: unknown): number | null {
  if (value === undefined || value === null || value === '') return null;
  const n = typeof value === 'string' && /^\d{1,8}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_TOKEN_RATE_PER_MINUTE) {
    throw badRequest(`rate_limit invalid: requests per minute, 1 to ${MAX_TOKEN_RATE_PER_MINUTE}.`);
  }
  return n;
}

/** The stored scope column. */
export function storedScope(text: string | null): TokenScope | undefined {
  if (text === null) return undefined;
  return JSON.parse(text) as TokenScope;
}
