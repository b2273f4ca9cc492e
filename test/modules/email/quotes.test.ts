// Quoted-history trimming (src/modules/email/quotes.ts) on real reply bodies (email_reply_parser's
// fixtures) and on HTML replies of Gmail, Outlook, Apple Mail and Thunderbird.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseInbound } from '../../../src/modules/email/parse.js';
import { trimQuoted } from '../../../src/modules/email/quotes.js';

const body = (name: string) => readFileSync(new URL(`./fixtures/mail/reply-bodies/${name}`, import.meta.url), 'utf8');
const client = (name: string) =>
  parseInbound(readFileSync(new URL(`./fixtures/mail/clients/${name}`, import.meta.url)));

describe('plain-text replies', () => {
  // [fixture, text that must stay, text of the quoted history that must go]
  const trimmed: [string, string[], string[]][] = [
    [
      'email_1_3.txt',
      ['Oh thanks.', 'Having the function would be great.', '-Abhishek Kona'],
      ['Russell Brown wrote', '> Hi,', 'You can list the keys'],
    ],
    [
      'email_1_4.txt',
      ["Awesome! I haven't had another problem with it."],
      ['defunkt', 'Loader seems to be working well.'],
    ],
    [
      'email_1_6.txt',
      ['I get proper rendering as well.', 'Sent from a magnificent torch of pixels'],
      ['Corey Donohoe', 'Was this caching related'],
    ],
    ['email_1_7.txt', [':+1:'], ['Chris Wanstrath', 'Steps 0-2 are in prod']],
    ['email_2_1.txt', ['Outlook with a reply'], ['From:', 'Google Apps Sync', 'Dear Google Apps Sync user', '-----']],
    [
      'email_2_2.txt',
      ['Outlook with a reply directly above line'],
      ['CRM Comments', 'A new comment has been added', '____'],
    ],
    ['email_2_3.txt', ['Outlook with a reply directly above line'], ['CRM Comments', 'A new comment has been added']],
    [
      'email_bullets.txt',
      ['test 2 this should list second', '- and another', 'Joe Smith | Director'],
      ['examples@email.goalengine.com', 'Give us an example'],
    ],
    [
      'email_one_is_not_on.txt',
      ['One outstanding question I had:', 'Locally (on development), when I run...'],
      ['Dave Tapley', 'much better query'],
    ],
    [
      'greedy_on.txt',
      ['On your remote host you can run:', 'telnet 127.0.0.1 52698', 'the tunnel is not working.'],
      ['George Plymale', 'port forwarding stopped'],
    ],
    [
      'pathological.txt',
      ["I think you're onto something.", 'get back to a computer.'],
      ['John Sullivan', 'organism.sequence', 'ATGGAGAGAATAAAGG'],
    ],
  ];
  for (const [name, kept, gone] of trimmed) {
    it(`${name}: keeps the reply, removes the quoted history`, () => {
      const r = trimQuoted(body(name));
      expect(r.has_quoted).toBe(true);
      for (const k of kept) expect(r.visible_text).toContain(k);
      for (const g of gone) expect(r.visible_text).not.toContain(g);
      expect(r.visible_html).not.toContain(gone[0]);
    });
  }

  it('email_1_2 (answer below the quote): the answer stays, only the quote after it goes', () => {
    const r = trimQuoted(body('email_1_2.txt'));
    expect(r.has_quoted).toBe(true);
    expect(r.visible_text).toContain('Hi,');
    expect(r.visible_text).toContain('You can list the keys for the bucket');
    expect(r.visible_text).toContain('delete them all individually');
    // The quote the answer refers to is its context and stays; the trailing one goes.
    expect(r.visible_text).toContain('> What is the best way to clear a Riak bucket');
    expect(r.visible_text).not.toContain('> -Abhishek Kona');
  });

  it('email_1_8 (answers between quotes): every answer and the signature stay, the trailing history goes', () => {
    const r = trimQuoted(body('email_1_8.txt'));
    expect(r.has_quoted).toBe(true);
    expect(r.visible_text).toContain('I will reply under this one');
    expect(r.visible_text).toContain('and under this.');
    expect(r.visible_text).toContain('Hey there, this is my signature');
    expect(r.visible_text).not.toContain("After you reply to this I'm going to send you some inline responses");
    expect(r.visible_text).not.toContain('-- Tim');
  });

  const untouched = [
    'correct_sig.txt',
    'email_1_1.txt',
    'email_1_5.txt',
    'email_BlackBerry.txt',
    'email_iPhone.txt',
    'email_multi_word_sent_from_my_mobile_device.txt',
    'email_sent_from_my_not_signature.txt',
    'email_sig_delimiter_in_middle_of_line.txt',
  ];
  for (const name of untouched) {
    it(`${name}: nothing quoted, nothing removed (signatures included)`, () => {
      const text = body(name);
      const r = trimQuoted(text);
      expect(r.has_quoted).toBe(false);
      expect(r.visible_text).toBe(text);
    });
  }

  it('email_long_quote (a 700 KB line of ">" between answers) is handled quickly and keeps the answers', () => {
    const started = performance.now();
    const r = trimQuoted(body('email_long_quote.txt'));
    expect(performance.now() - started).toBeLessThan(2000);
    expect(r.visible_text).toContain('running a test?');
    expect(r.visible_text).toContain('I am currently using the Java HTTP API.');
  });

  it('a forward (by subject or by its marker) is kept whole', () => {
    const fwd =
      'See below.\n\n---------- Forwarded message ---------\nFrom: Bob <bob@example.com>\nDate: Mon, Jan 8, 2024\n\n> quoted inside the forward';
    expect(trimQuoted(fwd)).toMatchObject({ has_quoted: false, visible_text: fwd });
    const outlookFwd =
      'FYI\n\n-----Original Message-----\nFrom: Bob\nSent: Monday\nSubject: Invoice\n\nThe invoice is wrong.';
    expect(trimQuoted(outlookFwd, undefined, { subject: 'FW: Invoice' }).visible_text).toContain(
      'The invoice is wrong.',
    );
    expect(trimQuoted(outlookFwd, undefined, { subject: 'RE: Invoice' }).visible_text).toBe('FYI');
  });

  it('a message that is nothing but a quote is kept rather than emptied', () => {
    const text = '> only a quote\n> and more';
    expect(trimQuoted(text)).toMatchObject({ has_quoted: false, visible_text: text });
  });

  it('an attribution in other languages is recognised', () => {
    const de =
      'Danke, passt.\n\nAm 09.01.2024 um 10:12 schrieb Acme Support <support@acme.test>:\n> Bitte testen Sie es.';
    expect(trimQuoted(de).visible_text).toBe('Danke, passt.');
    const fr = 'Merci !\n\nLe mar. 9 janv. 2024 à 10:12, Acme <support@acme.test> a écrit :\n> Pouvez-vous tester ?';
    expect(trimQuoted(fr).visible_text).toBe('Merci !');
  });

  it('"On Monday, John wrote:" in the middle of a text is not an attribution', () => {
    const text = 'Context first.\n\nOn Monday, John wrote:\nthat the server was down. Is it still?';
    expect(trimQuoted(text)).toMatchObject({ has_quoted: false, visible_text: text });
  });
});

describe('HTML replies of mail clients (parsed from raw messages)', () => {
  const cases: [string, string[], string[]][] = [
    ['gmail-reply.eml', ['Thanks, the export works now.', 'Jane'], ['Please try the export again', 'wrote:']],
    [
      'outlook-web-reply.eml',
      ['the printer still shows error E42', 'Regards, Tom'],
      ['please reset the printer', 'From:', 'Sent:'],
    ],
    ['outlook-desktop-reply.eml', ['We moved the meeting to Thursday'], ['which day suits you', 'From:']],
    [
      'apple-mail-reply.eml',
      ['order 7781 arrived this morning', 'Lisa'],
      ['has your order 7781 arrived yet', 'wrote:'],
    ],
    ['iphone-reply.eml', ['Sure, call me at 3pm.', 'Sent from my iPhone'], ['Can we call you tomorrow', 'wrote:']],
    ['thunderbird-reply.eml', ['The VPN works again after the update.'], ['Please install update 2.4.1', 'wrote:']],
  ];
  for (const [name, kept, gone] of cases) {
    it(`${name}: keeps the reply, removes the quote and its attribution`, async () => {
      const r = await client(name);
      expect(r.has_quoted).toBe(true);
      for (const k of kept) {
        expect(r.visible_text).toContain(k);
        expect(r.visible_html).toContain(k);
      }
      for (const g of gone) {
        expect(r.visible_text).not.toContain(g);
        expect(r.visible_html).not.toContain(g);
        // The full original keeps it.
        expect(r.text + r.html).toContain(g.replace('<', '&lt;'));
      }
    });
  }

  for (const [name, content] of [
    ['gmail-forward.eml', 'The invoice 4411 charges us twice for March.'],
    ['apple-mail-forward.eml', 'The hinge of my new laptop broke after two days.'],
  ] as const) {
    it(`${name}: a forward keeps the forwarded message`, async () => {
      const r = await client(name);
      expect(r.has_quoted).toBe(false);
      expect(r.visible_text).toContain(content);
      expect(r.visible_html).toContain(content);
    });
  }

  it('a forward without a forward subject is kept by its marker', () => {
    const gmail =
      '<div dir="ltr">Please check.<div class="gmail_quote">---------- Forwarded message ---------<br>From: Bob<br><div>The invoice is wrong.</div></div></div>';
    expect(trimQuoted('', gmail)).toMatchObject({ has_quoted: false });
    expect(trimQuoted('', gmail).visible_text).toContain('The invoice is wrong.');
    const apple =
      '<div>Please check.<br><blockquote type="cite"><div>Begin forwarded message:</div><div>The hinge broke.</div></blockquote></div>';
    expect(trimQuoted('', apple)).toMatchObject({ has_quoted: false });
    expect(trimQuoted('', apple).visible_text).toContain('The hinge broke.');
  });

  it('the visible HTML is sanitized', () => {
    const r = trimQuoted('', '<p onclick="x()">Hi<script>alert(1)</script></p><div class="gmail_quote">old</div>');
    expect(r.visible_html).toBe('<p>Hi</p>');
    expect(r.has_quoted).toBe(true);
  });

  it('HTML from an unknown client falls back to the text rules', () => {
    const r = trimQuoted(
      '',
      '<p>New answer.</p><p>On Tue, Jan 9, 2024, Bob &lt;bob@example.com&gt; wrote:</p><blockquote><p>Old question</p></blockquote>',
    );
    expect(r.has_quoted).toBe(true);
    expect(r.visible_text).toBe('New answer.');
    expect(r.visible_html).toBe('<p>New answer.</p>');
  });
});
