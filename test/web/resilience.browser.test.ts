import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launchBrowser, seriousViolations } from '../support/browser.js';
import { freePort } from '../support/child-process.js';
import { newTenant, type Service, startService, type Tenant } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';
import { fixture } from '../support/pictures.js';
import { ensureWebApp } from '../support/web-app.js';

const run = browserAvailable();
const INBOUND_SECRET = 'test-inbound-secret-0123456789';
/**
 * Each test stops and starts the service and waits for the browser to notice: on CI's two busy
 * cores that can take longer than vitest's default minute.
 */
const SLOW = 120_000;

describe.runIf(run)('the agent web app through outages', { timeout: SLOW }, () => {
  let svc: Service;
  let own: OwnDatabase;
  let browser: Browser;
  let port = 0;
  let tenant: Tenant;
  let forwarding = '';
  let printer = 0;
  const contexts: BrowserContext[] = [];
  /** Exceptions the pages did not catch (console errors are expected here: refused connections, 429s). */
  const uncaught: string[] = [];
  /** The page at http://127.0.0.1:PORT, signed in, that every test goes on with. */
  let page: Page;

  const at = (host: string) => `http://${host}:${port}`;
  const liveState = (p: Page) => p.locator('.sidebar .live');

  async function signedInPage(host: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    contexts.push(context);
    const p = await context.newPage();
    p.on('pageerror', (e) => uncaught.push(`${host}: ${e.message}`));
    await p.goto(`${at(host)}/login`);
    await p.getByLabel('Email').fill(tenant.owner.email);
    await p.getByLabel('Password').fill(tenant.owner.password);
    await p.getByRole('button', { name: 'Sign in', exact: true }).click();
    await p.waitForURL((u) => u.pathname === '/inbox');
    return p;
  }

  const noSeriousViolations = async (screen: string) => {
    const v = await seriousViolations(page);
    expect(v, `${screen}: ${JSON.stringify(v, null, 2)}`).toEqual([]);
  };

  async function postMail(subject: string): Promise<void> {
    const raw = [
      'From: Casey Customer <casey@customer.test>',
      `To: ${forwarding}`,
      `Subject: ${subject}`,
      `Message-ID: <${Date.now()}.${Math.random()}@customer.test>`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      'It happened again.',
      '',
    ].join('\r\n');
    const r = await svc.api.req('POST', `/v1/inbound/email?to=${encodeURIComponent(forwarding)}`, {
      raw,
      headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': INBOUND_SECRET },
    });
    expect(r.status, r.text).toBe(202);
  }

  beforeAll(async () => {
    // A database of its own on PostgreSQL: the inbound mail's job queue is one per database.
    [port] = await Promise.all([freePort(), ensureWebApp()]);
    own = await ownDatabase('app_resilience');
    // PUBLIC_URL empty: unset, so its default (http://localhost:PORT) and the socket's default origins.
    svc = await startService(
      { ...own.env, PORT: String(port), PUBLIC_URL: '', INBOUND_DOMAIN: 'in.helpdesk.test' },
      {},
      { restartable: true },
    );
    browser = await launchBrowser();
    tenant = await newTenant(svc.api);
    const beta = await svc.api.post('/v1/workspaces', { name: 'Beta Desk' }, { token: tenant.owner.token });
    expect(beta.status, beta.text).toBe(201);
    const mb = await svc.api.post('/v1/mailboxes', { name: 'Support', email: 'support@acme.test' }, tenant.as);
    expect(mb.status, mb.text).toBe(201);
    forwarding = mb.body.forwarding_address;
    // The owner's picture, on the ticket's row: its URL is written with PUBLIC_URL (localhost).
    const form = new FormData();
    const photo = fixture('photo.webp');
    form.append('file', new Blob([photo], { type: 'image/webp' }), 'me.webp');
    const avatar = await fetch(`${svc.url}/v1/me/avatar`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${tenant.owner.token}` },
      body: form,
    });
    expect(avatar.status, await avatar.text()).toBe(200);
    const tk = await svc.api.post(
      '/v1/tickets',
      {
        subject: 'Printer on fire',
        contact: { email: 'casey@customer.test', name: 'Casey Customer' },
        assignee_id: tenant.owner.userId,
      },
      tenant.as,
    );
    expect(tk.status, tk.text).toBe(201);
    printer = tk.body.number;
  }, 180_000);

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await svc?.stop();
    await own?.drop();
    expect(uncaught).toEqual([]);
  });

  it('is live at both loopback addresses while PUBLIC_URL is unset', async () => {
    expect(svc.rt.deps.config.publicUrl).toBe(`http://localhost:${port}`);
    const other = await signedInPage('localhost');
    await liveState(other).filter({ hasText: 'Live' }).waitFor({ timeout: 20_000 });
    page = await signedInPage('127.0.0.1');
    await liveState(page).filter({ hasText: 'Live' }).waitFor({ timeout: 20_000 });
    await page.getByRole('link', { name: /Printer on fire/ }).waitFor();
    // Pictures too: the API names them at localhost, the page loads them from its own origin.
    const picture = page.getByRole('img', { name: 'Assigned to Olivia Owner' }).locator('img');
    expect(await picture.getAttribute('src')).toMatch(/^\/v1\/images\//);
    await expect
      .poll(() => picture.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth))
      .toBeGreaterThan(0);
  });

  it('keeps the shell when a ticket is opened with the server away, and recovers when it is back on the same port', async () => {
    // Nothing below may reload the page: this mark would go.
    await page.evaluate(() => {
      (globalThis as { notReloaded?: boolean }).notReloaded = true;
    });
    await svc.stop();
    await liveState(page).filter({ hasText: 'Reconnecting…' }).waitFor({ timeout: 20_000 });

    // Opening the ticket needs its screen's code file, which cannot be fetched now.
    await page.getByRole('link', { name: /Printer on fire/ }).click();
    const failed = page.getByRole('heading', { name: 'This page could not be loaded' });
    await failed.waitFor({ timeout: 20_000 });
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/tickets/${printer}`);
    // The shell stays: its navigation and the live state.
    await page
      .getByRole('navigation', { name: 'Views' })
      .getByRole('link', { name: /Unassigned/ })
      .waitFor();
    await liveState(page).filter({ hasText: 'Reconnecting…' }).waitFor();
    // Retry while the server is still away: the same error again, still inside the shell.
    await page.getByRole('button', { name: 'Retry' }).click();
    await failed.waitFor();
    await page.getByRole('button', { name: 'Retry' }).waitFor();
    await noSeriousViolations('a page that could not be loaded');

    await svc.restart();
    // Back by itself: live again, and the ticket opens without pressing anything.
    await liveState(page).filter({ hasText: 'Live' }).waitFor({ timeout: 20_000 });
    await page.getByRole('heading', { name: `#${printer} Printer on fire` }).waitFor({ timeout: 40_000 });

    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: /^Open/ }).click();
    await page.getByRole('heading', { name: 'Open', level: 1 }).waitFor();
    await postMail('The printer is on fire again');
    const again = page.getByRole('link', { name: /The printer is on fire again/ });
    await again.waitFor({ timeout: 30_000 });

    // Away once more, now that the ticket screen's code is here: its data cannot be loaded, and the
    // page says so with Try again; back, it loads by itself.
    await svc.stop();
    await liveState(page).filter({ hasText: 'Reconnecting…' }).waitFor({ timeout: 20_000 });
    await again.click();
    await page
      .getByText(/Could not load the ticket: Could not reach the help desk server/)
      .waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Try again' }).waitFor();
    await page.getByRole('navigation', { name: 'Views' }).waitFor();
    await svc.restart();
    await page.getByRole('heading', { name: /The printer is on fire again/ }).waitFor({ timeout: 30_000 });
    await page.getByText('It happened again.').waitFor();
    expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(true);
  });

  it('counts a 429 down, shows unknown counts as unknown, and sends the requests again when it ends', async () => {
    await svc.restart({ RATE_LIMIT_PER_MINUTE: '40' }, { rateLimitWindowMs: 15_000 });
    await liveState(page).filter({ hasText: 'Live' }).waitFor({ timeout: 20_000 });
    // The page's own session (its rate limit bucket): a refresh in the page gives its access token.
    const token = await page.evaluate(async () => {
      const nav = globalThis as unknown as {
        navigator: { locks: { request<T>(name: string, cb: () => Promise<T>): Promise<T> } };
        fetch: typeof fetch;
      };
      return nav.navigator.locks.request('helpdesk.refresh', async () => {
        const r = await nav.fetch('/v1/auth/refresh', {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
        return ((await r.json()) as { access_token: string }).access_token;
      });
    });
    const as = { token, workspace: tenant.workspaceId };
    // Use up the session's requests until the API says 429 with a few seconds to wait (a window
    // that is about to end is waited out, and used up again from its start).
    let retryAfter = 0;
    for (let round = 0; round < 5 && retryAfter < 10; round++) {
      let r = await svc.api.get('/v1/tickets/counts', as);
      while (r.status !== 429) r = await svc.api.get('/v1/tickets/counts', as);
      retryAfter = Number(r.headers.get('retry-after'));
      if (retryAfter < 10) {
        await expect
          .poll(async () => (await svc.api.get('/v1/tickets/counts', as)).status, { timeout: 20_000, interval: 250 })
          .toBe(200);
      }
    }
    expect(retryAfter).toBeGreaterThanOrEqual(10);

    // Another workspace: a new frame whose counts and list are not known yet.
    await page.getByRole('button', { name: /Workspace: Acme Support/ }).click();
    await page.getByRole('menuitemradio', { name: 'Beta Desk' }).click();
    const timer = page.getByRole('timer');
    await timer.waitFor({ timeout: 10_000 });
    const open = page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: /^Open/ });
    await expect.poll(() => open.getAttribute('aria-current')).toBe('page');
    expect(await open.textContent()).toContain('count unknown');
    const seconds = async () => Number(/Trying again in (\d+) second/.exec((await timer.textContent()) ?? '')?.[1]);
    const first = await seconds();
    expect(first).toBeGreaterThan(1);
    await expect.poll(seconds).toBeLessThan(first);
    await noSeriousViolations('rate limited');

    // The countdown ends: what waited is sent again, and the screen fills in by itself.
    await page.getByText('No tickets here.').waitFor({ timeout: 30_000 });
    await timer.waitFor({ state: 'detached' });
    await expect.poll(() => open.textContent()).toBe('Open0 tickets');
    await liveState(page).filter({ hasText: 'Live' }).waitFor({ timeout: 20_000 });
  });

  it('says which address to use when PUBLIC_URL is set and the app is opened at another one', async () => {
    await svc.restart({ PUBLIC_URL: at('localhost') });
    await page.reload();
    const state = liveState(page).filter({ hasText: 'Not live at this address' });
    await state.waitFor({ timeout: 30_000 });
    const link = state.getByRole('link', { name: at('localhost') });
    expect(await link.getAttribute('href')).toBe(`${at('localhost')}${new URL(page.url()).pathname}`);
    await noSeriousViolations('another address');
    // At the address it names, the app is live.
    const there = await signedInPage('localhost');
    await liveState(there).filter({ hasText: 'Live' }).waitFor({ timeout: 20_000 });
  });
});
