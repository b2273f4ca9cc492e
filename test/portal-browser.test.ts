// The portal in a real browser (Debian's Chromium through playwright-core, test/browser.ts): a
// customer sends the contact form with a file (the ticket appears through the API), asks for a
// sign-in link, follows it from the captured mail, sees the request with the team's answer and
// replies; axe-core finds no serious or critical problem on the form, the sign-in page, the list
// and the request's page. SCREENSHOTS=1 writes portal-form and portal-request into docs/screenshots/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, docsScreenshot, launchBrowser, seriousViolations } from './browser.js';
import { makeMessage } from './builders.js';
import { newTenant, type Service, startService, type Tenant } from './helpers.js';
import { type MailCatcher, startMailCatcher } from './mail-catcher.js';
import { type OwnDatabase, ownDatabase } from './own-database.js';

const run = browserAvailable();

describe.runIf(run)('the portal in a browser', () => {
  let svc: Service;
  let db: OwnDatabase;
  let catcher: MailCatcher;
  let browser: Browser;
  let t: Tenant;
  let base: string;

  beforeAll(async () => {
    catcher = await startMailCatcher();
    db = await ownDatabase('portal_browser');
    svc = await startService({ ...db.env, SMTP_URL: catcher.smtpUrl() });
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
    await browser?.close();
    await svc?.stop();
    await db?.drop();
    await catcher?.close();
  });

  const noProblems = async (page: Page) => expect(await seriousViolations(page)).toEqual([]);

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
});
