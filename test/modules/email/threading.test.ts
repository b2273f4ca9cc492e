// Threading inputs and outbound reply headers (src/modules/email/threading.ts, outbound-headers.ts).
import { simpleParser } from 'mailparser';
import MailComposer from 'nodemailer/lib/mail-composer';
import { describe, expect, it } from 'vitest';
import {
  buildReplyHeaders,
  HeaderInjectionError,
  headerSafe,
  replySubject,
  safeAddress,
  safeMailbox,
} from '../../../src/modules/email/outbound-headers.js';
import { parseInbound } from '../../../src/modules/email/parse.js';
import {
  makeTicketToken,
  normaliseSubject,
  threadCandidates,
  ticketTokenOf,
  verifyTicketToken,
} from '../../../src/modules/email/threading.js';

const SECRET = 'test-secret-of-at-least-32-bytes-long!!';
const WS = '0190f3a4-7b1c-7d2e-8f3a-4b5c6d7e8f90';

describe('ticket tokens', () => {
  it('round-trips, and fails for another workspace, another number or a wrong mac', () => {
    const token = makeTicketToken(SECRET, WS, 1234);
    expect(token).toMatch(/^1234-[a-z2-7]{10}$/);
    expect(verifyTicketToken(SECRET, WS, token)).toBe(1234);
    expect(verifyTicketToken(SECRET, WS, token.toUpperCase())).toBe(1234);
    expect(verifyTicketToken(SECRET, 'another-workspace', token)).toBeNull();
    expect(verifyTicketToken('another-secret', WS, token)).toBeNull();
    expect(verifyTicketToken(SECRET, WS, token.replace('1234-', '1235-'))).toBeNull();
    expect(verifyTicketToken(SECRET, WS, '1234')).toBeNull();
    expect(makeTicketToken(SECRET, WS, 1235)).not.toBe(token.replace('1234-', '1235-'));
  });

  it('finds tokens in the subject and in plus-addresses, signed ones first', () => {
    const token = makeTicketToken(SECRET, WS, 42);
    expect(ticketTokenOf(`Re: Printer broken [#${token}]`, ['support@acme.test'])).toEqual([
      { token, number: 42, source: 'subject' },
    ]);
    expect(ticketTokenOf('Re: [#7] old style', [`support+t${token}@acme.test`])).toEqual([
      { token, number: 42, source: 'address' },
      { token: null, number: 7, source: 'subject' },
    ]);
    expect(ticketTokenOf('Order #1234 is late', ['support@acme.test'])).toEqual([]);
  });
});

describe('threadCandidates', () => {
  it('In-Reply-To first, then References newest first, without repeats or the own id', async () => {
    const m = await parseInbound(
      Buffer.from(
        'From: a@example.com\r\nMessage-ID: <self@x>\r\nIn-Reply-To: <C@acme.test>\r\nReferences: <A@acme.test> <B@acme.test> <C@acme.test> <self@x>\r\n\r\nhi',
      ),
    );
    expect(threadCandidates(m)).toEqual(['c@acme.test', 'b@acme.test', 'a@acme.test']);
  });

  it('references without angle brackets are still read', async () => {
    const m = await parseInbound(Buffer.from('From: a@example.com\r\nReferences: a@acme.test b@acme.test\r\n\r\nhi'));
    expect(threadCandidates(m)).toEqual(['b@acme.test', 'a@acme.test']);
  });
});

describe('normaliseSubject', () => {
  it('strips reply and forward prefixes in many languages', () => {
    expect(normaliseSubject('Re: RE: Fwd: Invoice')).toBe('Invoice');
    expect(normaliseSubject('AW: WG: Rechnung')).toBe('Rechnung');
    expect(normaliseSubject('SV: VS: Faktura')).toBe('Faktura');
    expect(normaliseSubject('RE[2]: Re(3): Hello')).toBe('Hello');
    expect(normaliseSubject('TR : RE : Facture')).toBe('Facture');
    expect(normaliseSubject('回复：发票')).toBe('发票');
    expect(normaliseSubject('Fw:  Several   spaces ')).toBe('Several spaces');
    expect(normaliseSubject('Regarding the invoice')).toBe('Regarding the invoice');
  });
});

describe('outbound reply headers', () => {
  it('our Message-ID, In-Reply-To and References as the customer wrote them, Re: once', () => {
    const h = buildReplyHeaders({
      domain: 'Acme.test',
      subject: 'RE: Re: AW: Printer broken',
      inReplyTo: '<CAB123@Mail.Gmail.com>',
      references: ['<Root@acme.test>', 'Mid@acme.test'],
    });
    expect(h.messageId).toMatch(/^<[0-9a-f-]{36}@acme\.test>$/);
    expect(h.inReplyTo).toBe('<CAB123@Mail.Gmail.com>');
    expect(h.references).toBe('<Root@acme.test> <Mid@acme.test> <CAB123@Mail.Gmail.com>');
    expect(h.subject).toBe('Re: Printer broken');
    expect(buildReplyHeaders({ domain: 'acme.test', subject: 'Hello' }).messageId).not.toBe(h.messageId);
  });

  it('caps References to the first and the newest ids', () => {
    const refs = Array.from({ length: 60 }, (_, i) => `<m${i}@x.test>`);
    const h = buildReplyHeaders({
      domain: 'acme.test',
      subject: 'x',
      inReplyTo: '<last@x.test>',
      references: refs,
      maxReferences: 5,
    });
    expect(h.references).toBe('<m0@x.test> <m57@x.test> <m58@x.test> <m59@x.test> <last@x.test>');
  });

  it('adds the ticket token to the subject once', () => {
    const token = makeTicketToken(SECRET, WS, 9);
    const h = buildReplyHeaders({ domain: 'acme.test', subject: 'Help', ticketToken: token });
    expect(h.subject).toBe(`Re: Help [#${token}]`);
    expect(buildReplyHeaders({ domain: 'acme.test', subject: h.subject, ticketToken: token }).subject).toBe(h.subject);
  });

  it('refuses addresses and domains that could carry a header, flattens names and subjects', () => {
    expect(() => safeAddress('victim@example.com\r\nBcc: all@example.com')).toThrow(HeaderInjectionError);
    expect(() => safeAddress('a@example.com, b@example.com')).toThrow(HeaderInjectionError);
    expect(() => safeAddress('<a@example.com>')).toThrow(HeaderInjectionError);
    expect(safeAddress('Jane.Doe@Example.COM')).toBe('Jane.Doe@example.com');
    expect(() => buildReplyHeaders({ domain: 'acme.test\r\nX-Evil: 1', subject: 'x' })).toThrow(HeaderInjectionError);
    expect(headerSafe('Hi\r\nBcc: x@evil.test')).toBe('Hi Bcc: x@evil.test');
    expect(replySubject('Re: Hi\r\nBcc: x@evil.test')).toBe('Re: Hi Bcc: x@evil.test');
  });

  it('a subject or display name with CRLF cannot add a header to the composed message', async () => {
    const evil = 'Order\r\nBcc: attacker@evil.test\r\nX-Injected: yes';
    const h = buildReplyHeaders({ domain: 'acme.test', subject: evil, inReplyTo: '<p@x.test>' });
    const composed = await new MailComposer({
      from: safeMailbox('Acme\r\nBcc: attacker@evil.test', 'support@acme.test'),
      to: [safeMailbox('Jane\nX-Injected: yes', 'jane@example.com')],
      subject: h.subject,
      messageId: h.messageId,
      inReplyTo: h.inReplyTo ?? undefined,
      references: h.references ?? undefined,
      text: 'Hello',
    })
      .compile()
      .build();
    const parsed = await simpleParser(composed);
    const keys = parsed.headerLines.map((l) => l.key);
    expect(keys).not.toContain('bcc');
    expect(keys).not.toContain('x-injected');
    expect(parsed.subject).toBe('Re: Order Bcc: attacker@evil.test X-Injected: yes');
    expect(parsed.from?.value).toEqual([{ address: 'support@acme.test', name: 'Acme Bcc: attacker@evil.test' }]);
    expect(parsed.messageId).toBe(h.messageId);
    expect(parsed.inReplyTo).toBe('<p@x.test>');
    // Even without our guards, nodemailer must not let CRLF through (the second line of defence).
    const raw = await new MailComposer({ from: 'support@acme.test', subject: evil, text: 'x' }).compile().build();
    expect((await simpleParser(raw)).headerLines.map((l) => l.key)).not.toContain('bcc');
  });
});
