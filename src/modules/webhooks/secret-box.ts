import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Webhook secrets must stay usable for signing, so they cannot be hashed; they are encrypted at rest
 * (AES-256-GCM, key derived from SECRET_KEY) so a database dump alone does not reveal them.
 * Stored form: `v1:<iv b64url>:<tag b64url>:<ciphertext b64url>`.
 */
/** Opened secrets kept in memory (never logged): each delivery attempt signs with its webhook's. */
const OPENED_CACHE_SIZE = 1000;

export class SecretBox {
  private readonly key: Buffer;
  private readonly opened = new Map<string, string | null>();

  constructor(secretKey: string) {
    this.key = Buffer.from(hkdfSync('sha256', secretKey, 'basegate', 'webhook-secret-v1', 32));
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), data.toString('base64url')].join(':');
  }

  /** The plain secret, or null when it cannot be decrypted (SECRET_KEY changed, or tampering). */
  open(sealed: string): string | null {
    const known = this.opened.get(sealed);
    if (known !== undefined) return known;
    const plain = this.decrypt(sealed);
    if (this.opened.size >= OPENED_CACHE_SIZE) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(sealed, plain);
    return plain;
  }

  private decrypt(sealed: string): string | null {
    const [version, iv, tag, data] = sealed.split(':');
    if (version !== 'v1' || iv === undefined || tag === undefined || data === undefined) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}

/** What responses show instead of a secret: never any of its characters. */
export const SECRET_MASK = '********';
