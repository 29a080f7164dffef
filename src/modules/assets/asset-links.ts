import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';

/** What a link allows: uploading into a base (`u`), or reading one file of it (`d`). */
export type LinkClaims = { kind: 'u'; base: string; exp: number } | { kind: 'd'; base: string; path: string; exp: number };

const UPLOAD_TOKEN = /^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/;

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

  /**
   * An upload link token shaped like a UUID (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lower-case hex), as
   * the original's (seafile) upload tokens are: the PHP client refuses any other shape before sending.
   * Stateless like the other links: 4 bytes base id, 4 bytes expiry (Unix seconds), 8 bytes of an
   * HMAC over both — 64 bits a forger would have to guess online, within the link's lifetime.
   */
  signUpload(baseId: number): string {
    if (!Number.isSafeInteger(baseId) || baseId < 0 || baseId > 0xffffffff) throw new Error('base id out of the upload token range');
    const head = Buffer.alloc(8);
    head.writeUInt32BE(baseId, 0);
    head.writeUInt32BE(Math.floor(this.clock.now() / 1000) + this.ttlSeconds, 4);
    const hex = Buffer.concat([head, this.uploadMac(head)]).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** The base id of a valid, unexpired UUID-shaped upload token, else null. */
  verifyUpload(token: string): number | null {
    if (!UPLOAD_TOKEN.test(token)) return null;
    const bytes = Buffer.from(token.replaceAll('-', ''), 'hex');
    const head = bytes.subarray(0, 8);
    if (!timingSafeEqual(bytes.subarray(8), this.uploadMac(head))) return null;
    if (head.readUInt32BE(4) * 1000 < this.clock.now()) return null;
    return head.readUInt32BE(0);
  }

  private uploadMac(head: Buffer): Buffer {
    return createHmac('sha256', this.key).update('upload-uuid').update(head).digest().subarray(0, 8);
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
