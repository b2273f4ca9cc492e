// Outgoing mail without SMTP_URL: nothing is reported as sent that was not sent. Every mail the
// service would send through the system mailer (replies of system mailboxes and of workspaces
// without a mailbox, auto-replies, rating requests, the portal's confirmations and sign-in links,
// invitations, notices to admins) is kept in the workspace's outbox, which its owners and admins
// read (GET /v1/mail/outbox) with working absolute links; a kept reply is failed with one plain
// sentence and can be sent again (POST /v1/messages/{id}/resend) once mail works, through the
// same job and lease, with message.updated. GET /v1/mail/status says which replies stay home.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendCsatRequest } from '../../../src/modules/csat/mail.js';
import { KEPT_IN_OUTBOX } from '../../../src/modules/email/send-errors.js';
import { ticketTokenFor } from '../../../src/modules/email/ticket-token.js';
import { formStamp } from '../../../src/modules/portal/page.js';
import { sendDisabledMail } from '../../../src/modules/webhooks/delivery.js';
import {
  keepMail,
  OUTBOX_MAX_PER_WORKSPACE,
  outboxTransport,
  pruneMailOutbox,
} from '../../../src/platform/mail/outbox.js';
import { makeTicket, uniqueEmail } from '../../support/builders.js';
import { freePort } from '../../support/child-process.js';
import {
  addMember,
  eventsAfterOf,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';
import { type MailCatcher, startMailCatcher } from '../../support/mail-catcher.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

let svc: Service;
let own: OwnDatabase;
let mail: MailCatcher;
let origin: string;
const INBOUND_SECRET = 'test-inbound-secret-0123456789';

beforeAll(async () => {
  // Its own database on PostgreSQL: the send, rating and portal queues are the database's, and
  // another file's service (with SMTP_URL set) would take this file's jobs and send them.
  const [port, catcher] = await Promise.all([freePort(), startMailCatcher()]);
  mail = catcher;
  own = await ownDatabase('mail_outbox');
  origin = `http://127.0.0.1:${port}`;
  svc = await startService(
    // No SMTP_URL: the point of this file. The links in kept mail must work: PUBLIC_URL is this service.
    { ...own.env, PORT: String(port), PUBLIC_URL: origin, MAIL_ALLOW_PRIVATE: 'true' },
    { email: { workers: 1, pollSeconds: 0.5, sweepMs: 500, orphanAfterMs: 1000, jitter: 0, retryDelaysMs: [300] } },
  );
}, 60_000);

afterAll(async () => {
  await svc?.stop();
  await own?.drop();
  await mail?.close();
});

const api = () => svc.api;
const db = () => svc.rt.deps.database.db;

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function systemMailbox(t: Tenant, extra: Record<string, unknown> = {}) {
  const r = await api().post(
    '/v1/mailboxes',
    {
      name: 'Support',
      display_name: 'Acme Support',
      email: `support-${randomUUID().slice(0, 8)}@acme.test`,
      signature_html: '<p>The Acme team</p>',
      ...extra,
    },
    t.as,
  );
  expect(r.status, r.text).toBe(201);
  expect(r.body.outbound_kind).toBe('system');
  return r.body as { id: string; email: string; forwarding_address: string };
}

/** The message once it has left pending. */
const settled = (t: Tenant, ticketId: string, id: string) =>
  waitFor(`message ${id} settled`, async () => {
    const r = await api().get(`/v1/tickets/${ticketId}/messages`, t.as);
    const m = r.body.data.find((x: any) => x.id === id);
    return m && m.delivery_status !== 'pending' ? m : null;
  });

const outboxOf = async (t: Tenant) => {
  const r = await api().get('/v1/mail/outbox?limit=100', t.as);
  expect(r.status, r.text).toBe(200);
  return r.body.data as any[];
};

/** The kept mail of this kind to this address, with its body (waits for its job). */
const keptFor = (t: Tenant, kind: string, to: string) =>
  waitFor(`a kept ${kind} to ${to}`, async () => {
    const found = (await outboxOf(t)).find((m) => m.kind === kind && m.to.some((a: string) => a.includes(to)));
    if (!found) return null;
    const one = await api().get(`/v1/mail/outbox/${found.id}`, t.as);
    expect(one.status, one.text).toBe(200);
    expect(one.headers.get('cache-control')).toBe('no-store');
    return one.body;
  });

describe('GET /v1/mail/status', () => {
  it('says mail is kept in the outbox, and whose replies stay home; every member reads it', async () => {
    const t = await newTenant(api());
    const none = await api().get('/v1/mail/status', t.as);
    expect(none.status, none.text).toBe(200);
    expect(none.body).toEqual({
      system_mailer: 'outbox',
      from: 'Help desk <no-reply@127.0.0.1>',
      outbox_mailbox_ids: [],
      default_mailbox_id: null,
    });
    const held = await systemMailbox(t);
    const own = await api().post(
      '/v1/mailboxes',
      {
        name: 'Own server',
        email: `own-${randomUUID().slice(0, 8)}@acme.test`,
        outbound_kind: 'smtp',
        config: { smtp_host: '127.0.0.1', smtp_port: 2525, smtp_tls: 'none' },
      },
      t.as,
    );
    expect(own.status, own.text).toBe(201);
    const viewer = await addMember(svc, t, 'viewer');
    const status = await api().get('/v1/mail/status', viewer.as);
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ outbox_mailbox_ids: [held.id], default_mailbox_id: held.id });
    const reader = await newApiKey(api(), t, ['tickets:read']);
    expect((await api().get('/v1/mail/status', { token: reader.key })).status).toBe(200);
    const kb = await newApiKey(api(), t, ['kb:read']);
    expect((await api().get('/v1/mail/status', { token: kb.key })).status).toBe(403);
  });
});

describe('replies without a mailer', () => {
  it('are kept in the outbox, failed with one plain sentence and message.updated, never reported sent', async () => {
    const t = await newTenant(api());
    const mb = await systemMailbox(t);
    const email = uniqueEmail('casey');
    const tk = await makeTicket(api(), t, { channel: 'email', mailbox_id: mb.id, contact: { email, name: 'Casey' } });
    const seq = await latestSeqOf(svc, t);
    const r = await api().post(
      `/v1/tickets/${tk.id}/messages`,
      { kind: 'reply', body_html: '<p>Try <a href="https://example.com/reset">the reset page</a>.</p>' },
      t.as,
    );
    expect(r.status, r.text).toBe(201);
    expect(r.body.delivery_status).toBe('pending');
    const m = await settled(t, tk.id, r.body.id);
    expect(m).toMatchObject({ delivery_status: 'failed', delivery_error: KEPT_IN_OUTBOX });
    const updated = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'message.updated');
    expect(updated.map((e) => [e.data.message.delivery_status, e.data.message.delivery_error])).toEqual([
      ['failed', KEPT_IN_OUTBOX],
    ]);

    const kept = await keptFor(t, 'reply', email);
    const token = ticketTokenFor(svc.rt.deps.config, t.workspaceId, tk.number);
    expect(kept).toMatchObject({
      kind: 'reply',
      from: `Acme Support <${mb.email}>`,
      to: [`Casey <${email}>`],
      subject: `Printer on fire [#${token}]`,
      ticket_id: tk.id,
      message_id: r.body.id,
      links: ['https://example.com/reset'],
      attachments: [],
    });
    expect(kept.text).toMatch(/Try the reset page[\s\S]*-- \nThe Acme team/);
    expect(kept.html).toContain('<a href="https://example.com/reset"');
    expect(kept.html).toContain('The Acme team');
    // The body is sealed at rest and never logged.
    const row = await db().selectFrom('mail_outbox').selectAll().where('id', '=', kept.id).executeTakeFirstOrThrow();
    expect(row.body_enc).not.toContain('reset');
    expect(svc.logs.filter((l) => l.includes('example.com/reset'))).toEqual([]);
  });

  it('of a workspace without a mailbox go through the system mailer, so they are kept too', async () => {
    const t = await newTenant(api());
    const email = uniqueEmail('nomailbox');
    const tk = await makeTicket(api(), t, { channel: 'email', contact: { email } });
    const r = await api().post(`/v1/tickets/${tk.id}/messages`, { kind: 'reply', body_html: 'Hello' }, t.as);
    expect((await settled(t, tk.id, r.body.id)).delivery_error).toBe(KEPT_IN_OUTBOX);
    const kept = await keptFor(t, 'reply', email);
    expect(kept.from).toBe('Help desk <no-reply@127.0.0.1>');
    expect(kept.to).toEqual([email]);
  });

  it('that fail for another reason say so in one plain clause (no doubled "not sent")', async () => {
    const t = await newTenant(api());
    const mb = await systemMailbox(t);
    const tk = await makeTicket(api(), t, { channel: 'email', mailbox_id: mb.id, contact: { email: uniqueEmail() } });
    expect((await api().patch(`/v1/mailboxes/${mb.id}`, { status: 'disabled' }, t.as)).status).toBe(200);
    const r = await api().post(`/v1/tickets/${tk.id}/messages`, { kind: 'reply', body_html: 'Hello' }, t.as);
    const m = await settled(t, tk.id, r.body.id);
    expect(m.delivery_status).toBe('failed');
    expect(m.delivery_error).toBe(`the mailbox ${mb.email} is disabled`);
  });
});

describe('POST /v1/messages/{id}/resend', () => {
  it('refuses while mail is not set up, then sends once it is, through the same job, live', async () => {
    const t = await newTenant(api());
    const mb = await systemMailbox(t, { signature_html: '' });
    const email = uniqueEmail('again');
    const tk = await makeTicket(api(), t, { channel: 'email', mailbox_id: mb.id, contact: { email } });
    const r = await api().post(`/v1/tickets/${tk.id}/messages`, { kind: 'reply', body_html: 'Once more' }, t.as);
    await settled(t, tk.id, r.body.id);

    // Still no mailer: it would only be kept again.
    const early = await api().post(`/v1/messages/${r.body.id}/resend`, undefined, t.as);
    expect(early.status, early.text).toBe(409);
    expect(early.body.code).toBe('conflict');
    expect(early.body.detail).toMatch(/Outgoing mail is not set up/);

    // Refused for what is not a failed reply, and for others.
    const note = await api().post(`/v1/tickets/${tk.id}/messages`, { kind: 'note', body_html: 'n' }, t.as);
    const asNote = await api().post(`/v1/messages/${note.body.id}/resend`, undefined, t.as);
    expect([asNote.status, asNote.body.code, asNote.body.errors?.[0]?.location]).toEqual([
      422,
      'validation_failed',
      'path.id',
    ]);
    const viewer = await addMember(svc, t, 'viewer');
    expect((await api().post(`/v1/messages/${r.body.id}/resend`, undefined, viewer.as)).status).toBe(403);
    const other = await newTenant(api(), 'Other Co');
    const foreign = await api().post(`/v1/messages/${r.body.id}/resend`, undefined, other.as);
    const missing = await api().post(`/v1/messages/${randomUUID()}/resend`, undefined, other.as);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);

    // Mail works now: the mailbox sends through a server of its own.
    const port = Number(new URL(mail.smtpUrl()).port);
    const patched = await api().patch(
      `/v1/mailboxes/${mb.id}`,
      { outbound_kind: 'smtp', config: { smtp_host: '127.0.0.1', smtp_port: port, smtp_tls: 'none' } },
      t.as,
    );
    expect(patched.status, patched.text).toBe(200);
    const seq = await latestSeqOf(svc, t);
    // Two at once: one is taken, the other is told it is being sent; one mail goes out.
    const [a, b] = await Promise.all([
      api().post(`/v1/messages/${r.body.id}/resend`, undefined, t.as),
      api().post(`/v1/messages/${r.body.id}/resend`, undefined, t.as),
    ]);
    expect([a.status, b.status].sort()).toEqual([202, 409]);
    const taken = a.status === 202 ? a : b;
    expect(taken.body).toMatchObject({ id: r.body.id, delivery_status: 'pending', delivery_error: null });
    const sent = await settled(t, tk.id, r.body.id);
    expect(sent).toMatchObject({ delivery_status: 'sent', delivery_error: null });
    const got = await waitFor('the mail', async () => mail.received.filter((x) => x.to.includes(email)));
    expect(got).toHaveLength(1);
    expect(got[0]!.text).toContain('Once more');
    const updated = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'message.updated');
    expect(updated.map((e) => e.data.message.delivery_status)).toEqual(['pending', 'sent']);
    // Sent: nothing to send again.
    const again = await api().post(`/v1/messages/${r.body.id}/resend`, undefined, t.as);
    expect([again.status, again.body.detail]).toEqual([409, 'This reply was sent.']);
    await new Promise((res) => setTimeout(res, 300));
    expect(mail.received.filter((x) => x.to.includes(email))).toHaveLength(1);
  });
});

describe('mail the service sends on its own', () => {
  it('is kept with absolute links that work: rating requests, confirmations, sign-in links, invitations', async () => {
    const t = await newTenant(api());
    const on = await api().patch(
      '/v1/workspace',
      { settings: { csat_enabled: true, help_center_enabled: true } },
      t.as,
    );
    expect(on.status, on.text).toBe(200);
    const slug = on.body.slug as string;

    // A rating request (a solved ticket without a mailbox: the system mailer).
    const rater = uniqueEmail('rater');
    const tk = await makeTicket(api(), t, { contact: { email: rater }, body_html: '<p>Help</p>' });
    expect((await api().patch(`/v1/tickets/${tk.id}`, { status: 'solved' }, t.as)).status).toBe(200);
    const csat = await keptFor(t, 'csat_request', rater);
    expect(csat.ticket_id).toBe(tk.id);
    const rating = csat.links.find((l: string) => l.startsWith(`${origin}/csat/`));
    expect(rating, JSON.stringify(csat.links)).toBeTruthy();
    // Kept, not sent: the job says so.
    expect(await sendCsatRequest(svc.rt.deps, { w: t.workspaceId, t: tk.id })).toBe('kept');

    // The portal: a contact form's confirmation, then a sign-in link.
    const customer = uniqueEmail('dana');
    const form = new FormData();
    for (const [k, v] of Object.entries({
      name: 'Dana',
      email: customer,
      subject: 'My invoice',
      message: 'It is wrong.',
      started: formStamp(svc.rt.deps.config, t.workspaceId, Date.now() - 5000),
    }))
      form.append(k, v);
    const posted = await fetch(`${origin}/hc/${slug}/new`, { method: 'POST', body: form, redirect: 'manual' });
    expect(posted.status).toBe(303);
    const confirmation = await keptFor(t, 'portal_confirmation', customer);
    expect(confirmation.links).toContain(`${origin}/hc/${slug}/requests`);
    const asked = await fetch(`${origin}/hc/${slug}/requests/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: customer }).toString(),
    });
    expect(asked.status).toBe(200);
    const signIn = await keptFor(t, 'portal_sign_in', customer);
    const link = signIn.links.find((l: string) => l.startsWith(`${origin}/hc/${slug}/requests/sign-in/`));
    expect(link, JSON.stringify(signIn.links)).toBeTruthy();

    // An invitation: the link of the create response.
    const invitee = uniqueEmail('invitee');
    const inv = await api().post('/v1/invitations', { email: invitee, role: 'agent' }, t.as);
    expect(inv.status, inv.text).toBe(201);
    const invitation = await keptFor(t, 'invitation', invitee);
    expect(invitation.links).toEqual([inv.body.url]);
    expect(inv.body.url.startsWith(`${origin}/invite/`)).toBe(true);

    // Keeping logged one line per mail, with no body: no token is in the log (yet: the links'
    // own requests below log their paths).
    const token = rating.slice(`${origin}/csat/`.length);
    for (const secret of [token, link.split('/').pop(), inv.body.token]) {
      expect(svc.logs.filter((l) => l.includes(secret))).toEqual([]);
    }
    expect(svc.logs.some((l) => l.includes('kept in the outbox') && l.includes(invitee))).toBe(true);

    // The links work.
    const read = await api().get(`/v1/csat/${token}`);
    expect(read.status).toBe(200);
    expect(read.body.number).toBe(tk.number);
    const opened = await fetch(link, { redirect: 'manual' });
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain('<button type="submit">Sign in</button>');
    const signedIn = await fetch(link, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
      redirect: 'manual',
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.getSetCookie().some((c) => c.startsWith('svc_portal='))).toBe(true);
    const lookup = await api().get(`/v1/invitations/lookup?token=${encodeURIComponent(inv.body.token)}`);
    expect(lookup.status).toBe(200);
  });

  it('is kept for auto-replies and for the notice of a disabled webhook', async () => {
    const t = await newTenant(api());
    const mb = await systemMailbox(t, {
      auto_reply_enabled: true,
      auto_reply_subject: 'We got your mail',
      auto_reply_html: '<p>We answer within a day.</p>',
    });
    const from = uniqueEmail('writer');
    const raw = [
      `From: Wendy <${from}>`,
      `To: ${mb.email}`,
      'Subject: Where is my order?',
      `Message-ID: <${randomUUID()}@mail.customer.test>`,
      'Date: Mon, 2 Jun 2025 10:00:00 +0000',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'It has not arrived.',
      '',
    ].join('\r\n');
    const posted = await api().req('POST', `/v1/inbound/email?to=${encodeURIComponent(mb.forwarding_address)}`, {
      raw,
      headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': INBOUND_SECRET },
    });
    expect(posted.status, posted.text).toBe(202);
    const auto = await keptFor(t, 'auto_reply', from);
    expect(auto.subject).toMatch(/^We got your mail \[#\d+-[a-z2-7]{10}\]$/);
    expect(auto.from).toBe(`Acme Support <${mb.email}>`);
    expect(auto.text).toContain('We answer within a day.');

    const admin = await addMember(svc, t, 'admin');
    const hook = await api().post(
      '/v1/webhooks',
      { url: 'https://hooks.example.invalid/x', events: ['ticket.created'], enabled: false },
      t.as,
    );
    expect(hook.status, hook.text).toBe(201);
    expect(await sendDisabledMail(svc.rt.deps, { w: t.workspaceId, e: hook.body.id })).toBe(2);
    const notices = (await outboxOf(t)).filter((m) => m.kind === 'notice');
    expect(notices.map((m) => m.to[0]).sort()).toEqual([admin.email, t.owner.email].sort());
    expect(notices[0].subject).toBe('Webhook disabled in Acme Support');
  });
});

describe('the outbox', () => {
  it('is read by owners and admins only (and keys with settings:write), page by page; others get 404', async () => {
    const t = await newTenant(api());
    const transport = await outboxTransport();
    const ids: string[] = [];
    for (const n of [1, 2, 3]) {
      ids.push(
        await keepMail(
          svc.rt.deps,
          transport,
          { from: 'x@acme.test', to: `to${n}@example.com`, subject: `Mail ${n}`, text: `Body ${n}` },
          { workspaceId: t.workspaceId, kind: 'notice' },
        ),
      );
    }
    const first = await api().get('/v1/mail/outbox?limit=2', t.as);
    expect(first.status).toBe(200);
    expect(first.body.data.map((m: any) => m.subject)).toEqual(['Mail 3', 'Mail 2']);
    const second = await api().get(`/v1/mail/outbox?limit=2&cursor=${first.body.next_cursor}`, t.as);
    expect(second.body).toEqual({ data: [expect.objectContaining({ subject: 'Mail 1' })], next_cursor: null });
    expect((await api().get('/v1/mail/outbox?cursor=nonsense', t.as)).status).toBe(422);
    const one = await api().get(`/v1/mail/outbox/${ids[0]}`, t.as);
    expect(one.body).toMatchObject({ text: 'Body 1', html: null, links: [], to: ['to1@example.com'] });

    const admin = await addMember(svc, t, 'admin');
    expect((await api().get(`/v1/mail/outbox/${ids[0]}`, admin.as)).status).toBe(200);
    for (const role of ['agent', 'viewer'] as const) {
      const m = await addMember(svc, t, role);
      expect((await api().get('/v1/mail/outbox', m.as)).status).toBe(403);
      expect((await api().get(`/v1/mail/outbox/${ids[0]}`, m.as)).status).toBe(403);
    }
    const reader = await newApiKey(api(), t, ['settings:read']);
    expect((await api().get('/v1/mail/outbox', { token: reader.key })).status).toBe(403);
    const writer = await newApiKey(api(), t, ['settings:write']);
    expect((await api().get('/v1/mail/outbox', { token: writer.key })).body.data).toHaveLength(3);

    const other = await newTenant(api(), 'Other Co');
    expect((await api().get('/v1/mail/outbox', other.as)).body.data).toEqual([]);
    const foreign = await api().get(`/v1/mail/outbox/${ids[0]}`, other.as);
    const missing = await api().get(`/v1/mail/outbox/${randomUUID()}`, other.as);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
  });

  it(`keeps at most ${OUTBOX_MAX_PER_WORKSPACE} mails per workspace, and none older than 30 days`, async () => {
    const t = await newTenant(api());
    const other = await newTenant(api(), 'Other Co');
    const body = svc.rt.deps.secrets.seal('{}', 'x');
    // A full outbox (the oldest a day old), and another workspace's old mail.
    await sql`
      INSERT INTO mail_outbox (workspace_id, id, kind, from_address, to_addresses, subject, body_enc, created_at)
      SELECT ${t.workspaceId}, gen_random_uuid(), 'notice', 'x@acme.test', ARRAY['a@example.com'], 'Old ' || n, ${body},
             now() - interval '1 day' + n * interval '1 second'
        FROM generate_series(1, ${OUTBOX_MAX_PER_WORKSPACE}) AS n`.execute(db());
    await sql`
      INSERT INTO mail_outbox (workspace_id, id, kind, from_address, to_addresses, subject, body_enc, created_at)
      VALUES (${other.workspaceId}, gen_random_uuid(), 'notice', 'x@acme.test', ARRAY['a@example.com'], 'Ancient',
              ${body}, now() - interval '31 days')`.execute(db());
    const count = async (ws: string) =>
      Number(
        (
          await db()
            .selectFrom('mail_outbox')
            .select(sql<number>`count(*)::int`.as('n'))
            .where('workspace_id', '=', ws)
            .executeTakeFirstOrThrow()
        ).n,
      );
    await keepMail(
      svc.rt.deps,
      await outboxTransport(),
      { from: 'x@acme.test', to: 'new@example.com', subject: 'Newest', text: 'n' },
      { workspaceId: t.workspaceId, kind: 'notice' },
    );
    expect(await count(t.workspaceId)).toBe(OUTBOX_MAX_PER_WORKSPACE);
    const subjects = (
      await db().selectFrom('mail_outbox').select('subject').where('workspace_id', '=', t.workspaceId).execute()
    ).map((r) => r.subject);
    expect(subjects).toContain('Newest');
    expect(subjects).not.toContain('Old 1');
    expect(subjects).toContain('Old 2');
    expect(await count(other.workspaceId)).toBe(1);
    expect(await pruneMailOutbox(svc.rt.deps.database)).toBeGreaterThanOrEqual(1);
    expect(await count(other.workspaceId)).toBe(0);
    expect(await count(t.workspaceId)).toBe(OUTBOX_MAX_PER_WORKSPACE);
  });
});
