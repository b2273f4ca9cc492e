// Inbound email end to end, over HTTP: POST /v1/inbound/email stores the raw mail and a job
// turns it into a ticket or a message (src/modules/email/ingest.ts, inbound.ts). Real raw
// messages from test/fixtures/mail (clients/, mime/, reply-bodies/ wrapped in a mail),
// threading by In-Reply-To, References and ticket tokens, quoted history, duplicates (one
// after the other and at once), bounces, automatic mail, sender trust, blocked contacts,
// limits, unknown recipients, charsets, sanitizing, and tenants kept apart.
import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processInbound } from '../../../src/modules/email/inbound.js';
import { INBOUND_JOB, ingestRaw, sweepInbound } from '../../../src/modules/email/ingest.js';
import { ticketTokenFor } from '../../../src/modules/email/ticket-token.js';
import {
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newTenant,
  onPostgres,
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
let mbA2: { id: string; forwarding_address: string };
let mbB: { id: string; forwarding_address: string };

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
  mbA2 = await mk(a, 'sales@acme.test');
  mbB = await mk(b, 'support@bravo.test');
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

/** Spooled mails of this file's workspaces. Other test files share the PostgreSQL database and
 * spool mail of their own at the same time, so the whole table is not this file's to count. */
const countSpool = async () =>
  Number(
    (
      await db()
        .selectFrom('inbound_emails')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('workspace_id', 'in', [a.workspaceId, b.workspaceId])
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Spooled rows holding exactly one of these mails, whichever workspace (or none) they went to. */
const spooledCopies = async (...raws: (string | Buffer)[]) =>
  Number(
    (
      await db()
        .selectFrom('inbound_emails')
        .select((eb) => eb.fn.countAll().as('n'))
        .where(
          'sha256',
          'in',
          raws.map((r) => createHash('sha256').update(r).digest('hex')),
        )
        .executeTakeFirstOrThrow()
    ).n,
  );

// ---------------------------------------------------------------------------------------------

describe('the route', () => {
  it('answers 401 without the right SVC-Inbound-Secret and stores nothing', async () => {
    const before = await countSpool();
    const sent = [mail(), mail(), mail()] as const;
    const wrong = await deliver(sent[0], mbA.forwarding_address, { 'svc-inbound-secret': 'nope' });
    expect(wrong.status).toBe(401);
    expect(isErrorBody(wrong.body, 401, 'unauthorized')).toBe(true);
    const almost = await deliver(sent[1], mbA.forwarding_address, { 'svc-inbound-secret': `${SECRET}x` });
    expect(almost.status).toBe(401);
    const missing = await svc.api.req('POST', `/v1/inbound/email?to=${mbA.forwarding_address}`, {
      raw: sent[2],
      headers: { 'content-type': 'message/rfc822' },
    });
    expect(missing.status).toBe(401);
    expect(await countSpool()).toBe(before);
    expect(await spooledCopies(...sent)).toBe(0);
  });

  /** A mail of exactly `size` bytes: one big base64 attachment in lines of 76 characters. */
  function mailOfSize(size: number): Buffer {
    const head = mail({ subject: 'huge', contentType: 'multipart/mixed; boundary=z', body: '' });
    const open = Buffer.from(
      '--z\r\nContent-Type: text/plain\r\n\r\nsee the file\r\n--z\r\nContent-Type: application/octet-stream; name="big.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n',
    );
    const close = Buffer.from('\r\n--z--\r\n');
    const fill = size - head.length - open.length - close.length;
    return Buffer.concat([head, open, Buffer.alloc(fill, `${'QUFB'.repeat(19)}\r\n`), close]);
  }

  it('answers 413 too_large for 30 MB + 1 byte and stores nothing', async () => {
    const before = await countSpool();
    const over = mailOfSize(30 * 1024 * 1024 + 1);
    expect(over.length).toBe(30 * 1024 * 1024 + 1);
    const r = await deliver(over);
    expect(r.status).toBe(413);
    expect(isErrorBody(r.body, 413, 'too_large')).toBe(true);
    expect(await countSpool()).toBe(before);
    expect(await spooledCopies(over)).toBe(0);
  });

  // PostgreSQL only: the embedded database needs about a minute of this machine's two cores to
  // take in and read back 30 MB of bytea; the 413 above runs on both.
  it.runIf(onPostgres)(
    'accepts a mail of exactly 30 MB and processes it',
    async () => {
      const exact = mailOfSize(30 * 1024 * 1024);
      const ok = await deliver(exact);
      expect(ok.status, ok.text).toBe(202);
      const row = await processed(ok.body.id, 100_000);
      expect(row.size_bytes).toBe(30 * 1024 * 1024);
      expect(row.status, row.error ?? '').toBe('processed');
      const [m] = await messagesOf(a, row.ticket_id!);
      expect(m.attachments[0].size_bytes).toBeGreaterThan(20 * 1024 * 1024);
    },
    120_000,
  );

  it('refuses another content type (415) and an empty body (422)', async () => {
    const before = await countSpool();
    const json = await deliver('{"a":1}', mbA.forwarding_address, { 'content-type': 'application/json' });
    expect(json.status).toBe(415);
    expect(isErrorBody(json.body, 415, 'unsupported_media_type')).toBe(true);
    const empty = await deliver('');
    expect(empty.status).toBe(422);
    expect(isErrorBody(empty.body, 422, 'validation_failed')).toBe(true);
    const noToRaw = mail();
    const noTo = await svc.api.req('POST', '/v1/inbound/email', {
      raw: noToRaw,
      headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': SECRET },
    });
    expect(noTo.status).toBe(422);
    expect(await countSpool()).toBe(before);
    expect(await spooledCopies('{"a":1}', noToRaw)).toBe(0);
  });

  it('accepts mail for an unknown address: 202, stored as unrouted with its bytes, a warning logged', async () => {
    const raw = mail({ subject: 'Lost?' });
    const r = await deliver(raw, 'nobody-aaaaaaaaaa@in.helpdesk.test');
    expect(r.status).toBe(202);
    expect(r.body.status).toBe('unrouted');
    const row = (await spoolRow(r.body.id))!;
    expect(row.status).toBe('unrouted');
    expect(await spooledCopies(raw)).toBe(1);
    expect(row.workspace_id).toBeNull();
    expect(Buffer.compare(Buffer.from(row.raw), raw)).toBe(0);
    expect(row.recipient).toBe('nobody-aaaaaaaaaa@in.helpdesk.test');
    const line = svc.logs.find((l) => l.includes(r.body.id));
    expect(line).toBeDefined();
    expect(JSON.parse(line!).level).toBe(40);
    expect(line).not.toContain(SECRET);
    // Never processed: still unrouted a moment later.
    await new Promise((res) => setTimeout(res, 300));
    expect((await spoolRow(r.body.id))!.status).toBe('unrouted');
  });

  it('routes a "+tag" of a forwarding address to its mailbox', async () => {
    const [local, domain] = mbA2.forwarding_address.split('@');
    const row = await deliverAndWait(mail({ subject: unique('tagged') }), `${local}+anything@${domain}`);
    expect(row.mailbox_id).toBe(mbA2.id);
    expect(row.status, row.error ?? '').toBe('processed');
    expect((await ticketOf(a, row.ticket_id!)).mailbox_id).toBe(mbA2.id);
  });

  it('a crash after 202 loses nothing: the sweep queues mail still received after two minutes', async () => {
    // A row as a process that died before queueing the job leaves it.
    const raw = mail({ subject: unique('swept') });
    const id = randomUUID();
    await db()
      .insertInto('inbound_emails')
      .values({
        id,
        workspace_id: a.workspaceId,
        mailbox_id: mbA.id,
        recipient: mbA.forwarding_address,
        raw,
        size_bytes: raw.length,
        sha256: 'x',
        message_id: null,
        status: 'received',
        received_at: new Date(Date.now() - 5 * 60_000),
      })
      .execute();
    expect(await sweepInbound(svc.rt.deps)).toBeGreaterThanOrEqual(1);
    const row = await processed(id);
    expect(row.status, row.error ?? '').toBe('processed');
    expect(row.ticket_id).not.toBeNull();
  });

  it('ingestRaw (the pollers’ way in) stores an IMAP UID once', async () => {
    const raw = mail({ subject: unique('imap') });
    const input = {
      raw,
      recipient: 'support@acme.test',
      workspaceId: a.workspaceId,
      mailboxId: mbA.id,
      source: 'imap' as const,
      imap: { uidvalidity: 7, uid: Math.floor(Math.random() * 1e9) },
    };
    const first = await ingestRaw(svc.rt.deps, input);
    const again = await ingestRaw(svc.rt.deps, input);
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ id: first.id, status: 'received', duplicate: true });
    const row = await processed(first.id);
    expect(row.status, row.error ?? '').toBe('processed');
    expect(row.source).toBe('imap');
  });
});

describe('new tickets', () => {
  it('a new sender opens an email ticket in the mailbox’s team, with the contact, events and the raw kept', async () => {
    const since = await latestSeqOf(svc, a);
    const from = `${unique('new')}@example.com`;
    const subject = unique('Printer on fire');
    const raw = mail({ from: `"New Person" <${from.toUpperCase()}>`, subject, body: 'It is on fire.\r\n' });
    const row = await deliverAndWait(raw);
    expect(row.status, row.error ?? '').toBe('processed');
    expect(row.error).toBeNull();
    expect(Buffer.compare(Buffer.from(row.raw), raw)).toBe(0);

    const ticket = await ticketOf(a, row.ticket_id!);
    expect(ticket).toMatchObject({
      subject,
      status: 'open',
      channel: 'email',
      mailbox_id: mbA.id,
      message_count: 1,
      contact: { email: from, name: 'New Person' },
    });
    expect(ticket.team_id).not.toBeNull();
    expect(ticket.last_customer_message_at).not.toBeNull();
    const [m] = await messagesOf(a, ticket.id);
    expect(m).toMatchObject({
      id: row.result_message_id,
      kind: 'reply',
      direction: 'inbound',
      author: { type: 'contact', user: null, contact: { email: from } },
      from_email: from,
      from_name: 'New Person',
      subject,
      to: ['support@acme.test'],
      has_quoted: false,
      delivery_status: 'none',
      reply_to: null,
      auth_failed: false,
      form_sender: null,
    });
    expect(m.body_text.trim()).toBe('It is on fire.');

    const stored = await db()
      .selectFrom('messages')
      .select(['email_message_id', 'email_message_id_sent', 'raw_inbound_id', 'mailbox_id', 'email_auto_submitted'])
      .where('id', '=', m.id)
      .executeTakeFirstOrThrow();
    expect(stored.raw_inbound_id).toBe(row.id);
    expect(stored.mailbox_id).toBe(mbA.id);
    expect(stored.email_auto_submitted).toBeNull();
    expect(stored.email_message_id).toBe(row.message_id);

    const events = await eventsAfterOf(svc, a, since);
    const types = events.map((e) => e.type);
    expect(types).toContain('contact.created');
    expect(types.indexOf('ticket.created')).toBeLessThan(types.indexOf('message.created'));
    const created = events.find((e) => e.type === 'message.created');
    expect(created.data.message.id).toBe(m.id);
  });

  it('keeps the Message-ID as sent beside its normal form, and Reply-To when it differs', async () => {
    const id = `AbC.${unique('Case')}@Example.COM`;
    const row = await deliverAndWait(
      mail({ messageId: id, headers: ['Reply-To: Other Desk <other@example.com>'], subject: unique('case') }),
    );
    const stored = await db()
      .selectFrom('messages')
      .select(['email_message_id', 'email_message_id_sent'])
      .where('id', '=', row.result_message_id!)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({ email_message_id: id.toLowerCase(), email_message_id_sent: id });
    const [m] = await messagesOf(a, row.ticket_id!);
    expect(m.reply_to).toBe('other@example.com');
  });

  it('sanitizes HTML mail: no scripts, no handlers, no javascript: links', async () => {
    const row = await deliverAndWait(
      mail({
        contentType: 'text/html; charset=utf-8',
        subject: unique('html'),
        body: '<p onclick="steal()">Hi <b>there</b></p><script>alert(1)</script><img src="x" onerror="alert(2)"><a href="javascript:alert(3)">link</a><iframe src="https://evil.test"></iframe>',
      }),
    );
    const [m] = await messagesOf(a, row.ticket_id!);
    expect(m.body_html).toContain('<b>there</b>');
    for (const bad of ['<script', 'alert(1)', 'onerror', 'onclick', 'javascript:', '<iframe']) {
      expect(m.body_html).not.toContain(bad);
    }
    expect(m.body_text).toContain('Hi there');
  });

  it('decodes non-UTF-8 charsets in the subject and the body', async () => {
    const latin = await deliverAndWait(
      mail({
        subject: '=?ISO-8859-1?Q?Caf=E9_cr=E8me?=',
        contentType: 'text/plain; charset=windows-1252',
        body: Buffer.from([0x80, 0x20, 0x35, 0x20, 0x93, 0x6f, 0x6b, 0x94]),
      }),
    );
    const t1 = await ticketOf(a, latin.ticket_id!);
    expect(t1.subject).toBe('Café crème');
    expect((await messagesOf(a, t1.id))[0].body_text.trim()).toBe('€ 5 “ok”');

    const ru = await deliverAndWait(
      mail({
        subject: '=?KOI8-R?Q?=F0=D2=C9=D7=C5=D4?=',
        contentType: 'text/plain; charset=KOI8-R',
        body: Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]),
      }),
    );
    const t2 = await ticketOf(a, ru.ticket_id!);
    expect(t2.subject).toBe('Привет');
    expect((await messagesOf(a, t2.id))[0].body_text.trim()).toBe('Привет');

    const jp = await deliverAndWait(
      mail({
        subject: '=?ISO-2022-JP?B?GyRCJDMkcyRLJEEkTxsoQg==?=',
        contentType: 'text/plain; charset=ISO-2022-JP',
        body: Buffer.from('\x1b$B$3$s$K$A$O\x1b(B', 'latin1'),
      }),
    );
    expect((await ticketOf(a, jp.ticket_id!)).subject).toBe('こんにちは');
  });

  it('stores attachments and points inline cid: images at their attachment URLs', async () => {
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    );
    const body = [
      '--m',
      'Content-Type: multipart/related; boundary=r',
      '',
      '--r',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Look: <img src="cid:shot@acme"></p>',
      '--r',
      'Content-Type: image/png',
      'Content-ID: <shot@acme>',
      'Content-Transfer-Encoding: base64',
      '',
      png.toString('base64'),
      '--r--',
      '--m',
      'Content-Type: application/pdf; name="invoice.pdf"',
      'Content-Disposition: attachment; filename="invoice.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      'JVBERi0xLjQK',
      '--m--',
      '',
    ].join('\r\n');
    const row = await deliverAndWait(
      mail({ subject: unique('files'), contentType: 'multipart/mixed; boundary=m', body }),
    );
    const [m] = await messagesOf(a, row.ticket_id!);
    expect(m.attachments).toHaveLength(2);
    const img = m.attachments.find((x: any) => x.content_type === 'image/png');
    const pdf = m.attachments.find((x: any) => x.filename === 'invoice.pdf');
    expect(img.inline).toBe(true);
    expect(pdf.inline).toBe(false);
    expect(m.body_html).not.toContain('cid:');
    const src = /<img[^>]*src="([^"]+)"/.exec(m.body_html)![1]!;
    expect(src).toContain(`/v1/attachments/${img.id}?token=`);
    // The image loads with the URL alone (an <img> tag sends no credentials).
    const got = await fetch(src.replace(/^https?:\/\/[^/]+/, svc.url));
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(png)).toBe(true);
    // Stored under a stable address, so the token is fresh at every read.
    const stored = await db()
      .selectFrom('messages')
      .select('body_html')
      .where('id', '=', m.id)
      .executeTakeFirstOrThrow();
    expect(stored.body_html).toContain(`/v1/attachments/${img.id}"`);
    expect(stored.body_html).not.toContain('token=');
  });

  it('every mime/ fixture is stored and then processed or failed cleanly, the raw kept', async () => {
    const dir = new URL('./fixtures/mail/mime/', import.meta.url);
    const names = readdirSync(dir).filter((n) => n.endsWith('.eml'));
    expect(names.length).toBeGreaterThanOrEqual(9);
    for (const name of names) {
      const raw = readFileSync(new URL(name, dir));
      const r = await deliver(raw);
      expect(r.status, name).toBe(202);
      const row = await processed(r.body.id);
      expect(['processed', 'failed'], name).toContain(row.status);
      if (row.status === 'failed') expect(row.error, name).toMatch(/\S/);
      expect(Buffer.compare(Buffer.from(row.raw), raw), name).toBe(0);
    }
    // A mail the parser gives up on (more MIME parts than the limit) fails with the reason, raw kept.
    const parts = Array.from({ length: 1100 }, (_, i) => `--p\r\nContent-Type: text/plain\r\n\r\npart ${i}`).join(
      '\r\n',
    );
    const bomb = mail({ subject: 'parts', contentType: 'multipart/mixed; boundary=p', body: `${parts}\r\n--p--\r\n` });
    const failed = await deliverAndWait(bomb);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/unreadable mail/);
    expect(failed.ticket_id).toBeNull();
    expect(Buffer.compare(Buffer.from(failed.raw), bomb)).toBe(0);
  }, 120_000);
});

describe('threading', () => {
  const clients = [
    ['gmail-reply.eml', 'Thanks, the export works now.', 'Please try the export again'],
    ['outlook-desktop-reply.eml', 'We moved the meeting to Thursday', 'which day suits you'],
    ['outlook-web-reply.eml', null, null],
    ['apple-mail-reply.eml', 'order 7781 arrived this morning', 'has your order 7781 arrived yet'],
    ['iphone-reply.eml', null, null],
    ['thunderbird-reply.eml', 'The VPN works again after the update.', 'Please install update 2.4.1'],
  ] as const;
  for (const [name, kept, quoted] of clients) {
    it(`a ${name.replace('.eml', '')} threads into its ticket by In-Reply-To, trimmed, and reopens it`, async () => {
      const { ticketId } = await openTicket({ from: 'Customer <customer@example.com>' });
      const ours = `original-${name.replace('.eml', '')}@acme.test`;
      await addOutbound(a, ticketId, ours);
      await setStatus(a, ticketId, 'solved');
      const raw = fixture('clients', name);
      const row = await deliverAndWait(raw);
      expect(row.status, row.error ?? '').toBe('processed');
      expect(row.ticket_id).toBe(ticketId);
      const ticket = await ticketOf(a, ticketId);
      expect(ticket.status).toBe('open');
      const acts = await activitiesOf(a, ticketId);
      expect(acts.at(-1)).toMatchObject({
        type: 'status_changed',
        data: { from: 'solved', to: 'open' },
        actor: { type: 'system' },
      });
      const m = (await messagesOf(a, ticketId)).find((x) => x.id === row.result_message_id);
      expect(m.has_quoted).toBe(true);
      const original = await svc.api.get(`/v1/messages/${m.id}/original`, a.as);
      expect(original.status).toBe(200);
      expect(original.body.has_quoted).toBe(true);
      expect(original.body.body_text.length).toBeGreaterThan(m.body_text.length);
      if (kept && quoted) {
        expect(m.body_text).toContain(kept);
        expect(m.body_text).not.toContain(quoted);
        expect(m.body_html).not.toContain(quoted);
        expect(original.body.body_text).toContain(kept);
        expect(original.body.body_text).toContain(quoted);
        expect(original.body.body_html).toContain(quoted);
      }
    });
  }

  it('forwards are kept whole (no trimming) and thread like replies', async () => {
    const { ticketId } = await openTicket({ from: 'customer@example.com' });
    await addOutbound(a, ticketId, 'original-gmail-forward@acme.test');
    const row = await deliverAndWait(fixture('clients', 'gmail-forward.eml'));
    expect(row.ticket_id).toBe(ticketId);
    const m = (await messagesOf(a, ticketId)).find((x) => x.id === row.result_message_id);
    expect(m.has_quoted).toBe(false);
  });

  it('threads by References alone (no In-Reply-To), against a customer’s earlier Message-ID too', async () => {
    const first = `${unique('first')}@example.com`;
    const { ticketId } = await openTicket({ messageId: first });
    const ours = `${unique('ours')}@acme.test`;
    await addOutbound(a, ticketId, ours);
    const byOurs = await deliverAndWait(
      mail({
        subject: 'Re: something else',
        references: `<unknown-1@elsewhere.test> <${ours}> <unknown-2@elsewhere.test>`,
      }),
    );
    expect(byOurs.ticket_id).toBe(ticketId);
    const byTheirs = await deliverAndWait(mail({ subject: 'again', references: `<${first.toUpperCase()}>` }));
    expect(byTheirs.ticket_id).toBe(ticketId);
    expect((await ticketOf(a, ticketId)).message_count).toBe(4);
  });

  it('a reply that arrives while the mail it answers is still queued waits for it: one ticket', async () => {
    const parentId = `${unique('parent')}@example.com`;
    const parentRaw = mail({ messageId: parentId, subject: unique('Subject') });
    // The first mail is stored but its job has not run yet (a busy queue, several workers).
    const parentRow = randomUUID();
    await db()
      .insertInto('inbound_emails')
      .values({
        id: parentRow,
        workspace_id: a.workspaceId,
        mailbox_id: mbA.id,
        recipient: mbA.forwarding_address,
        source: 'http',
        raw: parentRaw,
        size_bytes: parentRaw.length,
        sha256: createHash('sha256').update(parentRaw).digest('hex'),
        message_id: parentId.toLowerCase(),
        status: 'received',
      })
      .execute();
    const reply = await deliver(mail({ subject: 'Re: it', inReplyTo: `<${parentId}>`, references: `<${parentId}>` }));
    expect(reply.status, reply.text).toBe(202);
    await new Promise((r) => setTimeout(r, 1500));
    const waiting = await spoolRow(reply.body.id);
    expect(waiting?.status).toBe('received');
    await svc.rt.deps.jobs.send(INBOUND_JOB, { id: parentRow });
    const first = await processed(parentRow);
    const second = await processed(reply.body.id);
    expect([first.status, second.status]).toEqual(['processed', 'processed']);
    expect(second.ticket_id).toBe(first.ticket_id);
    expect((await ticketOf(a, first.ticket_id!)).message_count).toBe(2);
  });

  it('threads by a signed ticket token in the subject or the address; a forged one opens a new ticket', async () => {
    const { ticketId } = await openTicket({ from: 'tok@example.com' });
    const ticket = await ticketOf(a, ticketId);
    const token = ticketTokenFor(svc.rt.deps.config, a.workspaceId, ticket.number);
    // From someone else entirely: a signed token is enough.
    const bySubject = await deliverAndWait(
      mail({ from: 'colleague@example.org', subject: `Re: ${ticket.subject} [#${token}]` }),
    );
    expect(bySubject.ticket_id).toBe(ticketId);
    const [local, domain] = mbA.forwarding_address.split('@');
    const byAddress = await deliverAndWait(
      mail({ from: 'colleague@example.org', subject: 'no token here', to: `${local}+t${token}@${domain}` }),
      `${local}+t${token}@${domain}`,
    );
    expect(byAddress.ticket_id).toBe(ticketId);
    const forged = await deliverAndWait(
      mail({ from: 'colleague@example.org', subject: `Re: x [#${ticket.number}-aaaaaaaaaa]` }),
    );
    expect(forged.ticket_id).not.toBe(ticketId);
  });

  it('follows a bare [#n] only for a participant of ticket n', async () => {
    const { ticketId } = await openTicket({ from: 'part@example.com' });
    const n = (await ticketOf(a, ticketId)).number;
    const participant = await deliverAndWait(mail({ from: 'part@example.com', subject: `Re: about [#${n}]` }));
    expect(participant.ticket_id).toBe(ticketId);
    const stranger = await deliverAndWait(mail({ from: 'stranger@example.net', subject: `About [#${n}]` }));
    expect(stranger.ticket_id).not.toBe(ticketId);
  });

  it('a customer’s mail on a closed ticket starts a follow-up ticket linked to it', async () => {
    const { ticketId } = await openTicket();
    const ours = `${unique('closed')}@acme.test`;
    await addOutbound(a, ticketId, ours);
    await setStatus(a, ticketId, 'closed');
    const row = await deliverAndWait(mail({ inReplyTo: `<${ours}>` }));
    expect(row.ticket_id).not.toBe(ticketId);
    const follow = await ticketOf(a, row.ticket_id!);
    const closed = await ticketOf(a, ticketId);
    expect(follow.custom.follow_up_of).toEqual({ id: ticketId, number: closed.number });
    expect(closed.status).toBe('closed');
    expect(closed.message_count).toBe(2);
  });

  it('never threads into another workspace’s ticket, even with its Message-ID in In-Reply-To', async () => {
    const { ticketId: bTicket } = await openTicket({}, mbB.forwarding_address);
    const bId = `${unique('bravo-secret')}@bravo.test`;
    await addOutbound(b, bTicket, bId, mbB.id);
    const bNumber = (await ticketOf(b, bTicket)).number;
    const bToken = ticketTokenFor(svc.rt.deps.config, b.workspaceId, bNumber);
    const row = await deliverAndWait(
      mail({ inReplyTo: `<${bId}>`, references: `<${bId}>`, subject: `Re: [#${bToken}]` }),
      mbA.forwarding_address,
    );
    expect(row.workspace_id).toBe(a.workspaceId);
    expect(row.ticket_id).not.toBe(bTicket);
    expect((await ticketOf(a, row.ticket_id!)).message_count).toBe(1);
    expect((await ticketOf(b, bTicket)).message_count).toBe(2);
    expect((await svc.api.get(`/v1/tickets/${row.ticket_id}`, b.as)).status).toBe(404);
  });
});

describe('duplicates', () => {
  it('the same mail delivered twice makes one message', async () => {
    const raw = mail({ subject: unique('twice') });
    const first = await deliverAndWait(raw);
    const second = await deliverAndWait(raw);
    expect(second.id).not.toBe(first.id);
    expect(second.status).toBe('processed');
    expect(second.error).toMatch(/duplicate/);
    expect(second.result_message_id).toBe(first.result_message_id);
    expect((await ticketOf(a, first.ticket_id!)).message_count).toBe(1);
  });

  it('the same mail delivered at once, five times, makes one ticket and one message', async () => {
    const messageId = `${unique('burst')}@example.com`;
    const raw = mail({ messageId, subject: unique('burst') });
    const answers = await Promise.all(Array.from({ length: 5 }, () => deliver(raw)));
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    const rows = await Promise.all(answers.map((r) => processed(r.body.id)));
    expect(new Set(rows.map((r) => r.ticket_id)).size).toBe(1);
    expect(new Set(rows.map((r) => r.result_message_id)).size).toBe(1);
    const copies = await db()
      .selectFrom('messages')
      .select('id')
      .where('workspace_id', '=', a.workspaceId)
      .where('email_message_id', '=', messageId.toLowerCase())
      .execute();
    expect(copies).toHaveLength(1);
    const tickets = await db()
      .selectFrom('tickets')
      .select('id')
      .where('workspace_id', '=', a.workspaceId)
      .where(
        'id',
        'in',
        rows.map((r) => r.ticket_id!),
      )
      .execute();
    expect(tickets).toHaveLength(1);
  });

  it('two workers on two copies at the same moment: one wins, the other is recorded as its duplicate', async () => {
    // Rows without a queued job, processed side by side (on PostgreSQL both pass the first check
    // and the unique index decides; on the embedded database they run one after the other).
    const raw = mail({
      subject: unique('race'),
      contentType: 'multipart/mixed; boundary=m',
      body: [
        '--m',
        'Content-Type: text/plain',
        '',
        'see file',
        '--m',
        'Content-Type: application/pdf; name="a.pdf"',
        'Content-Disposition: attachment; filename="a.pdf"',
        'Content-Transfer-Encoding: base64',
        '',
        'JVBERi0xLjQK',
        '--m--',
        '',
      ].join('\r\n'),
    });
    const ids = [randomUUID(), randomUUID()];
    for (const id of ids) {
      await db()
        .insertInto('inbound_emails')
        .values({
          id,
          workspace_id: a.workspaceId,
          mailbox_id: mbA.id,
          recipient: 'x@y.z',
          raw,
          size_bytes: raw.length,
          sha256: 'x',
          message_id: null,
        })
        .execute();
    }
    const outcomes = await Promise.all(ids.map((id) => processInbound(svc.rt.deps, id)));
    expect(outcomes.map((o) => o.result).sort()).toEqual(['created', 'duplicate']);
    expect(outcomes[0]!.messageId).toBe(outcomes[1]!.messageId);
    const rows = await Promise.all(ids.map((id) => spoolRow(id)));
    expect(rows.map((r) => r!.status)).toEqual(['processed', 'processed']);
    // The loser's stored file was removed with its rolled-back write: one attachment row, one message.
    const files = await db()
      .selectFrom('attachments')
      .select('id')
      .where('workspace_id', '=', a.workspaceId)
      .where('message_id', '=', outcomes[0]!.messageId!)
      .execute();
    expect(files).toHaveLength(1);
  });

  it('mail without a Message-ID de-duplicates on its bytes', async () => {
    const raw = mail({ messageId: null, subject: unique('no id') });
    const first = await deliverAndWait(raw);
    const second = await deliverAndWait(raw);
    expect(second.result_message_id).toBe(first.result_message_id);
    const other = await deliverAndWait(mail({ messageId: null, subject: unique('no id either') }));
    expect(other.ticket_id).not.toBe(first.ticket_id);
  });

  it('the same Message-ID in two mailboxes is one ticket per mailbox', async () => {
    const raw = mail({ subject: unique('two boxes') });
    const one = await deliverAndWait(raw, mbA.forwarding_address);
    const two = await deliverAndWait(raw, mbA2.forwarding_address);
    expect(one.ticket_id).not.toBe(two.ticket_id);
    expect((await ticketOf(a, two.ticket_id!)).mailbox_id).toBe(mbA2.id);
  });
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
