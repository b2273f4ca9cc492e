// Inbound email end to end, part 3 (part 1: inbound.test.ts, setup in inbound-setup.ts): loops
// and noise, sender trust, the quoted history of plain-text replies.
import { beforeAll, describe, expect, it } from 'vitest';
import { eventsAfterOf, latestSeqOf, type Service, type Tenant, unique } from '../../support/helpers.js';
import { AUTHSERV, fixture, inboundSuite, mail } from './inbound-setup.js';

const suite = inboundSuite();
const { db, deliverAndWait, ticketOf, messagesOf, activitiesOf, openTicket, addOutbound, setStatus } = suite;
let svc: Service;
let a: Tenant;
beforeAll(() => {
  ({ svc, a } = suite);
});

describe('loops and noise', () => {
  const dsn = (original: string, action = 'failed') =>
    mail({
      from: 'Mail Delivery System <MAILER-DAEMON@mx.example.com>',
      subject: 'Undelivered Mail Returned to Sender',
      contentType: 'multipart/report; report-type=delivery-status; boundary="b"',
      headers: ['Auto-Submitted: auto-replied'],
      body: [
        '--b',
        'Content-Type: text/plain',
        '',
        'Your message could not be delivered.',
        '--b',
        'Content-Type: message/delivery-status',
        '',
        'Reporting-MTA: dns; mx.example.com',
        '',
        'Final-Recipient: rfc822; gone@example.com',
        `Action: ${action}`,
        'Status: 5.1.1',
        'Diagnostic-Code: smtp; 550 5.1.1 user unknown',
        '',
        '--b',
        'Content-Type: text/rfc822-headers',
        '',
        'From: support@acme.test',
        'To: gone@example.com',
        'Subject: Re: x',
        `Message-ID: <${original}>`,
        '',
        '--b--',
        '',
      ].join('\r\n'),
    });

  it('a bounce marks our outbound message bounced (message.updated) and opens no ticket', async () => {
    const { ticketId } = await openTicket();
    const ours = `${unique('bounce')}@acme.test`;
    const messageId = await addOutbound(a, ticketId, ours);
    const ticketsBefore = (await svc.api.get('/v1/tickets?limit=100', a.as)).body.data.length;
    const since = await latestSeqOf(svc, a);
    const row = await deliverAndWait(dsn(ours));
    expect(row.status, row.error ?? '').toBe('processed');
    expect(row.result_message_id).toBe(messageId);
    const m = (await messagesOf(a, ticketId)).find((x) => x.id === messageId);
    expect(m.delivery_status).toBe('bounced');
    expect(m.delivery_error).toContain('5.1.1');
    expect(m.delivery_error).toContain('gone@example.com');
    const events = await eventsAfterOf(svc, a, since);
    expect(events.map((e) => e.type)).toEqual(['message.updated']);
    expect(events[0].data.message.delivery_status).toBe('bounced');
    expect((await svc.api.get('/v1/tickets?limit=100', a.as)).body.data.length).toBe(ticketsBefore);
    expect((await ticketOf(a, ticketId)).message_count).toBe(2);

    // A report about nothing of ours is dropped (kept in the spool), never a ticket.
    const stray = await deliverAndWait(dsn(`${unique('unknown')}@acme.test`));
    expect(stray.status).toBe('processed');
    expect(stray.ticket_id).toBeNull();
    expect(stray.error).toMatch(/ignored/);
    // A delay notice is not a bounce.
    const ours2 = `${unique('delay')}@acme.test`;
    const m2 = await addOutbound(a, ticketId, ours2);
    await deliverAndWait(dsn(ours2, 'delayed'));
    expect((await messagesOf(a, ticketId)).find((x) => x.id === m2).delivery_status).toBe('sent');
  });

  for (const [label, headers] of [
    ['an auto-reply (Auto-Submitted)', ['Auto-Submitted: auto-replied']],
    ['another help desk’s X-Autoreply', ['X-Autoreply: yes']],
    ['mailing-list mail', ['List-Id: <news.example.com>', 'Precedence: list']],
  ] as const) {
    it(`${label} is added to a solved ticket without reopening it, and is marked`, async () => {
      const { ticketId } = await openTicket();
      const ours = `${unique('auto')}@acme.test`;
      await addOutbound(a, ticketId, ours);
      await setStatus(a, ticketId, 'solved');
      const acts = (await activitiesOf(a, ticketId)).length;
      const row = await deliverAndWait(
        mail({ inReplyTo: `<${ours}>`, headers: [...headers], subject: 'Out of office' }),
      );
      expect(row.ticket_id).toBe(ticketId);
      const ticket = await ticketOf(a, ticketId);
      expect(ticket.status).toBe('solved');
      expect(ticket.message_count).toBe(3);
      expect((await activitiesOf(a, ticketId)).length).toBe(acts);
      const stored = await db()
        .selectFrom('messages')
        .select('email_auto_submitted')
        .where('id', '=', row.result_message_id!)
        .executeTakeFirstOrThrow();
      expect(stored.email_auto_submitted).not.toBeNull();
    });
  }

  it('an auto-reply to a closed ticket is added there: no follow-up ticket, no ping-pong', async () => {
    const { ticketId } = await openTicket();
    const ours = `${unique('auto-closed')}@acme.test`;
    await addOutbound(a, ticketId, ours);
    await setStatus(a, ticketId, 'closed');
    const row = await deliverAndWait(mail({ inReplyTo: `<${ours}>`, headers: ['Auto-Submitted: auto-replied'] }));
    expect(row.ticket_id).toBe(ticketId);
    expect((await ticketOf(a, ticketId)).status).toBe('closed');
  });

  it('mail from a blocked contact becomes a spam ticket and never reopens theirs', async () => {
    const from = `${unique('blocked')}@example.com`;
    const { ticketId } = await openTicket({ from });
    const ours = `${unique('to-blocked')}@acme.test`;
    await addOutbound(a, ticketId, ours);
    await setStatus(a, ticketId, 'solved');
    const ticket = await ticketOf(a, ticketId);
    const patch = await svc.api.patch(`/v1/contacts/${ticket.contact.id}`, { blocked: true }, a.as);
    expect(patch.status, patch.text).toBe(200);
    const row = await deliverAndWait(mail({ from, inReplyTo: `<${ours}>` }));
    expect(row.ticket_id).not.toBe(ticketId);
    const spam = await ticketOf(a, row.ticket_id!);
    expect(spam.spam).toBe(true);
    expect((await ticketOf(a, ticketId)).status).toBe('solved');
    const listed = (await svc.api.get('/v1/tickets?limit=100', a.as)).body.data.map((t: any) => t.id);
    expect(listed).not.toContain(spam.id);
  });
});

describe('sender trust', () => {
  const authResults = (id: string, dmarc: string) =>
    `Authentication-Results: ${id}; spf=pass smtp.mailfrom=webforms.test; dkim=pass header.d=webforms.test; dmarc=${dmarc} header.from=webforms.test`;

  it('a trusted form sender with DMARC pass: the Reply-To visitor is the contact', async () => {
    const visitor = `${unique('visitor')}@example.org`;
    const row = await deliverAndWait(
      mail({
        from: 'Website <forms@webforms.test>',
        headers: [`Reply-To: Vera Visitor <${visitor}>`, authResults(AUTHSERV, 'pass')],
        subject: unique('contact form'),
      }),
    );
    const ticket = await ticketOf(a, row.ticket_id!);
    expect(ticket.contact.email).toBe(visitor);
    const [m] = await messagesOf(a, ticket.id);
    expect(m).toMatchObject({ from_email: visitor, form_sender: 'forms@webforms.test', reply_to: null });
    expect(m.author.contact.email).toBe(visitor);
  });

  it('without DMARC pass at a trusted server the form mail is ordinary mail', async () => {
    const visitor = `${unique('visitor')}@example.org`;
    for (const header of [authResults('evil.example', 'pass'), authResults(AUTHSERV, 'none')]) {
      const row = await deliverAndWait(
        mail({
          from: 'Website <forms@webforms.test>',
          headers: [`Reply-To: <${visitor}>`, header],
          subject: unique('form'),
        }),
      );
      const [m] = await messagesOf(a, row.ticket_id!);
      expect(m).toMatchObject({ from_email: 'forms@webforms.test', form_sender: null, reply_to: visitor });
    }
  });

  it('a reply failing DMARC at a trusted server: auth_failed, status unchanged, sender_unverified activity', async () => {
    const { ticketId } = await openTicket({ from: 'ceo@example.com' });
    const ours = `${unique('spoof')}@acme.test`;
    await addOutbound(a, ticketId, ours);
    await setStatus(a, ticketId, 'pending');
    const since = await latestSeqOf(svc, a);
    const row = await deliverAndWait(
      mail({
        from: 'ceo@example.com',
        inReplyTo: `<${ours}>`,
        headers: [
          'Authentication-Results: mx.acme.test; spf=fail smtp.mailfrom=example.com; dmarc=fail header.from=example.com',
        ],
      }),
    );
    expect(row.ticket_id).toBe(ticketId);
    const ticket = await ticketOf(a, ticketId);
    expect(ticket.status).toBe('pending');
    const m = (await messagesOf(a, ticketId)).find((x) => x.id === row.result_message_id);
    expect(m.auth_failed).toBe(true);
    const act = (await activitiesOf(a, ticketId)).at(-1);
    expect(act).toMatchObject({
      type: 'status_changed',
      data: { from: 'pending', to: 'pending', reason: 'sender_unverified', message_id: m.id },
      actor: { type: 'system' },
    });
    const types = (await eventsAfterOf(svc, a, since)).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['message.created', 'activity.created', 'ticket.updated']));

    // A forged header from an untrusted server counts for nothing.
    const forged = await deliverAndWait(
      mail({
        from: 'ceo@example.com',
        inReplyTo: `<${ours}>`,
        headers: ['Authentication-Results: evil.example; dmarc=fail header.from=example.com'],
      }),
    );
    const m2 = (await messagesOf(a, ticketId)).find((x) => x.id === forged.result_message_id);
    expect(m2.auth_failed).toBe(false);
    expect((await ticketOf(a, ticketId)).status).toBe('open');
  });
});

describe('quoted history of plain-text replies', () => {
  const cases = [
    ['email_1_3.txt', 'Oh thanks.', 'Russell Brown wrote'],
    ['email_1_4.txt', "Awesome! I haven't had another problem with it.", 'Loader seems to be working well.'],
    ['email_2_1.txt', null, null],
  ] as const;
  for (const [name, kept, quoted] of cases) {
    it(`${name}: the stored body is the reply, /original the whole text`, async () => {
      const text = fixture('reply-bodies', name);
      const { ticketId } = await openTicket();
      const ours = `${unique('txt')}@acme.test`;
      await addOutbound(a, ticketId, ours);
      const row = await deliverAndWait(mail({ inReplyTo: `<${ours}>`, body: text }));
      expect(row.ticket_id).toBe(ticketId);
      const m = (await messagesOf(a, ticketId)).find((x) => x.id === row.result_message_id);
      const original = (await svc.api.get(`/v1/messages/${m.id}/original`, a.as)).body;
      expect(original.body_text.replace(/\r\n/g, '\n').trim()).toBe(
        text.toString('utf8').replace(/\r\n/g, '\n').trim(),
      );
      if (kept && quoted) {
        expect(m.has_quoted).toBe(true);
        expect(m.body_text).toContain(kept);
        expect(m.body_text).not.toContain(quoted);
      }
    });
  }
});
