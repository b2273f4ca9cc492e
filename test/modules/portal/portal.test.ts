// The portal (/hc/{workspace_slug}/new and /requests): the contact form opens a portal ticket
// with the customer's first message and mails a confirmation with the ticket's number and reply
// token; a honeypot, a minimum fill time, per-address limits and the human check (a stand-in
// siteverify server) keep robots out, and bad input stores nothing. The customer area: a sign-in
// link mailed only to contacts (the same page for every address), single use and 15 minutes; a
// session cookie of its own; the customer's own tickets, public messages only; a reply that
// reopens a solved ticket or follows a closed one; CSRF on every post; sign-out.
import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ticketTokenFor } from '../../../src/modules/email/ticket-token.js';
import { formStamp } from '../../../src/modules/portal/page.js';
import { makeContact, makeMessage, uniqueEmail } from '../../support/builders.js';
import { newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';
import { type CaughtMail, type MailCatcher, startMailCatcher } from '../../support/mail-catcher.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

type Received = CaughtMail;

let svc: Service;
let db: OwnDatabase;
let mail: MailCatcher;
let received: Received[] = [];
const ORIGIN = 'https://help.acme.test';

beforeAll(async () => {
  mail = await startMailCatcher();
  received = mail.received;
  // Its own database on PostgreSQL: the mail queue is the database's.
  db = await ownDatabase('portal');
  svc = await startService({
    ...db.env,
    SMTP_URL: mail.smtpUrl('Acme Help <help@acme.test>'),
    PUBLIC_URL: ORIGIN,
    // The per-address limits are tested with X-Forwarded-For.
    TRUST_PROXY: 'true',
  });
});

afterAll(async () => {
  await svc?.stop();
  await db?.drop();
  await mail?.close();
});

/** A tenant on a service with CHALLENGE set: its owner passed the human check. */
async function humanTenant(s: Service): Promise<Tenant> {
  const email = uniqueEmail('owner');
  const reg = await s.api.post('/v1/auth/register', {
    email,
    password: 'correct horse battery',
    name: 'Olivia Owner',
    challenge_token: 'good-token',
  });
  expect(reg.status).toBe(201);
  const token = reg.body.access_token as string;
  const w = await s.api.post('/v1/workspaces', { name: 'Acme Support' }, { token });
  expect(w.status).toBe(201);
  const owner = { token, userId: reg.body.user.id, email, password: 'correct horse battery' };
  return { owner, workspaceId: w.body.id, as: { token, workspace: w.body.id } };
}

interface Center {
  t: Tenant;
  slug: string;
  base: string;
  svc: Service;
}

async function newCenter(on = true, s: Service = svc): Promise<Center> {
  const t = s === svc ? await newTenant(s.api) : await humanTenant(s);
  const r = await s.api.patch('/v1/workspace', { settings: { help_center_enabled: on } }, t.as);
  expect(r.status).toBe(200);
  return { t, slug: r.body.slug, base: `/hc/${r.body.slug}`, svc: s };
}

interface Page {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

const asPage = async (r: Response): Promise<Page> => ({
  status: r.status,
  headers: r.headers,
  text: await r.text(),
  location: r.headers.get('location'),
});

const get = (c: Center, path: string, cookie?: string) =>
  fetch(c.svc.url + path, { redirect: 'manual', headers: cookie ? { cookie } : {} }).then(asPage);

/** A urlencoded form post. */
const postForm = (c: Center, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(c.svc.url + path, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  }).then(asPage);

interface FileSpec {
  name: string;
  data: Uint8Array | string;
  type?: string;
}

/** A multipart form post (as a browser sends a form with a file input). */
function postMultipart(
  c: Center,
  path: string,
  fields: Record<string, string>,
  files: FileSpec[] = [],
  headers: Record<string, string> = {},
) {
  const fd = new FormData();
  for (const [k, v] of Object.entries(fields)) fd.append(k, v);
  for (const f of files)
    fd.append('attachments', new Blob([f.data], { type: f.type ?? 'application/octet-stream' }), f.name);
  return fetch(c.svc.url + path, { method: 'POST', redirect: 'manual', headers, body: fd }).then(asPage);
}

/** A filled contact form, with a `started` stamp old enough (a person took a few seconds). */
const contactFields = (c: Center, o: Record<string, string> = {}) => ({
  name: 'Dana Customer',
  email: uniqueEmail('dana'),
  subject: 'My invoice is wrong',
  message: 'Hello,\n\nthe invoice of March <b>doubles</b> the seats.',
  started: formStamp(c.svc.rt.deps.config, c.t.workspaceId, Date.now() - 5000),
  ...o,
});

const ticketsOf = async (c: Center) => (await c.svc.api.get('/v1/tickets', c.t.as)).body.data as any[];
const messagesOf = async (c: Center, id: string) =>
  (await c.svc.api.get(`/v1/tickets/${id}/messages`, c.t.as)).body.data as any[];

/** Rows a failed form must not have left: tickets, contacts, attachments of the workspace. */
async function storedRows(c: Center) {
  const d = c.svc.rt.deps.database.db;
  const count = async (table: 'tickets' | 'contacts' | 'attachments') =>
    Number(
      (
        await d
          .selectFrom(table)
          .select(sql<number>`count(*)::int`.as('n'))
          .where('workspace_id', '=', c.t.workspaceId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    tickets: await count('tickets'),
    contacts: await count('contacts'),
    attachments: await count('attachments'),
  };
}
const NOTHING = { tickets: 0, contacts: 0, attachments: 0 };

async function mailTo(email: string, match: RegExp = /./): Promise<Received> {
  let mail: Received | undefined;
  const to = email.toLowerCase();
  await expect
    .poll(() => (mail = received.find((m) => m.to.some((a) => a.toLowerCase() === to) && match.test(m.subject))), {
      timeout: 10_000,
    })
    .toBeTruthy();
  return mail!;
}

const inputOf = (html: string, name: string) =>
  new RegExp(`<input[^>]*name="${name}"[^>]*value="([^"]*)"`).exec(html)?.[1] ??
  new RegExp(`<input[^>]*value="([^"]*)"[^>]*name="${name}"`).exec(html)?.[1];

// --- The contact form ------------------------------------------------------------------------

describe('the contact form', () => {
  it('shows Name, Email, Subject, Message, a file input and Send; 404 while the help center is off', async () => {
    const c = await newCenter();
    const r = await get(c, `${c.base}/new`);
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.headers.get('content-security-policy')).toContain("script-src 'none'");
    for (const [id, label] of [
      ['name', 'Name'],
      ['email', 'Email'],
      ['subject', 'Subject'],
      ['message', 'Message'],
    ]) {
      expect(r.text).toContain(`<label for="${id}">${label}</label>`);
    }
    expect(r.text).toMatch(/<form[^>]*enctype="multipart\/form-data"/);
    expect(r.text).toContain('type="file"');
    expect(r.text).toContain('<button type="submit">Send</button>');
    // The honeypot is hidden from people and from screen readers.
    expect(r.text).toMatch(/<div class="hp" aria-hidden="true">[\s\S]*name="website"[^>]*tabindex="-1"/);
    // Every help center page links to the form and the customer area.
    const home = await get(c, c.base);
    expect(home.text).toContain(`href="${c.base}/new"`);
    expect(home.text).toContain(`href="${c.base}/requests"`);

    const off = await newCenter(false);
    expect((await get(off, `${off.base}/new`)).status).toBe(404);
    expect((await postMultipart(off, `${off.base}/new`, contactFields(off))).status).toBe(404);
    expect(await storedRows(off)).toEqual(NOTHING);
  });

  it('opens a portal ticket with the customer as contact and first message, and mails the number and token', async () => {
    const c = await newCenter();
    // An existing contact is found by email, whatever its case.
    const existing = await makeContact(c.svc.api, c.t, { email: 'Known.Customer@Example.com', name: 'Known' });
    const fields = contactFields(c, { email: 'known.customer@example.COM' });
    const r = await postMultipart(c, `${c.base}/new`, fields, [
      { name: 'screenshot.txt', data: 'the invoice says 20 seats', type: 'text/plain' },
    ]);
    expect(r.status, r.text).toBe(303);
    expect(r.location).toBe(`${c.base}/new/sent`);
    const sent = await get(c, r.location!);
    expect(sent.status).toBe(200);
    expect(sent.text).toContain('we received your request');

    const [ticket] = await ticketsOf(c);
    expect(ticket).toMatchObject({ channel: 'portal', subject: 'My invoice is wrong', status: 'open' });
    expect(ticket.contact.id).toBe(existing.id);
    const [m] = await messagesOf(c, ticket.id);
    expect(m).toMatchObject({ kind: 'reply', direction: 'inbound', from_email: 'Known.Customer@Example.com' });
    expect(m.author.type).toBe('contact');
    expect(m.author.contact.id).toBe(existing.id);
    expect(m.body_text).toBe(fields.message);
    // Markup typed into the form is text, never HTML.
    expect(m.body_html).toContain('&lt;b&gt;doubles&lt;/b&gt;');
    expect(m.attachments.map((a: any) => [a.filename, a.size_bytes])).toEqual([['screenshot.txt', 25]]);
    expect((await storedRows(c)).contacts).toBe(1);

    const mail = await mailTo('Known.Customer@Example.com', /received/);
    const token = ticketTokenFor(c.svc.rt.deps.config, c.t.workspaceId, ticket.number);
    expect(mail.subject).toContain(`#${ticket.number}`);
    expect(mail.subject).toContain(`[#${token}]`);
    expect(mail.text).toContain(`${ORIGIN}${c.base}/requests`);
  });

  it('a filled honeypot gets the usual answer and nothing is stored', async () => {
    const c = await newCenter();
    const fields = contactFields(c, { website: 'https://spam.example' });
    const r = await postMultipart(c, `${c.base}/new`, fields);
    expect(r.status).toBe(303);
    expect(r.location).toBe(`${c.base}/new/sent`);
    expect(await storedRows(c)).toEqual(NOTHING);
    await new Promise((res) => setTimeout(res, 500));
    expect(received.filter((m) => m.to.includes(fields.email))).toEqual([]);
  });

  it('a form sent within two seconds of being shown is asked again, nothing stored', async () => {
    const c = await newCenter();
    const shown = await get(c, `${c.base}/new`);
    const started = inputOf(shown.text, 'started')!;
    expect(started).toMatch(/^\d{13}\./);
    const r = await postMultipart(c, `${c.base}/new`, contactFields(c, { started }));
    expect(r.status).toBe(422);
    expect(r.text).toContain('press Send again');
    expect(r.text).toContain('value="My invoice is wrong"');
    const forged = await postMultipart(c, `${c.base}/new`, contactFields(c, { started: `${Date.now() - 9000}.xxxx` }));
    expect(forged.status).toBe(422);
    expect(await storedRows(c)).toEqual(NOTHING);
  });

  it('bad input shows the form again with the values kept and the errors announced; nothing stored', async () => {
    const c = await newCenter();
    const cases: Array<[Record<string, string>, string, string]> = [
      [{ email: '' }, 'email', 'Enter your email address.'],
      [{ email: 'not-an-address' }, 'email', 'Enter an email address like name@example.com.'],
      [{ message: '   ' }, 'message', 'Enter your message.'],
      [{ subject: '' }, 'subject', 'Enter a subject.'],
    ];
    for (const [change, field, error] of cases) {
      const r = await postMultipart(c, `${c.base}/new`, contactFields(c, change));
      expect(r.status, field).toBe(422);
      expect(r.headers.get('content-type')).toContain('text/html');
      expect(r.text).toContain('role="alert"');
      expect(r.text).toContain(`<p class="field-error" id="${field}-error">${error}</p>`);
      expect(r.text).toMatch(new RegExp(`id="${field}"[^>]*aria-invalid="true"[^>]*aria-describedby="${field}-error"`));
      // What was typed is kept.
      expect(r.text).toContain('Dana Customer');
    }
    // Urlencoded posts are read too.
    const plain = await postForm(c, `${c.base}/new`, contactFields(c, { email: '' }));
    expect(plain.status).toBe(422);
    // A JSON body is no form: a 400 page, not a JSON error.
    const json = await fetch(`${c.svc.url}${c.base}/new`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...contactFields(c), email: { $ne: null } }),
    });
    expect(json.status).toBe(400);
    expect(json.headers.get('content-type')).toContain('text/html');
    // A body that is not valid multipart: the same.
    const broken = await fetch(`${c.svc.url}${c.base}/new`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="email"\r\n\r\nbroken',
    });
    expect(broken.status).toBe(400);
    expect(broken.headers.get('content-type')).toContain('text/html');
    expect(await storedRows(c)).toEqual(NOTHING);
  });

  it('a 30 MB attachment is refused with a clear error; no ticket, contact, attachment or spool file', async () => {
    const c = await newCenter();
    const fields = contactFields(c);
    const r = await postMultipart(c, `${c.base}/new`, fields, [
      { name: 'huge.bin', data: new Uint8Array(30 * 1024 * 1024) },
    ]);
    expect(r.status).toBe(413);
    expect(r.text).toContain('huge.bin: larger than 25 MB');
    expect(r.text).toContain(fields.email);
    expect(await storedRows(c)).toEqual(NOTHING);
    const spool = join(c.svc.rt.deps.config.dataDir, 'tmp', 'uploads');
    expect(readdirSync(spool)).toEqual([]);
  });

  it('takes 5 forms an hour per client address and per email address', async () => {
    const c = await newCenter();
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    for (let i = 0; i < 5; i++) {
      const r = await postMultipart(c, `${c.base}/new`, contactFields(c), [], from('203.0.113.7'));
      expect(r.status, `form ${i + 1}`).toBe(303);
    }
    const sixth = await postMultipart(c, `${c.base}/new`, contactFields(c), [], from('203.0.113.7'));
    expect(sixth.status).toBe(429);
    expect(sixth.text).toContain('several requests in the last hour');
    expect(sixth.text).toContain('role="alert"');
    expect((await storedRows(c)).tickets).toBe(5);

    const email = uniqueEmail('busy');
    for (let i = 0; i < 5; i++) {
      const r = await postMultipart(c, `${c.base}/new`, contactFields(c, { email }), [], from(`198.51.100.${i + 1}`));
      expect(r.status).toBe(303);
    }
    const again = await postMultipart(c, `${c.base}/new`, contactFields(c, { email }), [], from('198.51.100.99'));
    expect(again.status).toBe(429);
    expect((await storedRows(c)).tickets).toBe(10);
  });
});

// --- The human check -------------------------------------------------------------------------

/** A loopback stand-in for the provider's siteverify endpoint. */
async function siteverify(secret: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      const ok = form.secret === secret && form.response === 'good-token';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ok ? { success: true } : { success: false, 'error-codes': ['invalid-input-response'] }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/siteverify`, server };
}

describe('the contact form with CHALLENGE', () => {
  let verify: { url: string; server: Server };
  let guarded: Service;
  beforeAll(async () => {
    verify = await siteverify('turnstile-secret');
    guarded = await startService(
      {
        ...db.env,
        PUBLIC_URL: ORIGIN,
        CHALLENGE: 'turnstile',
        CHALLENGE_SECRET: 'turnstile-secret',
        CHALLENGE_SITE_KEY: '1x00000000000000000000AA',
        CHALLENGE_VERIFY_URL: verify.url,
      },
      { jobs: false },
    );
  });
  afterAll(async () => {
    await guarded?.stop();
    await new Promise<void>((r) => verify.server.close(() => r()));
  });

  it('an operator who sets CHALLENGE without CHALLENGE_SITE_KEY is told at start; with it, nothing is said', async () => {
    const warned = (s: Service) => s.logs.some((l) => l.includes('CHALLENGE_SITE_KEY is not'));
    expect(warned(guarded)).toBe(false);
    const keyless = await startService(
      { ...db.env, PUBLIC_URL: ORIGIN, CHALLENGE: 'turnstile', CHALLENGE_SECRET: 'turnstile-secret' },
      { jobs: false },
    );
    try {
      expect(warned(keyless)).toBe(true);
    } finally {
      await keyless.stop();
    }
  });

  it('carries the widget, and stores nothing unless the check passes', async () => {
    const c = await newCenter(true, guarded);
    const form = await get(c, `${c.base}/new`);
    expect(form.text).toContain('<div class="cf-turnstile" data-sitekey="1x00000000000000000000AA"></div>');
    expect(form.headers.get('content-security-policy')).toContain('script-src https://challenges.cloudflare.com');
    expect(form.headers.get('content-security-policy')).toContain('frame-src https://challenges.cloudflare.com');

    const missing = await postMultipart(c, `${c.base}/new`, contactFields(c));
    expect(missing.status).toBe(422);
    expect(missing.text).toContain('The human check did not pass');
    expect(missing.text).toContain('My invoice is wrong');
    const bad = await postMultipart(c, `${c.base}/new`, contactFields(c, { 'cf-turnstile-response': 'bad-token' }));
    expect(bad.status).toBe(422);
    expect(await storedRows(c)).toEqual(NOTHING);

    const good = await postMultipart(c, `${c.base}/new`, contactFields(c, { 'cf-turnstile-response': 'good-token' }));
    expect(good.status).toBe(303);
    expect((await storedRows(c)).tickets).toBe(1);
  });
});

// --- The customer area -----------------------------------------------------------------------

/** The session cookie's value from a Set-Cookie header. */
const sessionCookie = (p: Page) => {
  const set = p.headers.getSetCookie().find((h) => h.startsWith('svc_portal='));
  return set ? set.split(';')[0]! : null;
};

/** The sign-in link mailed to `email` (the newest one). */
async function linkMailedTo(email: string, after: number): Promise<string> {
  let mail: Received | undefined;
  await expect
    .poll(() => (mail = received.slice(after).find((m) => m.to.includes(email) && /sign-in link/.test(m.subject))), {
      timeout: 30_000,
    })
    .toBeTruthy();
  const link = /https:\/\/help\.acme\.test(\/hc\/[a-z0-9-]+\/requests\/sign-in\/[A-Za-z0-9_-]{43})/.exec(mail!.text);
  expect(link).not.toBeNull();
  return link![1]!;
}

/** A customer with a ticket made through the form, signed in: their cookie. */
async function customer(c: Center, email = uniqueEmail('cust'), subject = 'My invoice is wrong') {
  const r = await postMultipart(c, `${c.base}/new`, contactFields(c, { email, subject }));
  expect(r.status).toBe(303);
  const ticket = (await ticketsOf(c)).find((t) => t.subject === subject && t.contact.email === email);
  const before = received.length;
  const asked = await postForm(c, `${c.base}/requests/sign-in`, { email });
  expect(asked.status).toBe(200);
  const link = await linkMailedTo(email, before);
  const signedIn = await postForm(c, link, {});
  expect(signedIn.status).toBe(303);
  return { email, ticket, cookie: sessionCookie(signedIn)!, link };
}

const csrfOf = (html: string) => inputOf(html, 'csrf')!;

describe('the customer area', () => {
  it('signed out: a sign-in form; the same answer for any address, a link only for contacts', async () => {
    const c = await newCenter();
    const page = await get(c, `${c.base}/requests`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<label for="email">Email</label>');
    const known = await makeContact(c.svc.api, c.t, { email: uniqueEmail('known') });
    const stranger = uniqueEmail('stranger');
    const before = received.length;
    const a = await postForm(c, `${c.base}/requests/sign-in`, { email: known.email.toUpperCase() });
    const b = await postForm(c, `${c.base}/requests/sign-in`, { email: stranger });
    expect([a.status, b.status]).toEqual([200, 200]);
    const same = (p: Page, email: string) => p.text.replace(email, 'ADDRESS');
    expect(same(a, known.email.toUpperCase())).toBe(same(b, stranger));
    await linkMailedTo(known.email, before);
    await new Promise((res) => setTimeout(res, 500));
    expect(received.slice(before).filter((m) => m.to.includes(stranger))).toEqual([]);
    // A malformed address is said so (it names no one).
    const bad = await postForm(c, `${c.base}/requests/sign-in`, { email: 'nope' });
    expect(bad.status).toBe(422);
    expect(bad.text).toContain('role="alert"');
  });

  it('the link: a button on GET, a session on POST (its own cookie), then once only', async () => {
    const c = await newCenter();
    const email = uniqueEmail('link');
    await postMultipart(c, `${c.base}/new`, contactFields(c, { email }));
    const before = received.length;
    await postForm(c, `${c.base}/requests/sign-in`, { email });
    const link = await linkMailedTo(email, before);
    // Opening it (a mail scanner does) spends nothing.
    const opened = await get(c, link);
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('<button type="submit">Sign in</button>');
    expect(opened.headers.get('referrer-policy')).toBe('no-referrer');
    expect((await get(c, link)).status).toBe(200);

    const signedIn = await postForm(c, link, {});
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe(`${c.base}/requests`);
    const set = signedIn.headers.getSetCookie().find((h) => h.startsWith('svc_portal='))!;
    expect(set).toMatch(/; HttpOnly/i);
    expect(set).toMatch(/; SameSite=Lax/i);
    expect(set).toMatch(/; Secure/i);
    expect(set).toContain(`; Path=${c.base}`);
    expect(set).toMatch(/; Max-Age=2592000/);
    // Stored hashed: no row holds the token or the cookie's value.
    const cookie = sessionCookie(signedIn)!;
    const d = c.svc.rt.deps.database.db;
    const token = link.split('/').pop()!;
    const rows = JSON.stringify([
      await d.selectFrom('portal_sign_in_links').selectAll().execute(),
      await d.selectFrom('portal_sessions').selectAll().execute(),
    ]);
    expect(rows).not.toContain(token);
    expect(rows).not.toContain(cookie.split('=')[1]);

    const list = await get(c, `${c.base}/requests`, cookie);
    expect(list.status).toBe(200);
    expect(list.text).toContain('My invoice is wrong');
    expect(list.text).toContain('<td>Open</td>');
    const [ticket] = await ticketsOf(c);
    expect(list.text).toContain(`<td>#${ticket.number}</td>`);

    // Used: the same link again signs no one in.
    for (const again of [await get(c, link), await postForm(c, link, {})]) {
      expect(again.status).toBe(410);
      expect(again.text).toContain('This sign-in link has expired');
      expect(sessionCookie(again)).toBeNull();
    }
  });

  it("refuses the link's post from another site (login CSRF): 403, no cookie, the link still works", async () => {
    const c = await newCenter();
    const email = uniqueEmail('csrf');
    await postMultipart(c, `${c.base}/new`, contactFields(c, { email }));
    const before = received.length;
    await postForm(c, `${c.base}/requests/sign-in`, { email });
    const link = await linkMailedTo(email, before);
    const foreigners: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      // A sibling host of the same site is not this service either.
      { origin: 'https://www.acme.test', 'sec-fetch-site': 'same-site' },
      // Sec-Fetch-Site wins over an Origin naming the service.
      { origin: ORIGIN, 'sec-fetch-site': 'cross-site' },
    ];
    for (const foreign of foreigners) {
      const r = await postForm(c, link, {}, foreign);
      expect(r.status, JSON.stringify(foreign)).toBe(403);
      expect(sessionCookie(r), JSON.stringify(foreign)).toBeNull();
      expect(r.text).toContain('sent from another website');
      // Its own button, which posts from this site, is still there.
      expect(r.text).toContain('<button type="submit">Sign in</button>');
    }
    // Nothing was spent: the link still opens and signs in from the service's own page.
    expect((await get(c, link)).status).toBe(200);
    const own = await postForm(c, link, {}, { origin: ORIGIN, 'sec-fetch-site': 'same-origin' });
    expect(own.status).toBe(303);
    expect(sessionCookie(own)).not.toBeNull();

    // Origin alone (a browser without Sec-Fetch-Site): the service's own origin or the host asked.
    for (const origin of [ORIGIN, new URL(c.svc.url).origin]) {
      const before2 = received.length;
      await postForm(c, `${c.base}/requests/sign-in`, { email });
      const again = await linkMailedTo(email, before2);
      const r = await postForm(c, again, {}, { origin });
      expect(r.status, origin).toBe(303);
      expect(sessionCookie(r)).not.toBeNull();
    }
  });

  it('an expired link shows so and starts no session', async () => {
    const c = await newCenter();
    const email = uniqueEmail('late');
    await postMultipart(c, `${c.base}/new`, contactFields(c, { email }));
    const before = received.length;
    await postForm(c, `${c.base}/requests/sign-in`, { email });
    const link = await linkMailedTo(email, before);
    await c.svc.rt.deps.database.db
      .updateTable('portal_sign_in_links')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('workspace_id', '=', c.t.workspaceId)
      .execute();
    const opened = await get(c, link);
    expect(opened.status).toBe(410);
    expect(opened.text).toContain('more than 15 minutes old');
    const posted = await postForm(c, link, {});
    expect(posted.status).toBe(410);
    expect(sessionCookie(posted)).toBeNull();
    // A made-up token too.
    expect((await postForm(c, `${c.base}/requests/sign-in/${'A'.repeat(43)}`, {})).status).toBe(410);
  });

  it("shows public messages only, and another contact's ticket is a 404", async () => {
    const c = await newCenter();
    const me = await customer(c);
    const other = await customer(c, uniqueEmail('other'), 'Someone else’s request');
    await makeMessage(c.svc.api, c.t, me.ticket.id, {
      kind: 'note',
      body_html: '<p>Internal: VIP, refund quietly</p>',
    });
    const answer = await makeMessage(c.svc.api, c.t, me.ticket.id, {
      kind: 'reply',
      body_html: '<p>We fixed the invoice.</p>',
    });
    // The team's answer also goes to the customer by email (the email module's queue).
    expect(answer).toMatchObject({ delivery_status: 'pending', to: [me.email] });

    const page = await get(c, `${c.base}/requests/${me.ticket.number}`, me.cookie);
    expect(page.status).toBe(200);
    expect(page.text).toContain('We fixed the invoice.');
    expect(page.text).toContain('the invoice of March');
    expect(page.text).not.toContain('Internal: VIP');
    expect(page.text).not.toContain('Someone else');

    const theirs = await get(c, `${c.base}/requests/${other.ticket.number}`, me.cookie);
    expect(theirs.status).toBe(404);
    expect(theirs.text).not.toContain('Someone else');
    expect((await get(c, `${c.base}/requests/999999`, me.cookie)).status).toBe(404);
    const list = await get(c, `${c.base}/requests`, me.cookie);
    expect(list.text).not.toContain('Someone else');
    // Another workspace's cookie means nothing here.
    const elsewhere = await newCenter();
    expect((await get(elsewhere, `${elsewhere.base}/requests`, me.cookie)).text).toContain(
      '<label for="email">Email</label>',
    );
    // Signed out, a request's page sends to the sign-in form.
    const anon = await get(c, `${c.base}/requests/${me.ticket.number}`);
    expect(anon.status).toBe(303);
  });

  it('a reply reopens a solved ticket as the customer message; on a closed ticket it starts a follow-up', async () => {
    const c = await newCenter();
    const me = await customer(c);
    expect((await c.svc.api.patch(`/v1/tickets/${me.ticket.id}`, { status: 'solved' }, c.t.as)).status).toBe(200);
    const page = await get(c, `${c.base}/requests/${me.ticket.number}`, me.cookie);
    expect(page.text).toContain('Solved');
    const r = await postMultipart(
      c,
      `${c.base}/requests/${me.ticket.number}`,
      { csrf: csrfOf(page.text), message: 'Still wrong, sorry!' },
      [{ name: 'invoice.txt', data: 'INVOICE 42', type: 'text/plain' }],
      { cookie: me.cookie },
    );
    expect(r.status, r.text).toBe(303);
    expect(r.location).toBe(`${c.base}/requests/${me.ticket.number}?sent`);
    const after = (await c.svc.api.get(`/v1/tickets/${me.ticket.id}`, c.t.as)).body;
    expect(after.status).toBe('open');
    const last = (await messagesOf(c, me.ticket.id)).at(-1);
    expect(last).toMatchObject({ kind: 'reply', direction: 'inbound', body_text: 'Still wrong, sorry!' });
    expect(last.author.type).toBe('contact');
    expect(last.author.contact.email).toBe(me.email);
    expect(last.attachments.map((a: any) => a.filename)).toEqual(['invoice.txt']);
    const acts = (await c.svc.api.get(`/v1/tickets/${me.ticket.id}/activities`, c.t.as)).body.data as any[];
    expect(acts.filter((a) => a.type === 'status_changed').at(-1).data).toEqual({ from: 'solved', to: 'open' });
    const shown = await get(c, r.location!, me.cookie);
    expect(shown.text).toContain('Your reply was sent.');
    expect(shown.text).toContain('Still wrong, sorry!');
    expect(shown.text).toContain('invoice.txt');

    // Closed: the reply becomes a new ticket that follows it.
    expect((await c.svc.api.patch(`/v1/tickets/${me.ticket.id}`, { status: 'closed' }, c.t.as)).status).toBe(200);
    const closed = await get(c, `${c.base}/requests/${me.ticket.number}`, me.cookie);
    expect(closed.text).toContain('A reply starts a new request');
    const follow = await postMultipart(
      c,
      `${c.base}/requests/${me.ticket.number}`,
      { csrf: csrfOf(closed.text), message: 'One more thing' },
      [],
      { cookie: me.cookie },
    );
    expect(follow.status).toBe(303);
    const next = (await ticketsOf(c)).find((t) => t.id !== me.ticket.id)!;
    expect(next).toMatchObject({ channel: 'portal', status: 'open', subject: me.ticket.subject });
    expect(next.custom.follow_up_of).toEqual({ id: me.ticket.id, number: me.ticket.number });
    // The agents' side: the closed ticket's follow-ups, listed by the API (the app's ticket page).
    const follows = await c.svc.api.get(`/v1/tickets?follow_up_of=${me.ticket.id}&status=open,closed`, c.t.as);
    expect(follows.status, follows.text).toBe(200);
    expect(follows.body.data.map((t: any) => t.id)).toEqual([next.id]);
    const none = await c.svc.api.get(`/v1/tickets?follow_up_of=${next.id}`, c.t.as);
    expect(none.body.data).toEqual([]);
    const bad = await c.svc.api.get('/v1/tickets?follow_up_of=42', c.t.as);
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].location).toBe('query.follow_up_of');
    expect(follow.location).toBe(`${c.base}/requests/${next.number}?follows=${me.ticket.number}`);
    const nextPage = await get(c, follow.location!, me.cookie);
    expect(nextPage.text).toContain(`Request #${me.ticket.number} is closed, so your reply started this new request.`);
    expect(nextPage.text).toContain(`href="${c.base}/requests/${me.ticket.number}"`);
    expect((await c.svc.api.get(`/v1/tickets/${me.ticket.id}`, c.t.as)).body.status).toBe('closed');
  });

  it('a request merged into another of theirs goes on there; merged into someone else’s, it says so and takes no reply', async () => {
    const c = await newCenter();
    const me = await customer(c, uniqueEmail('merge'), 'Printer jams');
    const second = await postMultipart(
      c,
      `${c.base}/new`,
      contactFields(c, { email: me.email, subject: 'Printer jams again' }),
    );
    expect(second.status).toBe(303);
    const other = (await ticketsOf(c)).find((t) => t.subject === 'Printer jams again')!;
    const merged = await c.svc.api.post(`/v1/tickets/${me.ticket.id}/merge`, { into_id: other.id }, c.t.as);
    expect(merged.status, merged.text).toBe(200);

    // The list shows the surviving request only; the merged one's address leads to it.
    const list = await get(c, `${c.base}/requests`, me.cookie);
    expect(list.text).toContain(`href="${c.base}/requests/${other.number}"`);
    expect(list.text).not.toContain(`href="${c.base}/requests/${me.ticket.number}"`);
    const old = await get(c, `${c.base}/requests/${me.ticket.number}`, me.cookie);
    expect(old.status).toBe(303);
    expect(old.location).toBe(`${c.base}/requests/${other.number}`);
    const survivor = await get(c, old.location!, me.cookie);
    expect(survivor.text).toContain('Printer jams'); // the first request's message moved here

    // A reply sent from a page opened before the merge lands in the surviving request.
    const r = await postMultipart(
      c,
      `${c.base}/requests/${me.ticket.number}`,
      { csrf: csrfOf(survivor.text), message: 'Any news?' },
      [],
      { cookie: me.cookie },
    );
    expect(r.status, r.text).toBe(303);
    expect(r.location).toBe(`${c.base}/requests/${other.number}?sent`);
    expect((await messagesOf(c, other.id)).at(-1)).toMatchObject({ body_text: 'Any news?' });
    expect(await messagesOf(c, me.ticket.id)).toHaveLength(0);

    // Merged into another customer's ticket: nothing of it shows, and a reply is not taken.
    const them = await customer(c, uniqueEmail('them'), 'Their own problem');
    const mine2 = await postMultipart(
      c,
      `${c.base}/new`,
      contactFields(c, { email: me.email, subject: 'Toner empty' }),
    );
    expect(mine2.status).toBe(303);
    const toner = (await ticketsOf(c)).find((t) => t.subject === 'Toner empty')!;
    expect((await c.svc.api.post(`/v1/tickets/${toner.id}/merge`, { into_id: them.ticket.id }, c.t.as)).status).toBe(
      200,
    );
    const gone = await get(c, `${c.base}/requests/${toner.number}`, me.cookie);
    expect(gone.status).toBe(200);
    expect(gone.text).toContain('was merged into another conversation');
    expect(gone.text).not.toContain('Their own problem');
    expect(gone.text).not.toContain('Send reply'); // no reply form
    expect(gone.text).not.toContain('name="message"');
    const before = (await messagesOf(c, them.ticket.id)).length;
    const refused = await postMultipart(
      c,
      `${c.base}/requests/${toner.number}`,
      { csrf: csrfOf(survivor.text), message: 'Hello?' },
      [],
      { cookie: me.cookie },
    );
    expect(refused.status).toBe(404);
    expect(await messagesOf(c, them.ticket.id)).toHaveLength(before);
  });

  it('a post without the CSRF token, or with another session’s, is 403 and changes nothing', async () => {
    const c = await newCenter();
    const me = await customer(c);
    const other = await customer(c, uniqueEmail('other'));
    const otherPage = await get(c, `${c.base}/requests/${other.ticket.number}`, other.cookie);
    const count = async () => (await messagesOf(c, me.ticket.id)).length;
    const before = await count();
    const forged: Array<Record<string, string>> = [
      { message: 'forged' },
      { message: 'forged', csrf: csrfOf(otherPage.text) },
      { message: 'forged', csrf: 'x' },
    ];
    for (const fields of forged) {
      const r = await postMultipart(c, `${c.base}/requests/${me.ticket.number}`, fields, [], { cookie: me.cookie });
      expect(r.status).toBe(403);
      expect(r.headers.get('content-type')).toContain('text/html');
    }
    // Without a session at all, too.
    expect((await postMultipart(c, `${c.base}/requests/${me.ticket.number}`, { message: 'anon' })).status).toBe(403);
    expect(await count()).toBe(before);
    const so = await postForm(c, `${c.base}/requests/sign-out`, {}, { cookie: me.cookie });
    expect(so.status).toBe(403);
    expect((await get(c, `${c.base}/requests`, me.cookie)).text).toContain('Sign out');
  });

  it('a session idle past its expiry signs no one in', async () => {
    const c = await newCenter();
    const me = await customer(c);
    expect((await get(c, `${c.base}/requests`, me.cookie)).text).toContain('Sign out');
    await c.svc.rt.deps.database.db
      .updateTable('portal_sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('workspace_id', '=', c.t.workspaceId)
      .execute();
    expect((await get(c, `${c.base}/requests`, me.cookie)).text).toContain('<label for="email">Email</label>');
    expect((await get(c, `${c.base}/requests/${me.ticket.number}`, me.cookie)).status).toBe(303);
  });

  it('sign-in links: 5 an hour per address (then the same answer, no mail), 20 per client address', async () => {
    const c = await newCenter();
    const known = await makeContact(c.svc.api, c.t, { email: uniqueEmail('often') });
    const before = received.length;
    for (let i = 0; i < 6; i++) {
      const r = await postForm(
        c,
        `${c.base}/requests/sign-in`,
        { email: known.email },
        { 'x-forwarded-for': `192.0.2.${i + 1}` },
      );
      expect(r.status).toBe(200);
      expect(r.text).toContain('Check your email');
    }
    await expect
      .poll(() => received.slice(before).filter((m) => m.to.includes(known.email)).length, { timeout: 10_000 })
      .toBe(5);
    await new Promise((res) => setTimeout(res, 500));
    expect(received.slice(before).filter((m) => m.to.includes(known.email)).length).toBe(5);

    for (let i = 0; i < 20; i++) {
      const r = await postForm(
        c,
        `${c.base}/requests/sign-in`,
        { email: uniqueEmail('n') },
        { 'x-forwarded-for': '192.0.2.200' },
      );
      expect(r.status).toBe(200);
    }
    const limited = await postForm(
      c,
      `${c.base}/requests/sign-in`,
      { email: uniqueEmail('n') },
      { 'x-forwarded-for': '192.0.2.200' },
    );
    expect(limited.status).toBe(429);
    expect(limited.text).toContain('role="alert"');
  });

  it('signing out ends the session: the cookie is cleared and no longer works', async () => {
    const c = await newCenter();
    const me = await customer(c);
    const list = await get(c, `${c.base}/requests`, me.cookie);
    const r = await postForm(c, `${c.base}/requests/sign-out`, { csrf: csrfOf(list.text) }, { cookie: me.cookie });
    expect(r.status).toBe(303);
    expect(r.location).toBe(`${c.base}/requests?signed_out`);
    const cleared = r.headers.getSetCookie().find((h) => h.startsWith('svc_portal='))!;
    expect(cleared).toMatch(/svc_portal=;/);
    const after = await get(c, r.location!, me.cookie);
    expect(after.text).toContain('You are signed out.');
    expect(after.text).toContain('<label for="email">Email</label>');
    expect((await get(c, `${c.base}/requests/${me.ticket.number}`, me.cookie)).status).toBe(303);
    expect(
      await c.svc.rt.deps.database.db
        .selectFrom('portal_sessions')
        .selectAll()
        .where('workspace_id', '=', c.t.workspaceId)
        .execute(),
    ).toEqual([]);
  });
});
