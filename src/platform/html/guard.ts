// A guard against HTML that would make the parser slow.
//
// htmlparser2 (under both sanitize-html and html-to-text) keeps its stack of open elements
// with Array.unshift/shift and looks end tags up with indexOf, so each open tag, implied close
// and unmatched end tag costs time proportional to how deep the parser is at that point: deep
// nesting is quadratic. One MiB of "<b>" (350,000 open elements) would hold a core for about
// a minute; a mail can say that. parserWorkExceeds runs htmlparser2's Tokenizer (linear), keeps
// the same stack the parser would (pushed and popped at its end, so linear too) and adds up
// the stack depths the real parser would walk. Past the budget the caller does not parse the
// HTML as a tree at all and uses plainTextOf instead: the content survives as text, the markup
// is lost, and nothing of the pathological input can become markup.
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import { HTML_LIMITS } from './limits.js';

// htmlparser2 10's rules (Parser.js), which the estimate follows.
const P = new Set(['p']);
const FORM = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const TABLE_SECTION = new Set(['thead', 'tbody']);
const DD_DT = new Set(['dd', 'dt']);
const RT_RP = new Set(['rt', 'rp']);
const OPEN_IMPLIES_CLOSE = new Map<string, Set<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['li', new Set(['li'])],
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', DD_DT],
  ['dt', DD_DT],
  ['rt', RT_RP],
  ['rp', RT_RP],
  ['tbody', TABLE_SECTION],
  ['tfoot', TABLE_SECTION],
  ...['select', 'input', 'output', 'button', 'datalist', 'textarea'].map((t) => [t, FORM] as const),
  ...[
    'p',
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'address',
    'article',
    'aside',
    'blockquote',
    'details',
    'div',
    'dl',
    'fieldset',
    'figcaption',
    'figure',
    'footer',
    'form',
    'header',
    'hr',
    'main',
    'nav',
    'ol',
    'pre',
    'section',
    'table',
    'ul',
  ].map((t) => [t, P] as const),
]);
const VOID = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);
const FOREIGN = new Set(['math', 'svg']);
const INTEGRATION = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignobject', 'desc', 'title']);

const noop = () => {};
const callbacks = (partial: Partial<TokenizerCallbacks>): TokenizerCallbacks => ({
  onattribdata: noop,
  onattribentity: noop,
  onattribend: noop,
  onattribname: noop,
  oncdata: noop,
  onclosetag: noop,
  oncomment: noop,
  ondeclaration: noop,
  onend: noop,
  onopentagend: noop,
  onopentagname: noop,
  onprocessinginstruction: noop,
  onselfclosingtag: noop,
  ontext: noop,
  ontextentity: noop,
  ...partial,
});

/**
 * Whether parsing `html` would cost htmlparser2 more than `budget` units of stack walking
 * (one unit per element of its stack touched), or nest elements deeper than `maxDepth`.
 * Reasonable mail, even 1 MiB of it with nested tables, stays below a few million units; the
 * default budget keeps the parse itself to tens of milliseconds.
 */
export function parserWorkExceeds(
  html: string,
  budget: number = HTML_LIMITS.parserWorkBudget,
  maxDepth: number = Number.POSITIVE_INFINITY,
): boolean {
  const stack: string[] = []; // the parser's stack, its top at the end here
  const open = new Map<string, number>(); // how many of each name are on the stack
  const foreign: boolean[] = [false]; // the parser's foreignContext, its top at the end here
  let work = 0;
  let tagname = '';
  let exceeded = false;

  const push = (name: string) => {
    work += stack.length;
    stack.push(name);
    open.set(name, (open.get(name) ?? 0) + 1);
  };
  const pop = () => {
    work += stack.length;
    const name = stack.pop()!;
    open.set(name, open.get(name)! - 1);
    return name;
  };
  const emitOpenTag = (name: string) => {
    tagname = name;
    const implied = OPEN_IMPLIES_CLOSE.get(name);
    if (implied) while (stack.length > 0 && implied.has(stack.at(-1)!)) pop();
    if (!VOID.has(name)) {
      push(name);
      if (FOREIGN.has(name) || INTEGRATION.has(name)) {
        work += foreign.length;
        foreign.push(FOREIGN.has(name));
      }
    }
  };
  const check = () => {
    if (work > budget || stack.length > maxDepth) {
      exceeded = true;
      tokenizer.pause();
    }
  };

  const tokenizer: Tokenizer = new Tokenizer(
    { xmlMode: false, decodeEntities: true },
    callbacks({
      onopentagname(start, end) {
        emitOpenTag(html.slice(start, end).toLowerCase());
        check();
      },
      onselfclosingtag() {
        // In foreign content <x/> closes itself; elsewhere the "/" is ignored.
        if (foreign.at(-1) && stack.at(-1) === tagname) pop();
      },
      onclosetag(start, end) {
        const name = html.slice(start, end).toLowerCase();
        if (FOREIGN.has(name) || INTEGRATION.has(name)) {
          work += foreign.length;
          foreign.pop();
        }
        if (VOID.has(name)) return;
        if ((open.get(name) ?? 0) > 0) {
          while (pop() !== name) {}
        } else {
          work += stack.length; // indexOf through the whole stack, in vain
          if (name === 'p') {
            emitOpenTag('p');
            pop();
          }
        }
        check();
      },
    }),
  );
  tokenizer.write(html);
  if (!exceeded) tokenizer.end();
  return exceeded;
}

// Elements whose content is not text to keep, and elements that start a new line.
const SKIP_CONTENT = new Set([
  'script',
  'style',
  'title',
  'textarea',
  'xmp',
  'noscript',
  'template',
  'head',
  'svg',
  'math',
]);
const LINE = new Set([
  'p',
  'div',
  'br',
  'li',
  'tr',
  'dt',
  'dd',
  'blockquote',
  'pre',
  'hr',
  'table',
  'ul',
  'ol',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
]);

/**
 * The text of HTML without building a tree, in time linear in its length: text and decoded
 * entities, a line break at block elements, nothing of scripts, styles and the like. The
 * fallback for HTML that parserWorkExceeds rejects, so it makes no effort at layout.
 */
export function plainTextOf(html: string): string {
  const parts: string[] = [];
  const skipping = new Map<string, number>();
  let skipped = 0;
  let tagname = '';
  const tokenizer = new Tokenizer(
    { xmlMode: false, decodeEntities: true },
    callbacks({
      ontext(start, end) {
        if (skipped === 0) parts.push(html.slice(start, end));
      },
      ontextentity(codePoint) {
        if (skipped === 0) parts.push(String.fromCodePoint(codePoint));
      },
      onopentagname(start, end) {
        tagname = html.slice(start, end).toLowerCase();
        if (LINE.has(tagname)) parts.push('\n');
        if (SKIP_CONTENT.has(tagname)) {
          skipping.set(tagname, (skipping.get(tagname) ?? 0) + 1);
          skipped++;
        }
      },
      onselfclosingtag() {
        const n = skipping.get(tagname) ?? 0;
        if (n > 0 && SKIP_CONTENT.has(tagname)) {
          skipping.set(tagname, n - 1);
          skipped--;
        }
      },
      onclosetag(start, end) {
        const name = html.slice(start, end).toLowerCase();
        if (LINE.has(name)) parts.push('\n');
        const n = skipping.get(name) ?? 0;
        if (n > 0) {
          skipping.set(name, n - 1);
          skipped--;
        }
      },
    }),
  );
  tokenizer.write(html);
  tokenizer.end();
  return parts.join('');
}
