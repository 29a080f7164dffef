import type { Db, Executor } from '../../db/index.js';
import type { BaseTokenClaims } from '../access/index.js';
import type { TtlCache } from './ttl-cache.js';
import type { InvalidationBus } from './invalidation-bus.js';
import * as repo from './tokens.repository.js';

/** The credential a Base-Token was issued from, as a key of the versions table. */
export const API_TOKEN_KEY_PREFIX = 'api-token:';

export const credentialKey = {
  apiToken: (tokenId: number) => `${API_TOKEN_KEY_PREFIX}${tokenId}`,
  externalLink: (linkId: number) => `external-link:${linkId}`,
  /** Account-Token and temporary API-Token grants stand on the user's access to the base. */
  share: (baseId: number, userId: number) => `share:${baseId}:${userId}`,
};

export function keyOfClaims(claims: Pick<BaseTokenClaims, 'source' | 'sourceId'>, baseId: number): string {
  switch (claims.source) {
    case 'api-token':
      return credentialKey.apiToken(claims.sourceId);
    case 'external-link':
      return credentialKey.externalLink(claims.sourceId);
    case 'account':
    case 'temp-api-token':
      return credentialKey.share(baseId, claims.sourceId);
  }
}

const TOPIC = 'v:';

/**
 * Revocation by version: revoking a credential increments its version in the database; a
 * Base-Token whose `ver` claim differs from the current version is refused. Current versions are
 * cached in memory (no query per gateway request) and evicted here at once, and on the other
 * instances through the bus.
 */
export class CredentialVersions {
  constructor(
    private readonly db: Db,
    private readonly cache: TtlCache<string, number>,
    private readonly bus: InvalidationBus,
  ) {}

  current(key: string): Promise<number> {
    return this.cache.get(key, () => repo.findCredentialVersion(this.db, key));
  }

  /** Bumps the version, in one transaction with `change` (e.g. deleting the credential) if given. */
  async revoke(key: string, change?: (trx: Executor) => Promise<void>): Promise<void> {
    const version = change
      ? await this.db.transaction().execute(async (trx) => {
          await change(trx);
          return repo.bumpCredentialVersion(trx, key);
        })
      : await repo.bumpCredentialVersion(this.db, key);
    this.cache.evict(key);
    this.cache.set(key, version);
    await this.bus.publish(TOPIC + key);
  }

  /** Bumps the version inside the caller's transaction; call `announce` after it commits. */
  async bump(trx: Executor, key: string): Promise<void> {
    await repo.bumpCredentialVersion(trx, key);
  }

  /** After a committed `bump`: forget the cached version here and on the other instances. */
  async announce(key: string): Promise<void> {
    this.cache.evict(key);
    await this.bus.publish(TOPIC + key);
  }

  async isRevoked(claims: BaseTokenClaims, baseId: number): Promise<boolean> {
    return (await this.current(keyOfClaims(claims, baseId))) !== claims.version;
  }

  /** `isRevoked` from memory alone: undefined when the current version is not cached. */
  isRevokedCached(claims: BaseTokenClaims, baseId: number): boolean | undefined {
    const version = this.cache.peek(keyOfClaims(claims, baseId));
    return version === undefined ? undefined : version !== claims.version;
  }

  /** Handles another instance's news: the revoked credential's key, or null when the topic was not ours. */
  onTopic(topic: string): string | null {
    if (!topic.startsWith(TOPIC)) return null;
    const key = topic.slice(TOPIC.length);
    this.cache.evict(key);
    return key;
  }

  clear(): void {
    this.cache.clear();
  }
}
