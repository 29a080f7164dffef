import { createHmac } from 'node:crypto';
import { jwtVerify } from 'jose';
import { signHs256 } from './jws.js';
import type { Clock } from '../../shared/clock.js';

export const TEMP_API_TOKEN_TTL_SECONDS = 3600;

export interface TempApiTokenClaims {
  baseUuid: string;
  /** The user's virtual id (`username`, as the original's temporary tokens carry). */
  username: string;
  userId: number;
  expiresAt: number;
}

/**
 * Temporary API-Tokens: HS256 JWTs valid exactly one hour, bound to a base and a user, signed
 * with their own key (derived from SECRET_KEY, distinct from the Base-Token key) so neither kind
 * of token can pass for the other. The permission is not frozen into the token: it is the user's
 * permission on the base when the token is exchanged.
 */
export class TempApiTokens {
  private readonly key: Uint8Array;

  constructor(
    secretKey: string,
    private readonly clock: Clock,
  ) {
    this.key = createHmac('sha256', secretKey).update('basegate temporary API-Token signing key').digest();
  }

  async sign(grant: { baseUuid: string; username: string; userId: number }): Promise<string> {
    const now = Math.floor(this.clock.now() / 1000);
    const claims = { dtable_uuid: grant.baseUuid, username: grant.username, uid: grant.userId, iat: now, exp: now + TEMP_API_TOKEN_TTL_SECONDS };
    return signHs256(claims, this.key);
  }

  /** The claims of a valid, unexpired token; null for anything else (expired is refused like unknown). */
  async verify(token: string): Promise<TempApiTokenClaims | null> {
    try {
      const { payload: p } = await jwtVerify(token, this.key, { algorithms: ['HS256'], currentDate: new Date(this.clock.now()) });
      if (typeof p.dtable_uuid !== 'string' || typeof p.username !== 'string' || typeof p.exp !== 'number') return null;
      if (typeof p.uid !== 'number' || !Number.isSafeInteger(p.uid)) return null;
      return { baseUuid: p.dtable_uuid, username: p.username, userId: p.uid, expiresAt: p.exp };
    } catch {
      return null;
    }
  }
}
