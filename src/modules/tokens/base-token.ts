import { errors as joseErrors, jwtVerify } from 'jose';
import type { Clock } from '../../shared/clock.js';
import { isTokenOperation, isUnscoped, type BaseTokenClaims, type BaseTokenGrant, type BaseTokenSource, type TokenScope } from '../access/index.js';
import { signHs256 } from './jws.js';

export const BASE_TOKEN_TTL_SECONDS = 3 * 24 * 3600;

export type VerifyResult = { ok: true; claims: BaseTokenClaims } | { ok: false; reason: 'expired' | 'invalid' };

/**
 * Base-Tokens: HS256 JWTs signed with SECRET_KEY, valid three days, carrying the original's
 * claims (`dtable_uuid`, `permission`, `username`, `app_name`, `owner_id`, …) plus our own
 * source and version claims for revocation. The algorithm is pinned on verification.
 */
export class BaseTokenSigner {
  private readonly key: Uint8Array;

  constructor(
    secretKey: string,
    private readonly clock: Clock,
  ) {
    this.key = new TextEncoder().encode(`base-token:${secretKey}`);
  }

  /** `notAfter` (seconds) shortens the lifetime, e.g. to an external link's own expiry. */
  sign(grant: BaseTokenGrant, notAfter?: number): { token: string; expiresAt: number } {
    const now = Math.floor(this.clock.now() / 1000);
    const expiresAt = Math.min(now + BASE_TOKEN_TTL_SECONDS, notAfter ?? Infinity);
    const token = signHs256(
      {
        dtable_uuid: grant.baseUuid,
        permission: grant.permission,
        username: grant.username,
        app_name: grant.appName ?? '',
        owner_id: grant.ownerId,
        org_id: -1,
        id_in_org: '',
        user_department_ids_map: { current_user_department_ids: [], current_user_department_and_sub_ids: [] },
        src: grant.source,
        sid: grant.sourceId,
        ver: grant.version,
        ...(grant.scope && !isUnscoped(grant.scope) ? { scp: grant.scope } : {}),
        ...(grant.ratePerMinute ? { rpm: grant.ratePerMinute } : {}),
        iat: now,
        exp: expiresAt,
      },
      this.key,
    );
    return { token, expiresAt };
  }

  async verify(token: string): Promise<VerifyResult> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        currentDate: new Date(this.clock.now()),
      });
      const claims = toClaims(payload);
      return claims ? { ok: true, claims } : { ok: false, reason: 'invalid' };
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) return { ok: false, reason: 'expired' };
      return { ok: false, reason: 'invalid' };
    }
  }
}

const SOURCES: readonly string[] = ['account', 'api-token', 'temp-api-token', 'external-link'];

function toClaims(p: Record<string, unknown>): BaseTokenClaims | null {
  if (typeof p.dtable_uuid !== 'string' || (p.permission !== 'r' && p.permission !== 'rw')) return null;
  if (typeof p.src !== 'string' || !SOURCES.includes(p.src) || typeof p.sid !== 'number' || typeof p.ver !== 'number') return null;
  if (typeof p.exp !== 'number') return null;
  const scope = p.scp === undefined ? undefined : toScope(p.scp);
  if (scope === null) return null;
  return {
    ...(scope ? { scope } : {}),
    ...(typeof p.rpm === 'number' && p.rpm > 0 ? { ratePerMinute: p.rpm } : {}),
    baseUuid: p.dtable_uuid,
    permission: p.permission,
    username: typeof p.username === 'string' ? p.username : '',
    ownerId: typeof p.owner_id === 'string' ? p.owner_id : '',
    appName: typeof p.app_name === 'string' && p.app_name !== '' ? p.app_name : null,
    source: p.src as BaseTokenSource,
    sourceId: p.sid,
    version: p.ver,
    expiresAt: p.exp,
  };
}

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** A signed scope claim; null when malformed (the token is then invalid: fail closed). */
function toScope(v: unknown): TokenScope | null {
  if (typeof v !== 'object' || v === null) return null;
  const { tables, operations, networks, view } = v as Record<string, unknown>;
  if (tables !== undefined && !strings(tables)) return null;
  if (view !== undefined && !isViewLimit(view)) return null;
  if (networks !== undefined && !strings(networks)) return null;
  if (operations !== undefined && !(Array.isArray(operations) && operations.every(isTokenOperation))) return null;
  return {
    ...(tables ? { tables } : {}),
    ...(operations ? { operations } : {}),
    ...(networks ? { networks } : {}),
    ...(view ? { view: view as { table: string; view: string } } : {}),
  };
}

function isViewLimit(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  const { table, view } = v as Record<string, unknown>;
  return typeof table === 'string' && typeof view === 'string';
}
