// Inbound email end to end, over HTTP: POST /v1/inbound/email stores the raw mail and a job
// turns it into a ticket or a message (src/modules/email/ingest.ts, inbound.ts). Real raw
// messages from test/modules/email/fixtures/mail (clients/, mime/, reply-bodies/ wrapped in a mail),
// threading by In-Reply-To, References and ticket tokens, quoted history, duplicates (one
// after the other and at once), bounces, automatic mail, sender trust, blocked contacts,
// limits, unknown recipients, charsets, sanitizing, and tenants kept apart.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ingestRaw, sweepInbound } from '../../../src/modules/email/ingest.js';
import {
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  onPostgres,
  type Service,
  type Tenant,
  unique,
} from '../../support/helpers.js';
import { inboundSuite, mail, SECRET } from './inbound-setup.js';

const suite = inboundSuite();
const { db, deliver, spoolRow, processed, deliverAndWait, ticketOf, messagesOf, countSpool, spooledCopies } = suite;
let svc: Service;
let a: Tenant;
let mbA: { id: string; forwarding_address: string };
let mbA2: { id: string; forwarding_address: string };
beforeAll(() => {
  ({ svc, a, mbA, mbA2 } = suite);
});

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
