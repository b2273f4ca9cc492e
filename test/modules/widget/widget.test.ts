// The chat widget's HTTP routes (docs/widget.md) as a website's visitor and the workspace's
// admins use them: config by widget_key, sessions (new, resumed, email and name, verified
// identities), conversations and their public messages, uploads, handoff, the settings with
// allowed_origins and CORS, the per-visitor limits, and install_widget in onboarding; typed emails
// stay unverified claims that real mail never joins, new visitors are bounded per address and
// make no contact until they write, and article suggestions pass a relevance bar.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { processInbound } from '../../../src/modules/email/inbound.js';
import { type Api, addMember, isErrorBody, type Service } from '../../support/helpers.js';
import { as, hmac, SITE, type Site, widgetSuite } from './setup.js';

const suite = widgetSuite();
const { site, session, converse, settings, rotateSecret } = suite;
let svc: Service;
let api: Api;
beforeAll(() => {
  ({ svc, api } = suite);
});

describe('config', () => {
  it('answers the widget look and rules by widget_key; unknown or turned-off keys are 404', async () => {
    const s = await site('Config Co');
    const r = await api.get(`/v1/widget/config?key=${s.key}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      workspace_name: 'Config Co',
      brand_color: '#2563eb',
      greeting: '',
      help_center_url: null,
      require_email: false,
    });
    await settings(s, { greeting: 'Hi! How can we help?', require_email: true });
    await api.patch('/v1/workspace', { settings: { help_center_enabled: true } }, s.t.as);
    const again = await api.get(`/v1/widget/config?key=${s.key}`);
    expect(again.body).toMatchObject({ greeting: 'Hi! How can we help?', require_email: true });
    expect(again.body.help_center_url).toMatch(/\/hc\/config-co/);

    const unknown = await api.get('/v1/widget/config?key=wk_nope');
    expect(unknown.status).toBe(404);
    expect(isErrorBody(unknown.body, 404, 'not_found')).toBe(true);
    expect((await api.get('/v1/widget/config')).status).toBe(422);

    expect((await settings(s, { enabled: false })).status).toBe(200);
    expect((await api.get(`/v1/widget/config?key=${s.key}`)).status).toBe(404);
    expect((await api.post('/v1/widget/session', { key: s.key })).status).toBe(404);
  });
});

describe('settings', () => {
  it('are read and changed by admins (and keys with settings scopes), not by agents', async () => {
    const s = await site();
    expect((await api.get('/v1/widget/settings', s.t.as)).body).toEqual({
      greeting: '',
      require_email: false,
      enabled: true,
      allowed_origins: [],
    });
    const r = await settings(s, { allowed_origins: ['https://Shop.Example.com', 'https://shop.example.com:443'] });
    expect(r.status, r.text).toBe(200);
    expect(r.body.allowed_origins).toEqual([SITE]);
    const agent = await addMember(svc, s.t, 'agent');
    expect((await api.get('/v1/widget/settings', agent.as)).status).toBe(403);
    expect((await api.patch('/v1/widget/settings', { greeting: 'x' }, agent.as)).status).toBe(403);
    const bad = await settings(s, { allowed_origins: ['shop.example.com/path'] });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].location).toMatch(/^body\.allowed_origins/);
  });
});

describe('allowed origins', () => {
  it('refuses a browser on an unlisted origin with 403 and no CORS headers; listed origins get them', async () => {
    const s = await site();
    // Empty list: every origin, with CORS headers naming it.
    const any = await api.get(`/v1/widget/config?key=${s.key}`, { headers: { origin: 'https://anywhere.example' } });
    expect(any.status).toBe(200);
    expect(any.headers.get('access-control-allow-origin')).toBe('https://anywhere.example');

    await settings(s, { allowed_origins: [SITE] });
    const listed = await api.get(`/v1/widget/config?key=${s.key}`, { headers: { origin: SITE } });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBe(SITE);

    const evil = { origin: 'https://evil.example' };
    const refused = await api.get(`/v1/widget/config?key=${s.key}`, { headers: evil });
    expect(refused.status).toBe(403);
    expect(isErrorBody(refused.body, 403, 'forbidden')).toBe(true);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const noSession = await api.post('/v1/widget/session', { key: s.key }, { headers: evil });
    expect(noSession.status).toBe(403);
    expect(noSession.headers.get('access-control-allow-origin')).toBeNull();

    // The visitor routes too, with a visitor that is otherwise fine.
    const v = await session(s.key, {}, { origin: SITE });
    const list = await api.get('/v1/widget/conversations', as(v.visitor_token, evil));
    expect(list.status).toBe(403);
    expect(list.headers.get('access-control-allow-origin')).toBeNull();
    const post = await api.post('/v1/widget/conversations', { body: 'hi' }, as(v.visitor_token, evil));
    expect(post.status).toBe(403);
    const ok = await api.get('/v1/widget/conversations', as(v.visitor_token, { origin: SITE }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(SITE);
    // A server (no Origin) is not a browser's cross-origin request.
    expect((await api.get('/v1/widget/conversations', as(v.visitor_token))).status).toBe(200);

    // The browser's preflight: with ?key= the list decides; the answer grants the headers the widget sends.
    const pre = await fetch(`${svc.url}/v1/widget/session?key=${s.key}`, {
      method: 'OPTIONS',
      headers: {
        origin: SITE,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe(SITE);
    expect(pre.headers.get('access-control-allow-headers')).toContain('authorization');
    const preEvil = await fetch(`${svc.url}/v1/widget/session?key=${s.key}`, {
      method: 'OPTIONS',
      headers: { ...evil, 'access-control-request-method': 'POST' },
    });
    expect(preEvil.status).toBe(403);
    expect(preEvil.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('sessions', () => {
  it('start a visitor (svc_vis_ token, contact, widget_ws token) and resume it with its token', async () => {
    const s = await site();
    const v = await session(s.key, { name: 'Vic Visitor' });
    expect(v.visitor_token).toMatch(/^svc_vis_[A-Za-z0-9_-]{43}$/);
    expect(v.contact).toEqual({ id: expect.any(String), email: null, name: 'Vic Visitor', avatar_url: null });
    expect(v.gateway_url).toMatch(/^ws:\/\/.+\/socket\/widget\/websocket$/);
    const claims = JSON.parse(Buffer.from(v.ws_token.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ purpose: 'widget_ws', sub: v.contact.id, wid: s.t.workspaceId });
    expect(claims.exp - claims.iat).toBe(300);
    // Only a hash is stored, and the session alone made no contact: contact.id is the one to be.
    const rows = await svc.rt.deps.database.db
      .selectFrom('widget_visitors')
      .selectAll()
      .where('pending_contact_id', '=', v.contact.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.id).toBe(claims.vid);
    expect(JSON.stringify(rows)).not.toContain(v.visitor_token);
    expect((await api.get(`/v1/contacts/${v.contact.id}`, s.t.as)).status).toBe(404);

    // Giving an email makes the contact, with the same id; the address is a claim (unverified).
    const resumed = await session(s.key, { visitor_token: v.visitor_token, email: 'vic@example.com' });
    expect(resumed.visitor_token).toBe(v.visitor_token);
    expect(resumed.contact).toMatchObject({ id: v.contact.id, email: 'vic@example.com', name: 'Vic Visitor' });
    const c = await api.get(`/v1/contacts/${v.contact.id}`, s.t.as);
    expect(c.body).toMatchObject({ email: null, unverified_email: 'vic@example.com', name: 'Vic Visitor' });
  });

  it('refuse a token of another workspace, a revoked one, and other credentials (401)', async () => {
    const a = await site();
    const b = await site();
    const va = await session(a.key);
    const other = await api.post('/v1/widget/session', { key: b.key, visitor_token: va.visitor_token });
    expect(other.status).toBe(401);
    expect(isErrorBody(other.body, 401, 'unauthorized')).toBe(true);
    // A visitor token never opens agent routes, and agent credentials never open visitor routes.
    expect((await api.get('/v1/tickets', as(va.visitor_token))).status).toBe(401);
    expect((await api.get('/v1/widget/conversations', a.t.as)).status).toBe(401);
    expect((await api.get('/v1/widget/conversations', as('svc_vis_forged'))).status).toBe(401);

    const conv = await converse(va.visitor_token);
    expect((await api.delete('/v1/widget/session', as(va.visitor_token))).status).toBe(204);
    expect((await api.get('/v1/widget/conversations', as(va.visitor_token))).status).toBe(401);
    expect((await api.get(`/v1/widget/conversations/${conv.id}/messages`, as(va.visitor_token))).status).toBe(401);
    expect((await api.post('/v1/widget/session', { key: a.key, visitor_token: va.visitor_token })).status).toBe(401);
  });

  it('keeps an email that another contact holds away from that contact: a typed email proves nothing', async () => {
    const s = await site();
    const victim = await api.post('/v1/contacts', { email: 'ceo@example.com', name: 'The CEO' }, s.t.as);
    const v = await session(s.key, { email: 'ceo@example.com' });
    expect(v.contact.id).not.toBe(victim.body.id);
    // The visitor's own contact holds it as a claim; the real one is untouched.
    expect(v.contact.email).toBe('ceo@example.com');
    expect((await api.get(`/v1/contacts/${v.contact.id}`, s.t.as)).body).toMatchObject({
      email: null,
      unverified_email: 'ceo@example.com',
    });
    expect((await api.get(`/v1/contacts/${victim.body.id}`, s.t.as)).body).toMatchObject({
      email: 'ceo@example.com',
      unverified_email: null,
      ticket_count: 0,
    });
    // Its messages still carry the address for the agents.
    const conv = await converse(v.visitor_token);
    const msgs = await api.get(`/v1/tickets/${conv.id}/messages`, s.t.as);
    expect(msgs.body.data[0].from_email).toBe('ceo@example.com');
  });

  it('verifies identities: the right user_hash is one contact on every device; a wrong one is 401 and creates nothing', async () => {
    const s = await site();
    const secret = await rotateSecret(s);
    const laptop = await session(s.key, { user_id: 'user-42', user_hash: hmac(secret, 'user-42'), name: 'Ada' });
    const phone = await session(s.key, { user_id: 'user-42', user_hash: hmac(secret, 'user-42').toUpperCase() });
    expect(phone.contact.id).toBe(laptop.contact.id);
    expect(phone.visitor_token).not.toBe(laptop.visitor_token);
    const contact = await api.get(`/v1/contacts/${laptop.contact.id}`, s.t.as);
    expect(contact.body).toMatchObject({ external_id: 'user-42', name: 'Ada' });
    // A conversation started on the laptop is on the phone too.
    const conv = await converse(laptop.visitor_token);
    const onPhone = await api.get('/v1/widget/conversations', as(phone.visitor_token));
    expect(onPhone.body.data.map((c: { id: string }) => c.id)).toEqual([conv.id]);

    const count = async () =>
      Number(
        (
          await svc.rt.deps.database.db
            .selectFrom('contacts')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('workspace_id', '=', s.t.workspaceId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    for (const body of [
      { user_id: 'user-43', user_hash: hmac(secret, 'user-42') },
      { user_id: 'user-42', user_hash: hmac('another secret', 'user-42') },
    ]) {
      const r = await api.post('/v1/widget/session', { key: s.key, ...body });
      expect(r.status, JSON.stringify(body)).toBe(401);
    }
    expect(await count()).toBe(before);
    expect((await api.post('/v1/widget/session', { key: s.key, user_id: 'user-42' })).status).toBe(422);
    expect((await api.post('/v1/widget/session', { key: s.key, user_id: 'x', user_hash: 'zz' })).status).toBe(422);
  });
});

describe('email claims', () => {
  const INBOUND_SECRET = 'test-inbound-secret-0123456789';

  /** Real mail from `from` to the workspace's mailbox, turned into a ticket: the ticket as agents see it. */
  async function mailFrom(s: Site, mailbox: { forwarding_address: string }, from: string, subject: string) {
    const raw = [
      `From: ${from}`,
      'To: support@acme.test',
      `Subject: ${subject}`,
      `Message-ID: <${randomUUID()}@mail.example>`,
      'Date: Tue, 9 Jan 2024 10:00:00 +0000',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Hello, it is really me.',
    ].join('\r\n');
    const r = await api.req('POST', `/v1/inbound/email?to=${encodeURIComponent(mailbox.forwarding_address)}`, {
      raw,
      headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': INBOUND_SECRET },
    });
    expect(r.status, r.text).toBe(202);
    // This service runs no jobs: the mail is processed here (or by another service's worker).
    await processInbound(svc.rt.deps, r.body.id);
    const spooled = () =>
      svc.rt.deps.database.db
        .selectFrom('inbound_emails')
        .select(['status', 'ticket_id'])
        .where('id', '=', r.body.id)
        .executeTakeFirstOrThrow();
    await expect.poll(async () => (await spooled()).status, { timeout: 10_000 }).toBe('processed');
    const row = await spooled();
    return (await api.get(`/v1/tickets/${row.ticket_id}`, s.t.as)).body;
  }

  it('never join a visitor to the real mail of an address they typed: the claim stays unverified', async () => {
    const s = await site();
    const mailbox = await api.post('/v1/mailboxes', { name: 'Support', email: 'support@acme.test' }, s.t.as);
    expect(mailbox.status, mailbox.text).toBe(201);
    // The attacker: no user_hash, the victim's address.
    const attacker = await session(s.key, { email: 'victim@example.com', name: 'Victim' });
    const chat = await converse(attacker.visitor_token, 'Please update my bank details');
    const claimed = (await api.get(`/v1/contacts/${attacker.contact.id}`, s.t.as)).body;
    expect(claimed).toMatchObject({ email: null, unverified_email: 'victim@example.com' });

    // The real person writes from that address: their mail is theirs, not the visitor's.
    const mail = await mailFrom(s, mailbox.body, 'Victim <victim@example.com>', 'My order');
    const mailContact = mail.contact_id ?? mail.contact?.id;
    expect(mailContact).not.toBe(attacker.contact.id);
    expect((await api.get(`/v1/contacts/${mailContact}`, s.t.as)).body).toMatchObject({
      email: 'victim@example.com',
      unverified_email: null,
    });
    const ticketsOf = async (id: string) =>
      ((await api.get(`/v1/contacts/${id}/tickets`, s.t.as)).body.data as Array<{ id: string }>).map((t) => t.id);
    expect(await ticketsOf(attacker.contact.id)).toEqual([chat.id]);
    expect(await ticketsOf(mailContact)).toEqual([mail.id]);
    // Still unverified where agents see the visitor.
    expect((await api.get(`/v1/contacts/${attacker.contact.id}`, s.t.as)).body).toMatchObject({
      email: null,
      unverified_email: 'victim@example.com',
    });

    // A verified identity makes an address the contact's own only when the hash covers it.
    const secret = await rotateSecret(s);
    const signedIn = await session(s.key, {
      user_id: 'user-7',
      user_hash: hmac(secret, 'user-7'),
      email: 'ann@example.com',
    });
    expect((await api.get(`/v1/contacts/${signedIn.contact.id}`, s.t.as)).body).toMatchObject({
      email: null,
      unverified_email: 'ann@example.com',
    });
    const proven = await session(s.key, {
      user_id: 'Bob@Example.com',
      user_hash: hmac(secret, 'Bob@Example.com'),
      email: 'bob@example.com',
    });
    expect((await api.get(`/v1/contacts/${proven.contact.id}`, s.t.as)).body).toMatchObject({
      email: 'bob@example.com',
      unverified_email: null,
    });
    const bobMail = await mailFrom(s, mailbox.body, 'bob@example.com', 'From Bob');
    expect(bobMail.contact_id ?? bobMail.contact?.id).toBe(proven.contact.id);

    // An agent who gives the contact the claimed address vouches for it.
    const vouched = await api.patch(`/v1/contacts/${signedIn.contact.id}`, { email: 'Ann@example.com' }, s.t.as);
    expect(vouched.status, vouched.text).toBe(200);
    expect(vouched.body).toMatchObject({ email: 'Ann@example.com', unverified_email: null });
  });
});
