// A support team's first day, walked as a new user would, in Chromium: the service as `npm start`
// runs it (dist/main.js in a child process) with no settings but its port and a fresh data
// directory, so on the embedded database and without SMTP_URL (every mail is kept in the outbox).
// The owner opens the address the start banner prints, signs up, creates the workspace, turns on
// ratings, connects a forwarding mailbox; a customer's mail (delivered to the inbound route with
// the secret the banner printed, as the MTA would) arrives live; the owner replies with the
// keyboard alone and is told the reply was saved, not sent; writes and publishes an article, turns
// the help center on, and the article reads without JavaScript; a visitor chats from another
// site whose Content-Security-Policy has no 'unsafe-inline', and gets the answer live; the owner
// solves the mail's ticket; Settings → Outgoing mail shows the reply and the rating request; the
// customer rates the help from the request's link; asks the portal for a sign-in link, which the
// outbox shows, and signs in with it to see the request. axe-core on the screens on the way.
//
// It is the yardstick of every change people see (DEVELOPERS.md): one test, in CI on the embedded
// database (.ci/run runs it in its embedded run only: the child always uses the embedded one).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { browserAvailable, docsScreenshot, launchBrowser, seriousViolations } from './support/browser.js';
import { type ChildService, freePort, healthy, startProcess } from './support/child-process.js';
import { ensureWebApp } from './support/web-app.js';

/** A customer's website on another origin, embedding the widget, under a strict policy. */
function customerSite(snippet: () => string, helpDesk: () => string): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    if (req.url !== '/') {
      res.writeHead(req.url === '/favicon.ico' ? 204 : 404).end();
      return;
    }
    const hd = helpDesk();
    const ws = hd.replace(/^http/, 'ws');
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      // docs/widget.md's directives for a service on plain HTTP; nothing inline allowed.
      'content-security-policy': `default-src 'self'; script-src 'self' ${hd}; connect-src 'self' ${hd} ${ws}; img-src 'self' ${hd}; style-src 'self' ${hd}; font-src 'self' ${hd}`,
    });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme Shop</title></head>
<body><main><h1>Acme Shop</h1><p>Kettles for every kitchen.</p></main>${snippet()}</body></html>`);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    );
  });
}

describe.runIf(browserAvailable())('a support team’s first day', () => {
  let dir = '';
  let child: ChildService;
  let port = 0;
  let browser: Browser;
  let site: { server: Server; origin: string } | undefined;
  let snippet = '';
  const contexts: BrowserContext[] = [];
  const errors: string[] = [];

  async function newPage(opts: { javaScriptEnabled?: boolean } = {}): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...opts });
    contexts.push(context);
    // Every wait is bounded: a step that cannot happen fails with its locator, not the test's timeout.
    context.setDefaultTimeout(30_000);
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()} (${m.location().url})`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400) errors.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
    });
    return page;
  }

  /** Where the walk is, for a failure's message (a step that hangs names itself). */
  let at = 'start';
  const step = (name: string) => {
    at = name;
    if (process.env.FIRST_DAY_TRACE) process.stderr.write(`TRACE ${new Date().toISOString()} ${name}\n`);
  };

  const axe = async (page: Page, screen: string) => {
    // FIRST_DAY_SHOTS=<dir>: a picture of every screen checked, to look at the walk afterwards.
    if (process.env.FIRST_DAY_SHOTS) {
      await page.screenshot({ path: join(process.env.FIRST_DAY_SHOTS, `${screen.replace(/[^a-z0-9]+/gi, '-')}.png`) });
    }
    const v = await seriousViolations(page);
    expect(v, `${screen}: ${JSON.stringify(v, null, 2)}`).toEqual([]);
  };

  beforeAll(async () => {
    await ensureWebApp();
    dir = mkdtempSync(join(tmpdir(), 'svc-first-day-'));
    port = await freePort();
    // Nothing set but where to listen and keep data: DATABASE_URL emptied so a PostgreSQL test
    // run's variable does not reach the child.
    child = startProcess({ PORT: String(port), DATA_DIR: dir, DATABASE_URL: '', SMTP_URL: '', LOG_LEVEL: 'info' });
    browser = await launchBrowser();
  }, 200_000);

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close().catch(() => {});
    await new Promise<void>((r) => (site ? site.server.close(() => r()) : r()));
    if (child && child.child.exitCode === null) {
      child.child.kill('SIGTERM');
      await child.exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('signs up, connects mail, answers by keyboard, publishes, chats, is rated, and the customer signs in to the portal', async () => {
    onTestFailed(() =>
      console.error(
        `the first day stopped at: ${at}\nthe pages' errors and refused requests so far:\n${errors.join('\n')}`,
      ),
    );
    await healthy(port, expect);
    // The start banner says where to go and the inbound secret.
    await expect.poll(() => child.out(), { timeout: 30_000 }).toContain('Inbound email secret');
    const banner = child.out();
    const address = /listening on (http:\/\/[^\s]+)/.exec(banner)?.[1] ?? '';
    expect(address).toBe(`http://127.0.0.1:${port}`);
    const publicUrl = /public URL (http:\/\/[^\s,]+)/.exec(banner)?.[1] ?? '';
    const inboundSecret = /SVC-Inbound-Secret\): (\S+)/.exec(banner)?.[1] ?? '';
    expect(inboundSecret).not.toBe('');

    // ---- Sign up and create the workspace, at the address the banner printed.
    step('Sign up and create the workspace, at the address the banner printed');
    const owner = await newPage();
    await owner.goto(`${address}/`);
    await owner.getByRole('heading', { name: 'Sign in' }).waitFor();
    await owner.getByRole('link', { name: 'Create an account' }).click();
    await owner.getByLabel('Your name').fill('Olivia Owner');
    await owner.getByLabel('Email').fill('olivia@acme.test');
    await owner.getByLabel('Password').fill('a long enough password');
    await owner.getByRole('button', { name: 'Create account' }).click();
    await owner.getByRole('heading', { name: 'Create your workspace' }).waitFor();
    await owner.getByLabel('Workspace name').fill('Acme Support');
    await owner.getByRole('button', { name: 'Create workspace' }).click();
    await owner.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
    // Live at the banner's address although PUBLIC_URL defaults to localhost.
    await owner.getByRole('status').filter({ hasText: 'Live' }).waitFor({ timeout: 20_000 });
    // Mail is not set up: the owner is told, on every screen.
    await owner.getByRole('region', { name: 'Outgoing mail is not set up' }).waitFor();
    await axe(owner, 'inbox, empty');

    const settings = async (section: string, heading: string) => {
      await owner.goto(`${address}/settings/${section}`);
      await owner.getByRole('heading', { name: heading, level: 1 }).waitFor();
    };

    // ---- Ratings on (Settings → General).
    step('Ratings on (Settings → General)');
    await settings('general', 'Workspace');
    const csat = owner.getByLabel('Ask customers to rate solved tickets (CSAT)');
    await csat.waitFor();
    await csat.check();
    await owner.getByRole('button', { name: 'Save', exact: true }).click();
    await owner.getByText(/^Saved\./).waitFor();

    // ---- Connect a mailbox: a forwarding address to send the support address's mail to.
    step("Connect a mailbox: a forwarding address to send the support address's mail to");
    await settings('mailboxes', 'Mailboxes');
    await owner.getByText('No mailboxes yet.').waitFor();
    await owner.getByLabel('Forwarding', { exact: true }).check();
    await owner.getByLabel('Name', { exact: true }).fill('Support');
    await owner.getByLabel('Email address').fill('support@acme.test');
    await owner.getByRole('button', { name: 'Add mailbox' }).click();
    const forwardingField = owner.getByLabel('Forwarding address');
    await forwardingField.waitFor();
    const forwarding = await forwardingField.inputValue();
    expect(forwarding).toContain('@');
    await axe(owner, 'mailboxes');

    // ---- A customer's mail arrives, live, in the inbox.
    step("A customer's mail arrives, live, in the inbox");
    await owner.getByRole('link', { name: /^Open/ }).first().click();
    await owner.getByText('No tickets here.').waitFor();
    const raw = [
      'From: Casey Customer <casey@customer.test>',
      'To: support@acme.test',
      'Subject: Printer on fire',
      `Message-ID: <first-day-${port}@customer.test>`,
      `Date: ${new Date().toUTCString()}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'My printer is on fire. What do I do?',
      '',
    ].join('\r\n');
    const delivered = await fetch(`${address}/v1/inbound/email?to=${encodeURIComponent(forwarding)}`, {
      method: 'POST',
      headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': inboundSecret },
      body: raw,
    });
    expect(delivered.status).toBe(202);
    const row = owner.getByRole('link', { name: /Printer on fire/ });
    await row.waitFor({ timeout: 30_000 });
    await axe(owner, 'inbox');

    // ---- Reply by keyboard alone: j, Enter, r, type, Ctrl+Enter; then solve with e.
    step('Reply by keyboard alone: j, Enter, r, type, Ctrl+Enter; then solve with e');
    await owner.locator('body').click({ position: { x: 700, y: 5 } });
    await owner.keyboard.press('j');
    await expect
      .poll(() => owner.evaluate<string>("document.activeElement?.textContent ?? ''"))
      .toContain('Printer on fire');
    await owner.keyboard.press('Enter');
    await owner.getByRole('heading', { name: /Printer on fire/ }).waitFor();
    await owner.getByText('My printer is on fire. What do I do?').waitFor();
    // Replies on this ticket are not leaving, and it says so before one is written.
    await owner.getByRole('note').filter({ hasText: 'Replies on this ticket are not leaving' }).waitFor();
    await owner.keyboard.press('r');
    await expect.poll(() => owner.evaluate<string>("document.activeElement?.id ?? ''")).toBe('composer-text');
    await owner.keyboard.type('Unplug it and step away. We are sending a technician.');
    await owner.keyboard.press('Control+Enter');
    await owner
      .getByRole('status')
      .filter({ hasText: 'Reply saved, not sent: outgoing mail is not set up.' })
      .waitFor({ timeout: 30_000 });
    await axe(owner, 'ticket');
    await owner.keyboard.press('Escape');
    await owner.keyboard.press('e');
    await owner.locator('.ticket-meta .status').filter({ hasText: 'Solved' }).waitFor();

    // ---- Write and publish an article; turn the help center on; it reads without JavaScript.
    step('Write and publish an article; turn the help center on; it reads without JavaScript');
    await owner.goto(`${address}/knowledge-base`);
    await owner.getByRole('heading', { name: 'Knowledge base', level: 1 }).waitFor();
    step('kb: collection');
    await owner.getByLabel('New collection').fill('Printers');
    await owner.getByRole('button', { name: 'Add collection' }).click();
    await owner.getByRole('link', { name: /^Printers/ }).click();
    step('kb: new article');
    await owner.getByRole('link', { name: 'New article' }).click();
    await owner.getByRole('heading', { name: 'New article' }).waitFor();
    step('kb: title');
    await owner.getByLabel('Title').fill('What to do when a printer overheats');
    await owner.getByRole('textbox', { name: 'Body' }).click();
    await owner.keyboard.type('Switch it off at the wall and let it cool for an hour.');
    step('kb: publish');
    await owner.getByRole('button', { name: 'Publish' }).click();
    // The help center is off (the default): the editor says so.
    await owner.getByText(/help center is off/i).waitFor({ timeout: 15_000 });

    step('hc settings');
    await settings('help-center', 'Help center');
    const hcLink = owner.getByRole('link', { name: /\/hc\// });
    await hcLink.waitFor();
    const hcUrl = (await hcLink.getAttribute('href')) ?? '';
    step('hc on');
    await owner.getByLabel('Help center on').check();
    await owner.getByRole('button', { name: 'Save', exact: true }).click();
    await owner.getByText(/^Saved\./).waitFor();
    step('hc reader');
    const reader = await newPage({ javaScriptEnabled: false });
    await reader.goto(hcUrl);
    await reader.getByRole('link', { name: /What to do when a printer overheats/ }).click();
    await reader.getByRole('heading', { name: 'What to do when a printer overheats' }).waitFor();
    await reader.getByText('Switch it off at the wall and let it cool for an hour.').waitFor();
    const articleUrl = reader.url();
    await reader.close();
    // axe needs JavaScript: the same article in the customer's browser.
    const customer = await newPage();
    await customer.goto(articleUrl);
    await customer.getByRole('heading', { name: 'What to do when a printer overheats' }).waitFor();
    await axe(customer, 'help center article');

    // ---- A visitor chats from the company's website (another origin, a strict policy).
    step("A visitor chats from the company's website (another origin, a strict policy)");
    await settings('widget', 'Chat widget');
    const code = owner.locator('code', { hasText: 'widget.js' }).first();
    await code.waitFor();
    snippet = (await code.textContent()) ?? '';
    // The snippet names PUBLIC_URL, where the widget's socket is, not the address the app is open at.
    const scriptOrigin = new URL(/src="([^"]+)"/.exec(snippet)?.[1] ?? '').origin;
    expect(scriptOrigin).toBe(publicUrl);
    site = await customerSite(
      () => snippet,
      () => scriptOrigin,
    );
    const visitor = await newPage();
    const violations: string[] = [];
    await visitor.exposeFunction('reportViolation', (d: string) => violations.push(d));
    await visitor.addInitScript(
      "document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(e.violatedDirective + ' ' + e.blockedURI));",
    );
    await visitor.goto(`${site.origin}/`);
    await visitor.getByRole('button', { name: 'Open chat' }).click();
    const message = visitor.getByLabel('Message', { exact: true });
    await message.fill('Do your kettles work on 110 V?');
    await visitor.getByRole('button', { name: 'Send' }).click();

    await owner.getByRole('navigation', { name: 'Workspace tools' }).getByRole('link', { name: 'Chats' }).click();
    const chat = owner.getByRole('link', { name: /Do your kettles work on 110 V\?/ });
    await chat.waitFor({ timeout: 20_000 });
    await chat.click();
    await owner.getByRole('log', { name: 'Messages' }).getByText('Do your kettles work on 110 V?').waitFor();
    const answer = owner.getByLabel(/^Reply to /);
    await answer.fill('Yes: every kettle takes 100 to 240 V.');
    await answer.press('Enter');
    await visitor.getByText('Yes: every kettle takes 100 to 240 V.').waitFor({ timeout: 20_000 });
    await axe(owner, 'chats');
    expect(violations).toEqual([]);

    // ---- The outbox holds the reply and the rating request.
    step('The outbox holds the reply and the rating request');
    await settings('outgoing-mail', 'Outgoing mail');
    const kept = (what: string) =>
      owner.getByRole('row').filter({ hasText: 'casey@customer.test' }).filter({ hasText: what });
    await kept('Reply').waitFor({ timeout: 30_000 });
    const ratingRow = kept('Rating request');
    await ratingRow.waitFor({ timeout: 30_000 });
    await axe(owner, 'outgoing mail');
    await docsScreenshot(owner, 'app-outgoing-mail');
    const ratingLink = ratingRow.getByRole('link').first();
    await ratingLink.click();
    const rateUrl =
      (await owner
        .getByRole('list', { name: 'Links in this mail' })
        .getByRole('link', { name: /\/csat\// })
        .first()
        .getAttribute('href')) ?? '';
    expect(rateUrl).toContain('/csat/');

    // ---- The customer rates the help from the mail's link.
    step("The customer rates the help from the mail's link");
    await customer.goto(rateUrl);
    await customer.getByLabel('Happy', { exact: true }).check();
    await customer.getByLabel('Comment (optional)').fill('Quick, and the printer survived.');
    await customer.getByRole('button', { name: 'Send' }).click();
    await customer.getByRole('heading', { name: 'Thank you' }).waitFor();

    // ---- The customer asks the portal for a sign-in link; the outbox has it; it signs them in.
    step('The customer asks the portal for a sign-in link; the outbox has it; it signs them in');
    await customer.goto(`${hcUrl}/requests`);
    await customer.getByLabel('Email').fill('casey@customer.test');
    await customer.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await customer.getByRole('heading', { name: 'Check your email' }).waitFor();
    await owner.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Outgoing mail' }).click();
    const signInRow = kept('Portal sign-in link');
    await signInRow.waitFor({ timeout: 30_000 });
    const signInMail = signInRow.getByRole('link').first();
    await signInMail.click();
    const signInUrl =
      (await owner
        .getByRole('list', { name: 'Links in this mail' })
        .getByRole('link', { name: /\/requests\/sign-in\// })
        .first()
        .getAttribute('href')) ?? '';
    expect(signInUrl).toContain('/requests/sign-in/');
    await customer.goto(signInUrl);
    await customer.getByRole('button', { name: 'Sign in' }).click();
    await customer.waitForURL(/\/requests$/);
    await customer.getByRole('link', { name: 'Printer on fire' }).waitFor();
    await axe(customer, 'portal requests');

    // The owner sees the rating on the ticket.
    await owner
      .getByRole('navigation', { name: 'Views' })
      .getByRole('link', { name: /^Solved/ })
      .click();
    await owner.getByRole('link', { name: /Printer on fire/ }).click();
    await owner.getByText(/Quick, and the printer survived\./).waitFor({ timeout: 20_000 });

    // Refreshing without a session on the sign-in screen (401) is the one failure expected.
    expect(errors.filter((e) => !/401 \(Unauthorized\)|^401 POST \/v1\/auth\/refresh$/.test(e))).toEqual([]);
  }, 420_000);
});
