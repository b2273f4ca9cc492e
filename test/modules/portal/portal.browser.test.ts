// The portal in a real browser (Debian's Chromium through playwright-core, test/support/browser.ts): a
// customer sends the contact form with a file (the ticket appears through the API), asks for a
// sign-in link, follows it from the captured mail, sees the request with the team's answer and
// replies; axe-core finds no serious or critical problem on the form, the sign-in page, the list
// and the request's page. A file too large for the form is answered with a page the browser shows
// (not a reset connection); a sign-in link posted by another website signs no one in; a customer
// whose system is set to dark gets the dark variant. SCREENSHOTS=1 writes portal-form and
// portal-request into docs/screenshots/.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contrast } from '../../../src/modules/help-center/look.js';
import {
  browserAvailable,
  coloursOf,
  docsScreenshot,
  launchBrowser,
  seriousViolations,
} from '../../support/browser.js';
import { makeContact, makeMessage } from '../../support/builders.js';
import { newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';
import { type MailCatcher, startMailCatcher } from '../../support/mail-catcher.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

const run = browserAvailable();

describe.runIf(run)('the portal in a browser', () => {
  let svc: Service;
  let db: OwnDatabase;
  let catcher: MailCatcher;
  let browser: Browser;
  let t: Tenant;
  let base: string;
  /** Another website (localhost is another site than the service's 127.0.0.1): its page is set per test. */
  let foreign: Server;
  let foreignUrl: string;
  let foreignPage = '';

  beforeAll(async () => {
    catcher = await startMailCatcher();
    db = await ownDatabase('portal_browser');
    // Files up to 1 MB: a form over five of them (6 MB with the fields) is refused from its length.
    svc = await startService({ ...db.env, SMTP_URL: catcher.smtpUrl(), ATTACHMENT_MAX_MB: '1' });
    foreign = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(foreignPage);
    });
    await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', r));
    foreignUrl = `http://localhost:${(foreign.address() as AddressInfo).port}/`;
    browser = await launchBrowser();
    t = await newTenant(svc.api, 'Acme Support');
    const ws = await svc.api.patch(
      '/v1/workspace',
      { settings: { help_center_enabled: true, help_center_title: 'Acme Help', brand_color: '#1d4ed8' } },
      t.as,
    );
    expect(ws.status).toBe(200);
    base = `${svc.url}/hc/${ws.body.slug}`;
  }, 120_000);

  afterAll(async () => {
    foreign?.close();
    await browser?.close();
    await svc?.stop();
    await db?.drop();
    await catcher?.close();
  });

  const noProblems = async (page: Page) => expect(await seriousViolations(page)).toEqual([]);

  /** The newest sign-in link mailed to `email`, as a path. */
  async function signInLinkOf(email: string, after: number): Promise<string> {
    let mail: { text: string } | undefined;
    await expect
      .poll(
        () =>
          (mail = catcher.received
            .slice(after)
            .find(
              (m) => m.to.some((a) => a.toLowerCase() === email.toLowerCase()) && m.text.includes('/requests/sign-in/'),
            )),
        { timeout: 30_000 },
      )
      .toBeTruthy();
    return /https?:\/\/[^/\s]+(\/hc\/[a-z0-9-]+\/requests\/sign-in\/[A-Za-z0-9_-]{43})/.exec(mail!.text)![1]!;
  }

  it('contact form → sign-in link → the request → a reply', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const email = 'dana@example.com';

    // The contact form, filled as a person would (and no faster than one: 2 s at least).
    await page.goto(`${base}/new`);
    expect(await page.locator('h1').allTextContents()).toEqual(['Contact us']);
    await noProblems(page);
    await page.getByLabel('Name').fill('Dana Customer');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Subject').fill('Invoice shows 20 seats');
    await page.getByLabel('Message').fill('Hello,\n\nour March invoice charges 20 seats; we have 12.\n\nDana');
    await page
      .getByLabel('Attachments (optional)')
      .setInputFiles({ name: 'seats.txt', mimeType: 'text/plain', buffer: Buffer.from('12 seats in use') });
    await docsScreenshot(page, 'portal-form');
    await page.waitForTimeout(2100);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.waitForURL(/\/new\/sent$/);
    expect(await page.locator('h1').textContent()).toContain('we received your request');
    await noProblems(page);

    const [ticket] = (await svc.api.get('/v1/tickets', t.as)).body.data as any[];
    expect(ticket).toMatchObject({ channel: 'portal', subject: 'Invoice shows 20 seats' });
    const [first] = (await svc.api.get(`/v1/tickets/${ticket.id}/messages`, t.as)).body.data as any[];
    expect(first.body_text).toContain('we have 12');
    expect(first.attachments.map((a: any) => a.filename)).toEqual(['seats.txt']);
    // The team answers (and writes a note the customer must never see).
    await makeMessage(svc.api, t, ticket.id, { kind: 'note', body_html: '<p>Check their seat count</p>' });
    await makeMessage(svc.api, t, ticket.id, {
      kind: 'reply',
      body_html: '<p>Thanks Dana, you are right: we are correcting the invoice to 12 seats.</p>',
      status: 'pending',
    });

    // A file too large for the form: the browser shows the service's answer, not a reset connection.
    await page.goto(`${base}/new`);
    await page.getByLabel('Name').fill('Dana Customer');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Subject').fill('The scan of our contract');
    await page.getByLabel('Message').fill('Attached.');
    await page.getByLabel('Attachments (optional)').setInputFiles({
      name: 'contract.pdf',
      mimeType: 'application/pdf',
      buffer: Buffer.alloc(7 * 1024 * 1024, 0x25),
    });
    const refused = page.waitForResponse((r) => r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Send' }).click();
    expect((await refused).status()).toBe(413);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Too large');
    expect((await svc.api.get('/v1/tickets', t.as)).body.data).toHaveLength(1);
    // The API's uploads too: a page's fetch() of a widget file over the limit reads the 413, the
    // rest of the body drained (test/platform/http/upload-limits.test.ts: Node's fetch lost it before that).
    const key = (await svc.api.get('/v1/workspace', t.as)).body.widget_key;
    const visitor = (await svc.api.post('/v1/widget/session', { key })).body.visitor_token as string;
    await page.goto(`${svc.url}/healthz`);
    const answer = await page.evaluate(async (visitor) => {
      // In the page: this file compiles without the DOM's types.
      const g = globalThis as any;
      const form = new g.FormData();
      form.append('file', new g.Blob([new Uint8Array(8 * 1024 * 1024)]), 'video.mp4');
      try {
        const r = await g.fetch('/v1/widget/attachments', {
          method: 'POST',
          headers: { authorization: `Visitor ${visitor}` },
          body: form,
        });
        return { status: r.status as number, body: await r.json() };
      } catch (e) {
        return { status: 0, body: String(e) };
      }
    }, visitor);
    expect(answer).toMatchObject({ status: 413, body: { status: 413, code: 'too_large' } });

    // Another website posts a sign-in link of its own (Mallory's) from this browser: refused, so
    // Dana's browser is not signed in to Mallory's requests; the link itself stays usable.
    const mallory = await makeContact(svc.api, t, { email: 'mallory@example.com', name: 'Mallory' });
    const sent = catcher.received.length;
    await fetch(`${base}/requests/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `email=${encodeURIComponent(mallory.email)}`,
    });
    const malloryLink = await signInLinkOf(mallory.email, sent);
    foreignPage = `<!doctype html><html lang="en"><title>Prize</title><form method="post" action="${svc.url}${malloryLink}"><button>Claim your prize</button></form></html>`;
    await page.goto(foreignUrl);
    await page.getByRole('button', { name: 'Claim your prize' }).click();
    await page.waitForURL(`${svc.url}${malloryLink}`);
    expect(await page.getByRole('alert').textContent()).toContain('sent from another website');
    await noProblems(page);
    expect((await page.context().cookies()).map((c) => c.name)).not.toContain('svc_portal');
    const stillUsable = await fetch(`${svc.url}${malloryLink}`);
    expect(stillUsable.status).toBe(200);

    // The customer area: signed out, a sign-in form.
    await page.goto(`${base}/requests`);
    await noProblems(page);
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    expect(await page.locator('h1').textContent()).toBe('Check your email');

    let mail: { text: string } | undefined;
    await expect
      .poll(
        () =>
          (mail = catcher.received.find(
            (m) => m.to.some((a) => a.toLowerCase() === email.toLowerCase()) && m.text.includes('/requests/sign-in/'),
          )),
        {
          timeout: 30_000,
        },
      )
      .toBeTruthy();
    const path = /https?:\/\/[^/\s]+(\/hc\/[a-z0-9-]+\/requests\/sign-in\/[A-Za-z0-9_-]{43})/.exec(mail!.text)![1]!;
    await page.goto(svc.url + path);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/requests$/);
    expect(await page.getByRole('cell', { name: `#${ticket.number}` }).count()).toBe(1);
    expect(await page.getByRole('cell', { name: 'Awaiting your reply' }).count()).toBe(1);
    await noProblems(page);

    await page.getByRole('link', { name: 'Invoice shows 20 seats' }).click();
    await page.waitForURL(new RegExp(`/requests/${ticket.number}$`));
    expect(await page.getByText('we are correcting the invoice').count()).toBe(1);
    expect(await page.getByText('Check their seat count').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'seats.txt' }).count()).toBe(1);
    await noProblems(page);
    await docsScreenshot(page, 'portal-request');

    await page.getByLabel('Message').fill('Thank you, that was quick!');
    await page.getByRole('button', { name: 'Send reply' }).click();
    await page.waitForURL(/\?sent$/);
    expect(await page.getByRole('status').textContent()).toContain('Your reply was sent.');
    expect(await page.getByText('Thank you, that was quick!').count()).toBe(1);
    await noProblems(page);

    const after = (await svc.api.get(`/v1/tickets/${ticket.id}`, t.as)).body;
    expect(after.status).toBe('open');
    const last = ((await svc.api.get(`/v1/tickets/${ticket.id}/messages`, t.as)).body.data as any[]).at(-1);
    expect(last).toMatchObject({ kind: 'reply', direction: 'inbound', body_text: 'Thank you, that was quick!' });
    expect(last.author.type).toBe('contact');

    // Signing out leaves the sign-in form.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/requests\?signed_out$/);
    expect(await page.getByRole('status').textContent()).toContain('You are signed out.');
    await page.close();
  });

  it('follows a dark colour scheme: the form and the sign-in page stay readable, brand included', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'dark' });
    const page = await context.newPage();
    for (const path of ['/new', '/requests']) {
      await page.goto(base + path);
      const look = await coloursOf(page, {
        background: ['body', 'backgroundColor'],
        text: ['body', 'color'],
        field: ['#email', 'backgroundColor'],
        fieldText: ['#email', 'color'],
        button: ['.portal-form button', 'backgroundColor'],
        buttonText: ['.portal-form button', 'color'],
      });
      expect(contrast(look.background, '#000000'), path).toBeLessThan(2);
      expect(contrast(look.text, look.background), path).toBeGreaterThanOrEqual(7);
      expect(contrast(look.fieldText, look.field), path).toBeGreaterThanOrEqual(7);
      // The buttons keep the brand colour, with the text that contrasts with it.
      expect(look.button, path).toBe('#1d4ed8');
      expect(contrast(look.buttonText, look.button), path).toBeGreaterThanOrEqual(4.5);
      await noProblems(page);
    }
    await context.close();
  });
});
