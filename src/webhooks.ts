// Webhook signatures, for receivers and for the service itself (the same code signs every
// delivery, so what the docs show is what is sent). No dependencies but node:crypto: a
// receiver may copy this file as it is.
//
//   SVC-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>
//
// For a while after the endpoint's secret is rotated, a second v1 is made with the secret it
// replaced: accept the delivery when any v1 matches.
//
// Verify the raw bytes of the body exactly as received, before any JSON parsing.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The recommended tolerance between the signature's time and the local clock. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The hex HMAC-SHA256 of `<timestamp>.<raw body>` keyed with the endpoint secret (`whsec_…`). */
export function webhookSignature(secret: string, timestamp: number, rawBody: string | Uint8Array): string {
  const mac = createHmac('sha256', secret);
  mac.update(`${timestamp}.`);
  mac.update(typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody);
  return mac.digest('hex');
}

/**
 * The SVC-Signature header value for a body signed at `timestamp` (unix seconds). After a secret
 * rotation, `previous` (the replaced secret, while it still signs) adds a second v1: a receiver
 * accepts the delivery when any v1 matches its secret, as verifyWebhook does.
 */
export function signWebhook(
  secret: string,
  timestamp: number,
  rawBody: string | Uint8Array,
  previous?: string | null,
): string {
  const v1 = `t=${timestamp},v1=${webhookSignature(secret, timestamp, rawBody)}`;
  return previous ? `${v1},v1=${webhookSignature(previous, timestamp, rawBody)}` : v1;
}

export interface VerifyOptions {
  /** Seconds the signature time may differ from `now`; default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** The local clock in milliseconds (for tests); default Date.now(). */
  now?: number;
}

/**
 * True when `header` (the SVC-Signature value) carries a v1 signature of `rawBody` made with
 * `secret` at a time within the tolerance of the local clock. Compares in constant time; any
 * malformed header is simply false.
 */
export function verifyWebhook(
  secret: string,
  header: string | null | undefined,
  rawBody: string | Uint8Array,
  opts: VerifyOptions = {},
): boolean {
  if (typeof header !== 'string' || header.length > 4096) return false;
  let timestamp: number | null = null;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) candidates.push(value.toLowerCase());
  }
  if (timestamp === null || candidates.length === 0) return false;
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  if (Math.abs(now - timestamp) > tolerance) return false;
  const expected = Buffer.from(webhookSignature(secret, timestamp, rawBody), 'hex');
  let ok = false;
  for (const c of candidates) {
    // Every candidate is compared (no early exit), each in constant time.
    if (timingSafeEqual(expected, Buffer.from(c, 'hex'))) ok = true;
  }
  return ok;
}
