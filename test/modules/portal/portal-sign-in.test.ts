// The portal's customer area, signing in and out (the contact form: portal.test.ts; the shared setup:
// setup.ts): a sign-in link mailed only to contacts, single use and 15 minutes, login CSRF, its
// limits, CSRF on every post, sessions that expire, sign-out.
import { beforeAll, describe, expect, it } from 'vitest';
import { makeContact, uniqueEmail } from '../../support/builders.js';
import {
  contactFields,
  csrfOf,
  get,
  messagesOf,
  ORIGIN,
  type Page,
  portalSuite,
  postForm,
  postMultipart,
  type Received,
  sessionCookie,
  ticketsOf,
} from './setup.js';

const suite = portalSuite();
const { newCenter, linkMailedTo, customer } = suite;
let received: Received[];
beforeAll(() => {
  ({ received } = suite);
});

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
