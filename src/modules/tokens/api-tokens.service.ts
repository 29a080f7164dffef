import type { Db } from '../../db/index.js';
import { isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { randomHex, sha256Hex } from '../../shared/crypto.js';
import { badRequest, notFound } from '../../shared/errors.js';
import { isoSeconds } from '../../shared/time.js';
import type { AccountUser } from '../accounts/index.js';
import { type ShareTarget } from '../workspaces/index.js';
import { REQUIRED, scopeRefusal, type BaseAccess, type TokenPermission, type TokenScope } from '../access/index.js';
import { hasScopeFields, parseScopeInput, storedScope, type ScopeInput } from './token-scope-input.js';
import type { TokenUsage } from './token-usage.js';
import { API_TOKEN_KEY_PREFIX, credentialKey, type CredentialVersions } from './credential-versions.js';
import type { LastAccessRecorder } from './last-access.js';
import * as repo from './tokens.repository.js';
import type { ApiTokenRow, ApiTokenWithBase } from './tokens.repository.js';
import { CACHE_TTL_MS, TtlCache } from './ttl-cache.js';

export const MAX_APP_NAME_LENGTH = 255;
const API_TOKEN = /^[0-9a-f]{40}$/;

/** The contract's API-Token record. */
export interface ApiTokenRecord {
  app_name: string;
  api_token: string;
  generated_by: string;
  generated_at: string;
  last_access: string;
  permission: string;
  /** Scope fields (issue 33), present only when set, so unscoped tokens look as before. */
  tables?: string[];
  operations?: string[];
  allowed_networks?: string[];
  expires_at?: string;
  rate_limit?: number;
  /** The secret a rotation replaced stays valid until then. */
  previous_expires_at?: string;
  last_client_ip?: string;
  requests_per_day?: Array<{ day: string; requests: number }>;
}

/** Longest overlap a rotation may keep the old secret valid (30 days). */
export const MAX_ROTATION_OVERLAP_SECONDS = 30 * 24 * 3600;

/** What lists show instead of the token (never stored): its length, with only the last four characters. */
export function maskedToken(hint: string): string {
  return '*'.repeat(40 - hint.length) + hint;
}

/**
 * Named API-Tokens of a base, managed by its owner or admins. The token is 40 hex characters from
 * the CSPRNG, returned once at creation; only its SHA-256 is stored. Changing a token's permission
 * or deleting it revokes every Base-Token issued from it.
 */
export class ApiTokensService {
  /** Presented tokens by SHA-256, so a client exchanging its token again costs no query. */
  private readonly byHash: TtlCache<string, ApiTokenWithBase | undefined>;
  private readonly hashById = new Map<number, string>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly access: BaseAccess,
    private readonly versions: CredentialVersions,
    private readonly lastAccess: LastAccessRecorder,
    private readonly usage: TokenUsage,
  ) {
    this.byHash = new TtlCache(clock, CACHE_TTL_MS);
  }

  async list(user: AccountUser, target: ShareTarget): Promise<ApiTokenRecord[]> {
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageApiTokens);
    await this.usage.flush(); // so the rows read next carry the last client address
    const rows = await repo.listApiTokens(this.db, base.id);
    const perDay = await this.usage.perDay(rows.map((r) => r.id));
    return rows.map((row) => ({ ...this.record(row), ...(perDay.has(row.id) ? { requests_per_day: perDay.get(row.id) } : {}) }));
  }

  async create(user: AccountUser, target: ShareTarget, input: { appName: unknown; permission: unknown; body?: Record<string, unknown> }): Promise<ApiTokenRecord> {
    const appName = checkAppName(input.appName);
    const permission = checkPermission(input.permission);
    const scoped = parseScopeInput(input.body ?? {}, this.clock.now());
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageApiTokens);
    const token = randomHex(20);
    try {
      const row = await repo.insertApiToken(this.db, {
        base_id: base.id,
        app_name: appName,
        token_hash: sha256Hex(token),
        token_hint: token.slice(-4),
        permission,
        generated_by: user.virtualId,
        created_at: this.clock.now(),
        last_access: null,
        ...scopeColumns(scoped),
      });
      return this.record(row, token);
    } catch (error) {
      if (isUniqueViolation(error)) throw badRequest('api token already exist.');
      throw error;
    }
  }

  /**
   * Changes the permission (as the original) and, when the body names any scope field, the whole
   * scope (fields left out become unrestricted). Either revokes every Base-Token issued from it.
   */
  async update(user: AccountUser, target: ShareTarget, appName: string, body: Record<string, unknown>): Promise<ApiTokenRecord> {
    if (hasScopeFields(body)) {
      const scoped = parseScopeInput(body, this.clock.now());
      const row = await this.find(user, target, appName);
      const permission = body.permission === undefined ? (row.permission as TokenPermission) : checkPermission(body.permission);
      const values = { permission, ...scopeColumns(scoped) };
      await this.versions.revoke(credentialKey.apiToken(row.id), (trx) => repo.updateApiToken(trx, row.id, values));
      this.forgetCached(row.id);
      return this.record({ ...row, ...values });
    }
    const wanted = checkPermission(body.permission);
    const row = await this.find(user, target, appName);
    if (row.permission === wanted) throw badRequest(`api token already has ${wanted} permission.`);
    await this.versions.revoke(credentialKey.apiToken(row.id), (trx) => repo.updateApiTokenPermission(trx, row.id, wanted));
    this.forgetCached(row.id);
    return this.record({ ...row, permission: wanted });
  }

  async remove(user: AccountUser, target: ShareTarget, appName: string): Promise<void> {
    const row = await this.find(user, target, appName);
    await this.versions.revoke(credentialKey.apiToken(row.id), async (trx) => {
      if (!(await repo.deleteApiToken(trx, row.id))) throw notFound('api token not found.');
    });
    this.forgetCached(row.id);
    this.lastAccess.forget(row.id);
  }

  /**
   * A new secret for the token, returned once; the old one keeps working for `overlapSeconds`
   * (0 = ends now), so clients can be switched without downtime. Base-Tokens already issued stay
   * valid (their own expiry); deleting the token ends them all.
   */
  async rotate(user: AccountUser, target: ShareTarget, appName: string, overlap: unknown): Promise<ApiTokenRecord> {
    const seconds = checkOverlap(overlap);
    const row = await this.find(user, target, appName);
    const token = randomHex(20);
    const now = this.clock.now();
    const values = {
      token_hash: sha256Hex(token),
      token_hint: token.slice(-4),
      previous_token_hash: seconds > 0 ? row.token_hash : null,
      previous_expires_at: seconds > 0 ? now + seconds * 1000 : null,
    };
    await repo.updateApiToken(this.db, row.id, values);
    // The old secret's cached row says "current": drop it here, and on other instances through the bus (no revocation).
    this.byHash.evict(row.token_hash);
    this.forgetCached(row.id);
    await this.versions.announce(credentialKey.apiToken(row.id));
    return this.record({ ...row, ...values }, token);
  }

  /**
   * Whether a presented token may be exchanged now, from `ip`: expiry, the rotation window of an old
   * secret, and the allowed networks. Null when it may; else the refusal.
   */
  refusal(row: ApiTokenWithBase, ip: string | undefined): string | null {
    const now = this.clock.now();
    if (row.expires_at !== null && row.expires_at <= now) return 'API token expired.';
    if (row.matched === 'previous' && (row.previous_expires_at === null || row.previous_expires_at <= now)) return 'API token expired.';
    return scopeRefusal(this.scopeOf(row), { ip });
  }

  /** When a Base-Token issued from this row must end at the latest (ms), if earlier than its own lifetime. */
  notAfter(row: ApiTokenWithBase): number | undefined {
    const ends = [row.expires_at, row.matched === 'previous' ? row.previous_expires_at : null].filter((v): v is number => v !== null);
    return ends.length > 0 ? Math.min(...ends) : undefined;
  }

  scopeOf(row: Pick<ApiTokenRow, 'scope'>): TokenScope | undefined {
    return storedScope(row.scope);
  }

  /** Counts one request made with the token (exchange or gateway call), written in batches. */
  countUse(tokenId: number, ip: string | undefined): void {
    // The listeners hear an address only when it is not the token's last one (they heard that one already).
    if (this.usage.record(tokenId, ip) && ip !== undefined) for (const listener of this.useListeners) listener(tokenId, ip);
  }

  private readonly useListeners: Array<(tokenId: number, ip: string) => void> = [];

  /** Called on a use of an API-Token from another address than its last (the audit log's new-network check, wired in the container). */
  onUse(listener: (tokenId: number, ip: string) => void): void {
    this.useListeners.push(listener);
  }

  /** The API-Token a client presents, with its base and revocation version; undefined for anything unknown. */
  async authenticate(token: string): Promise<ApiTokenWithBase | undefined> {
    if (!API_TOKEN.test(token)) return undefined;
    const hash = sha256Hex(token);
    const row = await this.byHash.get(hash, () => repo.findApiTokenByHash(this.db, hash, API_TOKEN_KEY_PREFIX));
    if (row) {
      if (this.hashById.size >= 50_000) this.clearCache(); // bounded: entries also age out of byHash
      this.hashById.set(row.id, hash);
    }
    return row;
  }

  /** Drops a token from the lookup cache (revoked here or, through the bus, elsewhere). */
  forgetCached(tokenId: number): void {
    const hash = this.hashById.get(tokenId);
    if (hash === undefined) return;
    this.hashById.delete(tokenId);
    this.byHash.evict(hash);
  }

  /** Drops every cached token (a base was renamed or deleted, or news may have been missed). */
  clearCache(): void {
    this.hashById.clear();
    this.byHash.clear();
  }

  /** Notes that a Base-Token was issued from the token (written behind, see LastAccessRecorder). */
  recordUse(tokenId: number): Promise<void> {
    return this.lastAccess.record(tokenId);
  }

  private async find(user: AccountUser, target: ShareTarget, appName: string): Promise<ApiTokenRow> {
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageApiTokens);
    const row = await repo.findApiToken(this.db, base.id, appName);
    if (!row) throw notFound('api token not found.');
    return row;
  }

  private record(row: ApiTokenRow, plaintext?: string): ApiTokenRecord {
    const scope = storedScope(row.scope);
    const inWindow = row.previous_expires_at !== null && row.previous_expires_at > this.clock.now();
    const lastIp = this.usage.pendingIp(row.id) ?? row.last_ip;
    return {
      ...(scope?.tables ? { tables: scope.tables } : {}),
      ...(scope?.operations ? { operations: scope.operations } : {}),
      ...(scope?.networks ? { allowed_networks: scope.networks } : {}),
      ...(row.expires_at !== null ? { expires_at: isoSeconds(row.expires_at) } : {}),
      ...(row.rate_per_minute !== null ? { rate_limit: row.rate_per_minute } : {}),
      ...(inWindow ? { previous_expires_at: isoSeconds(row.previous_expires_at!) } : {}),
      ...(lastIp ? { last_client_ip: lastIp } : {}),
      app_name: row.app_name,
      api_token: plaintext ?? maskedToken(row.token_hint),
      generated_by: row.generated_by,
      generated_at: isoSeconds(row.created_at),
      // The creation time until first use, as the original: typed clients reject "".
      last_access: isoSeconds(this.lastAccess.latest(row.id, row.last_access) ?? row.created_at),
      permission: row.permission,
    };
  }
}

/**
 * Non-blank, at most 255 characters, no control characters, not `.` or `..`: it travels
 * URL-encoded in paths, where clients and proxies would resolve those two away.
 */
export function checkAppName(value: unknown): string {
  if (
    typeof value !== 'string' ||
    value.trim() === '' ||
    value === '.' ||
    value === '..' ||
    [...value].length > MAX_APP_NAME_LENGTH ||
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f]/.test(value)
  ) {
    throw badRequest('app_name invalid.');
  }
  return value;
}

export function checkPermission(value: unknown): TokenPermission {
  if (value !== 'r' && value !== 'rw') throw badRequest('permission invalid.');
  return value;
}

function scopeColumns(input: ScopeInput) {
  return {
    scope: input.scope ? JSON.stringify(input.scope) : null,
    expires_at: input.expiresAt,
    rate_per_minute: input.ratePerMinute,
  };
}

/** Seconds the old secret stays valid after a rotation; absent = 0 (ends at once). */
export function checkOverlap(value: unknown): number {
  if (value === undefined || value === null || value === '') return 0;
  const n = typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_ROTATION_OVERLAP_SECONDS) {
    throw badRequest(`overlap_seconds invalid: 0 to ${MAX_ROTATION_OVERLAP_SECONDS}.`);
  }
  return n;
}
