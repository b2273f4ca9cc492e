// The setup of the outbound email tests (outbound.test.ts, outbound-failures.test.ts,
// outbound-auto-replies.test.ts): an SMTP server in this process that records what it receives
// (recipients choose their fate), a service on a database of its own that sends through it, and
// the helpers that create mailboxes and tickets and wait for mail. Each test file calls
// outboundSuite() at its top level and gets its own server and service (the files share worker
// processes, so nothing here lives at module level).

import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll } from 'vitest';
import { newId } from '../../../src/platform/crypto/random.js';
import { makeTicket } from '../../support/builders.js';
import { type Service, startService, type Tenant } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

export const SMTP_USER = 'mailer@acme.test';
export const SMTP_PASSWORD = 'smtp-Secret-Pa55word-4d1b';

// ---------------------------------------------------------------------------------------------
// The SMTP server: records every mail with its envelope; recipients choose their fate.
//   reject550-…@  → 550 at RCPT, tempfail-…@ → 451 at RCPT the first time, then accepted.

export interface Received {
  mailFrom: string;
  rcpt: string[];
  raw: string;
  mail: ParsedMail;
}

export interface Smtp {
  server: SMTPServer;
  port: number;
  received: Received[];
  logins: Array<{ username: string; password: string }>;
}

export async function smtpServer(): Promise<Smtp> {
  const received: Received[] = [];
  const logins: Smtp['logins'] = [];
  const tempfailed = new Set<string>();
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, cb) {
      logins.push({ username: auth.username ?? '', password: auth.password ?? '' });
      if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) cb(null, { user: auth.username });
      else cb(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, cb) {
      const a = address.address.toLowerCase();
      if (a.startsWith('reject550')) {
        return cb(
          Object.assign(new Error('5.1.1 <' + a + '>: Recipient address rejected: User unknown'), {
            responseCode: 550,
          }),
        );
      }
      if (a.startsWith('tempfail') && !tempfailed.has(a)) {
        tempfailed.add(a);
        return cb(Object.assign(new Error('4.7.1 Try again later (greylisted)'), { responseCode: 451 }));
      }
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (mail) => {
            received.push({
              mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              rcpt: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
              raw: raw.toString('utf8'),
              mail,
            });
            cb();
          },
          (err) => cb(err),
        );
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  return { server, port: (server.server.address() as AddressInfo).port, received, logins };
}

/** A loopback port nothing listens on. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

export const RETRIES = [150, 150];

export const addressesOf = (v: ParsedMail['to']) =>
  (Array.isArray(v) ? v : v ? [v] : []).flatMap((a) => a.value.map((x) => ({ name: x.name, address: x.address })));

/** One file's SMTP server, service and the helpers that use them; registers the file's hooks. */
export function outboundSuite() {
  let smtp: Smtp;
  let downPort: number;
  let svc: Service;
  let own: OwnDatabase;

  beforeAll(async () => {
    [smtp, downPort] = await Promise.all([smtpServer(), closedPort()]);
    // A database of its own on PostgreSQL: the outbound queue is one for the whole database. The
    // send workers of another file's service or child process would take this file's sends and
    // retry them by the default, minutes-long, schedule; and this runtime (default IMAP pollers,
    // send workers, a sweep after one second) would poll other files' mailboxes and send their
    // pending replies.
    own = await ownDatabase('email_outbound');
    svc = await startService(
      {
        ...own.env,
        INBOUND_DOMAIN: 'in.helpdesk.test',
        MAIL_ALLOW_PRIVATE: 'true',
        SMTP_URL: `smtp://127.0.0.1:${smtp.port}?from=Help%20desk%20%3Chelp%40helpdesk.test%3E`,
      },
      {
        email: {
          retryDelaysMs: RETRIES,
          jitter: 0,
          pollSeconds: 0.5,
          sweepMs: 300,
          orphanAfterMs: 1000,
          timeoutMs: 5000,
        },
      },
    );
  });
  afterAll(async () => {
    await svc?.stop();
    await own?.drop();
    await new Promise((r) => (smtp ? smtp.server.close(() => r(null)) : r(null)));
  });

  const api = () => svc.api;
  const db = () => svc.rt.deps.database.db;

  async function mailbox(t: Tenant, body: Record<string, unknown> = {}) {
    const r = await api().post(
      '/v1/mailboxes',
      {
        name: 'Support',
        display_name: 'Acme Support',
        email: `support-${randomUUID().slice(0, 8)}@acme.test`,
        outbound_kind: 'smtp',
        config: { smtp_host: '127.0.0.1', smtp_port: smtp.port, smtp_tls: 'none', smtp_username: SMTP_USER },
        smtp_password: SMTP_PASSWORD,
        signature_html: '<p>Best regards,<br><b>The Acme team</b></p>',
        ...body,
      },
      t.as,
    );
    if (r.status !== 201) throw new Error(`mailbox: ${r.status} ${r.text}`);
    return r.body as { id: string; email: string; forwarding_address: string };
  }

  const emailTicket = (t: Tenant, mailboxId: string, body: Record<string, unknown> = {}) =>
    makeTicket(api(), t, {
      channel: 'email',
      mailbox_id: mailboxId,
      contact: { email: `cust-${randomUUID().slice(0, 8)}@customer.test`, name: 'Casey Customer' },
      ...body,
    });

  /** The customer's mail on the ticket, as the inbound job stores it. */
  async function customerMail(t: Tenant, tk: any, mailboxId: string, sentId: string, references: string[] = []) {
    await db()
      .insertInto('messages')
      .values({
        workspace_id: t.workspaceId,
        id: newId(),
        ticket_id: tk.id,
        kind: 'reply',
        direction: 'inbound',
        author_type: 'contact',
        author_user_id: null,
        author_contact_id: tk.contact.id,
        author_api_key_id: null,
        body_html: '<p>It is on fire</p>',
        body_text: 'It is on fire',
        original_html: null,
        original_text: null,
        delivery_error: null,
        reply_to: null,
        form_sender: null,
        from_email: tk.contact.email,
        email_message_id: sentId.toLowerCase(),
        email_message_id_sent: sentId,
        email_references: references,
        mailbox_id: mailboxId,
        created_at: new Date(Date.now() - 60_000),
      })
      .execute();
  }

  const reply = (t: Tenant, ticketId: string, body: Record<string, unknown>) =>
    api().post(`/v1/tickets/${ticketId}/messages`, { kind: 'reply', ...body }, t.as);

  async function messageRow(t: Tenant, id: string) {
    return db()
      .selectFrom('messages')
      .selectAll()
      .where('workspace_id', '=', t.workspaceId)
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
  }

  /** Waits until the message has left pending. */
  async function settled(t: Tenant, id: string, timeoutMs = 20_000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const row = await messageRow(t, id);
      if (row.delivery_status !== 'pending') return row;
      if (Date.now() > until) {
        // What the sender left behind, and what the service logged (for a failure on a loaded machine).
        const state = {
          attempts: row.delivery_attempts,
          next_at: row.delivery_next_at,
          lease_until: row.delivery_lease_until,
          last_error: row.delivery_last_error,
          logs: svc.logs.filter((l) => /"level":(40|50)/.test(l)).slice(-5),
        };
        throw new Error(`message ${id} still pending after ${timeoutMs} ms: ${JSON.stringify(state)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Mail received for this recipient (envelope). */
  const receivedFor = (address: string) => smtp.received.filter((r) => r.rcpt.includes(address.toLowerCase()));

  async function waitForMail(address: string, count = 1, timeoutMs = 15_000): Promise<Received[]> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const got = receivedFor(address);
      if (got.length >= count) return got;
      if (Date.now() > until) throw new Error(`no mail for ${address} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  return {
    get smtp() {
      return smtp;
    },
    get downPort() {
      return downPort;
    },
    get svc() {
      return svc;
    },
    api,
    db,
    mailbox,
    emailTicket,
    customerMail,
    reply,
    messageRow,
    settled,
    receivedFor,
    waitForMail,
  };
}
