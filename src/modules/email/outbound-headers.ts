// Headers of an outbound reply, so that the customer's client threads it (RFC 5322 3.6.4) and
// nothing a customer or agent typed can add a header.
//
// Header injection: nodemailer encodes CR/LF in subjects and names already; on top of that
// every value is put on one line here (control characters become spaces) and an address
// that is not a plain addr-spec is refused, so a mistake in a later nodemailer, or a header
// written by hand, cannot open a hole.
import { randomUUID } from 'node:crypto';
import { messageIdsOf, normaliseMessageId } from './message-id.js';
import { REPLY_PREFIX } from './threading.js';

/** The most Message-IDs in an outbound References header: the thread's first and the newest. */
export const MAX_OUTBOUND_REFERENCES = 20;

export class HeaderInjectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HeaderInjectionError';
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]+/g;

/** One header-safe line: control characters (CR, LF, NUL, ...) become spaces, spaces collapse. */
export function headerSafe(value: string): string {
  return value.replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();
}

/** A plain addr-spec (local@domain), lowercased domain; throws HeaderInjectionError otherwise. */
export function safeAddress(address: string): string {
  const a = address.trim();
  // No whitespace, control characters, angle brackets, commas, semicolons, quotes or a second @:
  // nothing that could end the address or the header.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (!/^[^\s\u0000-\u001f\u007f<>,;:"()[\]\\@]+@[a-z0-9.-]+\.[a-z0-9-]{2,}$/i.test(a) || a.length > 254) {
    throw new HeaderInjectionError(`not a plain email address: ${JSON.stringify(address.slice(0, 100))}`);
  }
  const at = a.lastIndexOf('@');
  return `${a.slice(0, at)}@${a.slice(at + 1).toLowerCase()}`;
}

/** A From/To entry for nodemailer: the name on one line, the address checked. */
export function safeMailbox(name: string | null | undefined, address: string): { name: string; address: string } {
  return { name: headerSafe(name ?? '').slice(0, 200), address: safeAddress(address) };
}

/** "Re: " once before the subject: existing reply prefixes (Re:, AW:, SV:, RE[2]:, ...) are replaced, forwards kept. */
export function replySubject(subject: string): string {
  let s = headerSafe(subject);
  for (let i = 0; i < 20; i++) {
    const next = s.replace(REPLY_PREFIX, '');
    if (next === s) break;
    s = next;
  }
  return `Re: ${s}`.trimEnd();
}

/** A new Message-ID of ours, "<uuid@domain>". */
export function newMessageId(domain: string): string {
  const d = domain.trim().toLowerCase();
  if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/.test(d)) {
    throw new HeaderInjectionError(`not a domain name: ${JSON.stringify(domain.slice(0, 100))}`);
  }
  return `<${randomUUID()}@${d}>`;
}

export interface ReplyHeadersInput {
  /** The domain of our Message-IDs (the mailbox's, or the inbound domain). */
  domain: string;
  /** The ticket's subject (or the message's being answered). */
  subject: string;
  /** The Message-ID being answered (the latest customer message) AS SENT (InboundMail.as_sent), with or without brackets; null for the first mail. */
  inReplyTo?: string | null;
  /** That message's References (or the ticket's chain), oldest first, as sent. */
  references?: readonly string[];
  /** Append " [#<token>]" to the subject when it is not there yet (makeTicketToken). */
  ticketToken?: string | null;
  /** At most this many References; default MAX_OUTBOUND_REFERENCES. */
  maxReferences?: number;
}

export interface ReplyHeaders {
  /** "<uuid@domain>": store it (normaliseMessageId) to thread the customer's answer (uuid and domain are lowercase already). */
  messageId: string;
  /** "<id>", or null. */
  inReplyTo: string | null;
  /** "<id1> <id2> ...", or null. */
  references: string | null;
  subject: string;
}

/**
 * The threading headers of a reply, in the form nodemailer's messageId / inReplyTo /
 * references / subject options take. References is the parent's References plus the parent,
 * capped to maxReferences ids: the first (the thread's root) and the newest (RFC 5322 allows
 * trimming; clients thread on the root and the parent).
 */
export function buildReplyHeaders(input: ReplyHeadersInput): ReplyHeaders {
  const max = Math.max(2, input.maxReferences ?? MAX_OUTBOUND_REFERENCES);
  // Ids exactly as their authors wrote them (only brackets and spaces go): clients compare them as strings.
  const parent = normaliseMessageId(input.inReplyTo, { keepCase: true });
  const chain = messageIdsOf(
    (input.references ?? []).map((r) => `<${normaliseMessageId(r, { keepCase: true }) ?? ''}>`),
    { keepCase: true },
  );
  if (parent && !chain.some((id) => id.toLowerCase() === parent.toLowerCase())) chain.push(parent);
  const capped = chain.length <= max ? chain : [chain[0]!, ...chain.slice(chain.length - (max - 1))];
  let subject = replySubject(input.subject);
  const token = input.ticketToken ? headerSafe(input.ticketToken) : '';
  if (token && !subject.toLowerCase().includes(`[#${token.toLowerCase()}]`)) subject = `${subject} [#${token}]`;
  return {
    messageId: newMessageId(input.domain),
    inReplyTo: parent ? `<${parent}>` : null,
    references: capped.length > 0 ? capped.map((id) => `<${id}>`).join(' ') : null,
    subject,
  };
}

/** The domain of an address, lower-cased (a Message-ID's right side, a mailbox's domain). */
export const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1).toLowerCase();
