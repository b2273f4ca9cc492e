// The setup of the inbound email tests (inbound.test.ts, inbound-threading.test.ts,
// inbound-noise-trust.test.ts): a service on a database of its own with two workspaces and their
// mailboxes, and the helpers that deliver raw mail over HTTP and wait for the job. Each test file
// calls inboundSuite() at its top level and gets its own service (the files share worker
// processes, so nothing here lives at module level).

import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect } from 'vitest';
import { newTenant, type Service, startService, type Tenant, unique } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

export const SECRET = 'test-inbound-secret-0123456789';
export const AUTHSERV = 'mx.acme.test';
export const fixture = (dir: string, name: string) =>
  readFileSync(new URL(`./fixtures/mail/${dir}/${name}`, import.meta.url));

export interface MailOpts {
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
export function mail(o: MailOpts = {}): Buffer {
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

/** One file's service, workspaces and mailboxes, and the helpers that use them; registers the file's hooks. */
export function inboundSuite() {
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

  return {
    get svc() {
      return svc;
    },
    get a() {
      return a;
    },
    get b() {
      return b;
    },
    get mbA() {
      return mbA;
    },
    get mbA2() {
      return mbA2;
    },
    get mbB() {
      return mbB;
    },
    db,
    deliver,
    waitFor,
    spoolRow,
    processed,
    deliverAndWait,
    ticketOf,
    messagesOf,
    activitiesOf,
    openTicket,
    addOutbound,
    setStatus,
    countSpool,
    spooledCopies,
  };
}
