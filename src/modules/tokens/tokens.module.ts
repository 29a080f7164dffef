import type { Db } from '../../db/index.js';
import type { Clock } from '../../shared/clock.js';
import type { AccountsService } from '../accounts/index.js';
import type { BasesService, ExternalLinksService, SharesService } from '../workspaces/index.js';
import type { BaseAccess } from '../access/index.js';
import type { AccessRevocation } from '../groups/index.js';
import { AccessTokenService } from './access-token.service.js';
import { ApiTokensService } from './api-tokens.service.js';
import { BaseTokenSigner } from './base-token.js';
import { BaseTokenVerifier } from './base-token-verifier.js';
import { API_TOKEN_KEY_PREFIX, CredentialVersions, credentialKey } from './credential-versions.js';
import { EVERYTHING, LocalBus, RedisBus, type InvalidationBus } from './invalidation-bus.js';
import { LAST_ACCESS_WRITE_INTERVAL_MS, LastAccessRecorder } from './last-access.js';
import { TempApiTokens } from './temp-api-token.js';
import { TokenUsage, USAGE_FLUSH_INTERVAL_MS } from './token-usage.js';
import { CACHE_TTL_MS, TtlCache } from './ttl-cache.js';

export interface TokensModuleDeps {
  db: Db;
  clock: Clock;
  config: { secretKey: string; publicUrl: string; redisUrl: string | null };
  access: BaseAccess;
  accounts: AccountsService;
  bases: BasesService;
  shares: SharesService;
  links: ExternalLinksService;
  /** Group membership, group shares and view shares: who loses access to which base. */
  groups: AccessRevocation;
}

export interface TokensModule {
  accessTokens: AccessTokenService;
  apiTokens: ApiTokensService;
  verifier: BaseTokenVerifier;
  /** Resolves once revocations from other instances can arrive (at once without Redis). */
  ready(): Promise<void>;
  /** Writes pending `last_access` values and leaves Redis; call before closing the database. */
  close(): Promise<void>;
}

/**
 * Builds the tokens module and connects revocation to the events that cause it: a share changed
 * or removed, an external link deleted, a base renamed or deleted; across instances through Redis
 * pub/sub when REDIS_URL is set.
 */
export function createTokensModule(deps: TokensModuleDeps): TokensModule {
  const { db, clock, config, access } = deps;
  const bus: InvalidationBus = config.redisUrl ? new RedisBus(config.redisUrl) : new LocalBus();
  const versions = new CredentialVersions(db, new TtlCache(clock, CACHE_TTL_MS, 50_000), bus);
  const signer = new BaseTokenSigner(config.secretKey, clock);
  const verifier = new BaseTokenVerifier(signer, access, versions, clock);
  const lastAccess = new LastAccessRecorder(db, clock);
  const usage = new TokenUsage(db, clock);
  const apiTokens = new ApiTokensService(db, clock, access, versions, lastAccess, usage);
  const accessTokens = new AccessTokenService({
    db,
    signer,
    access,
    accounts: deps.accounts,
    apiTokens,
    tempTokens: new TempApiTokens(config.secretKey, clock),
    links: deps.links,
    versions,
    clock,
    publicUrl: config.publicUrl,
  });

  // Revocation commits in the same transaction as the change that causes it, then is announced.
  deps.shares.onShareChanging((trx, baseId, userId) => versions.bump(trx, credentialKey.share(baseId, userId)));
  deps.shares.onShareChanged((baseId, userId) => versions.announce(credentialKey.share(baseId, userId)));
  // A deleted user's shares vanish by cascade and their own bases with them: revoke and forget both.
  deps.accounts.onUserDeleting(async (userId) => {
    const { sharedBaseIds, owned } = await access.basesOfUser(userId);
    for (const baseId of sharedBaseIds) await versions.revoke(credentialKey.share(baseId, userId));
    const forgetOwned = async () => {
      for (const { uuid } of owned) await bus.publish(verifier.forgetBase(uuid));
      apiTokens.clearCache();
    };
    await forgetOwned();
    // Once more after the commit: a request in between may have cached a base again.
    return forgetOwned;
  });
  // A deactivated user or a new password ends every Base-Token that stands on the user's sign-in, on every base they reach.
  deps.accounts.onSignInRevoking(async (trx, userId) => {
    const { sharedBaseIds, owned } = await access.basesOfUser(userId, trx);
    const keys = [...sharedBaseIds, ...owned.map((b) => b.id)].map((baseId) => credentialKey.share(baseId, userId));
    for (const key of keys) await versions.bump(trx, key);
    return async () => {
      for (const key of keys) await versions.announce(key);
    };
  });
  // A member removed from a group, a group share or view share changed or removed, a group deleted.
  deps.groups.onAccessLosing(async (trx, losses) => {
    for (const { baseId, userId } of losses) await versions.bump(trx, credentialKey.share(baseId, userId));
  });
  deps.groups.onAccessLost(async (losses) => {
    for (const { baseId, userId } of losses) await versions.announce(credentialKey.share(baseId, userId));
  });
  deps.groups.onBasesGone(async (uuids) => {
    for (const uuid of uuids) await bus.publish(verifier.forgetBase(uuid));
    apiTokens.clearCache();
  });
  deps.links.onLinkDeleting((trx, link) => versions.bump(trx, credentialKey.externalLink(link.id)));
  deps.links.onLinkDeleted((link) => versions.announce(credentialKey.externalLink(link.id)));
  deps.bases.onBaseChanged((base) => {
    apiTokens.clearCache();
    return bus.publish(verifier.forgetBase(base.uuid));
  });
  bus.subscribe((topic) => {
    if (topic === EVERYTHING) {
      verifier.clear();
      apiTokens.clearCache();
      return;
    }
    const revoked = versions.onTopic(topic);
    if (revoked?.startsWith(API_TOKEN_KEY_PREFIX)) apiTokens.forgetCached(Number(revoked.slice(API_TOKEN_KEY_PREFIX.length)));
    if (revoked === null && verifier.onTopic(topic)) apiTokens.clearCache();
  });

  const flushLater = setInterval(() => void lastAccess.flush().catch(() => undefined), LAST_ACCESS_WRITE_INTERVAL_MS);
  flushLater.unref();
  const flushUsage = setInterval(() => void usage.flush().catch(() => undefined), USAGE_FLUSH_INTERVAL_MS);
  flushUsage.unref();

  return {
    accessTokens,
    apiTokens,
    verifier,
    ready: () => bus.ready(),
    async close() {
      clearInterval(flushLater);
      clearInterval(flushUsage);
      await lastAccess.flush().catch(() => undefined);
      await usage.flush().catch(() => undefined);
      await bus.close();
    },
  };
}
