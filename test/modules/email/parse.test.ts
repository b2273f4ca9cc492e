// parseInbound and rewriteCids (src/modules/email/parse.ts): headers, charsets, bodies,
// attachments, limits, and every MIME torture fixture of mailparser stored or refused in time.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InboundMailError } from '../../../src/modules/email/errors.js';
import { INBOUND_LIMITS, parseInbound, rewriteCids } from '../../../src/modules/email/parse.js';

const mimeDir = new URL('./fixtures/mail/mime/', import.meta.url);
const crlf = (s: string) => s.replace(/\r?\n/g, '\r\n');
const msg = (headers: string, body: Buffer | string) =>
  Buffer.concat([
    Buffer.from(crlf(`${headers.trim()}\n\n`)),
    typeof body === 'string' ? Buffer.from(crlf(body)) : body,
  ]);

describe('headers', () => {
  it('reads addresses, subject, date and Message-IDs in their normal forms', async () => {
    const m = await parseInbound(
      msg(
        `From: "Doe, Jane" <Jane.Doe@Example.COM>
Reply-To: Jane Private <jane@home.example>
To: Support <support@acme.test>, sales@acme.test
Cc: Team: a@example.com, b@example.com;
Subject: =?UTF-8?B?UmU6IEdyw7zDn2U=?= =?UTF-8?Q?_aus_M=C3=BCnchen?=
Date: Tue, 9 Jan 2024 10:12:00 +0100
Message-ID: <CAB+x7Y@Mail.Gmail.COM>
In-Reply-To: <first@acme.test>
References: <root@acme.test>
 <First@Acme.test>`,
        'Hello',
      ),
    );
    expect(m.from).toEqual({ address: 'jane.doe@example.com', name: 'Doe, Jane' });
    expect(m.reply_to).toEqual({ address: 'jane@home.example', name: 'Jane Private' });
    expect(m.to.map((a) => a.address)).toEqual(['support@acme.test', 'sales@acme.test']);
    expect(m.cc.map((a) => a.address)).toEqual(['a@example.com', 'b@example.com']);
    expect(m.subject).toBe('Re: Grüße aus München');
    expect(m.date?.toISOString()).toBe('2024-01-09T09:12:00.000Z');
    expect(m.message_id).toBe('cab+x7y@mail.gmail.com');
    expect(m.dedupe_key).toBe('cab+x7y@mail.gmail.com');
    expect(m.in_reply_to).toEqual(['first@acme.test']);
    expect(m.references).toEqual(['root@acme.test', 'first@acme.test']);
    // As sent, for outbound References: case kept.
    expect(m.as_sent.message_id).toBe('CAB+x7Y@Mail.Gmail.COM');
    expect(m.as_sent.references).toEqual(['root@acme.test', 'First@Acme.test']);
    expect(m.headers.get('message-id')).toEqual(['<CAB+x7Y@Mail.Gmail.COM>']);
  });

  it('survives missing headers: nulls, empty lists, and a content hash to deduplicate on', async () => {
    const raw = Buffer.from('just a body without any header\r\n');
    const m = await parseInbound(raw);
    expect(m.from).toBeNull();
    expect(m.message_id).toBeNull();
    expect(m.date).toBeNull();
    expect(m.to).toEqual([]);
    expect(m.subject).toBe('');
    expect(m.dedupe_key).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect((await parseInbound(raw)).dedupe_key).toBe(m.dedupe_key);
  });

  it('an unreadable Date is null, not "now"', async () => {
    const m = await parseInbound(msg('From: a@example.com\nDate: someday soon', 'x'));
    expect(m.date).toBeNull();
  });

  it('CR/LF smuggled into an encoded subject or name stays on one line', async () => {
    const m = await parseInbound(
      msg('From: =?UTF-8?Q?Eve=0D=0AMallory?= <eve@example.com>\nSubject: =?UTF-8?Q?Hi=0D=0ABcc:_x@evil.test?=', 'x'),
    );
    expect(m.subject).toBe('Hi Bcc: x@evil.test');
    expect(m.from).toEqual({ address: 'eve@example.com', name: 'Eve Mallory' });
  });
});

describe('charsets', () => {
  const cases: [string, string, Buffer, string][] = [
    // charset, transfer encoding, body bytes, text expected
    ['ISO-8859-1', '8bit', Buffer.from([0x43, 0x61, 0x66, 0xe9, 0x20, 0x63, 0x72, 0xe8, 0x6d, 0x65]), 'Café crème'],
    ['windows-1252', '8bit', Buffer.from([0x80, 0x20, 0x35, 0x20, 0x93, 0x6f, 0x6b, 0x94, 0x85]), '€ 5 “ok”…'],
    ['KOI8-R', '8bit', Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]), 'Привет'],
    ['ISO-2022-JP', '7bit', Buffer.from('\x1b$B$3$s$K$A$O\x1b(B', 'latin1'), 'こんにちは'],
    ['ISO-8859-1', 'quoted-printable', Buffer.from('Gr=FC=DFe'), 'Grüße'],
  ];
  for (const [charset, cte, bytes, expected] of cases) {
    it(`decodes a ${charset} (${cte}) text body`, async () => {
      const m = await parseInbound(
        msg(
          `From: a@example.com\nContent-Type: text/plain; charset=${charset}\nContent-Transfer-Encoding: ${cte}`,
          bytes,
        ),
      );
      expect(m.text.trim()).toBe(expected);
      expect(m.visible_text.trim()).toBe(expected);
    });
  }

  it('decodes RFC 2047 subjects in ISO-2022-JP and KOI8-R', async () => {
    const jp = await parseInbound(msg('From: a@example.com\nSubject: =?ISO-2022-JP?B?GyRCJDMkcyRLJEEkTxsoQg==?=', 'x'));
    expect(jp.subject).toBe('こんにちは');
    const ru = await parseInbound(msg('From: a@example.com\nSubject: =?KOI8-R?Q?=F0=D2=C9=D7=C5=D4?=', 'x'));
    expect(ru.subject).toBe('Привет');
  });

  it('decodes a windows-1252 HTML body', async () => {
    const m = await parseInbound(
      msg(
        'From: a@example.com\nContent-Type: text/html; charset=windows-1252',
        Buffer.from('<p>\x80 10</p>', 'latin1'),
      ),
    );
    expect(m.html).toBe('<p>€ 10</p>');
    expect(m.text).toBe('€ 10');
  });
});

describe('bodies', () => {
  it('sanitizes HTML and derives the text from it when there is no text part', async () => {
    const m = await parseInbound(
      msg(
        'From: a@example.com\nContent-Type: text/html; charset=utf-8',
        '<p onclick="steal()">Hello <b>there</b></p><script>alert(1)</script><img src="javascript:x">',
      ),
    );
    expect(m.html).toBe('<p>Hello <b>there</b></p>');
    expect(m.text).toBe('Hello there');
    expect(m.has_quoted).toBe(false);
  });

  it('turns a text-only body into HTML', async () => {
    const m = await parseInbound(msg('From: a@example.com', 'line one\nline <two>\n\nsecond paragraph'));
    expect(m.html).toMatch(/^<p>line one<br \/>line &lt;two&gt;<\/p>\s*<p>second paragraph<\/p>$/);
  });

  it('keeps the text part of multipart/alternative and the sanitized HTML part', async () => {
    const m = await parseInbound(
      msg(
        'From: a@example.com\nContent-Type: multipart/alternative; boundary=b',
        '--b\nContent-Type: text/plain\n\nplain version\n--b\nContent-Type: text/html\n\n<p>html version</p>\n--b--\n',
      ),
    );
    expect(m.text.trim()).toBe('plain version');
    expect(m.html).toBe('<p>html version</p>');
  });

  it('stores the visible reply and flags the quoted history', async () => {
    const m = await parseInbound(
      msg(
        'From: a@example.com',
        'Thanks!\n\nOn Tue, Jan 9, 2024 at 10:12 AM Support <s@acme.test> wrote:\n> old text\n',
      ),
    );
    expect(m.visible_text).toBe('Thanks!');
    expect(m.has_quoted).toBe(true);
    expect(m.text).toContain('> old text');
  });

  it('cuts a body longer than maxBodyChars and says so', async () => {
    const m = await parseInbound(msg('From: a@example.com', 'x'.repeat(5000)), { maxBodyChars: 1000 });
    expect(m.truncated).toBe(true);
    expect(m.text.length).toBe(1000);
  });
});

describe('attachments', () => {
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
    'base64',
  );
  const related = msg(
    'From: a@example.com\nContent-Type: multipart/mixed; boundary=m',
    `--m
Content-Type: multipart/related; boundary=r

--r
Content-Type: text/html; charset=utf-8

<p>Logo: <img src="cid:logo%40acme"></p>
--r
Content-Type: image/png
Content-ID: <logo@acme>
Content-Transfer-Encoding: base64

${png.toString('base64')}
--r--
--m
Content-Type: application/pdf; name="../../etc/invoice.pdf"
Content-Disposition: attachment; filename="../../etc/invoice.pdf"
Content-Transfer-Encoding: base64

JVBERi0xLjQK
--m
Content-Type: application/ms-tnef; name="winmail.dat"
Content-Disposition: attachment; filename="winmail.dat"
Content-Transfer-Encoding: base64

eJ8+IgAAAQ==
--m--
`,
  );

  it('lists attachments with size, type, safe filename and an inline flag for cid images', async () => {
    const m = await parseInbound(related);
    expect(m.attachments.map(({ content, ...a }) => a)).toEqual([
      {
        filename: 'attachment-1.png',
        content_type: 'image/png',
        size: png.length,
        content_id: 'logo@acme',
        inline: true,
      },
      { filename: 'invoice.pdf', content_type: 'application/pdf', size: 9, content_id: null, inline: false },
      // winmail.dat is kept as it is: a plain attachment, nothing unpacked.
      { filename: 'winmail.dat', content_type: 'application/ms-tnef', size: 7, content_id: null, inline: false },
    ]);
    expect(m.attachments[0]!.content.equals(png)).toBe(true);
    expect(m.attachments[1]!.content.toString()).toBe('%PDF-1.4\n');
  });

  it('rewriteCids points cid: images at attachment URLs, escaped, and leaves unknown ones', async () => {
    const m = await parseInbound(related);
    expect(m.html).toContain('src="cid:logo%40acme"');
    const out = rewriteCids(m.html, { 'LOGO@acme': 'https://files.acme.test/a/1?token=x&y=1' });
    expect(out).toBe('<p>Logo: <img src="https://files.acme.test/a/1?token=x&amp;y=1" /></p>');
    expect(rewriteCids(m.html, new Map([['other@acme', 'https://x.test']]))).toBe(m.html);
  });

  it('nodemailer.eml: related images are inline, the text file is not', async () => {
    const m = await parseInbound(readFileSync(new URL('nodemailer.eml', mimeDir)));
    const byName = Object.fromEntries(m.attachments.map((a) => [a.filename, a]));
    expect(byName['nyan cat ✔.gif']).toMatchObject({
      content_type: 'image/gif',
      content_id: 'nyan@example.com',
      inline: true,
    });
    expect(byName['notes.txt']).toMatchObject({ inline: false, content_id: null });
  });
});

describe('limits and malformed input', () => {
  it('refuses a message over the size limit before parsing it', async () => {
    expect(INBOUND_LIMITS.maxBytes).toBe(30 * 1024 * 1024);
    const raw = msg('From: a@example.com', 'x'.repeat(2000));
    await expect(parseInbound(raw, { maxBytes: 1000 })).rejects.toMatchObject({
      name: 'InboundMailError',
      code: 'too_large',
    });
    await expect(parseInbound(raw, { maxBytes: 1000 })).rejects.toBeInstanceOf(InboundMailError);
  });

  it('refuses more MIME parts than the limit with a malformed error', async () => {
    const parts = Array.from({ length: 1100 }, (_, i) => `--b\nContent-Type: text/plain\n\npart ${i}\n`).join('');
    await expect(
      parseInbound(msg('From: a@example.com\nContent-Type: multipart/mixed; boundary=b', `${parts}--b--\n`)),
    ).rejects.toMatchObject({ code: 'malformed' });
  });

  // What each torture fixture must give: parsed with these facts, or refused with this error.
  // A parse that throws, or a refusal that parses, fails its test; so does a fixture added without
  // an expected outcome here.
  type Outcome =
    | {
        parses: {
          from: string | null;
          subject: string;
          attachments: Array<[filename: string, contentType: string, size: number]>;
          /** Words the visible text must hold (none: the text is empty). */
          text: string[];
          /** Words the sanitized HTML must hold (none: the HTML is only whitespace). */
          html: string[];
          truncated?: boolean;
          report?: string;
        };
      }
    | { refused: 'malformed' | 'too_large' };
  const OUTCOMES: Record<string, Outcome> = {
    // A base64 root part that is an image: no body, the image as an attachment.
    'base64encodedroot.eml': {
      parses: {
        from: 'test@example.com',
        subject: '',
        attachments: [['screenshot.png', 'image/png', 425]],
        text: [],
        html: [],
      },
    },
    // An empty message/rfc822 part closed by the outer boundary; Latin-1 8bit bodies.
    'decoderended.eml': {
      parses: {
        from: 'booewq@uuui.com',
        subject: 'Fwd: fotos',
        attachments: [['attachment-1.eml', 'message/rfc822', 0]],
        text: ['Note: forwarded message attached.'],
        html: ['html sectionÜ'],
      },
    },
    'delivery-status.eml': {
      parses: {
        from: 'mailer-daemon@amazonses.com',
        subject: 'Delivery Status Notification (Failure)',
        attachments: [
          ['attachment-1.txt', 'message/delivery-status', 461],
          ['attachment-2.eml', 'message/rfc822', 1024],
        ],
        text: ['An error occurred while trying to deliver the mail'],
        html: ['An error occurred while trying to deliver the mail'],
        report: 'delivery-status',
      },
    },
    // 570 KB of brackets in a <title>: nothing of it is shown.
    'htmllargecallstack.eml': {
      parses: { from: 'test@example.com', subject: 'Kill the HTML parser', attachments: [], text: [], html: [] },
    },
    // No headers at all before the MIME parts.
    'mixed.eml': {
      parses: {
        from: null,
        subject: '',
        attachments: [],
        text: ['scanned for Viruses and Content and cleared'],
        html: ['scanned for Viruses and Content and cleared'],
      },
    },
    'nested.eml': {
      parses: {
        from: 'u@example.com',
        subject: '',
        attachments: [],
        text: ['Dear Sir', 'Good evening.', 'The footer'],
        html: ['<p>Dear Sir</p>', '<p>The footer</p>'],
      },
    },
    'nodemailer.eml': {
      parses: {
        from: 'andris@kreata.ee',
        subject: 'Nodemailer is unicode friendly ✔ (1476358788189)',
        attachments: [
          ['attachment-1.bin', 'text/watch-html', 22],
          ['image.png', 'image/png', 126],
          ['nyan cat ✔.gif', 'image/gif', 29361],
          ['notes.txt', 'text/plain', 28],
        ],
        text: ['Hello to myself!'],
        html: ['<b>Hello</b> to myself'],
      },
    },
    'outofmemory.eml': {
      parses: {
        from: 'test@example.com',
        subject: 'Cause out of memory error in the mailparser',
        attachments: [],
        text: ['$1 million in Life Insurance Coverage'],
        html: ['<a href="http://62.75.179.211//pro.php?'],
        truncated: true,
      },
    },
    'spam.eml': {
      parses: {
        from: 'noreply@guide-des-vins-de-bourgogne.fr',
        subject: '123.042 Euro pro Jahr GRARANTIERT von einer Bank! KOSTENLOS',
        attachments: [],
        text: ['Im Jahre 2007 wurde er als „asozialer Penner“ beschimpft!'],
        html: ['<strong>Im Jahre 2007 wurde er'],
      },
    },
  };

  const fixtures = readdirSync(mimeDir).filter((f) => f.endsWith('.eml'));
  it('has the mailparser torture fixtures, each with its expected outcome', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(9);
    expect(fixtures.filter((f) => !OUTCOMES[f])).toEqual([]);
    expect(Object.keys(OUTCOMES).filter((f) => !fixtures.includes(f))).toEqual([]);
  });
  for (const name of fixtures) {
    const outcome = OUTCOMES[name];
    const what = !outcome ? 'its expected outcome' : 'refused' in outcome ? `refused (${outcome.refused})` : 'parsed';
    it(`${name}: ${what}, within a few seconds`, async () => {
      expect(outcome, `no expected outcome for ${name}`).toBeDefined();
      const raw = readFileSync(new URL(name, mimeDir));
      const started = performance.now();
      const result = await parseInbound(raw).then(
        (m) => ({ m }),
        (err: unknown) => ({ err }),
      );
      expect(performance.now() - started).toBeLessThan(5000);
      if ('refused' in outcome!) {
        expect('err' in result, 'expected a refusal, but it parsed').toBe(true);
        const err = (result as { err: unknown }).err;
        expect(err).toBeInstanceOf(InboundMailError);
        expect((err as InboundMailError).code).toBe(outcome.refused);
        return;
      }
      if ('err' in result) throw new Error(`expected it to parse, but it was refused: ${String(result.err)}`);
      const { m } = result;
      const want = outcome!.parses;
      expect(m.from?.address ?? null).toBe(want.from);
      expect(m.subject).toBe(want.subject);
      expect(m.attachments.map((a) => [a.filename, a.content_type, a.size])).toEqual(want.attachments);
      if (want.text.length === 0) expect(m.visible_text.trim()).toBe('');
      for (const words of want.text) expect(m.visible_text).toContain(words);
      if (want.html.length === 0) expect(m.html.trim()).toBe('');
      for (const words of want.html) expect(m.html).toContain(words);
      expect(m.truncated).toBe(want.truncated ?? false);
      expect(m.report?.report_type ?? null).toBe(want.report ?? null);
      // Whatever came in, what is stored is safe and bounded.
      expect(m.html).not.toMatch(/<script|onerror=|javascript:/i);
      expect(m.html.length).toBeLessThanOrEqual(2 * INBOUND_LIMITS.maxBodyChars);
    }, 10_000);
  }

  it('outofmemory.eml: a 1.1 MB HTML body is cut at the body limit', async () => {
    const m = await parseInbound(readFileSync(new URL('outofmemory.eml', mimeDir)));
    expect(m.truncated).toBe(true);
  });

  it('base64encodedroot.eml: a base64 root part that is an image becomes an attachment', async () => {
    const m = await parseInbound(readFileSync(new URL('base64encodedroot.eml', mimeDir)));
    expect(m.attachments).toHaveLength(1);
    expect(m.attachments[0]).toMatchObject({ filename: 'screenshot.png', content_type: 'image/png', size: 425 });
  });
});
