import type { Clock } from '../../shared/clock.js';
import type { BaseAccess, BaseListing, BaseTokenClaims } from '../access/index.js';
import type { BaseTokenSigner, VerifyResult } from './base-token.js';
import type { CredentialVersions } from './credential-versions.js';
import { CACHE_TTL_MS, TtlCache } from './ttl-cache.js';

const VERIFIED_TTL_MS = 10 * 60_000;
const BASE_TOPIC = 'b:';

export type GatewayCheck =
  | { ok: true; claims: BaseTokenClaims; base: BaseListing }
  | { ok: false; reason: 'expired' | 'invalid' | 'base-mismatch' | 'base-gone' | 'revoked' };

/**
 * Verifies a presented Base-Token for the gateway: signature (HS256 only) and expiry, the base it
 * names, and whether its credential was revoked. Everything a repeat caller needs is cached in
 * memory, so a gateway request with a known token costs no database query and no HMAC:
 * verified tokens (by exact text, expiry still checked on every use), bases by uuid (evicted when
 * a base is renamed or deleted) and credential versions (evicted when revoked).
 */
export class BaseTokenVerifier {
  private readonly verified: TtlCache<string, VerifyResult>;
  private readonly bases: TtlCache<string, BaseListing | undefined>;

  constructor(
    private readonly signer: BaseTokenSigner,
    private readonly access: BaseAccess,
    private readonly versions: CredentialVersions,
    private readonly clock: Clock,
  ) {
    this.verified = new TtlCache(clock, VERIFIED_TTL_MS, 20_000);
    this.bases = new TtlCache(clock, CACHE_TTL_MS);
  }

  /** Signature and expiry only. */
  async verify(token: string): Promise<VerifyResult> {
    return this.verifyCached(token) ?? this.expiry(await this.verified.get(token, () => this.signer.verify(token), (r) => r.ok));
  }

  /** `verify` for a token verified before, from memory; undefined when it was not. */
  verifyCached(token: string): VerifyResult | undefined {
    const result = this.verified.peek(token);
    return result && this.expiry(result);
  }

  /** The whole gateway check for a token presented on `/dtables/{baseUuid}/…`. */
  async check(token: string, baseUuid: string | null): Promise<GatewayCheck> {
    const cached = this.checkCached(token, baseUuid);
    if (cached) return cached;
    const result = await this.verify(token);
    if (!result.ok) return result;
    const claims = result.claims;
    if (baseUuid !== null && baseUuid !== claims.baseUuid) return { ok: false, reason: 'base-mismatch' };
    const base = await this.bases.get(claims.baseUuid, () => this.access.findByUuid(claims.baseUuid));
    if (!base) return { ok: false, reason: 'base-gone' };
    if (await this.versions.isRevoked(claims, base.id)) return { ok: false, reason: 'revoked' };
    return { ok: true, claims, base };
  }

  /**
   * `check` without waiting, for the common case of a repeat caller: the answer when everything it
   * needs (the verified token, its base, the credential's version) is in memory, else undefined.
   */
  checkCached(token: string, baseUuid: string | null): GatewayCheck | undefined {
    const result = this.verifyCached(token);
    if (!result?.ok) return result;
    const claims = result.claims;
    if (baseUuid !== null && baseUuid !== claims.baseUuid) return { ok: false, reason: 'base-mismatch' };
    const base = this.bases.peek(claims.baseUuid);
    if (!base) return undefined;
    const revoked = this.versions.isRevokedCached(claims, base.id);
    if (revoked === undefined) return undefined;
    return revoked ? { ok: false, reason: 'revoked' } : { ok: true, claims, base };
  }

  private expiry(result: VerifyResult): VerifyResult {
    return result.ok && result.claims.expiresAt * 1000 <= this.clock.now() ? { ok: false, reason: 'expired' } : result;
  }

  /** A base was renamed or deleted here: forget it. Returns the topic to tell other instances. */
  forgetBase(uuid: string): string {
    this.bases.evict(uuid);
    return BASE_TOPIC + uuid;
  }

  /** Handles another instance's news; true when the topic was ours. */
  onTopic(topic: string): boolean {
    if (!topic.startsWith(BASE_TOPIC)) return false;
    this.bases.evict(topic.slice(BASE_TOPIC.length));
    return true;
  }

  clear(): void {
    this.bases.clear();
    this.versions.clear();
  }
}
