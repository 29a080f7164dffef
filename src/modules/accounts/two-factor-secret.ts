import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * The TOTP secret must be read back to check codes, so it cannot be hashed: it is stored
 * AES-256-GCM encrypted with a key derived from SECRET_KEY (`iv.tag.ciphertext`, base64url).
 * A database dump alone does not reveal it.
 */
function keyOf(secretKey: string): Buffer {
  return createHash('sha256').update(`basegate:totp-secret:${secretKey}`).digest();
}

export function sealSecret(secretKey: string, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secretKey), iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), data].map((part) => part.toString('base64url')).join('.');
}

export function openSecret(secretKey: string, sealed: string): string {
  const [iv, tag, data] = sealed.split('.').map((part) => Buffer.from(part, 'base64url'));
  if (!iv || !tag || !data) throw new Error('sealed TOTP secret malformed');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(secretKey), iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
}
