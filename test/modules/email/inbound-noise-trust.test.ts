// Inbound email end to end, part 3 (part 1: inbound.test.ts, whose setup this file repeats): loops
// and noise, sender trust, the quoted history of plain-text replies.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventsAfterOf,
  latestSeqOf,
  newTenant,
  type Service,
  startService,
  type Tenant,
  unique,
} from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

const SECRET = 'test-inbound-secret-0123456789';
const AUTHSERV = 'mx.acme.test';
const fixture = (dir: string, name: string) => readFileSync(new URL(`./fixtures/mail/${dir}/${name}`, import.meta.url));

let svc: Service;
let own: OwnDatabase;
let a: Tenant;
let b: Tenant;
let mbA: { id: string; forwarding_address: string };

beforeAll(async () => {
  // A database of its own on PostgreSQL: the inbound job queue is one for the whole database,
  // and another file's service that took this file's mail would process it with its own settings
  // (no trusted authserv-id: the sender-trust cases) and store its attachments in its own
  // DATA_DIR (the inline image would not load from this service).
  own = await ownDatabase('email_inbound');
  svc = await startService({
    ...own.env,
    INBOUND_AUTHSERV_IDS: `${AUTHSERV}, other.mx.test`,
    INBOUND_DOMAIN: 'in.helpdesk.test',
  });
  a = await newTenant(svc.api, 'Acme');
  b = await newTenant(svc.api, 'Bravo');
  const team = await svc.api.post('/v1/teams', { name: 'Support', private: false, member_ids: [] }, a.as);
  expect(team.status).toBe(201);
  const mk = async (t: Tenant, email: string, extra: Record<string, unknown> = {}) => {
    const r = await svc.api.post('/v1/mailboxes', { name: email, email, ...extra }, t.as);
    expect(r.status, r.text).toBe(201);
    return r.body;
  };
  mbA = await mk(a, 'support@acme.test', { team_id: team.body.id, trusted_form_senders: ['forms@webforms.test'] });
  // The other mailboxes of inbound.test.ts's setup, so that the workspaces look alike in every part.
  await mk(a, 'sales@acme.test');
  await mk(b, 'support@bravo.test');
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await own?.drop();
});

// ---------------------------------------------------------------------------------------------
// Helpers.

const db = () => svc.rt.deps.database.db;

async function deliver(raw: string | Buffer, to = mbA.forwarding_address, headers: Record<string, string> = {}) {
  return svc.api.req('POST', `/v1/inbound/email?to=${encodeURIComponent(to)}`, {
    raw,
    headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': SECRET, ...headers },
  });
}

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function spoolRow(id: string) {
  return db().selectFrom('inbound_emails').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The spool row once the job is done with it. */
async function processed(id: string, ms = 30_000) {
  return waitFor(
    `inbound ${id}`,
    async () => {
      const r = await spoolRow(id);
      return r && r.status !== 'received' ? r : null;
    },
    ms,
  );
}

/** Delivers and waits: the spool row as the job left it. */
async function deliverAndWait(raw: string | Buffer, to = mbA.forwarding_address) {
  const r = await deliver(raw, to);
  expect(r.status, r.text).toBe(202);
  expect(r.body.status).toBe('received');
  return processed(r.body.id);
}

interface MailOpts {
  from?: string;
  to?: string;
  subject?: string;
  messageId?: string | null;
  inReplyTo?: string;
  references?: string;
  headers?: string[];
  contentType?: string;
  body?: string | Buffer;
}

/** A raw mail (CRLF line ends). */
function mail(o: MailOpts = {}): Buffer {
  const lines = [
    `From: ${o.from ?? 'Jane Customer <jane@example.com>'}`,
    `To: ${o.to ?? 'support@acme.test'}`,
    `Subject: ${o.subject ?? 'Help needed'}`,
    'Date: Tue, 9 Jan 2024 10:00:00 +0000',
    ...(o.messageId === null ? [] : [`Message-ID: <${o.messageId ?? `${unique('m')}@example.com`}>`]),
    ...(o.inReplyTo ? [`In-Reply-To: ${o.inReplyTo}`] : []),
    ...(o.references ? [`References: ${o.references}`] : []),
    ...(o.headers ?? []),
    'MIME-Version: 1.0',
    `Content-Type: ${o.contentType ?? 'text/plain; charset=utf-8'}`,
  ];
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);
  const body =
    typeof o.body === 'string' || o.body === undefined ? Buffer.from(o.body ?? 'Hello, please help.') : o.body;
  return Buffer.concat([head, body]);
}

async function ticketOf(t: Tenant, id: string) {
  const r = await svc.api.get(`/v1/tickets/${id}`, t.as);
  expect(r.status, r.text).toBe(200);
  return r.body;
}

async function messagesOf(t: Tenant, ticketId: string) {
  const r = await svc.api.get(`/v1/tickets/${ticketId}/messages`, t.as);
  expect(r.status, r.text).toBe(200);
  return r.body.data as any[];
}

async function activitiesOf(t: Tenant, ticketId: string) {
  const r = await svc.api.get(`/v1/tickets/${ticketId}/activities`, t.as);
  expect(r.status, r.text).toBe(200);
  return r.body.data as any[];
}

/** A ticket opened by a customer's first mail. */
async function openTicket(opts: MailOpts = {}, to = mbA.forwarding_address) {
  const row = await deliverAndWait(mail({ subject: unique('Subject'), ...opts }), to);
  expect(row.status, row.error ?? '').toBe('processed');
  return { ticketId: row.ticket_id!, messageId: row.result_message_id! };
}

/** One of our replies, as the outbound side records it once sent (Message-ID as sent). */
async function addOutbound(t: Tenant, ticketId: string, messageId: string, mailboxId = mbA.id, status = 'sent') {
  const id = randomUUID();
  await db()
    .insertInto('messages')
    .values({
      workspace_id: t.workspaceId,
      id,
      ticket_id: ticketId,
      kind: 'reply',
      direction: 'outbound',
      author_type: 'system',
      body_html: '<p>Our answer</p>',
      body_text: 'Our answer',
      email_message_id: messageId.toLowerCase(),
      email_message_id_sent: messageId,
      mailbox_id: mailboxId,
      delivery_status: status as 'sent',
    })
    .execute();
  await db()
    .updateTable('tickets')
    .set((eb) => ({ message_count: eb('message_count', '+', 1) }))
    .where('workspace_id', '=', t.workspaceId)
    .where('id', '=', ticketId)
    .execute();
  return id;
}

async function setStatus(t: Tenant, ticketId: string, status: string) {
  const r = await svc.api.patch(`/v1/tickets/${ticketId}`, { status }, t.as);
  expect(r.status, r.text).toBe(200);
}

// ---------------------------------------------------------------------------------------------

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
