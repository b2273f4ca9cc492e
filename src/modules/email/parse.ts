// Raw RFC 822 → what the help desk stores and decides on. Pure: no database, no I/O.
//
// MIME, transfer encodings, RFC 2047/2231 words and charsets (ISO-8859-*, windows-125x,
// KOI8-R, ISO-2022-JP, ...) are mailparser's (simpleParser); HTML is sanitized by
// platform/html. What is added here: a size bound, normal forms (addresses lowercased,
// Message-IDs as message-id.ts says), bounded bodies, attachments with an inline flag,
// the parts of a delivery report that bounceOf needs, and the quote-trimmed visible body.
import { createHash } from 'node:crypto';
import type { AddressObject, Attachment, ParsedMail, StructuredHeader } from 'mailparser';
import { escapeHtml, HTML_LIMITS, htmlToText, sanitizeHtml, textToHtml } from '../../platform/html/index.js';
import { InboundMailError } from './errors.js';
import { firstHeader, type MailHeaders, toMailHeaders } from './headers.js';
import { messageIdsOf, normaliseMessageId } from './message-id.js';
import { trimQuoted } from './quotes.js';

export const INBOUND_LIMITS = {
  /** Raw inbound mail above this (30 MB) is refused with 413 too_large. */
  maxBytes: 30 * 1024 * 1024,
  /**
   * The longest text or HTML body kept, in UTF-16 code units (platform/html's input bound).
   * A longer body is cut there (`truncated`); the whole of it stays in the raw original.
   */
  maxBodyChars: HTML_LIMITS.maxInputLength,
  /** The most MIME parts one message may have (mailparser's own bound, made explicit). */
  maxParts: 1000,
} as const;

export interface ParseOptions {
  /** Refuse raw input longer than this many bytes. Default INBOUND_LIMITS.maxBytes. */
  maxBytes?: number;
  /** Cut text and HTML bodies longer than this. Default INBOUND_LIMITS.maxBodyChars. */
  maxBodyChars?: number;
}

export interface MailAddress {
  /** Lowercased (contacts' emails are stored lowercase). */
  address: string;
  /** The display name, decoded; "" when there is none. */
  name: string;
}

export interface InboundAttachment {
  /** A bare file name (no path), never empty: generated from the type when the part had none. */
  filename: string;
  content_type: string;
  size: number;
  content: Buffer;
  /** Content-ID without angle brackets, or null. */
  content_id: string | null;
  /** True when the HTML body shows it (an img with src="cid:<content_id>"). */
  inline: boolean;
}

/** The parts of a multipart/report that bounceOf (classify.ts) reads. */
export interface MailReport {
  /** The report-type parameter, lowercased: "delivery-status" for DSNs. */
  report_type: string;
  /** The text of the message/delivery-status part (RFC 3464 fields), or null. */
  delivery_status: string | null;
  /** Headers of the returned original (message/rfc822 or text/rfc822-headers part), or null. */
  original: { message_id: string | null; in_reply_to: string[]; references: string[] } | null;
}

export interface InboundMail {
  from: MailAddress | null;
  /** The first Reply-To address, or null. */
  reply_to: MailAddress | null;
  to: MailAddress[];
  cc: MailAddress[];
  /** Decoded, on one line; "" when missing. */
  subject: string;
  /** The Date header, or null when missing or unreadable. */
  date: Date | null;
  /** Normalised (message-id.ts), or null when missing or blank. */
  message_id: string | null;
  /** What to deduplicate on per mailbox: message_id, or "sha256:<hex of the raw message>" without one. */
  dedupe_key: string;
  in_reply_to: string[];
  /** Oldest first, as in the header, normalised. */
  references: string[];
  /**
   * The same three as the sender wrote them (brackets stripped, case kept): outbound
   * In-Reply-To and References must repeat them exactly (buildReplyHeaders).
   */
  as_sent: { message_id: string | null; in_reply_to: string[]; references: string[] };
  /** The text/plain body, or the text of the HTML body when the mail has no text part. */
  text: string;
  /** The HTML body, sanitized; for text-only mail the text as HTML (textToHtml). */
  html: string;
  /** True when a body was cut at maxBodyChars. */
  truncated: boolean;
  /** The body without quoted history (quotes.ts): what to store as body_html / body_text. */
  visible_html: string;
  visible_text: string;
  has_quoted: boolean;
  attachments: InboundAttachment[];
  /** Every header of the message, raw, for classify.ts and auth.ts. */
  headers: MailHeaders;
  /** Set for multipart/report messages (bounces, DSNs). */
  report: MailReport | null;
  /** Size of the raw message in bytes. */
  size: number;
}

const addressesOf = (value: AddressObject | AddressObject[] | undefined): MailAddress[] => {
  if (!value) return [];
  const out: MailAddress[] = [];
  const walk = (entries: AddressObject['value']) => {
    for (const e of entries) {
      if (e.group) walk(e.group);
      else if (e.address) out.push({ address: e.address.trim().toLowerCase(), name: oneLine(e.name ?? '') });
    }
  };
  for (const obj of Array.isArray(value) ? value : [value]) walk(obj.value);
  return out;
};

// Control characters (CR and LF included) become spaces: these values end up in headers of
// replies and in one-line fields.
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]+/g;
const oneLine = (s: string): string => s.replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();

const EXTENSIONS: Record<string, string> = {
  'message/rfc822': '.eml',
  'message/global': '.eml',
  'text/rfc822-headers': '.txt',
  'message/delivery-status': '.txt',
  'text/plain': '.txt',
  'text/html': '.html',
  'text/calendar': '.ics',
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'application/pdf': '.pdf',
};

const safeFilename = (name: string | undefined, contentType: string, index: number): string => {
  // The last path segment only, no control characters, no leading dots, at most 255 characters.
  const base = oneLine((name ?? '').split(/[/\\]/).pop() ?? '')
    .replace(/^\.+/, '')
    .slice(0, 255);
  return base !== '' ? base : `attachment-${index + 1}${EXTENSIONS[contentType] ?? '.bin'}`;
};

/** Content-IDs referenced as cid: URLs in HTML, lowercased, percent-decoding applied (RFC 2392). */
export function cidsReferenced(html: string): Set<string> {
  const out = new Set<string>();
  for (const m of html.matchAll(/\bcid:([^"'\s>)]+)/gi)) out.add(decodeCid(m[1]!).toLowerCase());
  return out;
}

const decodeCid = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

const cidOf = (a: Attachment): string | null => {
  const id = a.cid ?? a.contentId;
  if (!id) return null;
  return id.trim().replace(/^<|>$/g, '').trim() || null;
};

const headerLineEnd = (buf: Buffer): number => {
  const crlf = buf.indexOf('\r\n\r\n');
  const lf = buf.indexOf('\n\n');
  const ends = [crlf, lf].filter((i) => i >= 0);
  return ends.length > 0 ? Math.min(...ends) : buf.length;
};

async function reportOf(parsed: ParsedMail, attachments: readonly InboundAttachment[]): Promise<MailReport | null> {
  const ct = parsed.headers.get('content-type') as StructuredHeader | undefined;
  if (ct?.value?.toLowerCase() !== 'multipart/report') return null;
  const status = attachments.find((a) => /^message\/(global-)?delivery-status$/.test(a.content_type));
  const original = attachments.find((a) =>
    ['message/rfc822', 'message/global', 'text/rfc822-headers', 'message/global-headers'].includes(a.content_type),
  );
  let orig: MailReport['original'] = null;
  if (original) {
    // Only the header block of the returned message is read.
    const head = original.content.subarray(0, headerLineEnd(original.content));
    const { simpleParser } = await import('mailparser');
    try {
      const p = await simpleParser(Buffer.concat([head, Buffer.from('\r\n\r\n')]), { skipHtmlToText: true });
      orig = {
        message_id: normaliseMessageId(p.messageId),
        in_reply_to: messageIdsOf(p.inReplyTo),
        references: messageIdsOf(p.references),
      };
    } catch {
      orig = null;
    }
  }
  return {
    report_type: (ct.params['report-type'] ?? '').toLowerCase(),
    delivery_status: status ? status.content.toString('utf8') : null,
    original: orig,
  };
}

const cut = (s: string, max: number): [string, boolean] => (s.length > max ? [s.slice(0, max), true] : [s, false]);

/**
 * Parses one raw inbound message. Throws InboundMailError 'too_large' past opts.maxBytes
 * (before any parsing) and 'malformed' when mailparser refuses the message (more than
 * INBOUND_LIMITS.maxParts parts, a header block over 1 MB). Anything else malformed is
 * parsed as well as it can be: missing headers give nulls and empty lists.
 *
 * winmail.dat (application/ms-tnef) parts are kept as ordinary attachments: nothing is
 * unpacked from them. Embedded message/rfc822 parts stay attachments (.eml) unless their
 * disposition is inline. cid: links stay in `html`; rewriteCids turns them into URLs.
 */
export async function parseInbound(raw: Buffer, opts: ParseOptions = {}): Promise<InboundMail> {
  const maxBytes = opts.maxBytes ?? INBOUND_LIMITS.maxBytes;
  const maxBodyChars = opts.maxBodyChars ?? INBOUND_LIMITS.maxBodyChars;
  if (raw.length > maxBytes) {
    throw new InboundMailError('too_large', `the message is ${raw.length} bytes; the limit is ${maxBytes}`);
  }

  // mailparser is loaded with the first mail, not at start.
  const { simpleParser } = await import('mailparser');
  let parsed: ParsedMail;
  try {
    parsed = await simpleParser(raw, {
      keepCidLinks: true, // cid: links are ours to rewrite (rewriteCids), not data: URLs
      skipHtmlToText: true, // platform/html does it, within its bounds
      skipTextLinks: true,
      skipImageLinks: true,
      keepDeliveryStatus: true, // DSN fields as an attachment, for bounceOf
      checksumAlgo: false,
      maxChildNodes: INBOUND_LIMITS.maxParts,
    });
  } catch (err) {
    throw new InboundMailError('malformed', `the message could not be parsed: ${(err as Error).message}`, {
      cause: err,
    });
  }

  const headers = toMailHeaders(parsed.headerLines);

  // Bodies, bounded. The HTML as sent is kept (unsanitized, never returned) for trimQuoted,
  // which needs the class and id markers of quote containers that sanitizing removes.
  const [rawHtml, htmlCut] = cut(typeof parsed.html === 'string' ? parsed.html : '', maxBodyChars);
  const [sentText, textCut] = cut((parsed.text ?? '').replaceAll('\u0000', ''), maxBodyChars);
  const hasHtml = rawHtml.trim() !== '';
  const html = hasHtml ? sanitizeHtml(rawHtml) : textToHtml(sentText);
  const text = sentText.trim() !== '' ? sentText : hasHtml ? htmlToText(html) : '';

  const subject = oneLine(parsed.subject ?? '').slice(0, 998);
  const visible = trimQuoted(text, hasHtml ? rawHtml : undefined, { subject });

  const referenced = cidsReferenced(html);
  const attachments: InboundAttachment[] = parsed.attachments.map((a, i) => {
    const content_id = cidOf(a);
    const content_type = (a.contentType || 'application/octet-stream').toLowerCase();
    return {
      filename: safeFilename(a.filename, content_type, i),
      content_type,
      size: a.size ?? a.content.length,
      content: a.content,
      content_id,
      inline: content_id !== null && referenced.has(content_id.toLowerCase()),
    };
  });

  const dateHeader = firstHeader(headers, 'date');
  const date = dateHeader ? new Date(dateHeader) : null;
  const message_id = normaliseMessageId(parsed.messageId);

  return {
    from: addressesOf(parsed.from)[0] ?? null,
    reply_to: addressesOf(parsed.replyTo)[0] ?? null,
    to: addressesOf(parsed.to),
    cc: addressesOf(parsed.cc),
    subject,
    date: date && !Number.isNaN(date.getTime()) ? date : null,
    message_id,
    dedupe_key: message_id ?? `sha256:${createHash('sha256').update(raw).digest('hex')}`,
    in_reply_to: messageIdsOf(parsed.inReplyTo),
    references: messageIdsOf(parsed.references),
    as_sent: {
      message_id: normaliseMessageId(parsed.messageId, { keepCase: true }),
      in_reply_to: messageIdsOf(parsed.inReplyTo, { keepCase: true }),
      references: messageIdsOf(parsed.references, { keepCase: true }),
    },
    text,
    html,
    truncated: htmlCut || textCut,
    visible_html: visible.visible_html,
    visible_text: visible.visible_text,
    has_quoted: visible.has_quoted,
    attachments,
    headers,
    report: await reportOf(parsed, attachments),
    size: raw.length,
  };
}

/**
 * Replaces cid: image sources with URLs: `map` is Content-ID (as in InboundAttachment.content_id;
 * matched case-insensitively, percent-decoded) → URL. Meant for the sanitized HTML this module
 * returns (sanitizeHtml writes every attribute in double quotes and escapes < > " in values and
 * text, so an <img ...> tag is exactly what the pattern below sees). The URL must be absolute
 * http(s) if the result is ever sanitized again (sanitizeHtml keeps only http(s), cid: and
 * data: image sources). cid: links with no entry in the map are left as they are.
 */
export function rewriteCids(html: string, map: ReadonlyMap<string, string> | Record<string, string>): string {
  const lookup = new Map<string, string>();
  for (const [k, v] of map instanceof Map ? map : Object.entries(map)) lookup.set(k.toLowerCase(), v);
  return html.replace(/<img\b[^>]*>/gi, (tag) =>
    tag.replace(/(\ssrc=")cid:([^"]*)"/i, (whole, prefix: string, id: string) => {
      const url = lookup.get(decodeCid(id.replace(/&amp;/g, '&')).toLowerCase());
      return url === undefined ? whole : `${prefix}${escapeHtml(url)}"`;
    }),
  );
}
