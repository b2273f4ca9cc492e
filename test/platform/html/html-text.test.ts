// src/platform/html, part 2 (part 1, the sanitizer: html.test.ts): the parser work guard and the
// text helpers (htmlToText, textToHtml, preview).
// Pure unit tests: no database, no server.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { parserWorkExceeds, plainTextOf } from '../../../src/platform/html/guard.js';
import { HTML_LIMITS, htmlToText, preview, sanitizeHtml, textToHtml } from '../../../src/platform/html/index.js';

describe('the parser work guard', () => {
  it('follows the very htmlparser2 that sanitize-html and html-to-text parse with', () => {
    // guard.ts copies htmlparser2's stack rules: one copy of the package, or the copy is stale.
    const require = createRequire(import.meta.url);
    const ours = require.resolve('htmlparser2');
    expect(createRequire(require.resolve('sanitize-html')).resolve('htmlparser2')).toBe(ours);
    expect(createRequire(require.resolve('html-to-text')).resolve('htmlparser2')).toBe(ours);
  });

  it('lets real mail through: 1 MiB of nested tables and paragraphs', () => {
    const cell = '<td><p style="color:#333">Text <b>bold</b> <a href="https://x.test">link</a></p><p>more<br>text</td>';
    const block = `<table><tr>${cell}${cell}</tr><tr><td><table><tr>${cell}</tr></table></td></tr></table>`;
    let mail = '';
    for (let depth = 0; mail.length < HTML_LIMITS.maxInputLength; depth++) {
      mail += `<div><blockquote>${block}`;
      if (depth % 20 === 19) mail += '</blockquote></div>'.repeat(20);
    }
    expect(parserWorkExceeds(mail)).toBe(false);
    expect(parserWorkExceeds('<ul>' + '<li>item'.repeat(50_000))).toBe(false);
    expect(parserWorkExceeds('<table>' + '<tr><td>a<td>b'.repeat(50_000))).toBe(false);
    expect(parserWorkExceeds('<p>para'.repeat(100_000))).toBe(false);
  });

  it('stops deep nesting, unclosed tags and stray end tags in depth', () => {
    expect(parserWorkExceeds('<span>'.repeat(10_000))).toBe(true);
    expect(parserWorkExceeds('<svg>'.repeat(10_000))).toBe(true);
    expect(parserWorkExceeds('<b>'.repeat(1_000) + '</i>'.repeat(100_000))).toBe(true);
  });

  it('plainTextOf keeps text and decoded entities, drops scripts and styles, breaks lines at blocks', () => {
    expect(
      plainTextOf('<p>Hi &amp; <b>bye</b></p><script>alert(1)</script><style>p{}</style><div>&#128512;</div>'),
    ).toBe('\nHi & bye\n\n\u{1F600}\n');
  });
});

describe('htmlToText', () => {
  it('renders a typical email', () => {
    const html = sanitizeHtml(
      '<div>Hi Anna,</div><div><br></div>' +
        '<p>Thanks for <a href="https://example.com/orders/42">your order</a>. Write to ' +
        '<a href="mailto:help@example.com">help@example.com</a> or see <a href="https://example.com">https://example.com</a>.</p>' +
        '<h2>Next steps</h2><ul><li>Pack</li><li>Ship <b>today</b></li></ul><ol><li>First</li><li>Second</li></ol>' +
        '<img src="https://example.com/logo.png" alt="Logo">' +
        '<blockquote><p>On Monday you wrote:</p><p>Where is my order?</p></blockquote>' +
        '<p>&nbsp;</p><p>&nbsp;</p><p>&nbsp;</p><p>Bye<br>Bob</p>' +
        '<table><tr><th>Item</th><th>Qty</th></tr><tr><td>Mug</td><td>2</td></tr></table>',
    );
    expect(htmlToText(html)).toBe(
      [
        'Hi Anna,',
        '',
        'Thanks for your order (https://example.com/orders/42). Write to help@example.com or see https://example.com.',
        '',
        'Next steps',
        '',
        '- Pack',
        '- Ship today',
        '',
        ' 1. First',
        ' 2. Second',
        '',
        '> On Monday you wrote:',
        '>',
        '> Where is my order?',
        '',
        'Bye',
        'Bob',
        '',
        'Item   Qty',
        'Mug    2',
      ].join('\n'),
    );
  });

  it('does not wrap long lines and collapses runs of blank lines', () => {
    const long = 'word '.repeat(100).trim();
    expect(htmlToText(`<p>${long}</p><br><br><br><br><p>end</p>`)).toBe(`${long}\n\nend`);
  });

  it('keeps nothing of scripts, styles or the head on raw HTML', () => {
    expect(
      htmlToText(
        '<html><head><title>T</title><style>p{}</style></head><body><p>x</p><script>evil()</script></body></html>',
      ),
    ).toBe('x');
  });

  it('decodes entities into plain characters', () => {
    expect(htmlToText('<p>1 &lt; 2 &amp;&amp; &quot;q&quot; &eacute;</p>')).toBe('1 < 2 && "q" é');
  });

  it('renders deeply nested HTML in full, sanitized or not', () => {
    const deep = (n: number) => `${'<div>'.repeat(n)}deep${'</div>'.repeat(n)}`;
    expect(htmlToText(sanitizeHtml(deep(300)))).toBe('deep');
    expect(htmlToText(deep(300))).toBe('deep');
    expect(htmlToText(deep(3000))).toBe('deep'); // as bare text, not html-to-text's "..."
  });

  it('gives the bare text of pathologically nested HTML', () => {
    expect(htmlToText(`${'<div>'.repeat(200_000)}deep<br>text`)).toBe('deep\ntext');
  });

  it('is empty for empty input', () => {
    expect(htmlToText('')).toBe('');
    expect(htmlToText('<p> </p><img src="https://x.test/a.png">')).toBe('');
  });
});

describe('textToHtml', () => {
  it('escapes and makes paragraphs and line breaks', () => {
    expect(textToHtml('Hello <you> & "them"\r\nline 2\n\n\n  \nPara 2\n')).toBe(
      '<p>Hello &lt;you&gt; &amp; "them"<br />line 2</p><p>Para 2</p>',
    );
    expect(textToHtml('<script>alert(1)</script>')).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
    expect(textToHtml('a\rb')).toBe('<p>a<br />b</p>');
  });

  it('is empty for blank text', () => {
    expect(textToHtml('')).toBe('');
    expect(textToHtml(' \n\n \r\n')).toBe('');
  });

  it('is already in sanitized form and round-trips through htmlToText', () => {
    const text = 'Dear team,\nthe <b> tag & "quotes" \u{1F600}\n\nRegards\nAnna';
    const html = textToHtml(text);
    expect(sanitizeHtml(html)).toBe(html);
    expect(htmlToText(html)).toBe(text);
  });
});

describe('preview', () => {
  const codePoints = (s: string) => [...s].length;

  it('collapses whitespace and trims', () => {
    expect(preview('  Hello\n\n\tworld\u00a0 again  ')).toBe('Hello world again');
  });

  it('keeps text of at most max code points whole', () => {
    const text = 'x'.repeat(199) + '\u{1F600}'; // 201 UTF-16 units, 200 code points
    expect(preview(text)).toBe(text);
  });

  it('long texts give what the whole text would, whitespace runs and astral characters anywhere', () => {
    // The text collapsed first: what preview must give whatever the whitespace was.
    const whole = (t: string, max: number) => preview(t.replaceAll('\u0000', '').replace(/\s+/g, ' ').trim(), max);
    const texts = [
      `lead ${' \n\t'.repeat(3000)}tail ${'word '.repeat(500)}`,
      `${'\u{1F600} '.repeat(20)}${' '.repeat(5000)}${'\u{1F4E6}'.repeat(400)}`,
      `${'x'.repeat(10)}${'\u0000'.repeat(4000)}${'y'.repeat(400)}`,
      `${'\u{1D11E}'.repeat(150)}${' '.repeat(2000)}end`,
      'short '.repeat(400),
    ];
    for (const t of texts) {
      for (const max of [1, 5, 50, 200]) {
        expect(preview(t, max)).toBe(whole(t, max));
        expect([...preview(t, max)].length).toBeLessThanOrEqual(max);
      }
    }
  });

  it('cuts longer text to max code points, the "…" included', () => {
    const out = preview('a'.repeat(300));
    expect(out).toBe(`${'a'.repeat(199)}…`);
    expect(codePoints(out)).toBe(HTML_LIMITS.previewLength);
    expect(preview('one two three', 8)).toBe('one two…');
    expect(preview('abc', 1)).toBe('…');
  });

  it('never splits a surrogate pair, whatever the cut', () => {
    for (let pad = 0; pad < 4; pad++) {
      const text = 'a'.repeat(pad) + '\u{1F600}\u{1F4E6}\u{1D11E}'.repeat(20);
      for (let max = 1; max < 30; max++) {
        const out = preview(text, max);
        expect(out.isWellFormed(), `pad ${pad} max ${max}: ${out}`).toBe(true);
        expect(codePoints(out)).toBeLessThanOrEqual(max);
        expect(out.endsWith('…')).toBe(true);
      }
    }
  });

  it('keeps emoji sequences and flags whole', () => {
    expect(preview('ok \u{1F44D}\u{1F3FD} fine', 5)).toBe('ok…');
    expect(preview('ok \u{1F44D}\u{1F3FD} fine', 6)).toBe('ok \u{1F44D}\u{1F3FD}…');
    expect(preview('\u{1F1EB}\u{1F1F7}\u{1F1E9}\u{1F1EA}', 3)).toBe('\u{1F1EB}\u{1F1F7}…');
  });

  it('cuts where segmenting the whole text would, in any script: combining marks, ZWJ emoji, flags, Hangul, CJK', () => {
    // The reference: every grapheme cluster from the start, while they fit (what preview did
    // before it started segmenting near the cut).
    const seg = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    const reference = (line: string, max: number) => {
      if ([...line].length <= max) return line;
      let cut = '';
      let used = 0;
      for (const { segment } of seg.segment(line)) {
        const size = [...segment].length;
        if (used + size > max - 1) break;
        cut += segment;
        used += size;
      }
      if (cut === '') cut = [...line].slice(0, max - 1).join('');
      return `${cut.trimEnd()}…`;
    };
    const pieces = [
      'a',
      'Z',
      '7',
      '.',
      'é',
      'e\u0301',
      'a\u0301\u0302\u0303',
      '\u00a9',
      '\u0600',
      '\u0915\u094d\u0937',
      '\u{1F469}\u200D\u{1F469}\u200D\u{1F467}',
      '\u{1F44D}\u{1F3FD}',
      '\u{1F1EB}',
      '\u{1F1F7}',
      '\u1100\u1161\u11A8',
      '\uD55C',
      '\u4E2D',
      '\u6587',
      'x\u200D',
      '\u0483',
      '\u3099',
      '\u{1D11E}',
    ];
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let i = 0; i < 3000; i++) {
      let t = '';
      const len = 1 + rand(60);
      for (let k = 0; k < len; k++) t += pieces[rand(pieces.length)];
      const max = 1 + rand(30);
      expect(preview(t, max), JSON.stringify({ t, max })).toBe(reference(t, max));
    }
  });

  it('rejects a max that is not a positive integer', () => {
    expect(() => preview('x', 0)).toThrow(RangeError);
    expect(() => preview('x', 1.5)).toThrow(RangeError);
  });
});
