// Sender trust from Authentication-Results (RFC 8601) and trusted website contact forms.
//
// Anyone can write an Authentication-Results header into a message, so only headers whose
// authserv-id is in the caller's trusted list count (the receiving servers of the mailbox, e.g.
// "mx.google.com" for Gmail, or our own inbound MTA), and of those only the topmost: the
// receiving server adds its header above everything the message arrived with. A trusted server
// is expected to remove forged headers carrying its own id (RFC 8601 section 5), which Gmail,
// Microsoft 365 and rspamd/OpenDMARC-style MTAs do.
import addressparser from 'nodemailer/lib/addressparser';
import type { MailHeaders } from './headers.js';

export type DmarcResult = 'pass' | 'fail' | 'none';

export interface AuthResults {
  /** pass or fail as the trusted server said; none when it gave no (or another) DMARC result. */
  dmarc: DmarcResult;
  /** The SPF result word (pass, fail, softfail, neutral, none, temperror, permerror), or none. */
  spf: string;
  /** pass when any DKIM signature passed, else the first DKIM result word, or none. */
  dkim: string;
  /** The authserv-id of the header read, or null when no trusted header was there. */
  authserv_id: string | null;
  /** true when DMARC failed at a trusted server (a message's `auth_failed`). */
  auth_failed: boolean;
}

/** Removes RFC 5322 comments (nested, outside quoted strings). */
function stripComments(value: string): string {
  let out = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\' && i + 1 < value.length) {
      if (depth === 0) out += c + value[i + 1];
      i++;
    } else if (quoted) {
      out += c;
      if (c === '"') quoted = false;
    } else if (c === '(') depth++;
    else if (c === ')' && depth > 0) depth--;
    else if (depth === 0) {
      if (c === '"') quoted = true;
      out += c;
    }
  }
  return out;
}

/** Splits at ";" outside quoted strings. */
function splitSemicolons(value: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (const c of value) {
    if (c === '"') quoted = !quoted;
    if (c === ';' && !quoted) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

interface ParsedHeader {
  authservId: string;
  results: { method: string; result: string }[];
}

/** One Authentication-Results value: its authserv-id and each method=result, or null. */
export function parseAuthenticationResults(value: string): ParsedHeader | null {
  const parts = splitSemicolons(stripComments(value));
  const head = parts.shift();
  if (!head) return null;
  // authserv-id [ CFWS authres-version ]
  const authservId = head.split(/\s+/)[0]!.toLowerCase();
  if (authservId === '') return null;
  const results: ParsedHeader['results'] = [];
  for (const part of parts) {
    const m = /^([a-z0-9_-]+)(?:\/[0-9]+)?\s*=\s*([a-z0-9_-]+)/i.exec(part);
    if (m) results.push({ method: m[1]!.toLowerCase(), result: m[2]!.toLowerCase() });
  }
  return { authservId, results };
}

/**
 * DMARC, SPF and DKIM as the topmost Authentication-Results header from a trusted authserv-id
 * says (ids compared case-insensitively). Without one: everything none, auth_failed false
 * (no trusted verdict is not a failure).
 */
export function authResults(headers: MailHeaders, trustedAuthservIds: readonly string[]): AuthResults {
  const trusted = new Set(trustedAuthservIds.map((id) => id.trim().toLowerCase()));
  for (const value of headers.get('authentication-results') ?? []) {
    const parsed = parseAuthenticationResults(value);
    if (!parsed || !trusted.has(parsed.authservId)) continue;
    const of = (method: string) => parsed.results.filter((r) => r.method === method).map((r) => r.result);
    const dmarcWords = of('dmarc');
    const dmarc: DmarcResult = dmarcWords.includes('fail') ? 'fail' : dmarcWords.includes('pass') ? 'pass' : 'none';
    const dkimWords = of('dkim');
    return {
      dmarc,
      spf: of('spf')[0] ?? 'none',
      dkim: dkimWords.includes('pass') ? 'pass' : (dkimWords[0] ?? 'none'),
      authserv_id: parsed.authservId,
      auth_failed: dmarc === 'fail',
    };
  }
  return { dmarc: 'none', spf: 'none', dkim: 'none', authserv_id: null, auth_failed: false };
}

const bareAddress = (value: string | null | undefined): string | null => {
  if (!value) return null;
  const first = addressparser(value, { flatten: true })[0];
  const address = (first && 'address' in first ? first.address : '')?.trim().toLowerCase();
  return address && /^[^@\s]+@[^@\s]+$/.test(address) ? address : null;
};

/** Whether `address` is listed: an exact address or "@domain" (the domain exactly), any case. */
export function isTrustedFormSender(address: string, trustedFormSenders: readonly string[]): boolean {
  const addr = address.trim().toLowerCase();
  const domain = addr.slice(addr.lastIndexOf('@') + 1);
  return trustedFormSenders.some((entry) => {
    const e = entry.trim().toLowerCase();
    return e.startsWith('@') ? e.slice(1) === domain : e === addr;
  });
}

/**
 * The visitor behind a trusted website contact form: the Reply-To address, lowercased, when the
 * From (`from`, an address or a whole header value) is in trustedFormSenders and DMARC passed
 * at a trusted server; otherwise null (the mail is ordinary mail). A Reply-To equal to the
 * From, or missing, gives null too.
 */
export function formSender(
  from: string | null | undefined,
  replyTo: string | null | undefined,
  dmarcPass: boolean,
  trustedFormSenders: readonly string[],
): string | null {
  if (!dmarcPass) return null;
  const sender = bareAddress(from);
  const visitor = bareAddress(replyTo);
  if (!sender || !visitor || visitor === sender) return null;
  return isTrustedFormSender(sender, trustedFormSenders) ? visitor : null;
}
