/**
 * Secrets Palanque must use later (SMS auth tokens, OAuth tokens), encrypted at rest with AES-256-GCM
 * under SECRETS_KEY. A sealed value is `v1.<iv>.<tag>.<ciphertext>` (base64url): the version lets the
 * format or the key change later, the tag makes any tampering fail to open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** A box for SECRETS_KEY: 32 bytes, base64 (or base64url) encoded. */
  static fromKey(encodedKey: string): SecretBox {
    const key = Buffer.from(encodedKey, 'base64');
    if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
    return new SecretBox(key);
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  /** The plaintext; throws when the value was not sealed with this key or was altered. */
  open(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}
