// Outbound email, part 2 (part 1: outbound.test.ts, whose setup this file repeats): failures and
// retries against a real SMTP server in this process.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/platform/crypto/random.js';
import { makeTicket } from '../../support/builders.js';
import {
  eventsAfterOf,
  latestSeqOf,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

const SMTP_USER = 'mailer@acme.test';
const SMTP_PASSWORD = 'smtp-Secret-Pa55word-4d1b';

// ---------------------------------------------------------------------------------------------
// The SMTP server: records every mail with its envelope; recipients choose their fate.
//   reject550-…@  → 550 at RCPT, tempfail-…@ → 451 at RCPT the first time, then accepted.

interface Received {
  mailFrom: string;
  rcpt: string[];
  raw: string;
  mail: ParsedMail;
}

interface Smtp {
  server: SMTPServer;
  port: number;
  received: Received[];
  logins: Array<{ username: string; password: string }>;
}

async function smtpServer(): Promise<Smtp> {
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
async function closedPort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

let smtp: Smtp;
let downPort: number;
let svc: Service;
let own: OwnDatabase;
const RETRIES = [150, 150];

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

describe('failures and retries', () => {
  it('SMTP 550 fails at once with delivery_error and message.updated', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t);
    const tk = await emailTicket(t, mb.id, {
      contact: { email: `reject550-${randomUUID().slice(0, 8)}@customer.test` },
    });
    const seq = await latestSeqOf(svc, t);
    const r = await reply(t, tk.id, { body_html: 'Will bounce' });
    const row = await settled(t, r.body.id);
    expect(row.delivery_status).toBe('failed');
    expect(row.delivery_attempts).toBe(1);
    expect(row.delivery_error).toMatch(/550/);
    expect(row.delivery_error).toMatch(/User unknown/);
    expect(row.delivery_error).not.toContain(SMTP_PASSWORD);
    const updated = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'message.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].data.message).toMatchObject({ id: r.body.id, delivery_status: 'failed' });
    expect(updated[0].data.message.delivery_error).toBe(row.delivery_error);
  });

  it('a refused login is permanent, and the password never shows in the error', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t, { smtp_password: 'wrong-Pa55word-xyz' });
    const tk = await emailTicket(t, mb.id);
    const r = await reply(t, tk.id, { body_html: 'Needs a login' });
    const row = await settled(t, r.body.id);
    expect(row.delivery_status).toBe('failed');
    expect(row.delivery_attempts).toBe(1);
    expect(row.delivery_error).toMatch(/535|[Aa]uthentication|[Ii]nvalid login/);
    expect(row.delivery_error).not.toContain('wrong-Pa55word-xyz');
    expect(receivedFor(tk.contact.email)).toHaveLength(0);
  });

  it('451 is retried, then sent (one mail, the same Message-ID)', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t);
    const email = `tempfail-${randomUUID().slice(0, 8)}@customer.test`;
    const tk = await emailTicket(t, mb.id, { contact: { email } });
    const seq = await latestSeqOf(svc, t);
    const r = await reply(t, tk.id, { body_html: 'Greylisted first' });
    const row = await settled(t, r.body.id);
    expect(row.delivery_status).toBe('sent');
    expect(row.delivery_attempts).toBe(2);
    expect(row.delivery_error).toBeNull();
    const got = await waitForMail(email);
    expect(got).toHaveLength(1);
    expect(got[0]!.mail.messageId).toBe(`<${row.email_message_id_sent}>`);
    const updated = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'message.updated');
    expect(updated.map((e) => e.data.message.delivery_status)).toEqual(['sent']);
  });

  it('a server that is down is retried on the schedule, then the message fails', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t, {
      config: { smtp_host: '127.0.0.1', smtp_port: downPort, smtp_tls: 'none', smtp_username: SMTP_USER },
    });
    const tk = await emailTicket(t, mb.id);
    const seq = await latestSeqOf(svc, t);
    const r = await reply(t, tk.id, { body_html: 'Nobody home' });
    // Between attempts the message stays pending and says nothing in delivery_error yet.
    const until = Date.now() + 10_000;
    let between = await messageRow(t, r.body.id);
    while (between.delivery_attempts === 0 && Date.now() < until) {
      await new Promise((res) => setTimeout(res, 20));
      between = await messageRow(t, r.body.id);
    }
    if (between.delivery_status === 'pending') {
      expect(between.delivery_error).toBeNull();
      expect(between.delivery_last_error).toMatch(/ECONNREFUSED/);
    }
    // Three attempts take about a second; a loaded CI machine once needed more than 20 s.
    const row = await settled(t, r.body.id, 45_000);
    expect(row.delivery_status).toBe('failed');
    expect(row.delivery_attempts).toBe(RETRIES.length + 1);
    expect(row.delivery_error).toMatch(/^gave up after 3 attempts: .*ECONNREFUSED/);
    const updated = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'message.updated');
    expect(updated).toHaveLength(1);
  });

  it('a private address is refused without MAIL_ALLOW_PRIVATE (checked at send time)', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t);
    const tk = await emailTicket(t, mb.id);
    const config = svc.rt.deps.config as { mailAllowPrivate: boolean };
    config.mailAllowPrivate = false;
    try {
      const r = await reply(t, tk.id, { body_html: 'Should not connect' });
      const row = await settled(t, r.body.id);
      expect(row.delivery_status).toBe('failed');
      expect(row.delivery_error).toMatch(/127\.0\.0\.1 .*loopback|MAIL_ALLOW_PRIVATE/);
    } finally {
      config.mailAllowPrivate = true;
    }
    expect(receivedFor(tk.contact.email)).toHaveLength(0);
  });

  it('a reply whose job was lost (the process died after COMMIT) is sent by the sweep', async () => {
    const t = await newTenant(api());
    const mb = await mailbox(t);
    const tk = await emailTicket(t, mb.id);
    const id = newId();
    // Written as createMessage writes it, but no job was ever queued.
    await db()
      .insertInto('messages')
      .values({
        workspace_id: t.workspaceId,
        id,
        ticket_id: tk.id,
        kind: 'reply',
        direction: 'outbound',
        author_type: 'user',
        author_user_id: t.owner.userId,
        author_contact_id: null,
        author_api_key_id: null,
        body_html: '<p>From before the crash</p>',
        body_text: 'From before the crash',
        original_html: null,
        original_text: null,
        delivery_error: null,
        reply_to: null,
        form_sender: null,
        to: [tk.contact.email],
        delivery_status: 'pending',
        created_at: new Date(Date.now() - 5000),
      })
      .execute();
    const row = await settled(t, id);
    expect(row.delivery_status).toBe('sent');
    const got = await waitForMail(tk.contact.email);
    expect(got).toHaveLength(1);
    expect(got[0]!.mail.text).toContain('From before the crash');
  });
});
