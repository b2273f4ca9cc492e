// The help center in a real browser (Debian's Chromium through playwright-core, test/support/browser.ts):
// a reader opens the home page, searches, opens an article, on a desktop and on a phone; axe-core
// finds no serious or critical accessibility problem on any page; nothing an article or a title
// carries runs as script; a reader whose system is set to dark gets the dark variant.
// SCREENSHOTS=1 writes the pages' pictures into docs/screenshots/.
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
import { newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';

const run = browserAvailable();

describe.runIf(run)('the help center in a browser', () => {
  let svc: Service;
  let browser: Browser;
  let t: Tenant;
  let base: string;
  const scripts: string[] = [];

  const post = async (path: string, body: Record<string, unknown>) => {
    const r = await svc.api.post(path, body, t.as);
    if (r.status !== 201) throw new Error(`${path}: ${r.status} ${r.text}`);
    return r.body;
  };

  /** A page that records every dialog and console error (an XSS payload would open one). */
  async function open(viewport = { width: 1280, height: 900 }): Promise<Page> {
    const page = await browser.newPage({ viewport });
    page.on('dialog', (d) => {
      scripts.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    return page;
  }

  beforeAll(async () => {
    svc = await startService();
    browser = await launchBrowser();
    t = await newTenant(svc.api, 'Acme Support');
    const ws = await svc.api.patch(
      '/v1/workspace',
      { settings: { help_center_enabled: true, help_center_title: 'Acme Help', brand_color: '#1d4ed8' } },
      t.as,
    );
    expect(ws.status).toBe(200);
    base = `${svc.url}/hc/${ws.body.slug}`;
    const billing = await post('/v1/kb/collections', {
      name: 'Billing',
      description: 'Invoices, refunds and payment methods.',
    });
    const account = await post('/v1/kb/collections', { name: 'Your account', description: 'Sign-in and security.' });
    await post('/v1/kb/articles', {
      collection_id: billing.id,
      title: 'How do I get a refund?',
      excerpt: 'Refunds take five to ten working days.',
      body_html:
        '<h2>Before you ask</h2><p>A <strong>refund</strong> goes back to the card you paid with.</p>' +
        '<h3>How long it takes</h3><p>Five to ten working days.</p><p><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="Receipt"></p>',
      status: 'published',
    });
    await post('/v1/kb/articles', {
      collection_id: billing.id,
      title: 'Rechnungen herunterladen',
      body_html: '<p>Alle Rechnungen finden Sie unter Konto → Abrechnung.</p>',
      status: 'published',
      language: 'de',
    });
    await post('/v1/kb/articles', {
      collection_id: account.id,
      title: '<img src=x onerror=alert("title")> Reset your password',
      body_html:
        '<p>Open <a href="javascript:alert(1)">this</a> and <img src=x onerror="alert(2)"> reset it.</p><script>alert(3)</script>',
      status: 'published',
    });
    await post('/v1/kb/articles', { collection_id: billing.id, title: 'Draft: new prices', status: 'draft' });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('home → search → article: what a reader sees, with no serious accessibility problem', async () => {
    const page = await open();
    await page.goto(base);
    expect(await page.title()).toContain('Acme Help');
    expect(await page.locator('h1').count()).toBe(1);
    expect(await page.getByRole('link', { name: /Billing/ }).count()).toBeGreaterThan(0);
    expect(await page.getByText('Draft: new prices').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await docsScreenshot(page, 'help-center-home');

    // Search by the label a screen reader announces.
    await page.getByLabel('Search articles').fill('refund');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/\/search\?q=refund/);
    const hit = page.getByRole('link', { name: 'How do I get a refund?' });
    expect(await hit.count()).toBe(1);
    expect(await page.locator('mark').first().textContent()).toMatch(/refund/i);
    expect(await seriousViolations(page)).toEqual([]);
    await docsScreenshot(page, 'help-center-search');

    await hit.click();
    await page.waitForURL(/\/articles\//);
    expect(await page.locator('h1').allTextContents()).toEqual(['How do I get a refund?']);
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    expect(await page.getByRole('img', { name: 'Receipt' }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await docsScreenshot(page, 'help-center-article');
    await page.close();
  });

  it('finds a German article by its German stem and marks it lang="de"', async () => {
    const page = await open();
    await page.goto(`${base}/search?q=Rechnung`);
    await page.getByRole('link', { name: 'Rechnungen herunterladen' }).click();
    await page.waitForURL(/\/articles\//);
    expect(await page.locator('html').getAttribute('lang')).toBe('de');
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  });

  it('runs nothing a title or a body carries', async () => {
    const page = await open();
    await page.goto(`${base}/search?q=password`);
    await page.getByRole('link', { name: /Reset your password/ }).click();
    await page.waitForURL(/\/articles\//);
    // The title is text, the body's script and handlers are gone.
    expect(await page.locator('h1').textContent()).toContain('<img src=x onerror=alert("title")>');
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(0);
    expect(scripts).toEqual([]);
    await page.close();
  });

  it('follows a dark colour scheme: dark page, light text, readable brand and links, no serious problem', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'dark' });
    const page = await context.newPage();
    for (const path of ['', '/search?q=refund', '/articles/how-do-i-get-a-refund']) {
      await page.goto(base + path);
      const look = await coloursOf(page, {
        background: ['body', 'backgroundColor'],
        text: ['body', 'color'],
        link: ['main a, footer a', 'color'],
        header: ['header.site', 'backgroundColor'],
        headerText: ['header.site .brand', 'color'],
      });
      // The page is dark and its text light; the header keeps the brand colour with its text.
      expect(contrast(look.background, '#000000'), path).toBeLessThan(2);
      expect(contrast(look.text, look.background), path).toBeGreaterThanOrEqual(7);
      expect(look.header, path).toBe('#1d4ed8');
      expect(contrast(look.headerText, look.header), path).toBeGreaterThanOrEqual(4.5);
      // Links are the brand colour made light enough for the dark page.
      expect(contrast(look.link, look.background), path).toBeGreaterThanOrEqual(4.5);
      expect(await seriousViolations(page), path).toEqual([]);
      if (path === '') await docsScreenshot(page, 'help-center-dark');
    }
    await context.close();
  });

  it('fits a phone: no sideways scrolling, the same checks pass', async () => {
    const page = await open({ width: 375, height: 740 });
    for (const path of ['', '/search?q=refund']) {
      await page.goto(base + path);
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
      expect(overflow, path).toBeLessThanOrEqual(0);
      expect(await seriousViolations(page)).toEqual([]);
    }
    await docsScreenshot(page, 'help-center-phone');
    await page.close();
  });
});
