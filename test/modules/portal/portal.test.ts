// The portal (/hc/{workspace_slug}/new and /requests): the contact form opens a portal ticket
// with the customer's first message and mails a confirmation with the ticket's number and reply
// token; a honeypot, a minimum fill time, per-address limits and the human check (a stand-in
// siteverify server) keep robots out, and bad input stores nothing. The customer area: a sign-in
// link mailed only to contacts (the same page for every address), single use and 15 minutes; a
// session cookie of its own; the customer's own tickets, public messages only; a reply that
// reopens a solved ticket or follows a closed one; CSRF on every post; sign-out.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ticketTokenFor } from '../../../src/modules/email/ticket-token.js';
import { makeContact, uniqueEmail } from '../../support/builders.js';
import { type Service, startService } from '../../support/helpers.js';
import type { OwnDatabase } from '../../support/own-database.js';
import { type Siteverify, siteverify } from '../../support/siteverify.js';
import {
  type Center,
  contactFields,
  get,
  inputOf,
  messagesOf,
  ORIGIN,
  portalSuite,
  postForm,
  postMultipart,
  type Received,
  ticketsOf,
} from './setup.js';

const suite = portalSuite();
const { newCenter } = suite;
let db: OwnDatabase;
let received: Received[];
beforeAll(() => {
  ({ db, received } = suite);
});

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

describe('the contact form with CHALLENGE', () => {
  let verify: Siteverify;
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
