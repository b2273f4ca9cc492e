// Authentication-Results from trusted servers only, trusted form senders, public domains
// (src/modules/email/auth.ts, public-domains.ts).
import { describe, expect, it } from 'vitest';
import { authResults, formSender, parseAuthenticationResults } from '../../../src/modules/email/auth.js';
import { toMailHeaders } from '../../../src/modules/email/headers.js';
import { parseInbound } from '../../../src/modules/email/parse.js';
import { isPublicEmailDomain } from '../../../src/modules/email/public-domains.js';

const TRUSTED = ['mx.google.com', 'inbound.acme.test'];

describe('authResults', () => {
  it('reads DMARC, SPF and DKIM from the trusted header, comments and versions aside', () => {
    const headers = toMailHeaders({
      'Authentication-Results': [
        `mx.google.com;
       dkim=pass header.i=@example.com header.s=s1 header.b=abc;
       spf=pass (google.com: domain of jane@example.com designates 192.0.2.1 as permitted sender) smtp.mailfrom=jane@example.com;
       dmarc=pass (p=REJECT sp=REJECT dis=NONE) header.from=example.com`,
      ],
    });
    expect(authResults(headers, TRUSTED)).toEqual({
      dmarc: 'pass',
      spf: 'pass',
      dkim: 'pass',
      authserv_id: 'mx.google.com',
      auth_failed: false,
    });
  });

  it('a DMARC failure at a trusted server sets auth_failed', () => {
    const headers = toMailHeaders({
      'Authentication-Results':
        'inbound.acme.test 1; spf=fail smtp.mailfrom=ceo@acme.test; dkim=none; dmarc=fail header.from=acme.test',
    });
    expect(authResults(headers, TRUSTED)).toMatchObject({
      dmarc: 'fail',
      spf: 'fail',
      dkim: 'none',
      auth_failed: true,
    });
  });

  it('ignores a forged header from an untrusted authserv-id, and below the trusted one', async () => {
    const raw = Buffer.from(
      [
        'Authentication-Results: mx.google.com; dmarc=fail header.from=bank.example; spf=softfail',
        'Authentication-Results: mx.google.com; dmarc=pass header.from=bank.example',
        'Authentication-Results: evil.example; dmarc=pass header.from=bank.example',
        'From: Bank <security@bank.example>',
        '',
        'Please wire money.',
      ].join('\r\n'),
    );
    const m = await parseInbound(raw);
    expect(authResults(m.headers, TRUSTED)).toMatchObject({ dmarc: 'fail', auth_failed: true });
    // Only the forged one: no trusted verdict at all.
    const forgedOnly = toMailHeaders({ 'Authentication-Results': 'evil.example; dmarc=pass header.from=bank.example' });
    expect(authResults(forgedOnly, TRUSTED)).toEqual({
      dmarc: 'none',
      spf: 'none',
      dkim: 'none',
      authserv_id: null,
      auth_failed: false,
    });
    // authserv-ids compare case-insensitively; "mx.google.com.evil" is not mx.google.com.
    expect(authResults(toMailHeaders({ 'Authentication-Results': 'MX.Google.COM; dmarc=pass' }), TRUSTED).dmarc).toBe(
      'pass',
    );
    expect(
      authResults(toMailHeaders({ 'Authentication-Results': 'mx.google.com.evil; dmarc=pass' }), TRUSTED).dmarc,
    ).toBe('none');
  });

  it('a ";" inside a comment or quoted string does not split results', () => {
    expect(
      parseAuthenticationResults('mx.google.com; spf=pass (a; b) smtp.mailfrom="x;y"@example.com; dmarc=pass'),
    ).toEqual({
      authservId: 'mx.google.com',
      results: [
        { method: 'spf', result: 'pass' },
        { method: 'dmarc', result: 'pass' },
      ],
    });
    expect(parseAuthenticationResults('mx.google.com; none')).toEqual({ authservId: 'mx.google.com', results: [] });
  });
});

describe('formSender', () => {
  const trusted = ['forms@webflow.example', '@wufoo.example'];
  it('a listed sender that passed DMARC: the Reply-To visitor', () => {
    expect(formSender('Webflow <Forms@Webflow.example>', 'Visitor <Visitor@Example.com>', true, trusted)).toBe(
      'visitor@example.com',
    );
    expect(formSender('notify@WUFOO.example', 'v@example.org', true, trusted)).toBe('v@example.org');
  });
  it('otherwise null: DMARC not passed, not listed, a subdomain, no or the same Reply-To', () => {
    expect(formSender('forms@webflow.example', 'v@example.com', false, trusted)).toBeNull();
    expect(formSender('someone@webflow.example', 'v@example.com', true, trusted)).toBeNull();
    expect(formSender('x@eu.wufoo.example', 'v@example.com', true, trusted)).toBeNull();
    expect(formSender('forms@webflow.example', null, true, trusted)).toBeNull();
    expect(formSender('forms@webflow.example', 'forms@webflow.example', true, trusted)).toBeNull();
    expect(formSender('forms@webflow.example', 'not an address', true, trusted)).toBeNull();
  });
});

describe('isPublicEmailDomain', () => {
  it('recognises public providers, with or without "@", in any case, with country domains', () => {
    for (const d of [
      'gmail.com',
      '@GoogleMail.com',
      'outlook.com',
      'hotmail.co.uk',
      'live.fr',
      'yahoo.com',
      'yahoo.co.jp',
      'yahoo.com.br',
      'icloud.com',
      'me.com',
      'aol.com',
      'proton.me',
      'protonmail.com',
      'gmx.de',
      'gmx.net',
      'mail.ru',
      'yandex.ru',
      'yandex.com',
      'qq.com',
      '163.com',
      'web.de',
      'gmail.com.',
    ]) {
      expect(isPublicEmailDomain(d), d).toBe(true);
    }
  });
  it('leaves organisations alone', () => {
    for (const d of [
      'acme.test',
      'google.com',
      'microsoft.com',
      'yahoo-inc.com',
      'mail.acme.com',
      'gmail.com.evil.example',
      'mygmail.com',
    ]) {
      expect(isPublicEmailDomain(d), d).toBe(false);
    }
  });
});
