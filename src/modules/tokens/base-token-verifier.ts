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
 * The key a verified token is kept under: its last 43 characters (an HS256 signature's length). A token
 * of 500–700 characters, new on every request, took V8 about 1 µs to hash as a map key, twice per gateway
 * call; its signature's characters are as unlike other tokens' and take a tenth of that. The whole text is
 * still compared before a cached answer is used.
 */
const cacheKey = (token: string): string => token.slice(-43);

/**
 * Verifies a presented Base-Token for the gateway: signature (HS256 only) and expiry, the base it
 * names, and whether its credential was revoked. Everything a repeat caller needs is cached in
 * memory, so a gateway request with a known token costs no database query and no HMAC:
 * verified tokens (by exact text, expiry still checked on every use), bases by uuid (evicted when
 * a base is renamed or deleted) and credential versions (evicted when revoked).
 */
export class BaseTokenVerifier {
  /** Verified tokens by their last characters (`cacheKey`), each with its whole text, compared on every use. */
  private readonly verified: TtlCache<string, { token: string; result: VerifyResult }>;
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
    const cached = this.verifyCached(token);
    if (cached) return cached;
    const key = cacheKey(token);
    const entry = await this.verified.get(key, async () => ({ token, result: await this.signer.verify(token) }), (e) => e.result.ok);
    if (entry.token === token) return this.expiry(entry.result);
    // Another token ends alike: this one is verified on its own, and kept in that one's place when valid.
    const result = await this.signer.verify(token);
    if (result.ok) this.verified.set(key, { token, result });
    return this.expiry(result);
  }

  /** `verify` for a token verified before, from memory; undefined when it was not. */
  verifyCached(token: string): VerifyResult | undefined {
    const entry = this.verified.peek(cacheKey(token));
    return entry !== undefined && entry.token === token ? this.expiry(entry.result) : undefined;
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
