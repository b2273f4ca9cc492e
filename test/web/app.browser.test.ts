// The agent web app in a real browser (Debian's Chromium through playwright-core, test/support/browser.ts),
// end to end against one service: sign up, create the first workspace, see a customer's mail
// (posted to the inbound route for a forwarding mailbox made over the API) arrive live in the
// inbox, then keyboard only: open it (j, Enter), reply (r, Ctrl+Enter), see the reply reach the
// outbound stand-in (test/support/mail-catcher.ts, the system mailer), see a colleague's note arrive live,
// solve it (e). A lost socket shows "Reconnecting…" and what happened meanwhile arrives once it is
// back (seq-gap replay). Sign out, then sign in again through the two-factor step. axe-core finds
// no serious or critical problem on the sign-in, inbox and ticket screens; nothing overflows
// 360 px, where every navigation entry is reachable in the menu's drawer (light and dark).
// SCREENSHOTS=1 writes app-inbox, app-ticket and app-menu-phone (the drawer at 360 px) into
// docs/screenshots/.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Secret, TOTP } from 'otpauth';
import type { Browser, BrowserContext, Page, WebSocketRoute } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, docsScreenshot, launchBrowser, seriousViolations } from '../support/browser.js';
import { addMember, type Service, startService } from '../support/helpers.js';
import { type MailCatcher, startMailCatcher } from '../support/mail-catcher.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';
import { ensureWebApp } from '../support/web-app.js';

const run = browserAvailable();
const INBOUND_SECRET = 'test-inbound-secret-0123456789';

/** A free loopback port (the service's PUBLIC_URL must name its own, for the socket's address and Origin). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

describe.runIf(run)('the agent web app in a browser', () => {
  let svc: Service;
  let own: OwnDatabase;
  let mail: MailCatcher;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const errors: string[] = [];
  const sockets = new Set<WebSocketRoute>();
  let socketsCut = false;
  const email = `ann-${randomUUID().slice(0, 8)}@acme.test`;
  const password = 'a long enough password';
  let token = '';
  let workspace = '';
  let forwarding = '';
  let bob: { email: string; password: string } = { email: '', password: '' };
  /** The number of the ticket the customer's mail opened. */
  let printer = 0;
  const as = () => ({ token, workspace });

  beforeAll(async () => {
    // A database of its own on PostgreSQL: the inbound and outbound job queues are one per database.
    const [port, catcher] = await Promise.all([freePort(), startMailCatcher(), ensureWebApp()]);
    mail = catcher;
    own = await ownDatabase('app_browser');
    svc = await startService(
      {
        ...own.env,
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        INBOUND_DOMAIN: 'in.helpdesk.test',
        MAIL_ALLOW_PRIVATE: 'true',
        SMTP_URL: mail.smtpUrl('Help desk <help@helpdesk.test>'),
      },
      { email: { workers: 1, pollSeconds: 0.5, sweepMs: 500, jitter: 0, retryDelaysMs: [500] } },
    );
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    // The page's sockets pass through here, so that a test can cut them (a lost connection) and
    // refuse new ones until it lets them through again.
    await page.routeWebSocket(/\/socket\/websocket/, (ws) => {
      sockets.add(ws);
      if (socketsCut) ws.close({ code: 4000, reason: 'cut by the test' });
      else ws.connectToServer();
    });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(`console: ${m.text()}`);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
    await mail?.close();
    await own?.drop();
  });

  const noSeriousViolations = async (screen: string) => {
    const v = await seriousViolations(page);
    expect(v, `${screen}: ${JSON.stringify(v, null, 2)}`).toEqual([]);
  };

  it('signs up, creates the first workspace and lands in the inbox, live', async () => {
    await page.goto(`${svc.url}/`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    await noSeriousViolations('sign in');

    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel('Your name').fill('Ann Agent');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();

    await page.getByRole('heading', { name: 'Create your workspace' }).waitFor();
    await page.getByLabel('Workspace name').fill('Acme Support');
    await page.getByRole('button', { name: 'Create workspace' }).click();

    await page.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/inbox');
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
    await page.getByText('No tickets here.').waitFor();

    // The API, for the setup a settings screen would do (mailboxes come with the settings slice).
    const login = await svc.api.post('/v1/auth/login', { email, password });
    expect(login.status, login.text).toBe(200);
    token = login.body.access_token;
    const me = await svc.api.get('/v1/me', { token });
    expect(me.body.workspaces.map((w: { name: string }) => w.name)).toEqual(['Acme Support']);
    workspace = me.body.workspaces[0].id;
    const mb = await svc.api.post('/v1/mailboxes', { name: 'Support', email: 'support@acme.test' }, as());
    expect(mb.status, mb.text).toBe(201);
    forwarding = mb.body.forwarding_address;
    // Tickets already there, older than the mail to come (a fuller list for the screenshot).
    for (const [subject, name, tags] of [
      ['Invoice shows the wrong VAT number', 'Dana Buyer', ['billing']],
      ['Can I change my delivery address?', 'Eli Shopper', []],
      ['Password reset mail never arrives', 'Fay User', ['account', 'urgent']],
    ] as const) {
      const tk = await svc.api.post(
        '/v1/tickets',
        {
          subject,
          contact: { email: `${name.split(' ')[0]!.toLowerCase()}@customer.test`, name },
          body_html: `<p>${subject}: can you help?</p>`,
          tags: [...tags],
        },
        as(),
      );
      expect(tk.status, tk.text).toBe(201);
    }
  });

  it('shows a customer’s mail in the inbox as it arrives, without a reload', async () => {
    const raw = [
      'From: Casey Customer <casey@customer.test>',
      'To: support@acme.test',
      'Subject: Printer on fire',
      `Message-ID: <${randomUUID()}@customer.test>`,
      `Date: ${new Date().toUTCString()}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'My printer is on fire. What do I do?',
      '',
    ].join('\r\n');
    const r = await svc.api.req('POST', `/v1/inbound/email?to=${encodeURIComponent(forwarding)}`, {
      raw,
      headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': INBOUND_SECRET },
    });
    expect(r.status, r.text).toBe(202);
    await page.getByRole('link', { name: /Password reset mail never arrives/ }).waitFor();
    const row = page.getByRole('link', { name: /Printer on fire/ });
    await row.waitFor({ timeout: 20_000 });
    await expect.poll(() => row.textContent()).toContain('Casey Customer');
    printer = (await svc.api.get('/v1/tickets?q=printer', as())).body.data[0].number;
    // On top (the newest), and the sidebar's count followed.
    expect(await page.locator('.ticket-row').first().textContent()).toContain('Printer on fire');
    await expect
      .poll(() => page.getByRole('link', { name: /^Open/ }).first().textContent(), { timeout: 5000 })
      .toMatch(/Open\s*4/);
    await noSeriousViolations('inbox');
    await docsScreenshot(page, 'app-inbox');
    // Dark mode follows the system, with the same contrast checks.
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await page.evaluate<string>('getComputedStyle(document.body).backgroundColor')).not.toBe(
      'rgb(255, 255, 255)',
    );
    await noSeriousViolations('inbox, dark');
    await page.emulateMedia({ colorScheme: 'light' });

    // Search: / focuses the box, Enter applies it (and puts it in the address).
    await page.locator('body').click({ position: { x: 700, y: 5 } });
    await page.keyboard.press('/');
    await expect.poll(() => page.evaluate<string>("document.activeElement?.id ?? ''")).toBe('ticket-search');
    await page.keyboard.type('invoice');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.ticket-row').count()).toBe(1);
    expect(await page.locator('.ticket-row').first().textContent()).toContain('Invoice shows the wrong VAT number');
    expect(new URL(page.url()).searchParams.get('q')).toBe('invoice');
    await page.keyboard.press('Escape');
    await page.goto(`${svc.url}/inbox`);
    await expect.poll(() => page.locator('.ticket-row').count()).toBe(4);
  });

  it('opens, replies to and solves the ticket with the keyboard alone; a colleague’s note arrives live', async () => {
    await page.locator('body').click({ position: { x: 700, y: 5 } }); // nothing focused: keys go to the page
    await page.keyboard.press('j');
    await expect
      .poll(() => page.evaluate<string>("document.activeElement?.textContent ?? ''"))
      .toContain('Printer on fire');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `#${printer} Printer on fire` }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/tickets/${printer}`);
    await page.getByText('My printer is on fire. What do I do?').waitFor();
    // A label added elsewhere shows at once.
    const labelled = await svc.api.patch(`/v1/tickets/${printer}`, { add_tags: ['hardware'] }, as());
    expect(labelled.status, labelled.text).toBe(200);
    await page.getByRole('list', { name: 'Labels' }).getByText('hardware').waitFor({ timeout: 5000 });
    await noSeriousViolations('ticket');

    await page.keyboard.press('r');
    await expect.poll(() => page.evaluate<string>("document.activeElement?.id ?? ''")).toBe('composer-text');
    await page.keyboard.type('Unplug it and step away. We are sending a technician.');
    await page.keyboard.press('Control+Enter');
    await page.getByRole('status').filter({ hasText: 'Reply sent.' }).waitFor();
    await page.locator('.message-outbound').getByText('Unplug it and step away.').waitFor();

    // The outbound stand-in got it, addressed to the customer.
    await expect
      .poll(() => mail.received.find((m) => m.to.includes('casey@customer.test'))?.text ?? '', { timeout: 15_000 })
      .toContain('Unplug it and step away.');
    await page.getByText('Sent', { exact: true }).waitFor({ timeout: 10_000 });

    // A colleague (the API) writes a note: it appears without a reload.
    const note = await svc.api.post(
      `/v1/tickets/${printer}/messages`,
      { kind: 'note', body_html: '<p>Technician booked for 3 pm.</p>' },
      as(),
    );
    expect(note.status, note.text).toBe(201);
    await page.locator('.message-note').getByText('Technician booked for 3 pm.').waitFor({ timeout: 5000 });

    await page.keyboard.press('Escape'); // out of the text box
    await page.keyboard.press('e');
    await page.locator('.ticket-meta .status').filter({ hasText: 'Solved' }).waitFor();
    expect((await svc.api.get(`/v1/tickets/${printer}`, as())).body.status).toBe('solved');
    await docsScreenshot(page, 'app-ticket');
  });

  it('says “Reconnecting…” while the socket is lost, and shows what was missed once it is back', async () => {
    socketsCut = true;
    for (const ws of sockets) await ws.close({ code: 4000, reason: 'cut by the test' }).catch(() => {});
    sockets.clear();
    await page.getByRole('status').filter({ hasText: 'Reconnecting…' }).waitFor({ timeout: 10_000 });
    const missed = await svc.api.post(
      `/v1/tickets/${printer}/messages`,
      { kind: 'note', body_html: '<p>Written while you were offline.</p>' },
      as(),
    );
    expect(missed.status).toBe(201);
    socketsCut = false;
    await page.getByRole('status').filter({ hasText: 'Live' }).waitFor({ timeout: 15_000 });
    await page.getByText('Written while you were offline.').waitFor({ timeout: 5000 });
    expect(await page.getByText('Written while you were offline.').count()).toBe(1);
  });

  it('shows a second agent on the ticket, replying and typing; their inbox gets new tickets live', async () => {
    const owner = { token, userId: '', email, password };
    bob = await addMember(svc, { owner, workspaceId: workspace, as: as() }, 'agent', 'Bob Agent');
    const second = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    try {
      const page2 = await second.newPage();
      await page2.goto(`${svc.url}/tickets/${printer}`);
      await page2.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page2.getByLabel('Email').fill(bob.email);
      await page2.getByLabel('Password').fill(bob.password);
      await page2.getByRole('button', { name: 'Sign in', exact: true }).click();
      // Back where the link pointed, after signing in.
      await page2.getByRole('heading', { name: `#${printer} Printer on fire` }).waitFor();
      await page.getByText('Also here: Bob Agent').waitFor({ timeout: 5000 });
      await page2.getByText('Also here: Ann Agent').waitFor({ timeout: 5000 });

      await page2.getByLabel(/Reply to/).fill('Let me check the warranty');
      await page.getByText('Bob Agent is typing…').waitFor({ timeout: 5000 });
      await page.getByText('Also here: Bob Agent (replying)').waitFor({ timeout: 5000 });

      await page2.getByRole('link', { name: '← Inbox' }).click();
      await page2.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
      await page.getByText('Also here: Bob Agent').waitFor({ state: 'detached', timeout: 5000 });
      const tk = await svc.api.post(
        '/v1/tickets',
        { subject: 'Toner smells of smoke', contact: { email: 'gus@customer.test', name: 'Gus Customer' } },
        as(),
      );
      expect(tk.status).toBe(201);
      await page2.getByRole('link', { name: /Toner smells of smoke/ }).waitFor({ timeout: 5000 });
    } finally {
      await second.close();
    }
  });

  it('fits 360 px: nothing overflows sideways on the inbox and the ticket; every navigation entry is in the menu', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    try {
      const overflow = () => page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(await overflow()).toBeLessThanOrEqual(0);
      await page.keyboard.press('Escape'); // back to the inbox
      await page.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
      expect(await overflow()).toBeLessThanOrEqual(0);
      // The live state stays in the top bar; the sidebar is a drawer behind Menu.
      await page.getByRole('status').filter({ hasText: 'Live' }).waitFor();
      await page.getByRole('button', { name: 'Menu' }).click();
      const drawer = page.getByRole('dialog', { name: 'Menu' });
      // Reachable: Playwright's trial click scrolls each into view and checks nothing covers it.
      for (const name of ['Unassigned', 'Mine', 'Open', 'Pending', 'On hold', 'Solved', 'Spam']) {
        await drawer.getByRole('link', { name: new RegExp(`^${name}\\b`) }).click({ trial: true, timeout: 5000 });
      }
      // One solved ticket: its count says so in the singular ("1 tickets" before).
      await drawer.getByRole('link', { name: 'Solved 1 ticket', exact: true }).waitFor();
      for (const name of ['Chats', 'Knowledge base', 'Reports', 'Settings']) {
        await drawer.getByRole('link', { name, exact: true }).click({ trial: true, timeout: 5000 });
      }
      await drawer.getByRole('button', { name: /^Notifications/ }).click({ trial: true, timeout: 5000 });
      await drawer.getByRole('button', { name: /^Get started/ }).click({ trial: true, timeout: 5000 });
      await drawer.getByRole('button', { name: /Workspace: Acme Support/ }).click({ trial: true, timeout: 5000 });
      expect(await overflow()).toBeLessThanOrEqual(0);
      await noSeriousViolations('menu, 360 px');
      await docsScreenshot(page, 'app-menu-phone');
      await page.emulateMedia({ colorScheme: 'dark' });
      await noSeriousViolations('menu, 360 px, dark');
      await page.emulateMedia({ colorScheme: 'light' });
      // Following an entry closes the menu.
      await drawer.getByRole('link', { name: 'Reports', exact: true }).click();
      await page.getByRole('heading', { name: 'Reports', level: 1 }).waitFor();
      await drawer.waitFor({ state: 'detached' });
      expect(await overflow()).toBeLessThanOrEqual(0);
      await page.goto(`${svc.url}/inbox`);
      await page.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
      await noSeriousViolations('inbox, 360 px');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('signs out, and signs in again through the two-factor step', async () => {
    const start = await svc.api.post('/v1/me/mfa/totp', undefined, { token });
    expect(start.status, start.text).toBe(200);
    const code = new TOTP({ secret: Secret.fromBase32(start.body.secret), digits: 6, period: 30 }).generate();
    const confirm = await svc.api.post('/v1/me/mfa/totp/confirm', { code }, { token });
    expect(confirm.status, confirm.text).toBe(200);
    const recovery: string = confirm.body.recovery_codes[0];

    await page.getByRole('button', { name: /Workspace: Acme Support/ }).click();
    await page.getByRole('menuitem', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // Signed out for real: a reload does not bring the session back.
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: /./ }).waitFor();

    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Two-factor code' }).waitFor();
    await page.getByLabel('Code').fill(recovery);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
    // A reload keeps the session (the refresh cookie) and the workspace.
    await page.reload();
    await page.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
    await page.getByRole('button', { name: /Workspace: Acme Support/ }).waitFor();
  });

  it('holds two accounts in one browser: add one, switch between them, sign one out', async () => {
    const menu = () => page.getByRole('button', { name: /^Workspace: Acme Support/ });
    await menu().click();
    await page.getByRole('menuitem', { name: 'Add another account…' }).click();
    await page.getByRole('heading', { name: 'Add an account' }).waitFor();
    await page.getByLabel('Email').fill(bob.email);
    await page.getByLabel('Password').fill(bob.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
    await menu().filter({ hasText: 'Bob Agent' }).waitFor();

    await menu().click();
    await page.getByRole('menuitem', { name: `Switch to Ann Agent (${email})` }).click();
    await menu().filter({ hasText: 'Ann Agent' }).waitFor();
    await page.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
    // The reload keeps the account chosen last.
    await page.reload();
    await menu().filter({ hasText: 'Ann Agent' }).waitFor();

    await menu().click();
    await page.getByRole('menuitem', { name: `Switch to Bob Agent (${bob.email})` }).click();
    await menu().filter({ hasText: 'Bob Agent' }).waitFor();
    // Signing Bob out leaves Ann signed in.
    await menu().click();
    await page.getByRole('menuitem', { name: 'Sign out', exact: true }).click();
    await menu().filter({ hasText: 'Ann Agent' }).waitFor();
    await page.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
  });

  it('at a sixth account, offers the five to sign one out of, then signs the new one in', async () => {
    // Four more people signed in on this browser (Ann and four others: five).
    const people = Array.from({ length: 5 }, (_, i) => ({
      name: `Extra ${i + 1}`,
      email: `extra-${i + 1}-${randomUUID().slice(0, 8)}@acme.test`,
      password: 'another long password',
    }));
    const ids: string[] = [];
    for (const p of people) {
      const r = await svc.api.post('/v1/auth/register', p);
      expect(r.status).toBe(201);
      ids.push(r.body.user.id);
    }
    for (const p of people.slice(0, 4)) {
      const status = await page.evaluate(
        async (body) =>
          (
            await fetch('/v1/auth/login', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            })
          ).status,
        { email: p.email, password: p.password },
      );
      expect(status).toBe(200);
    }
    const menu = () => page.getByRole('button', { name: /^Workspace: Acme Support/ });
    await menu().click();
    await page.getByRole('menuitem', { name: 'Add another account…' }).click();
    await page.getByRole('heading', { name: 'Add an account' }).waitFor();
    const sixth = people[4]!;
    await page.getByLabel('Email').fill(sixth.email);
    await page.getByLabel('Password').fill(sixth.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign out of an account to add this one' }).waitFor();
    await page.getByRole('alert').filter({ hasText: '5 accounts' }).waitFor();
    expect(await page.locator('.account-list li').count()).toBe(5);
    await noSeriousViolations('too many accounts');
    // Signing Extra 1 out makes room: the new account is signed in, and Extra 1 is gone.
    await page.getByRole('button', { name: 'Sign out Extra 1' }).click();
    await page.getByRole('heading', { name: 'Create your workspace' }).waitFor();
    const accounts = await page.evaluate(async () =>
      (
        (await (await fetch('/v1/auth/accounts', { method: 'POST' })).json()) as {
          data: Array<{ user: { email: string } }>;
        }
      ).data.map((a) => a.user.email),
    );
    expect(accounts).toHaveLength(5);
    expect(accounts).toContain(sixth.email);
    expect(accounts).not.toContain(people[0]!.email);
    // Back to Ann for the tests after this one, the others signed out.
    for (const userId of ids.slice(1))
      await page.evaluate(async (id) => {
        await fetch('/v1/auth/logout', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ user_id: id }),
        });
      }, userId);
    await page.goto(`${svc.url}/inbox`);
    await menu().filter({ hasText: 'Ann Agent' }).waitFor();
  });

  it('pages the list by cursor as it scrolls', async () => {
    // 55 pending tickets: a page is 50.
    for (let i = 1; i <= 55; i++) {
      const tk = await svc.api.post(
        '/v1/tickets',
        { subject: `Backlog item ${i}`, contact: { email: 'backlog@customer.test' }, status: 'pending' },
        as(),
      );
      expect(tk.status).toBe(201);
    }
    await page.getByRole('link', { name: /^Pending/ }).click();
    await page.getByRole('heading', { name: 'Pending', level: 1 }).waitFor();
    await expect.poll(() => page.locator('.ticket-row').count()).toBe(50);
    await page.locator('.list-end').scrollIntoViewIfNeeded();
    await expect.poll(() => page.locator('.ticket-row').count()).toBe(55);
    const subjects = await page.locator('.ticket-row .subject').allTextContents();
    expect(new Set(subjects).size).toBe(55);
    expect(subjects.map((t) => t.replace(/^#\d+\s*/, '')).sort()).toEqual(
      Array.from({ length: 55 }, (_, i) => `Backlog item ${i + 1}`).sort(),
    );
  });

  it('logged no error in the page', () => {
    // The failed sign-in's 401 and the sixth account's 409 are the requests expected to fail.
    // Chromium's own line for a frame sent as the socket closes (the "Reconnecting…" step cuts
    // the socket; the phoenix client checks the state before it sends, Chromium may have moved on
    // in between) is the browser's, not the app's: nothing a person sees (a CI run caught it once).
    const expected = /(401 \(Unauthorized\)|409 \(Conflict\)|WebSocket is already in CLOSING or CLOSED state)/;
    expect(errors.filter((e) => !expected.test(e))).toEqual([]);
  });
});
