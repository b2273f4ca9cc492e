// What a model's answer becomes before it leaves the server. The model is not trusted any more
// than the customer whose text it read: every HTML it writes goes through sanitizeHtml (the
// sanitizer of messages), its plain text loses any markup (a <script> it was talked into writing
// is dropped, not kept as text), and its JSON is read against the schema asked for, keeping only
// the schema's fields with values in range.
import { escapeHtml, htmlToText, sanitizeHtml } from '../../../platform/html/index.js';
import { ApiError } from '../../../platform/http/errors.js';

/** A model that wrapped its answer in a Markdown code fence (```html … ```): the inside. */
export function unfence(text: string): string {
  const m = /^\s*```[a-z]*[ \t]*\n([\s\S]*?)\n?```\s*$/i.exec(text);
  return m ? m[1]! : text;
}

/**
 * Plain text without markup: tags are dropped (a script with its content), entities decoded,
 * line breaks kept; `<jane@example.com>` and `<https://…>` stay as written.
 */
export function plainOf(text: string): string {
  const html = unfence(text)
    .replaceAll('\u0000', '')
    .replace(/\r\n?/g, '\n')
    .replace(/<((?:[^\s<>@]+@[^\s<>]+)|(?:https?:\/\/[^\s<>]+))>/gi, '&lt;$1&gt;')
    .replace(/\n/g, '<br>');
  return htmlToText(sanitizeHtml(html));
}

/** One line of plain text (a title, an excerpt), cut to `max` characters. */
export function lineOf(text: string, max: number): string {
  const line = plainOf(text).replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

/** HTML the model wrote (a rewrite, a translation, an article), sanitized. */
export function htmlOf(text: string): string {
  return sanitizeHtml(unfence(text).trim());
}

const URL_RE = /\bhttps?:\/\/[^\s<>"')\]]+[^\s<>"')\].,;:!?]/g;

/** A line of text as HTML: escaped, its web addresses made links. */
function lineHtml(line: string): string {
  let out = '';
  let last = 0;
  for (const m of line.matchAll(URL_RE)) {
    out += escapeHtml(line.slice(last, m.index));
    out += `<a href="${escapeHtml(m[0])}">${escapeHtml(m[0])}</a>`;
    last = m.index + m[0].length;
  }
  return out + escapeHtml(line.slice(last));
}

const BULLET = /^\s*[-*•]\s+/;
const NUMBERED = /^\s*\d{1,3}[.)]\s+/;

/** A paragraph of the model's text: a list when every line is an item, else lines with breaks. */
function paragraphHtml(p: string): string {
  const lines = p.split('\n').filter((l) => l.trim() !== '');
  for (const [re, tag] of [
    [BULLET, 'ul'],
    [NUMBERED, 'ol'],
  ] as const) {
    if (lines.every((l) => re.test(l))) {
      return `<${tag}>${lines.map((l) => `<li>${lineHtml(l.replace(re, ''))}</li>`).join('')}</${tag}>`;
    }
  }
  return `<p>${lines.map(lineHtml).join('<br>')}</p>`;
}

/**
 * A reply or an answer the model wrote as plain text (paragraphs apart by a blank line, "- "
 * items), as sanitized HTML and its text (body_text as messages derive it).
 */
export function replyOf(text: string): { html: string; text: string } {
  const plain = plainOf(text);
  const html = sanitizeHtml(
    plain
      .split(/\n\s*\n/)
      .filter((p) => p.trim() !== '')
      .map(paragraphHtml)
      .join(''),
  );
  return { html, text: htmlToText(html) };
}

/** The model's JSON answer as an object, or 502 ai_unavailable when it is none. */
export function jsonOf(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(unfence(text));
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // below
  }
  throw new ApiError('ai_unavailable', 'The AI provider sent an answer that could not be read.');
}

/** A string field of a JSON answer, or null. */
export const stringField = (o: Record<string, unknown>, key: string): string | null =>
  typeof o[key] === 'string' ? (o[key] as string) : null;

/** `value` when it is one of `allowed`, else null (an out-of-range value is dropped). */
export function oneOf<T extends string>(value: unknown, allowed: readonly T[]): T | null {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : null;
}

/** A BCP 47 tag in its canonical form, or null when it is not one. */
export function languageTag(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > 64) return null;
  try {
    return Intl.getCanonicalLocales(value.trim())[0] ?? null;
  } catch {
    return null;
  }
}
