// Which ticket an inbound reply belongs to: Message-IDs first (threadCandidates, looked up
// against every Message-ID received or sent on a ticket of the mailbox), then a ticket token
// in the subject or the recipient address (ticketTokenOf).
//
// Token format: "<ticket number>-<mac>", where mac is the first 10 characters (50 bits) of
// lowercase RFC 4648 base32 of HMAC-SHA256(secret, "<workspace id>:<ticket number>"). The
// number keeps subjects readable ("[#1234-k3m9x2q7ab]"); the mac makes it impossible to
// point a mail at another ticket by guessing, and base32 lowercase survives relays that
// lowercase addresses ("support+t1234-k3m9x2q7ab@acme.test"). A bare "[#1234]" (typed by a
// person, or from before tokens) is returned too, unverified: LESSONS.md says such a link may
// only be followed when the sender is a participant of that ticket.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { InboundMail } from './parse.js';

const MAC_LENGTH = 10;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
/** The most Message-IDs threadCandidates returns. */
export const MAX_THREAD_CANDIDATES = 50;

const base32 = (buf: Buffer): string => {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
};

const macOf = (secret: string | Buffer, workspaceId: string, ticketNumber: number): string =>
  base32(createHmac('sha256', secret).update(`${workspaceId}:${ticketNumber}`).digest()).slice(0, MAC_LENGTH);

/** The token of a ticket: "<number>-<mac>", for "[#<token>]" in subjects and "+t<token>" in addresses. */
export function makeTicketToken(secret: string | Buffer, workspaceId: string, ticketNumber: number): string {
  if (!Number.isSafeInteger(ticketNumber) || ticketNumber < 0)
    throw new RangeError('ticketNumber must be a non-negative integer');
  return `${ticketNumber}-${macOf(secret, workspaceId, ticketNumber)}`;
}

/** The ticket number a token names when its mac is right for this workspace, else null (constant time). */
export function verifyTicketToken(secret: string | Buffer, workspaceId: string, token: string): number | null {
  const m = /^(\d{1,15})-([a-z2-7]+)$/.exec(token.trim().toLowerCase());
  if (!m) return null;
  const number = Number(m[1]);
  if (!Number.isSafeInteger(number)) return null;
  const expected = Buffer.from(macOf(secret, workspaceId, number));
  const given = Buffer.from(m[2]!);
  return given.length === expected.length && timingSafeEqual(given, expected) ? number : null;
}

export interface TicketTokenRef {
  /** The token as found ("1234-k3m9x2q7ab"), or null for a bare number. */
  token: string | null;
  /** The ticket number it names. Unverified: check with verifyTicketToken when token is set. */
  number: number;
  source: 'subject' | 'address';
}

const SUBJECT_TOKEN = /\[#(\d{1,15})(?:-([a-z2-7]{10}))?\]/i;
const ADDRESS_TOKEN = /\+t(\d{1,15})(?:-([a-z2-7]{10}))?@/i;

/**
 * The ticket references in a subject ("[#1234-k3m9x2q7ab]" or "[#1234]") and in recipient
 * addresses ("name+t1234-k3m9x2q7ab@domain"), signed ones first, then subject before
 * address. The caller verifies signed tokens with verifyTicketToken (a wrong mac means
 * a forged or mangled token: ignore it) and follows a bare number only for a participant.
 */
export function ticketTokenOf(subject: string, toAddresses: readonly string[]): TicketTokenRef[] {
  const refs: TicketTokenRef[] = [];
  const add = (m: RegExpExecArray | null, source: TicketTokenRef['source']) => {
    if (!m) return;
    const number = Number(m[1]);
    if (!Number.isSafeInteger(number)) return;
    refs.push({ token: m[2] ? `${m[1]}-${m[2].toLowerCase()}` : null, number, source });
  };
  add(SUBJECT_TOKEN.exec(subject), 'subject');
  for (const addr of toAddresses) add(ADDRESS_TOKEN.exec(addr), 'address');
  return refs.sort((a, b) => Number(b.token !== null) - Number(a.token !== null));
}

/**
 * The Message-IDs to look up, in order: In-Reply-To first, then References newest first;
 * without repeats, without the message's own id, at most MAX_THREAD_CANDIDATES.
 */
export function threadCandidates(parsed: Pick<InboundMail, 'message_id' | 'in_reply_to' | 'references'>): string[] {
  const seen = new Set<string>(parsed.message_id ? [parsed.message_id] : []);
  const out: string[] = [];
  for (const id of [...parsed.in_reply_to, ...[...parsed.references].reverse()]) {
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
    if (out.length === MAX_THREAD_CANDIDATES) break;
  }
  return out;
}

// Reply and forward prefixes of common mail clients and languages: Re, Fwd/Fw, AW/WG
// (German), SV/VS/VB/VL (Nordic), Antw (Dutch), Réf/TR (French), RV/RE (Spanish), R/RIF/I
// (Italian), Odp/PD (Polish), Enc/Res (Portuguese), YNT/YML (Turkish), ΑΠ/ΣΧΕΤ/ΠΡΘ (Greek),
// Ответ/Пересл (Russian), 回复/回覆/转发/轉寄/答复 (Chinese), 返信/転送 (Japanese), 답장/전달
// (Korean); with a counter ("Re[2]:", "RE(3):") and either colon.
const PREFIX =
  /^\s*(?:re|fwd?|aw|wg|sv|vs|vb|vl|antw|antwort|réf|ref|tr|rv|rif|r|i|odp|pd|enc|res|ynt|yml|doorst|ατ|απ|σχετ|πρθ|ответ|пересл|回复|回覆|转发|轉寄|答复|返信|転送|답장|전달)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]\s*/i;

/** The subject without reply/forward prefixes (repeated, in many languages), spaces collapsed. */
export function normaliseSubject(subject: string): string {
  let s = subject.replace(/\s+/g, ' ').trim();
  for (let i = 0; i < 20; i++) {
    const next = s.replace(PREFIX, '');
    if (next === s) break;
    s = next;
  }
  return s.trim();
}

/** Only the reply prefixes (not forwards): what outbound "Re:" replaces. */
export const REPLY_PREFIX =
  /^\s*(?:re|aw|sv|vs|antw|antwort|réf|ref|rif|r|odp|res|ynt|ατ|απ|σχετ|ответ|回复|回覆|答复|返信|답장)\s*(?:\[\d+\]|\(\d+\))?\s*[:：]\s*/i;
