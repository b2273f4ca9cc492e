// Plain text from HTML (body_text, search, the text part of mail), HTML from plain text
// (text-only mail), and one-line previews (last_message_preview).
import { compile, type SelectorDefinition } from 'html-to-text';
import { parserWorkExceeds, plainTextOf } from './guard.js';
import { HTML_LIMITS } from './limits.js';

// Elements whose content is not message text. sanitizeHtml drops them already; skipping them
// here too keeps htmlToText sensible on HTML that was not sanitized first.
const SKIPPED = [
  'head',
  'title',
  'script',
  'style',
  'template',
  'noscript',
  'iframe',
  'object',
  'embed',
  'svg',
  'math',
  'select',
  'textarea',
  'button',
  'img',
];

const SELECTORS: SelectorDefinition[] = [
  ...SKIPPED.map((selector) => ({ selector, format: 'skip' })),
  // "text (url)", the url left out when it is the text (mailto: ignored); #fragment links as text.
  { selector: 'a', options: { linkBrackets: ['(', ')'], hideLinkHrefIfSameAsText: true, noAnchorUrl: true } },
  { selector: 'ul', options: { itemPrefix: '- ' } },
  // Keep the case of headings and header cells: this text is searched and quoted.
  ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
  // Every table as a data table: rows on lines, columns padded apart; layout tables of mail
  // (one column, or a signature's logo | name) come out as their text. Cells wrap only past
  // 1000 characters (html-to-text wraps them at 60 by default, wordwrap or not).
  {
    selector: 'table',
    format: 'dataTable',
    options: { uppercaseHeaderCells: false, maxColumnWidth: 1000, colSpacing: 3, rowSpacing: 0 },
  },
];

// html-to-text walks the tree recursively, and past limits.maxDepth it writes "..." instead of
// the content. Sanitized HTML is at most HTML_LIMITS.maxNestingDepth deep; deeper input goes
// to plainTextOf before it gets here, so the limit is only a backstop.
const MAX_DEPTH = 5 * HTML_LIMITS.maxNestingDepth;
const convert = compile({
  wordwrap: false,
  selectors: SELECTORS,
  limits: { maxDepth: 2 * MAX_DEPTH },
});

/**
 * The plain text of HTML (meant for sanitized HTML, safe on any): paragraphs and blocks
 * separated by a blank line, no word wrap, links as "text (url)" (only the url when it is
 * the text), images left out, list items "- " and "1. ", blockquote lines "> ", headings
 * in their own case, table rows on lines with their cells 3 spaces apart. Then no-break
 * spaces become spaces, trailing spaces of lines go, runs of blank lines become one blank
 * line, and the whole is trimmed. U+0000 is removed. HTML nested deeper than 500 or so
 * pathologically that parsing it would be slow (guard.ts) gives its bare text, line breaks
 * at blocks.
 */
export function htmlToText(html: string): string {
  const input = html.replaceAll('\u0000', '');
  const text = parserWorkExceeds(input, HTML_LIMITS.parserWorkBudget, MAX_DEPTH) ? plainTextOf(input) : convert(input);
  return text
    .replace(/\u00a0/g, ' ')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const escapeText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * HTML for plain text (a text-only email): paragraphs (split at blank lines) in <p>, single
 * line breaks as <br />, & < > escaped. Its output is already in sanitizeHtml's form (the
 * same escaping and <br />), so sanitizing it changes nothing. Empty or blank text gives "".
 * U+0000 is removed.
 */
export function textToHtml(text: string): string {
  return text
    .replaceAll('\u0000', '')
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*(?:\n[ \t]*)+/)
    .map((paragraph) => paragraph.replace(/^\n+|\n+$/g, ''))
    .filter((paragraph) => paragraph.trim() !== '')
    .map((paragraph) => `<p>${escapeText(paragraph).replace(/\n/g, '<br />')}</p>`)
    .join('');
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** One line: NULs removed, whitespace runs collapsed to a space, trimmed. */
const normalizeLine = (text: string) => text.replaceAll('\u0000', '').replace(/\s+/g, ' ').trim();

/**
 * A one-line preview: whitespace runs (line breaks and no-break spaces too) as one space,
 * trimmed, and when longer than `max` code points (the unit of PostgreSQL's varchar(n)) cut to
 * at most `max` code points, "…" included. The cut never splits a surrogate pair, and falls
 * between grapheme clusters (an emoji with its skin tone or ZWJ sequence, a letter with its
 * combining marks) unless a single cluster is longer than the whole preview.
 */
export function preview(text: string, max: number = HTML_LIMITS.previewLength): string {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`preview: max must be a positive integer, got ${max}`);
  // Only the start of a long text can be shown: normalise a prefix far longer than the preview
  // (the whole text when that prefix, collapsed, may hold no more than max code points).
  const prefix = max * 8 + 64;
  let line = text.length > prefix ? normalizeLine(text.slice(0, prefix)) : '';
  if (line.length <= 2 * max) line = normalizeLine(text);
  // Fast path: at most max UTF-16 units means at most max code points.
  if (line.length <= max) return line;
  let codePoints = 0;
  for (const _ of line) {
    if (++codePoints > max) break;
  }
  if (codePoints <= max) return line;

  const budget = max - 1; // room for the "…"
  return `${graphemePrefix(line, budget).trimEnd()}…`;
}

/**
 * No grapheme cluster rule joins two characters of this kind (UAX #29: none of them is a
 * control pair, Extend, ZWJ, SpacingMark, Prepend, Hangul jamo or regional indicator): Latin
 * below the combining marks, and the CJK unified ideographs.
 */
const alwaysSplit = (c: number): boolean => c < 0x300 || (c >= 0x4e00 && c <= 0x9fff);

/**
 * The longest start of `line` of at most `budget` code points that ends between grapheme
 * clusters (its first `budget` code points when one cluster is longer than that). Segmenting
 * costs a microsecond a cluster, so it starts at the last place before the cut where two
 * characters that are never joined meet (a boundary), usually right at the cut.
 */
function graphemePrefix(line: string, budget: number): string {
  // end: the UTF-16 index after the first `budget` code points.
  let end = 0;
  for (let n = 0; n < budget && end < line.length; n++) {
    const c = line.charCodeAt(end);
    end += c >= 0xd800 && c <= 0xdbff && (line.charCodeAt(end + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  let start = end;
  while (start > 0 && !(alwaysSplit(line.charCodeAt(start - 1)) && alwaysSplit(line.charCodeAt(start)))) start--;
  if (start === end) return line.slice(0, end);
  // Whole clusters from start while they fit before end (start is a boundary, or 0).
  let cut = start;
  for (const { segment, index } of graphemes.segment(line.slice(start))) {
    if (start + index + segment.length > end) break;
    cut = start + index + segment.length;
  }
  if (cut === 0) return line.slice(0, end);
  return line.slice(0, cut);
}
