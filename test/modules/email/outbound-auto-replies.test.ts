// Outbound email, part 3 (part 1: outbound.test.ts, setup in outbound-setup.ts): auto-replies
// to a customer's first mail.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { autoReplyToDelivered, maybeAutoReply } from '../../../src/modules/email/auto-reply.js';
import { parseInbound } from '../../../src/modules/email/parse.js';
import { ticketTokenFor } from '../../../src/modules/email/ticket-token.js';
import { newTenant, type Service, type Tenant } from '../../support/helpers.js';
import { addressesOf, outboundSuite } from './outbound-setup.js';

const suite = outboundSuite();
const { api, db, mailbox, emailTicket, customerMail, receivedFor, waitForMail } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

// ---------------------------------------------------------------------------------------------
// Auto-replies.

const rawMail = (from: string, to: string, extra: string[] = [], messageId = `<${randomUUID()}@Mail.Customer.TEST>`) =>
  Buffer.from(
    [
      `From: Casey <${from}>`,
      `To: ${to}`,
      'Subject: Help with my order',
      `Message-ID: ${messageId}`,
      'Date: Mon, 2 Jun 2025 10:00:00 +0000',
      ...extra,
      'Content-Type: text/plain; charset=utf-8',
      '',
      'My order has not arrived.',
      '',
    ].join('\r\n'),
  );

async function autoReplyCase(t: Tenant, mbId: string, mbEmail: string, from: string, extra: string[] = []) {
  const tk = await emailTicket(t, mbId, { contact: { email: from, name: 'Casey' } });
  const messageId = `<Order-${randomUUID()}@Mail.Customer.TEST>`;
  const inbound = await parseInbound(rawMail(from, mbEmail, extra, messageId));
  const outcome = await maybeAutoReply(svc.rt.deps, {
    workspaceId: t.workspaceId,
    mailboxId: mbId,
    contactId: tk.contact.id,
    ticketId: tk.id,
    inbound,
  });
  return { tk, outcome, messageId };
}

describe('auto-replies', () => {
  it('once per contact per day, threaded, marked Auto-Submitted: auto-replied', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t, {
      auto_reply_enabled: true,
      auto_reply_subject: 'We received your request',
      auto_reply_html: '<p>Thanks! We answer within a day.</p>',
    });
    const from = `auto-${randomUUID().slice(0, 8)}@customer.test`;
    const first = await autoReplyCase(t, mb.id, mb.email, from);
    expect(first.outcome).toBe('queued');
    const [got] = await waitForMail(from);
    const mail = got!.mail;
    expect(mail.headers.get('auto-submitted')).toBe('auto-replied');
    expect(mail.headers.get('x-auto-response-suppress')).toBe('All');
    expect(mail.headers.has('x-autoreply')).toBe(false);
    expect(mail.inReplyTo).toBe(first.messageId);
    expect(mail.references).toBe(first.messageId);
    const token = ticketTokenFor(svc.rt.deps.config, t.workspaceId, first.tk.number);
    expect(mail.subject).toBe(`We received your request [#${token}]`);
    expect(addressesOf(mail.from)).toEqual([{ name: 'Acme Support', address: mb.email }]);
    expect(mail.text).toContain('Thanks! We answer within a day.');

    // The same contact again (a second ticket, same day): nothing.
    const tk2 = await emailTicket(t, mb.id, { contact: { email: from } });
    const again = await maybeAutoReply(svc.rt.deps, {
      workspaceId: t.workspaceId,
      mailboxId: mb.id,
      contactId: tk2.contact.id,
      ticketId: tk2.id,
      inbound: await parseInbound(rawMail(from, mb.email)),
    });
    expect(tk2.contact.id).toBe(first.tk.contact.id);
    expect(again).toBe('already_sent');
    // A day later: again.
    await db()
      .updateTable('email_auto_replies')
      .set({ last_sent_at: new Date(Date.now() - 25 * 3600_000) })
      .where('workspace_id', '=', t.workspaceId)
      .execute();
    const nextDay = await maybeAutoReply(svc.rt.deps, {
      workspaceId: t.workspaceId,
      mailboxId: mb.id,
      contactId: tk2.contact.id,
      ticketId: tk2.id,
      inbound: await parseInbound(rawMail(from, mb.email)),
    });
    expect(nextDay).toBe('queued');
    await waitForMail(from, 2);
    await new Promise((r) => setTimeout(r, 500));
    expect(receivedFor(from)).toHaveLength(2);
  });

  it('never to automatic mail, mailing lists, bounces or no-reply senders; not when switched off', async () => {
    const t = await newTenant(api());
    const on = { auto_reply_enabled: true, auto_reply_subject: 'Got it', auto_reply_html: '<p>Got it</p>' };
    const mb = await mailbox(t, on);
    const cases: Array<[string, string[], string]> = [
      [`ooo-${randomUUID().slice(0, 8)}@customer.test`, ['Auto-Submitted: auto-replied'], 'automatic'],
      [`vac-${randomUUID().slice(0, 8)}@customer.test`, ['X-Autoreply: yes'], 'automatic'],
      [`list-${randomUUID().slice(0, 8)}@customer.test`, ['List-Id: <news.customer.test>'], 'automatic'],
      [`bulk-${randomUUID().slice(0, 8)}@customer.test`, ['Precedence: bulk'], 'automatic'],
      [`dsn-${randomUUID().slice(0, 8)}@customer.test`, ['Return-Path: <>'], 'automatic'],
      [`no-reply-${randomUUID().slice(0, 8)}@customer.test`, [], 'no_reply_sender'],
    ];
    for (const [from, extra, expected] of cases) {
      const { outcome } = await autoReplyCase(t, mb.id, mb.email, from, extra);
      expect(outcome, from).toBe(expected);
    }
    const off = await mailbox(t, { auto_reply_enabled: false, auto_reply_html: '<p>Got it</p>' });
    const quiet = `quiet-${randomUUID().slice(0, 8)}@customer.test`;
    expect((await autoReplyCase(t, off.id, off.email, quiet)).outcome).toBe('disabled');
    // Our own address as the contact (a loop through another mailbox) gets nothing either.
    const loop = await autoReplyCase(t, mb.id, mb.email, off.email);
    expect(loop.outcome).toBe('no_recipient');
    await new Promise((r) => setTimeout(r, 1500));
    for (const [from] of cases) expect(receivedFor(from), from).toHaveLength(0);
    expect(receivedFor(quiet)).toHaveLength(0);
    expect(receivedFor(off.email)).toHaveLength(0);
  });

  it('from what the inbound job stored: threaded to the stored ids; nothing for spam, follow-ups on old tickets or forged senders', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t, { auto_reply_enabled: true, auto_reply_subject: '', auto_reply_html: '<p>Noted.</p>' });
    const from = `stored-${randomUUID().slice(0, 8)}@customer.test`;
    const tk = await emailTicket(t, mb.id, { subject: 'Broken zipper', contact: { email: from } });
    await customerMail(t, tk, mb.id, 'Zip-42@Mail.Customer.TEST', ['Zip-40@Mail.Customer.TEST']);
    const stored = await db()
      .selectFrom('messages')
      .select('id')
      .where('workspace_id', '=', t.workspaceId)
      .where('ticket_id', '=', tk.id)
      .where('direction', '=', 'inbound')
      .executeTakeFirstOrThrow();
    await db().updateTable('messages').set({ subject: 'Broken zipper' }).where('id', '=', stored.id).execute();
    const info = {
      workspaceId: t.workspaceId,
      mailboxId: mb.id,
      ticketId: tk.id,
      messageId: stored.id,
      newTicket: true,
      spam: false,
      contactId: tk.contact.id,
      fromEmail: from,
      autoSubmitted: null,
      authFailed: false,
    };
    expect(await autoReplyToDelivered(svc.rt.deps, { ...info, spam: true })).toBeNull();
    expect(await autoReplyToDelivered(svc.rt.deps, { ...info, newTicket: false })).toBeNull();
    expect(await autoReplyToDelivered(svc.rt.deps, { ...info, authFailed: true })).toBe('unverified_sender');
    expect(await autoReplyToDelivered(svc.rt.deps, { ...info, autoSubmitted: 'mailing_list' })).toBe('automatic');
    expect(await autoReplyToDelivered(svc.rt.deps, info)).toBe('queued');
    const [got] = await waitForMail(from);
    const token = ticketTokenFor(svc.rt.deps.config, t.workspaceId, tk.number);
    // No subject of its own: "Re:" the customer's.
    expect(got!.mail.subject).toBe(`Re: Broken zipper [#${token}]`);
    expect(got!.mail.inReplyTo).toBe('<Zip-42@Mail.Customer.TEST>');
    expect(got!.mail.references).toEqual(['<Zip-40@Mail.Customer.TEST>', '<Zip-42@Mail.Customer.TEST>']);
    expect(got!.mail.headers.get('auto-submitted')).toBe('auto-replied');
  });

  it('a mail through the inbound route that opens a ticket gets the auto-reply, once', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t, {
      auto_reply_enabled: true,
      auto_reply_subject: 'Thanks',
      auto_reply_html: '<p>Soon.</p>',
    });
    const from = `route-${randomUUID().slice(0, 8)}@customer.test`;
    const post = (raw: Buffer) =>
      api().req('POST', `/v1/inbound/email?to=${encodeURIComponent(mb.forwarding_address)}`, {
        raw,
        headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': 'test-inbound-secret-0123456789' },
      });
    const messageId = `<Route-${randomUUID()}@Mail.Customer.TEST>`;
    expect((await post(rawMail(from, mb.email, [], messageId))).status).toBe(202);
    const [got] = await waitForMail(from);
    expect(got!.mail.inReplyTo).toBe(messageId);
    expect(got!.mail.headers.get('auto-submitted')).toBe('auto-replied');
    // A second new conversation the same day: no second auto-reply.
    const other = rawMail(from, mb.email).toString().replace('Help with my order', 'Another question');
    expect((await post(Buffer.from(other))).status).toBe(202);
    await new Promise((r) => setTimeout(r, 2500));
    expect(receivedFor(from)).toHaveLength(1);
  });
});
