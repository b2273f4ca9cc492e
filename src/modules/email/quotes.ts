// Quoted history: what of an inbound reply is the new text, and what repeats earlier mail.
//
// The stored body (body_html, body_text) is the visible reply; the full original stays
// retrievable from the raw message (GET /v1/messages/{id}/original). Rules, in short:
//
// HTML (tried first when there is HTML; it needs the HTML as sent, before sanitizing, since
// the markers are classes and ids that the sanitizer removes):
//   - Outlook: id="divRplyFwdMsg", id="mail-editor-reference-message-container", or the
//     desktop header block (a div with a solid top border #E1E1E1/#B5C4DF whose text starts
//     with "From:") starts the history: it and everything after it go, with the <hr> before it.
//   - Gmail: class="gmail_quote" containers go (not when they hold "Forwarded message").
//   - Apple Mail, iOS, Thunderbird: <blockquote type="cite"> goes, with the "On … wrote:"
//     attribution just before it (or Thunderbird's div.moz-cite-prefix); Yahoo's
//     div.yahoo_quoted goes. A cite blockquote after "Begin forwarded message:" stays.
// Plain text (text-only mail, or HTML from a client none of the above matched, as its text):
//   - An "On <date>, <name> wrote:" line (up to 3 lines long, with a digit or an @ in it, in
//     English, German, French, Spanish, Italian, Dutch, Scandinavian, Polish, Portuguese) and
//     the ">" lines after it form a quote; so do ">" lines alone.
//   - Top-posted reply (no new text after the first quote): the first quote and all after it
//     go, except a signature ("-- " line) or mailing-list footer at the very end.
//   - Inline reply (new text after a quote): only the quotes after the last new text go; the
//     ones between answers stay, as the context the answers need.
//   - Outlook's "-----Original Message-----" line, or a "From: …" line followed within four
//     lines by "Sent:"/"Date:" (also "*From:*", and in German, French, Spanish, Dutch,
//     Italian, Scandinavian): that line and everything after it go (with the separator of
//     dashes or underscores above it).
// Forwards are kept whole: nothing is trimmed when the subject says Fwd:/Fw:/WG:/TR:/RV:/
// Doorst:/VB:/VL: (opts.subject), and nothing after "Begin forwarded message:" or
// "---------- Forwarded message ---------" is trimmed.
// Signatures are not stripped (an agent wants the phone number in it).
// When trimming would leave nothing, nothing is trimmed (has_quoted false).
import { DomUtils, parseDocument } from 'htmlparser2';
import { parserWorkExceeds } from '../../platform/html/guard.js';
import { HTML_LIMITS, htmlToText, sanitizeHtml, textToHtml } from '../../platform/html/index.js';

export interface TrimmedBody {
  /** The reply without quoted history, as plain text. */
  visible_text: string;
  /** The same as sanitized HTML (textToHtml of visible_text for text-only mail). */
  visible_html: string;
  /** True when quoted history was removed. */
  has_quoted: boolean;
}

export interface TrimOptions {
  /** The message's subject: a forward (Fwd:, Fw:, WG:, ...) is never trimmed. */
  subject?: string;
}

const FORWARD_SUBJECT = /^\s*(?:fwd?|wg|tr|rv|doorst|vb|vl|enc|pd|ynt)\s*:/i;

// ---------------------------------------------------------------- plain text

const ON_START = /^\s*(?:on|am|le|el|il|op|den|em|w dniu|dne|pe)\s/i;
// The verb ends the line ("… Jane <jane@x> wrote:"), or in German, Dutch and Scandinavian
// comes before the name ("Am … schrieb Jane <jane@x>:").
const WROTE =
  /[\s>")\]](?:wrote|a écrit|escribió|ha scritto|napisał(?:\(a\))?|escreveu|kirjoitti|írta|написал\(?а?\)?|napsal|a scris|(?:schrieb|schreef|skrev|skrivit)(?:\s[^:]{0,300})?)\s*:\s*$/i;
const ORIGINAL_MESSAGE =
  /^\s*-{2,}\s*(?:original message|ursprüngliche nachricht|originalnachricht|message d'origine|mensaje original|messaggio originale|oorspronkelijk bericht|originalmeddelande|original meddelelse|opprinnelig melding|alkuperäinen viesti|mensagem original)\s*-{2,}\s*$/i;
const FROM_LINE = /^\s*\*?(?:from|von|de|van|da|från|fra|od|от)\s*\*?\s*:/i;
const SENT_LINE =
  /^\s*\*?(?:sent|date|gesendet|datum|envoyé|enviado|fecha|verzonden|inviato|data|skickat|sendt|wysłano|отправлено)\s*\*?\s*:/i;
const FORWARD_MARKER =
  /^\s*(?:-{2,}\s*(?:forwarded message|weitergeleitete nachricht|message transféré|mensaje reenviado|messaggio inoltrato|doorgestuurd bericht|videresendt melding|vidarebefordrat meddelande)\s*-{2,}|-{2,}\s*forwarded message\s*-{2,}|begin forwarded message\s*:|anfang der weitergeleiteten nachricht\s*:|début du message réexpédié\s*:)/i;
const SEPARATOR = /^\s*[-_=*]{10,}\s*$/;
const QUOTED = /^\s*>/;
const BLANK = /^\s*$/;
const SIG_DELIMITER = /^--\s?$/;

/** How many lines (1 to 3) starting at i form an "On … wrote:" attribution, or 0. */
function onWroteAt(lines: readonly string[], i: number): number {
  if (!ON_START.test(lines[i]!)) return 0;
  let joined = '';
  for (let n = 1; n <= 3 && i + n - 1 < lines.length; n++) {
    const line = lines[i + n - 1]!;
    if (n > 1 && (BLANK.test(line) || QUOTED.test(line))) return 0;
    joined = n === 1 ? line.trim() : `${joined} ${line.trim()}`;
    if (joined.length > 500) return 0;
    // A real attribution has a date or an address in it; "On Monday, John wrote:" in the
    // middle of someone's text is left alone.
    if (WROTE.test(` ${joined}`) && /[\d@]/.test(joined)) return n;
  }
  return 0;
}

/** Whether an Outlook header block ("From: …" then "Sent: …" within four lines) starts at i. */
function outlookBlockAt(lines: readonly string[], i: number): boolean {
  if (!FROM_LINE.test(lines[i]!)) return false;
  for (let j = i + 1; j <= i + 4 && j < lines.length; j++) if (SENT_LINE.test(lines[j]!)) return true;
  return false;
}

/** Where the trailing signature or mailing-list footer starts (lines.length when none). */
function tailStart(lines: readonly string[]): number {
  let nonBlank = 0;
  for (let i = lines.length - 1; i >= 0 && nonBlank <= 20; i--) {
    const line = lines[i]!;
    if (QUOTED.test(line)) break;
    if (SIG_DELIMITER.test(line)) return i;
    if (/^\s*_{20,}\s*$/.test(line) && /mailing list/i.test(lines[i + 1] ?? '')) return i;
    if (!BLANK.test(line)) nonBlank++;
  }
  return lines.length;
}

const dropTrailingBlank = (lines: string[]): string[] => {
  let end = lines.length;
  while (end > 0 && BLANK.test(lines[end - 1]!)) end--;
  return lines.slice(0, end);
};

/** The plain-text rules above: the visible lines, or null when nothing is quoted. */
export function trimQuotedText(text: string): string | null {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let forwardAt = lines.length;
  for (let i = 0; i < lines.length; i++) {
    // A forward quoted by the client ("> Begin forwarded message:") counts too.
    if (FORWARD_MARKER.test(lines[i]!.replace(/^[\s>]+/, ''))) {
      forwardAt = i;
      break;
    }
  }

  // Outlook-style history: cut there, whatever follows.
  for (let i = 0; i < forwardAt; i++) {
    const line = lines[i]!;
    if (ORIGINAL_MESSAGE.test(line) || outlookBlockAt(lines, i)) {
      let end = i;
      while (end > 0 && (BLANK.test(lines[end - 1]!) || SEPARATOR.test(lines[end - 1]!))) end--;
      const visible = dropTrailingBlank(lines.slice(0, end));
      return visible.some((l) => !BLANK.test(l)) ? visible.join('\n') : null;
    }
  }

  // Mark quote lines: ">" lines, attributions, and an attribution followed by unquoted text
  // (a client that does not prefix the history) as a cut to the end.
  const tail = Math.min(tailStart(lines), lines.length);
  const end = Math.min(tail, forwardAt);
  const quoted: boolean[] = new Array(lines.length).fill(false);
  for (let i = 0; i < end; i++) {
    if (QUOTED.test(lines[i]!)) {
      quoted[i] = true;
      continue;
    }
    const n = onWroteAt(lines, i);
    if (n > 0) {
      let next = i + n;
      while (next < end && BLANK.test(lines[next]!)) next++;
      if (next < end && !QUOTED.test(lines[next]!)) {
        // The history is not marked with ">": everything after the attribution is history.
        const visible = dropTrailingBlank(lines.slice(0, i));
        return visible.some((l) => !BLANK.test(l)) ? visible.join('\n') : null;
      }
      for (let k = i; k < i + n; k++) quoted[k] = true;
      i += n - 1;
    }
  }
  const firstQuote = quoted.indexOf(true);
  if (firstQuote < 0) return null;
  let lastVisible = -1;
  for (let i = 0; i < end; i++) if (!quoted[i] && !BLANK.test(lines[i]!)) lastVisible = i;
  if (lastVisible < 0) return null; // all of it is quoted: keep it

  // Top-posted: cut at the first quote. Inline: cut only the quotes after the last answer.
  const cutAt = lastVisible < firstQuote ? firstQuote : lastVisible + 1;
  const removed = lines.slice(cutAt, end);
  if (!removed.some((_, k) => quoted[cutAt + k])) return null;
  const kept = dropTrailingBlank(lines.slice(0, cutAt));
  const rest = lines.slice(end);
  return (rest.length > 0 ? [...kept, '', ...rest] : kept).join('\n').trimEnd();
}

// ---------------------------------------------------------------- HTML

type Doc = ReturnType<typeof parseDocument>;
type Node = Doc['children'][number];
type Element = Parameters<typeof DomUtils.getAttributeValue>[0];

const classesOf = (el: Element): string[] => (DomUtils.getAttributeValue(el, 'class') ?? '').split(/\s+/);
const textOf = (node: Node): string => DomUtils.textContent(node).replace(/\s+/g, ' ').trim();

const CUT_IDS = new Set(['divrplyfwdmsg', 'mail-editor-reference-message-container']);

function isCutMarker(el: Element): boolean {
  const id = (DomUtils.getAttributeValue(el, 'id') ?? '').toLowerCase();
  if (CUT_IDS.has(id)) return true;
  if (el.name !== 'div') return false;
  const style = (DomUtils.getAttributeValue(el, 'style') ?? '').toLowerCase();
  return /border-top:\s*solid\s+#(?:e1e1e1|b5c4df)/.test(style) && FROM_LINE.test(textOf(el));
}

const isAttached = (node: Node, doc: Doc): boolean => {
  let n: Node | Doc | null = node;
  while (n && n !== doc) n = n.parent as Node | null;
  return n === doc;
};

// Skipping whitespace text and <br>: the sibling before a node.
function previousMeaningful(node: Node): Node | null {
  let p = node.prev as Node | null;
  while (p && ((p.type === 'text' && textOf(p) === '') || (DomUtils.isTag(p) && p.name === 'br')))
    p = p.prev as Node | null;
  return p;
}

const isAttribution = (node: Node): boolean => {
  const t = textOf(node);
  return t.length <= 500 && onWroteAt([t], 0) === 1;
};

/** The HTML rules above: the HTML with the quotes removed (not yet sanitized), or null. */
export function trimQuotedHtml(html: string): string | null {
  // Input so nested that building a tree would be slow or deep: leave it to the text rules.
  if (parserWorkExceeds(html, HTML_LIMITS.parserWorkBudget, 5 * HTML_LIMITS.maxNestingDepth)) return null;
  const doc = parseDocument(html, { decodeEntities: true });
  let removed = false;

  const marker = DomUtils.findOne(isCutMarker, doc.children, true);
  if (marker) {
    // The <hr> Outlook puts above the header block goes too.
    const before = previousMeaningful(marker);
    if (before && DomUtils.isTag(before) && before.name === 'hr') DomUtils.removeElement(before);
    let n: Node | Doc | null = marker;
    while (n && n !== doc) {
      while (n.next) DomUtils.removeElement(n.next as Node);
      n = n.parent as Node | null;
    }
    DomUtils.removeElement(marker);
    removed = true;
  }

  const candidates = DomUtils.findAll((el) => {
    const cls = classesOf(el);
    return (
      cls.includes('gmail_quote') ||
      cls.includes('yahoo_quoted') ||
      cls.includes('moz-cite-prefix') ||
      (el.name === 'blockquote' && (DomUtils.getAttributeValue(el, 'type') ?? '').toLowerCase() === 'cite')
    );
  }, doc.children);
  for (const el of candidates) {
    if (!isAttached(el, doc)) continue; // inside something removed already
    const text = textOf(el);
    if (/^-{3,}\s*forwarded message/i.test(text) || /^begin forwarded message/i.test(text)) continue;
    const before = previousMeaningful(el);
    if (before && /begin forwarded message:?$/i.test(textOf(before))) continue;
    if (el.name === 'blockquote' && before && isAttribution(before)) DomUtils.removeElement(before);
    DomUtils.removeElement(el);
    removed = true;
  }
  if (!removed) return null;
  return DomUtils.getOuterHTML(doc);
}

/**
 * The visible part of an inbound body. `text` is the plain text (the text/plain part, or the
 * text of the HTML); `html`, when the mail has HTML, is the HTML AS SENT (unsanitized: the
 * rules read classes and ids that sanitizing removes; the result is sanitized here). See the
 * rules at the top of this file.
 */
export function trimQuoted(text: string, html?: string, opts: TrimOptions = {}): TrimmedBody {
  const forward = opts.subject !== undefined && FORWARD_SUBJECT.test(opts.subject);
  if (html !== undefined && html.trim() !== '') {
    const fullHtml = sanitizeHtml(html);
    const fullText = text.trim() !== '' ? text : htmlToText(fullHtml);
    if (forward) return { visible_text: fullText, visible_html: fullHtml, has_quoted: false };
    const trimmed = trimQuotedHtml(html);
    if (trimmed !== null) {
      const visible_html = sanitizeHtml(trimmed);
      const visible_text = htmlToText(visible_html);
      if (visible_text !== '' || /<img\b/i.test(visible_html)) return { visible_text, visible_html, has_quoted: true };
    }
    const fromText = trimQuotedText(fullText);
    if (fromText !== null) return { visible_text: fromText, visible_html: textToHtml(fromText), has_quoted: true };
    return { visible_text: fullText, visible_html: fullHtml, has_quoted: false };
  }
  const visible = forward ? null : trimQuotedText(text);
  const visible_text = visible ?? text;
  return { visible_text, visible_html: textToHtml(visible_text), has_quoted: visible !== null };
}
