import type { BaseAccess, BaseListing } from '../workspaces/index.js';
import type { BaseTokenClaims, BaseTokenSigner, VerifyResult } from './base-token.js';

/** Decides whether a Base-Token's source credential still stands (revocation). */
export interface RevocationCheck {
  isRevoked(claims: BaseTokenClaims): Promise<boolean>;
}

export const neverRevoked: RevocationCheck = { isRevoked: async () => false };

/** Verifies a presented Base-Token: signature and expiry, then revocation. */
export class BaseTokenVerifier {
  constructor(
    private readonly signer: BaseTokenSigner,
    private readonly access: BaseAccess,
    private readonly revocation: RevocationCheck = neverRevoked,
  ) {}

  async verify(token: string): Promise<VerifyResult> {
    const result = await this.signer.verify(token);
    if (!result.ok) return result;
    if (await this.revocation.isRevoked(result.claims)) return { ok: false, reason: 'invalid' };
    return result;
  }

  baseOf(claims: BaseTokenClaims): Promise<BaseListing | undefined> {
    return this.access.findByUuid(claims.baseUuid);
  }
}
