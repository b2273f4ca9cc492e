// Auto-submitted mail, no-reply senders and bounces (src/modules/email/classify.ts).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { autoSubmitted, bounceOf, isNoReplyAddress } from '../../../src/modules/email/classify.js';
import { toMailHeaders } from '../../../src/modules/email/headers.js';
import { parseInbound } from '../../../src/modules/email/parse.js';

const h = (record: Record<string, string>) => toMailHeaders({ From: 'Jane <jane@example.com>', ...record });

describe('autoSubmitted', () => {
  it('mail from a person is not automatic', () => {
    expect(autoSubmitted(h({ Subject: 'Help', 'Auto-Submitted': 'no' }))).toBeNull();
    expect(autoSubmitted(h({ Precedence: 'first-class' }))).toBeNull();
  });

  it('names why mail is automatic', () => {
    expect(autoSubmitted(h({ 'Auto-Submitted': 'auto-replied' }))).toBe('auto_submitted');
    expect(autoSubmitted(h({ 'Auto-Submitted': 'Auto-Generated (vacation)' }))).toBe('auto_submitted');
    expect(autoSubmitted(h({ 'X-Autoreply': 'yes' }))).toBe('auto_reply');
    expect(autoSubmitted(h({ 'X-Autorespond': 'Out of office' }))).toBe('auto_reply');
    expect(autoSubmitted(h({ Precedence: 'auto_reply' }))).toBe('auto_reply');
    expect(autoSubmitted(h({ Precedence: 'Bulk' }))).toBe('bulk');
    expect(autoSubmitted(h({ Precedence: 'junk' }))).toBe('bulk');
    expect(autoSubmitted(h({ Precedence: 'list' }))).toBe('mailing_list');
    expect(autoSubmitted(h({ 'List-Id': 'Riak users <riak-users.lists.basho.com>' }))).toBe('mailing_list');
    expect(autoSubmitted(h({ 'List-Unsubscribe': '<mailto:unsub@news.example>' }))).toBe('mailing_list');
    expect(autoSubmitted(h({ From: 'Shop <no-reply@shop.example>' }))).toBe('no_reply_sender');
    expect(autoSubmitted(h({ From: 'MAILER-DAEMON@mx.example.net (Mail Delivery System)' }))).toBe('no_reply_sender');
    expect(autoSubmitted(h({ 'Return-Path': '<>' }))).toBe('bounce');
    expect(autoSubmitted(h({ 'X-Failed-Recipients': 'gone@example.com' }))).toBe('bounce');
    expect(autoSubmitted(h({ 'Content-Type': 'multipart/report; report-type=delivery-status; boundary="x"' }))).toBe(
      'bounce',
    );
  });

  it('reads the headers of a parsed message', async () => {
    const m = await parseInbound(Buffer.from('From: a@example.com\r\nAuto-Submitted: auto-replied\r\n\r\nAway'));
    expect(autoSubmitted(m.headers)).toBe('auto_submitted');
  });
});

describe('isNoReplyAddress', () => {
  it('recognises no-reply, mailer-daemon, postmaster and bounce addresses', () => {
    for (const a of [
      'noreply@github.com',
      'no-reply@accounts.google.com',
      'No_Reply@x.example',
      'do-not-reply@bank.example',
      'donotreply@x.example',
      'MAILER-DAEMON@mx.example',
      'postmaster@example.com',
      'bounces+12345@em.example.com',
      'noreply+abc@x.example',
    ]) {
      expect(isNoReplyAddress(a), a).toBe(true);
    }
  });
  it('leaves people alone', () => {
    for (const a of [
      'jane@example.com',
      'reply@example.com',
      'norbert@example.com',
      'support@acme.test',
      'replyall@x.example',
    ]) {
      expect(isNoReplyAddress(a), a).toBe(false);
    }
  });
});

const crlf = (s: string) => Buffer.from(s.replace(/\r?\n/g, '\r\n'));

// Postfix: message/delivery-status and the original's headers as text/rfc822-headers.
const postfixDsn = crlf(`Return-Path: <>
From: MAILER-DAEMON@mx.acme.test (Mail Delivery System)
To: support@acme.test
Subject: Undelivered Mail Returned to Sender
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status;
	boundary="7A1B2C3D4E.1704795120/mx.acme.test"
Message-Id: <20240109101200.7A1B2C3D4E@mx.acme.test>

This is a MIME-encapsulated message.

--7A1B2C3D4E.1704795120/mx.acme.test
Content-Description: Notification
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.acme.test.

I'm sorry to have to inform you that your message could not
be delivered to one or more recipients.

<gone@example.com>: host mx.example.com[192.0.2.10] said: 550 5.1.1
    <gone@example.com>: Recipient address rejected: User unknown (in reply to
    RCPT TO command)

--7A1B2C3D4E.1704795120/mx.acme.test
Content-Description: Delivery report
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.acme.test
X-Postfix-Queue-ID: 7A1B2C3D4E
Arrival-Date: Tue,  9 Jan 2024 10:11:58 +0000 (UTC)

Final-Recipient: rfc822; gone@example.com
Original-Recipient: rfc822;gone@example.com
Action: failed
Status: 5.1.1
Remote-MTA: dns; mx.example.com
Diagnostic-Code: smtp; 550 5.1.1 <gone@example.com>: Recipient address
    rejected: User unknown

Final-Recipient: rfc822; slow@example.org
Action: delayed
Status: 4.4.1
Diagnostic-Code: X-Postfix; connect to mx.example.org[192.0.2.20]:25: Connection timed out

--7A1B2C3D4E.1704795120/mx.acme.test
Content-Description: Undelivered Message Headers
Content-Type: text/rfc822-headers

From: Acme Support <support@acme.test>
To: gone@example.com, slow@example.org
Subject: Re: Your order [#1234-abcdefghij]
Message-ID: <0b7e6a2c-5d1f-4c1e-9a57-2f0c3b1d9e11@acme.test>
In-Reply-To: <CAB123@mail.gmail.com>

--7A1B2C3D4E.1704795120/mx.acme.test--
`);

// Gmail: the whole original as message/rfc822 (with its body).
const gmailDsn = crlf(`From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>
To: support@acme.test
Subject: Delivery Status Notification (Failure)
Auto-Submitted: auto-replied
Message-ID: <65a0f5f0.abc@mx.google.com>
MIME-Version: 1.0
Content-Type: multipart/report; boundary="000000000000c0ffee"; report-type=delivery-status

--000000000000c0ffee
Content-Type: multipart/related; boundary="000000000000c0ffef"

--000000000000c0ffef
Content-Type: multipart/alternative; boundary="000000000000c0fff0"

--000000000000c0fff0
Content-Type: text/plain; charset="UTF-8"


** Address not found **

Your message wasn't delivered to nobody@example.net because the address couldn't be found.

--000000000000c0fff0
Content-Type: text/html; charset="UTF-8"

<html><body><h2>Address not found</h2><p>Your message wasn't delivered.</p></body></html>

--000000000000c0fff0--
--000000000000c0ffef--
--000000000000c0ffee
Content-Type: message/delivery-status

Reporting-MTA: dns; googlemail.com
Received-From-MTA: dns; support@acme.test
Arrival-Date: Tue, 09 Jan 2024 02:12:00 -0800 (PST)
X-Original-Message-ID: <Reply-77@Acme.Test>

Final-Recipient: rfc822; nobody@example.net
Action: failed
Status: 5.1.1
Remote-MTA: dns; mx.example.net. (192.0.2.30, the server for the domain example.net.)
Diagnostic-Code: smtp; 550-5.1.1 The email account that you tried to reach does not exist.
Last-Attempt-Date: Tue, 09 Jan 2024 02:12:01 -0800 (PST)

--000000000000c0ffee
Content-Type: message/rfc822

From: Acme Support <support@acme.test>
To: nobody@example.net
Subject: Re: Question
Message-ID: <Reply-77@Acme.Test>
Content-Type: text/plain; charset=UTF-8

Hello, here is the answer.

--000000000000c0ffee--
`);

describe('bounceOf', () => {
  it('a Postfix DSN: the original Message-ID from the returned headers, failed and delayed recipients', async () => {
    const m = await parseInbound(postfixDsn);
    expect(autoSubmitted(m.headers)).toBe('bounce');
    const b = bounceOf(m);
    expect(b?.original_message_id).toBe('0b7e6a2c-5d1f-4c1e-9a57-2f0c3b1d9e11@acme.test');
    expect(b?.failed).toEqual([
      {
        address: 'gone@example.com',
        action: 'failed',
        status: '5.1.1',
        diagnostic: '550 5.1.1 <gone@example.com>: Recipient address rejected: User unknown',
      },
    ]);
    expect(b?.recipients.map((r) => [r.address, r.action, r.status])).toEqual([
      ['gone@example.com', 'failed', '5.1.1'],
      ['slow@example.org', 'delayed', '4.4.1'],
    ]);
  });

  it('a Gmail DSN: the original as message/rfc822', async () => {
    const m = await parseInbound(gmailDsn);
    const b = bounceOf(m);
    expect(b?.original_message_id).toBe('reply-77@acme.test');
    expect(b?.failed.map((r) => [r.address, r.status])).toEqual([['nobody@example.net', '5.1.1']]);
    expect(b?.failed[0]?.diagnostic).toContain('does not exist');
  });

  it('delivery-status.eml (Amazon SES)', async () => {
    const m = await parseInbound(readFileSync(new URL('./fixtures/mail/mime/delivery-status.eml', import.meta.url)));
    expect(autoSubmitted(m.headers)).toBe('bounce');
    const b = bounceOf(m);
    expect(b?.original_message_id).toBe('xxxxx@email.amazonses.com');
    expect(b?.failed).toHaveLength(1);
    expect(b?.failed[0]).toMatchObject({ address: 'xxxx@xxxx.com', status: '5.1.1' });
    expect(b?.failed[0]?.diagnostic).toContain('suppression list');
  });

  it("a DSN without the original falls back to the DSN's In-Reply-To", async () => {
    const raw = crlf(`From: MAILER-DAEMON@mx.example
In-Reply-To: <Ours-1@acme.test>
Content-Type: multipart/report; report-type=delivery-status; boundary=b

--b
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example

Final-Recipient: rfc822; x@example.com
Action: failed
Status: 5.0.0

--b--
`);
    expect(bounceOf(await parseInbound(raw))?.original_message_id).toBe('ours-1@acme.test');
  });

  it('ordinary mail and other reports are not bounces', async () => {
    expect(bounceOf(await parseInbound(crlf('From: a@example.com\n\nHi')))).toBeNull();
    const mdn = crlf(
      'From: a@example.com\nContent-Type: multipart/report; report-type=disposition-notification; boundary=b\n\n--b\nContent-Type: text/plain\n\nread\n--b--\n',
    );
    expect(bounceOf(await parseInbound(mdn))).toBeNull();
  });
});
