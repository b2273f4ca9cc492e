// Download URLs that work without any other credential (an <img> tag, a link in a mail client):
// `${PUBLIC_URL}/v1/attachments/<id>?token=<t>`, valid for one hour. The token is
// base64url(workspace id (16 bytes) + expiry (unix seconds, 4 bytes)) "." HMAC-SHA256 over the
// workspace, the attachment id and the expiry, truncated to 128 bits; the key is derived from
// SECRET_KEY (HKDF), like cursor keys. Tampered, foreign and expired tokens all verify to null.
import { createHmac, hkdfSync } from 'node:crypto';
import type { Config } from '../../config.js';
import { constantTimeEqual, isUuid } from '../../platform/crypto/random.js';

export const URL_TTL_SECONDS = 3600;
export const TOKEN_PATTERN = '^[A-Za-z0-9_-]{27}\\.[A-Za-z0-9_-]{22}$';
const TOKEN_RE = new RegExp(TOKEN_PATTERN);

/** A value shaped like a token (whether it is valid is verify()'s business). */
export const looksLikeToken = (v: unknown): v is string => typeof v === 'string' && TOKEN_RE.test(v);

const uuidFromHex = (h: string) =>
  `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;

export class AttachmentUrls {
  readonly #key: Buffer;

  constructor(
    secretKey: string,
    private readonly publicUrl: string,
  ) {
    this.#key = Buffer.from(hkdfSync('sha256', secretKey, 'svc-attachment-url', 'attachment url signing key v1', 32));
  }

  #mac(workspaceId: string, attachmentId: string, expires: number): string {
    return createHmac('sha256', this.#key)
      .update(`${workspaceId.toLowerCase()}\n${attachmentId.toLowerCase()}\n${expires}`)
      .digest('base64url')
      .slice(0, 22);
  }

  token(workspaceId: string, attachmentId: string, now = Date.now()): string {
    const expires = Math.floor(now / 1000) + URL_TTL_SECONDS;
    const head = Buffer.alloc(20);
    Buffer.from(workspaceId.replace(/-/g, ''), 'hex').copy(head, 0, 0, 16);
    head.writeUInt32BE(expires, 16);
    return `${head.toString('base64url')}.${this.#mac(workspaceId, attachmentId, expires)}`;
  }

  url(workspaceId: string, attachmentId: string, now = Date.now()): string {
    return `${this.publicUrl}/v1/attachments/${attachmentId}?token=${this.token(workspaceId, attachmentId, now)}`;
  }

  /** The workspace a valid, unexpired token for this attachment grants; null otherwise. */
  verify(token: string, attachmentId: string, now = Date.now()): string | null {
    if (!looksLikeToken(token) || !isUuid(attachmentId)) return null;
    const [headText, mac] = token.split('.') as [string, string];
    const head = Buffer.from(headText, 'base64url');
    // One spelling per token: base64url's spare bits must be zero.
    if (head.length !== 20 || head.toString('base64url') !== headText) return null;
    const workspaceId = uuidFromHex(head.subarray(0, 16).toString('hex'));
    const expires = head.readUInt32BE(16);
    if (!constantTimeEqual(mac, this.#mac(workspaceId, attachmentId, expires))) return null;
    if (expires * 1000 <= now) return null;
    return workspaceId;
  }
}

const signers = new WeakMap<Config, AttachmentUrls>();

/** The signer of a configuration (one HKDF per process, not per URL). */
export function attachmentUrls(config: Config): AttachmentUrls {
  let s = signers.get(config);
  if (!s) {
    s = new AttachmentUrls(config.secretKey, config.publicUrl);
    signers.set(config, s);
  }
  return s;
}
