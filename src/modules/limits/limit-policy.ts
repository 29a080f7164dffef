import { decodeJwt } from 'jose';
import { normalizeUuid } from '../../shared/ids.js';

/**
 * Pure rate-limit decisions: which class a path belongs to, which key a request is counted
 * under, and what a counter value means. No I/O here; `rate-limiter.ts` does the counting.
 */

/** `account`: /api/v2.1/*, /api2/* and anything else; `base`: /api-gateway/*; `auth-token`: /api2/auth-token/. */
export type LimitClass = 'account' | 'base' | 'auth-token';

export const LIMIT_CLASSES: readonly LimitClass[] = ['account', 'base', 'auth-token'];

/** Requests per minute for each class; 0 = unlimited. */
export type ClassLimits = Record<LimitClass, number>;

export const WINDOW_SECONDS = 60;

/** Paths (trailing slash optional) that are never counted. */
const EXEMPT = new Set(['/ping', '/api2/ping', '/api-gateway/api/v2/ping', '/server-info', '/metrics']);

/** Path without query string and without trailing slashes (`/` stays `/`). */
export function normalizePath(url: string): string {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  while (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return path;
}

/**
 * The class of a path — a route pattern such as `/api2/auth-token/` or a raw URL — or null when
 * exempt. Paths outside the documented prefixes count as account operations so that no endpoint
 * (not even an unknown one) is unlimited.
 */
export function classify(url: string): LimitClass | null {
  const path = normalizePath(url);
  if (EXEMPT.has(path)) return null;
  if (path === '/api2/auth-token') return 'auth-token';
  if (isGatewayPath(path)) return 'base';
  return 'account';
}

/** `/api-gateway/` responses carry the x-ratelimit-* headers. */
export function isGatewayPath(url: string): boolean {
  return url === '/api-gateway' || url.startsWith('/api-gateway/') || url.startsWith('/api-gateway?');
}

/** What a request is counted under: its base, or the client IP when it addresses none. */
export type RateKey = { kind: 'base'; uuid: string } | { kind: 'ip'; ip: string };

/** The counter name of a key within a class. */
export function storageKey(key: RateKey): string {
  return key.kind === 'base' ? `base:${key.uuid}` : `ip:${key.ip}`;
}

/** The normalized `base_uuid` path parameter (dashed or 32-hex, any case), or null. */
export function baseUuidFromParams(params: unknown): string | null {
  const raw = (params as { base_uuid?: unknown } | null)?.base_uuid;
  return typeof raw === 'string' ? normalizeUuid(raw) : null;
}

export interface WorkspaceBaseRef {
  workspaceId: number;
  baseName: string;
}

/** `workspace_id` + `base_name` path parameters, or null when absent or malformed. */
export function workspaceBaseFromParams(params: unknown): WorkspaceBaseRef | null {
  const p = params as { workspace_id?: unknown; base_name?: unknown } | null;
  if (typeof p?.workspace_id !== 'string' || typeof p.base_name !== 'string') return null;
  if (!/^\d{1,15}$/.test(p.workspace_id) || p.base_name === '') return null;
  const workspaceId = Number(p.workspace_id);
  return workspaceId > 0 ? { workspaceId, baseName: p.base_name } : null;
}

/**
 * The `dtable_uuid` claim of a Base-Token in an `Authorization` header, read WITHOUT verifying the
 * signature: it only chooses a counter, before base-auth verifies the token. A forged token can
 * spend a base's budget no more than an unauthenticated request naming the base's uuid in its
 * path can, which the limiter must count anyway.
 */
export function baseUuidFromBaseToken(authorization: string | undefined): string | null {
  if (!authorization) return null;
  const match = /^\s*(?:token|bearer)\s+(\S+)\s*$/i.exec(authorization);
  if (!match) return null;
  try {
    const claim = decodeJwt(match[1]!).dtable_uuid;
    return typeof claim === 'string' ? normalizeUuid(claim) : null;
  } catch {
    return null;
  }
}

/** What a counted request learns; times are whole seconds, as the headers carry them. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the current window of this key ends and the counter starts from zero. */
  resetAt: number;
  /** Seconds until then, at least 1: the `Retry-After` of a 429. */
  retryAfter: number;
}

/**
 * Turn a fixed-window counter into a decision. `consumed` includes this request; a request is
 * allowed while `consumed <= limit`. `msBeforeNext` is what is left of the key's window.
 */
export function decide(limit: number, consumed: number, msBeforeNext: number, nowMs: number): RateDecision {
  const msLeft = msBeforeNext >= 0 ? msBeforeNext : WINDOW_SECONDS * 1000;
  return {
    allowed: consumed <= limit,
    limit,
    remaining: Math.max(0, limit - consumed),
    resetAt: Math.ceil((nowMs + msLeft) / 1000),
    retryAfter: Math.max(1, Math.ceil(msLeft / 1000)),
  };
}

/** The three usage headers of an `/api-gateway/` response. */
export function usageHeaders(decision: RateDecision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetAt),
  };
}
