// Message-IDs as the help desk compares them (deduplication per mailbox, threading).
//
// Normal form (for lookups: deduplication, threading): the id without angle brackets and
// surrounding space, lowercased WHOLE. RFC 5322 makes the local part case-sensitive, but relays
// and clients that rewrite case exist, while two distinct messages whose ids differ only by
// case do not in practice: a split thread is the worse failure. Ids are cut at 998 characters
// (the longest line a header may have).
//
// Outbound References and In-Reply-To must carry the ids exactly as the customer's client
// wrote them (clients compare them as strings), so the as-sent form ({ keepCase: true }:
// brackets stripped, case kept) is what replies are built from.

const MAX_ID_LENGTH = 998;
/** The most ids read from one In-Reply-To or References header (the newest are kept). */
export const MAX_REFERENCES = 100;

/** The normal form of one Message-ID ("<AbC@Example.COM>" → "abc@example.com"), or null when blank. */
export function normaliseMessageId(id: string | null | undefined, opts: { keepCase?: boolean } = {}): string | null {
  if (typeof id !== 'string') return null;
  let s = id.trim();
  if (s.startsWith('<')) s = s.slice(1);
  if (s.endsWith('>')) s = s.slice(0, -1);
  s = s.trim();
  if (!opts.keepCase) s = s.toLowerCase();
  if (s === '' || /[\s<>]/.test(s)) return null;
  return s.slice(0, MAX_ID_LENGTH);
}

/**
 * Every Message-ID in a header value such as References or In-Reply-To, normalised, in order,
 * without repeats. Ids in angle brackets are taken; a value without any (some clients drop the
 * brackets) is split at whitespace and commas, keeping what has an "@". At most MAX_REFERENCES
 * ids are kept: the first one (the thread's root) and the newest ones.
 */
export function messageIdsOf(
  value: string | readonly string[] | null | undefined,
  opts: { keepCase?: boolean } = {},
): string[] {
  if (value == null) return [];
  const text = typeof value === 'string' ? value : value.join(' ');
  const bracketed = text.match(/<[^<>]*>/g);
  const raw = bracketed ?? text.split(/[\s,]+/).filter((t) => t.includes('@'));
  const seen = new Set<string>();
  const ids: string[] = [];
  for (const r of raw) {
    const id = normaliseMessageId(r, opts);
    if (id && !seen.has(id.toLowerCase())) {
      seen.add(id.toLowerCase());
      ids.push(id);
    }
  }
  if (ids.length <= MAX_REFERENCES) return ids;
  return [ids[0]!, ...ids.slice(ids.length - (MAX_REFERENCES - 1))];
}
