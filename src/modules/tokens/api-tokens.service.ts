import type { Db } from '../../db/index.js';
import { isUniqueViolation } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import { randomHex, sha256Hex } from '../../shared/crypto.js';
import { badRequest, notFound } from '../../shared/errors.js';
import { isoSeconds } from '../../shared/time.js';
import type { AccountUser } from '../accounts/index.js';
import { type ShareTarget } from '../workspaces/index.js';
import { REQUIRED, type BaseAccess, type TokenPermission } from '../access/index.js';
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
}

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
  ) {
    this.byHash = new TtlCache(clock, CACHE_TTL_MS);
  }

  async list(user: AccountUser, target: ShareTarget): Promise<ApiTokenRecord[]> {
    const { base } = await this.access.resolve(user, target.workspaceId, target.baseName, REQUIRED.manageApiTokens);
    const rows = await repo.listApiTokens(this.db, base.id);
    return rows.map((row) => this.record(row));
  }

  async create(user: AccountUser, target: ShareTarget, input: { appName: unknown; permission: unknown }): Promise<ApiTokenRecord> {
    const appName = checkAppName(input.appName);
    const permission = checkPermission(input.permission);
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
      });
      return this.record(row, token);
    } catch (error) {
      if (isUniqueViolation(error)) throw badRequest('api token already exist.');
      throw error;
    }
  }

  async update(user: AccountUser, target: ShareTarget, appName: string, permission: unknown): Promise<ApiTokenRecord> {
    const wanted = checkPermission(permission);
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
    return {
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
