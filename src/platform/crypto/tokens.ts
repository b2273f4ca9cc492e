// Signed JWTs (HS256, jose). Every token carries a purpose and each consumer accepts
// exactly one, so a realtime token can never be used as an access token and vice versa.
import { createHash, hkdfSync } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';

export type TokenPurpose = 'access' | 'ws' | 'widget_ws' | 'mfa' | 'mailbox_oauth' | 'csat';

export const TOKEN_TTL_SECONDS: Record<TokenPurpose, number> = {
  access: 15 * 60,
  ws: 5 * 60,
  widget_ws: 5 * 60,
  mfa: 5 * 60,
  /** The `state` of a mailbox OAuth flow (start → the provider → callback). */
  mailbox_oauth: 10 * 60,
  /** A solved ticket's rating link (src/modules/csat): 30 days. */
  csat: 30 * 24 * 3600,
};

export interface TokenClaims {
  sub: string;
  purpose: TokenPurpose;
  sid?: string;
  wid?: string;
  teams?: string[];
  [k: string]: unknown;
}

export class TokenSigner {
  readonly #key: Uint8Array;

  constructor(secretKey: string) {
    // A key of its own for signing, derived from SECRET_KEY (which also encrypts stored secrets).
    this.#key = new Uint8Array(hkdfSync('sha256', secretKey, 'svc-jwt', 'jwt signing key v1', 32));
  }

  async sign(
    claims: TokenClaims,
    ttlSeconds = TOKEN_TTL_SECONDS[claims.purpose],
  ): Promise<{ token: string; expiresAt: Date }> {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt(now)
      .setExpirationTime(now + ttlSeconds)
      .sign(this.#key);
    return { token, expiresAt: new Date((now + ttlSeconds) * 1000) };
  }

  /** The claims of a valid, unexpired token of exactly this purpose; null otherwise. */
  async verify(token: string, purpose: TokenPurpose): Promise<TokenClaims | null> {
    try {
      const { payload } = await jwtVerify(token, this.#key, { algorithms: ['HS256'] });
      if (payload.purpose !== purpose || typeof payload.sub !== 'string') return null;
      return payload as unknown as TokenClaims;
    } catch (err) {
      if (err instanceof errors.JOSEError || err instanceof TypeError) return null;
      throw err;
    }
  }
}

/** Hash of a high-entropy secret (API key, refresh token) for storage and lookup. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}
