// HTML for stored bodies (messages' body_html, sanitized before it is stored, and the body_text
// derived from it; KB articles, macros, signatures; inbound and outbound mail).
//
//   body_html = sanitizeHtml(input)            or textToHtml(text) for text-only mail
//   body_text = htmlToText(body_html)
//   preview   = preview(body_text)
//
//   escapeHtml(text)                           text placed in HTML (mail, snippets): & < > " ' escaped
//
// Callers bound the input first: HTML_LIMITS.maxInputLength (1 MiB) is theirs to enforce.

export { default as escapeHtml } from 'escape-html';
export { HTML_LIMITS } from './limits.js';
export { ANCHOR_PREFIX, sanitizeHtml } from './sanitize.js';
export { htmlToText, preview, textToHtml } from './text.js';
