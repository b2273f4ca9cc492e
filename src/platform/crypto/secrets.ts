// Secrets at rest (mailbox passwords, webhook secrets, the widget secret, OAuth tokens):
// AES-256-GCM with a key derived from SECRET_KEY. Stored as `v1.<iv>.<tag>.<ciphertext>`.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

export class SecretBox {
  readonly #key: Buffer;
  constructor(secretKey: string) {
    this.#key = Buffer.from(hkdfSync('sha256', secretKey, 'svc-secrets', 'secret encryption key v1', 32));
  }

  seal(plain: string, context = ''): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.#key, iv);
    if (context) c.setAAD(Buffer.from(context));
    const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  /** The plaintext, or null when the value was altered or sealed with another key or context. */
  open(sealed: string, context = ''): string | null {
    const [v, iv, tag, ct] = sealed.split('.');
    if (v !== 'v1' || !iv || !tag || ct === undefined) return null;
    try {
      const d = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
      if (context) d.setAAD(Buffer.from(context));
      d.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
    } catch {
      return null;
    }
  }
}
