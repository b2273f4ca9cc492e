// The allowlist HTML sanitizer for everything stored as *_html (messages, KB articles, macros,
// signatures): sanitize-html with a policy of our own. Nothing here is a regex sanitizer: the
// regexes below only judge single URL and CSS values that sanitize-html has already parsed out.
//
// Why the output is safe when a browser parses it again (the mXSS question): sanitize-html
// writes its output fresh from the parse tree, escaping every text node (& < >) and every
// attribute value (& < > "), so the browser reads exactly the text and values that were
// checked. That holds only while no allowed element changes how the browser tokenizes its
// content, which is why no raw-text or RCDATA element (script, style, textarea, xmp, title,
// iframe, noscript, noembed, noframes, plaintext) and no foreign content (svg, math) is allowed:
// they are dropped with everything inside them (NON_TEXT_TAGS).
import sanitize from 'sanitize-html';
import { parserWorkExceeds, plainTextOf } from './guard.js';
import { HTML_LIMITS } from './limits.js';
import { textToHtml } from './text.js';

const ALLOWED_TAGS = [
  // Blocks
  'p',
  'div',
  'blockquote',
  'pre',
  'hr',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  // Inline formatting
  'br',
  'span',
  'b',
  'strong',
  'i',
  'em',
  'u',
  's',
  'strike',
  'sub',
  'sup',
  'small',
  'code',
  'a',
  'img',
  // Lists
  'ul',
  'ol',
  'li',
  'dl',
  'dt',
  'dd',
  // Tables
  'table',
  'caption',
  'colgroup',
  'col',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'th',
  'td',
];

// Disallowed tags are unwrapped (the tag goes, its text stays), except these, which go with
// everything inside them: their content is code, metadata or form controls, not message text.
// The void ones (meta, link, base, input, embed, ...) end where they start, so listing them
// cannot swallow what follows.
const NON_TEXT_TAGS = [
  // Code and styling
  'script',
  'style',
  'template',
  'noscript',
  // Embedded content and foreign (XML) content
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'noembed',
  'noframes',
  'svg',
  'math',
  // Forms
  'form',
  'input',
  'button',
  'select',
  'option',
  'textarea',
  // Document metadata: a whole email document's <head> holds <title>, <style>, <meta>
  'head',
  'title',
  'meta',
  'link',
  'base',
  // Raw text elements of old
  'xmp',
  'plaintext',
  'listing',
];

const TABLE_CELL = ['colspan', 'rowspan', 'align'];
const SPECIFIC_ATTRIBUTES: Record<string, string[]> = {
  // rel and target are set by transformTags (whatever the input said), so they must pass here.
  a: ['href', 'title', 'name', 'rel', 'target'],
  img: ['src', 'alt', 'title', 'width', 'height'],
  table: ['align'],
  colgroup: ['span', 'align'],
  col: ['span', 'align'],
  tr: ['align'],
  th: TABLE_CELL,
  td: TABLE_CELL,
};
// style (filtered by ALLOWED_STYLES) and dir (right-to-left text, checked by transformAny) anywhere.
const ALLOWED_ATTRIBUTES: Record<string, sanitize.AllowedAttribute[]> = {
  '*': ['style', 'dir'],
  ...SPECIFIC_ATTRIBUTES,
};

// CSS: a handful of properties, each value matched whole (sanitize-html anchors nothing itself,
// so every regex carries ^ and $). None of these values can hold "(" except rgb()/rgba() with
// digits inside, so url(), expression(), var() and friends cannot get through; nor "\" (CSS
// escapes) nor quotes.
const COLOR = [
  /^#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/i,
  /^rgba?\([0-9.%,/\s]{1,40}\)$/i,
  /^[a-z]{3,20}$/i, // named colours, transparent, currentcolor, inherit
];
const ALLOWED_STYLES: Record<string, Record<string, RegExp[]>> = {
  '*': {
    color: COLOR,
    'background-color': COLOR,
    'text-align': [/^(?:left|right|center|justify|start|end)$/i],
    'font-weight': [/^(?:normal|bold|bolder|lighter|[1-9]00)$/i],
    'font-style': [/^(?:normal|italic|oblique)$/i],
    'text-decoration': [
      /^(?:none|(?:underline|overline|line-through)(?:\s+(?:underline|overline|line-through)){0,2})$/i,
    ],
  },
};

// URLs. sanitize-html checks the scheme of href and src against allowedSchemesByTag; on top of
// that we accept only what is absolute with an allowed scheme (or, for links, a #fragment), so
// that a relative URL cannot point at this service's own origin from a customer's message, and
// data: only as a base64 raster image. The check reads the value the way a browser's URL parser
// would: entities were decoded by the HTML parser already; ASCII whitespace and control
// characters are removed (browsers drop tabs and newlines anywhere, and the rest at the ends).
const normalizeUrl = (value: string): string =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point
  value.replace(/[\u0000-\u0020\u007f]+/g, '').toLowerCase();
const LINK_URL = /^(?:https?:\/\/|mailto:|tel:|#)/;
const IMAGE_URL = /^(?:https?:\/\/|cid:)/;
const DATA_IMAGE_URL = /^data:image\/(?:png|jpe?g|gif|webp);base64,[a-z0-9+/]*={0,2}$/;

/** Prefix of name="" anchors (and of the #fragments that point at them): see transformLink. */
export const ANCHOR_PREFIX = 'user-content-';

const REL = 'noopener noreferrer nofollow';

// Already prefixed names stay as they are, so that sanitizing stored HTML again changes nothing.
const prefixed = (name: string): string => (name.startsWith(ANCHOR_PREFIX) ? name : ANCHOR_PREFIX + name);

// <a>: keeps only a safe href; sets rel and, for links that leave the page, target. A name=""
// anchor is prefixed (and so is a #fragment link, so in-message tables of contents still work)
// so that it cannot clobber a global of the page that shows it (window.<name>).
const transformLink: sanitize.Transformer = (tagName, attribs) => {
  const out: sanitize.Attributes = { ...attribs, rel: REL };
  delete out.target;
  const href = attribs.href?.trim();
  if (href === undefined || !LINK_URL.test(normalizeUrl(href))) {
    delete out.href;
  } else if (href.startsWith('#')) {
    out.href = href.length > 1 ? `#${prefixed(href.slice(1))}` : href;
  } else {
    out.href = href;
    out.target = '_blank';
  }
  if (attribs.name) out.name = prefixed(attribs.name);
  return { tagName, attribs: out };
};

// <img>: keeps only an http(s), cid: or data:image/(png|jpeg|gif|webp);base64 src; an img left
// without one is dropped by exclusiveFilter.
const transformImage: sanitize.Transformer = (tagName, attribs) => {
  const out: sanitize.Attributes = { ...attribs };
  const src = attribs.src?.trim();
  if (src === undefined) return { tagName, attribs: out };
  const normalized = normalizeUrl(src);
  if (IMAGE_URL.test(normalized) || DATA_IMAGE_URL.test(normalized)) out.src = src;
  else delete out.src;
  return { tagName, attribs: out };
};

// Every tag: dir only with one of its three values. (sanitize-html's own value lists would
// leave a bare `dir` behind for a bad value, which a second pass then removes: not idempotent.)
const DIR_VALUES = new Set(['ltr', 'rtl', 'auto']);
const transformAny: sanitize.Transformer = (tagName, attribs) => {
  if (attribs.dir === undefined) return { tagName, attribs };
  const dir = attribs.dir.trim().toLowerCase();
  if (DIR_VALUES.has(dir)) return { tagName, attribs: { ...attribs, dir } };
  const { dir: _, ...rest } = attribs;
  return { tagName, attribs: rest };
};

const OPTIONS: sanitize.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: ALLOWED_ATTRIBUTES,
  allowedStyles: ALLOWED_STYLES,
  parseStyleAttributes: true,
  allowedClasses: {},
  allowedSchemes: [],
  allowedSchemesByTag: { a: ['http', 'https', 'mailto', 'tel'], img: ['http', 'https', 'cid', 'data'] },
  allowProtocolRelative: false,
  nonTextTags: NON_TEXT_TAGS,
  disallowedTagsMode: 'discard',
  selfClosing: ['img', 'br', 'hr', 'col'],
  nestingLimit: HTML_LIMITS.maxNestingDepth,
  enforceHtmlBoundary: false,
  transformTags: { a: transformLink, img: transformImage, '*': transformAny },
  exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
  parser: { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
};

/**
 * The allowlisted, well-formed form of untrusted HTML, to store in *_html columns: formatting,
 * lists, tables, links (rel="noopener noreferrer nofollow", target="_blank") and images only;
 * no scripts, event handlers, forms, frames, embedded or foreign content, comments, classes or
 * ids; inline style limited to a few properties with plain values. Idempotent. U+0000 is
 * removed first (PostgreSQL text cannot hold it). HTML nested so pathologically that parsing
 * it would be slow (guard.ts) comes back as its text in paragraphs instead. Input length is
 * the caller's to bound (HTML_LIMITS.maxInputLength).
 */
export function sanitizeHtml(html: string): string {
  const input = html.replaceAll('\u0000', '');
  if (parserWorkExceeds(input)) return textToHtml(plainTextOf(input));
  return sanitize(input, OPTIONS);
}
