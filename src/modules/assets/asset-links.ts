import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';

/** What a link allows: uploading into a base (`u`), or reading one file of it (`d`). */
export type LinkClaims = { kind: 'u'; base: string; exp: number } | { kind: 'd'; base: string; path: string; exp: number };

/**
 * Signed, expiring link tokens (HMAC-SHA256 with a key derived from SECRET_KEY for this use only).
 * The base and the file are inside the signed token, so a link of one base never reads another's
 * files and a path cannot be swapped in the URL.
 */
export class AssetLinks {
  private readonly key: Buffer;

  constructor(secretKey: string, private readonly clock: Clock, private readonly ttlSeconds: number) {
    this.key = createHmac('sha256', secretKey).update('basegate asset links v1').digest();
  }

  sign(claims: { kind: 'u'; base: string } | { kind: 'd'; base: string; path: string }): string {
    const body = Buffer.from(JSON.stringify({ ...claims, exp: Math.floor(this.clock.now() / 1000) + this.ttlSeconds })).toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  verify(token: string, kind: LinkClaims['kind']): LinkClaims | null {
    if (token.length > 8192) return null;
    const [body, mac, extra] = token.split('.');
    if (!body || !mac || extra !== undefined) return null;
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let claims: LinkClaims;
    try {
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as LinkClaims;
    } catch {
      return null;
    }
    if (claims.kind !== kind || typeof claims.exp !== 'number' || claims.exp * 1000 < this.clock.now()) return null;
    return claims;
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
