// The dedicated engine's features (docs/ai.md "The dedicated engine"): a ticket's subject, its
// first customer message, the sender's domain, the channel and the mailbox, hashed into one
// sparse vector of DIM buckets (the "hashing trick": no vocabulary to store or grow). Four
// groups, each scaled to unit length so that a long message does not drown the subject:
// - the subject's words and word pairs, and its words' character 3-grams (typos, plurals);
// - the message's words and word pairs (the first MESSAGE_CHARS characters);
// - the sender's domain, the channel and the mailbox, one token each.
// A word counts 1 + ln(count) in its group. Buckets are FNV-1a hashes of a prefixed token.

export const DIM = 1 << 18;
const MESSAGE_CHARS = 2_000;
const SUBJECT_CHARS = 300;

export interface TicketText {
  subject: string;
  /** The first customer message (plain text), '' when none. */
  message: string;
  /** The sender's email domain (lowercase), null when unknown. */
  domain: string | null;
  channel: string;
  mailboxId: string | null;
}

export interface SparseVector {
  idx: Int32Array;
  val: Float32Array;
}

/** FNV-1a (32 bits) of a string, in [0, DIM). */
export function bucket(token: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < token.length; i++) {
    h ^= token.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) & (DIM - 1);
}

const WORD = /[\p{L}\p{N}]+/gu;
const wordsOf = (s: string) => s.toLowerCase().match(WORD) ?? [];

type Group = Map<number, number>;

function add(g: Group, token: string): void {
  const b = bucket(token);
  g.set(b, (g.get(b) ?? 0) + 1);
}

function wordGroup(words: string[], prefix: string): Group {
  const g: Group = new Map();
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    add(g, `${prefix}${w}`);
    if (i > 0) add(g, `${prefix}${words[i - 1]} ${w}`);
  }
  return g;
}

function charGroup(words: string[]): Group {
  const g: Group = new Map();
  for (const w of words) {
    const padded = `<${w}>`;
    for (let j = 0; j + 3 <= padded.length; j++) add(g, `c:${padded.slice(j, j + 3)}`);
  }
  return g;
}

/** The ticket's sparse vector: the groups' buckets (a bucket in two groups sums). */
export function featurize(t: TicketText): SparseVector {
  const subject = wordsOf(t.subject.slice(0, SUBJECT_CHARS));
  const message = wordsOf(t.message.slice(0, MESSAGE_CHARS));
  const meta: Group = new Map();
  add(meta, `ch:${t.channel}`);
  if (t.domain) add(meta, `d:${t.domain}`);
  if (t.mailboxId) add(meta, `mb:${t.mailboxId}`);
  const groups = [wordGroup(subject, 's:'), charGroup(subject), wordGroup(message, 'm:'), meta];
  const out = new Map<number, number>();
  for (const g of groups) {
    let norm = 0;
    for (const [k, c] of g) {
      const v = 1 + Math.log(c);
      g.set(k, v);
      norm += v * v;
    }
    if (norm === 0) continue;
    const scale = 1 / Math.sqrt(norm);
    for (const [k, v] of g) out.set(k, (out.get(k) ?? 0) + v * scale);
  }
  const idx = new Int32Array(out.size);
  const val = new Float32Array(out.size);
  let i = 0;
  for (const [k, v] of out) {
    idx[i] = k;
    val[i++] = v;
  }
  return { idx, val };
}

/** The domain of an email address (lowercase), null when it has none. */
export function domainOf(email: string | null | undefined): string | null {
  if (!email) return null;
  const at = email.lastIndexOf('@');
  return at < 0
    ? null
    : email
        .slice(at + 1)
        .trim()
        .toLowerCase() || null;
}
