// The help center's public pages (/hc/{workspace_slug}/…): published articles only, 404 for
// drafts, unknown slugs, another workspace's articles and a help center that is off, old slugs
// 301, escaping and sanitized bodies, view counting per visitor and window, ETag and 304,
// sitemap and robots.txt, canonical and Open Graph tags, lang, search in an article's language,
// odd paths, and the page shell (landmarks, one h1, skip link, brand colours with contrast).

import { randomUUID } from 'node:crypto';
import { DomUtils } from 'htmlparser2';
import { beforeAll, describe, expect, it } from 'vitest';
import { contrast } from '../../../src/modules/help-center/look.js';
import { PageCache } from '../../../src/modules/help-center/page-cache.js';
import { newTenant, type Service } from '../../support/helpers.js';
import { all, type Center, helpCenterSuite, metaOf, ORIGIN, textOf } from './setup.js';

const suite = helpCenterSuite();
const { newCenter, post, page } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

describe('pages of published articles', () => {
  let c: Center;
  let billing: any;
  let pay: any;
  let draft: any;
  beforeAll(async () => {
    c = await newCenter({ brand_color: '#fde047', help_center_title: 'Acme Help' });
    billing = await post(c.t.as, '/v1/kb/collections', { name: 'Billing & Plans', description: 'Money <matters>' });
    await post(c.t.as, '/v1/kb/collections', { name: 'Empty' });
    pay = await post(c.t.as, '/v1/kb/articles', {
      collection_id: billing.id,
      title: 'How to pay an invoice',
      body_html: '<h1>Steps</h1><p>Open <b>Billing</b>, then pay.</p>',
      status: 'published',
    });
    await post(c.t.as, '/v1/kb/articles', { collection_id: billing.id, title: 'Refunds', status: 'published' });
    draft = await post(c.t.as, '/v1/kb/articles', {
      collection_id: billing.id,
      title: 'Secret pricing draft',
      body_html: '<p>not yet</p>',
    });
  });

  it('home: title, search box, collections with published counts, latest articles; no drafts', async () => {
    const r = await page(c.base);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(textOf(r.text, 'h1')).toEqual(['Acme Help']);
    expect(r.text).toContain('Billing &amp; Plans');
    expect(r.text).toContain('Money &lt;matters&gt;');
    expect(r.text).toContain('2 articles');
    expect(r.text).not.toContain('Empty'); // no published article: not listed
    expect(r.text).toContain(`href="${c.base}/billing-and-plans"`);
    expect(r.text).toContain(`href="${c.base}/articles/how-to-pay-an-invoice"`);
    expect(r.text).not.toContain('Secret pricing');
    const input = all(r.text, 'input').find((i) => i.attribs.name === 'q')!;
    expect(all(r.text, 'label').find((l) => l.attribs.for === input.attribs.id)).toBeDefined();
    expect(all(r.text, 'form')[0]!.attribs.action).toBe(`${c.base}/search`);
  });

  it('collection: its published articles, breadcrumb; an empty one renders its empty state', async () => {
    const r = await page(`${c.base}/billing-and-plans`);
    expect(r.status).toBe(200);
    expect(textOf(r.text, 'h1')).toEqual(['Billing & Plans']);
    expect(r.text).toContain('How to pay an invoice');
    expect(r.text).toContain('Refunds');
    expect(r.text).not.toContain('Secret pricing');
    const crumbs = all(r.text, 'nav').find((n) => n.attribs['aria-label'] === 'Breadcrumb')!;
    expect(DomUtils.textContent(crumbs).replace(/\s+/g, ' ').trim()).toBe('Acme Help Billing & Plans');
    const empty = await page(`${c.base}/empty`);
    expect(empty.status).toBe(200);
    expect(empty.text).toContain('No articles in this collection yet.');
  });

  it('article: title, body as stored, updated date, breadcrumb, one h1 (the body’s h1 goes down a level)', async () => {
    const r = await page(`${c.base}/articles/how-to-pay-an-invoice`);
    expect(r.status).toBe(200);
    expect(textOf(r.text, 'h1')).toEqual(['How to pay an invoice']);
    expect(r.text).toContain('<h2>Steps</h2><p>Open <b>Billing</b>, then pay.</p>');
    const time = all(r.text, 'time')[0]!;
    expect(time.attribs.datetime).toBe(new Date(pay.updated_at).toISOString());
    const crumbs = all(r.text, 'nav').find((n) => n.attribs['aria-label'] === 'Breadcrumb')!;
    expect(DomUtils.getElementsByTagName('a', crumbs).map((a) => a.attribs.href)).toEqual([
      c.base,
      `${c.base}/billing-and-plans`,
    ]);
    expect(DomUtils.textContent(crumbs)).toContain('How to pay an invoice');
  });

  it('drafts, unknown slugs and another workspace’s slugs are 404 pages in the help center’s look', async () => {
    const other = await newCenter({}, 'Other Co');
    await post(other.t.as, '/v1/kb/articles', { title: 'Only elsewhere', status: 'published' });
    expect((await page(`${other.base}/articles/only-elsewhere`)).status).toBe(200);
    for (const path of [
      `${c.base}/articles/${draft.slug}`,
      `${c.base}/articles/no-such-article`,
      `${c.base}/articles/only-elsewhere`,
      `${c.base}/no-such-collection`,
      `${c.base}/a/b/c`,
    ]) {
      const r = await page(path);
      expect(r.status, path).toBe(404);
      expect(r.headers.get('content-type'), path).toBe('text/html; charset=utf-8');
      expect(textOf(r.text, 'h1'), path).toEqual(['Page not found']);
      expect(r.text, path).toContain('Acme Help');
      expect(r.text, path).not.toContain('Secret pricing');
      expect(metaOf(r.text, 'robots'), path).toBe('noindex');
    }
    // Published in the other workspace's help center only: nothing of it here.
    expect((await page(`${c.base}/articles/only-elsewhere`)).text).not.toContain('Only elsewhere');
  });

  it('an unknown workspace, or one whose help center is off, is a plain 404 naming nothing', async () => {
    const off = await newTenant(svc.api, 'Closed Shop');
    const slug = (await svc.api.get('/v1/workspace', off.as)).body.slug;
    await post(off.as, '/v1/kb/articles', { title: 'Hidden answer', status: 'published' });
    for (const path of [
      `/hc/${slug}`,
      `/hc/${slug}/articles/hidden-answer`,
      '/hc/no-such-workspace-here',
      `/hc/${slug}/sitemap.xml`,
    ]) {
      const r = await page(path);
      expect(r.status, path).toBe(404);
      expect(r.text, path).not.toContain('Hidden answer');
      expect(r.text, path).not.toContain('Closed Shop');
    }
    // Turned on, the same page is there.
    await svc.api.patch('/v1/workspace', { settings: { help_center_enabled: true } }, off.as);
    expect((await page(`/hc/${slug}/articles/hidden-answer`)).status).toBe(200);
  });

  it('an old slug answers 301 to the article’s current address', async () => {
    const a = await post(c.t.as, '/v1/kb/articles', { title: 'Change your plan', status: 'published' });
    await svc.api.patch(`/v1/kb/articles/${a.id}`, { title: 'Switch plans' }, c.t.as);
    const r = await page(`${c.base}/articles/change-your-plan`);
    expect(r.status).toBe(301);
    expect(r.headers.get('location')).toBe(`${c.base}/articles/switch-plans`);
    expect((await page(`${c.base}/articles/switch-plans`)).status).toBe(200);
  });

  it('odd paths and characters are 404, never 500 nor JSON', async () => {
    for (const path of [
      '/hc/x/articles/..%2F..%2Fetc%2Fpasswd',
      `${c.base}/articles/..%2F..%2Fetc%2Fpasswd`,
      `${c.base}/articles/a%00b`,
      `${c.base}/articles/%E2%80%AE`,
      `${c.base}/articles/UPPER`,
      `${c.base}/articles/${'a'.repeat(150)}`,
      `${c.base}/%3Cscript%3E`,
      '/hc/a%00b',
      `${c.base}/assets/..%2F..%2Fpackage.json`,
    ]) {
      const r = await page(path);
      expect(r.status, path).toBe(404);
      expect(r.headers.get('content-type'), path).toMatch(/^text\/html/);
      expect(r.text, path).not.toContain('<script>');
    }
    // A search query the service cannot store or read: a 400 page, not a JSON body.
    for (const q of ['a%00b']) {
      const bad = await page(`${c.base}/search?q=${q}`);
      expect(bad.status, q).toBe(400);
      expect(bad.headers.get('content-type'), q).toMatch(/^text\/html/);
    }
    // Not a help center's path at all: the service's 404 (fetch resolves the dots, as browsers do:
    // /no-such-page; `/` itself is the agent web app's page since issue 25).
    expect((await page('/hc/%2E%2E/no-such-page')).status).toBe(404);
    // The home page's address with a slash at the end: the canonical one.
    const slash = await page(`${c.base}/`);
    expect(slash.status).toBe(301);
    expect(slash.headers.get('location')).toBe(c.base);
  });

  it('canonical URL, title, description and Open Graph tags', async () => {
    const r = await page(`${c.base}/articles/how-to-pay-an-invoice?utm_source=newsletter`);
    expect(r.status).toBe(200);
    const canonical = `${ORIGIN}${c.base}/articles/how-to-pay-an-invoice`;
    expect(all(r.text, 'link').find((l) => l.attribs.rel === 'canonical')?.attribs.href).toBe(canonical);
    expect(textOf(r.text, 'title')).toEqual(['How to pay an invoice – Acme Help']);
    expect(metaOf(r.text, 'description')).toBe('Steps Open Billing, then pay.');
    expect(metaOf(r.text, 'og:title')).toBe('How to pay an invoice');
    expect(metaOf(r.text, 'og:description')).toBe('Steps Open Billing, then pay.');
    expect(metaOf(r.text, 'og:url')).toBe(canonical);
    expect(metaOf(r.text, 'og:type')).toBe('article');
    expect(metaOf(r.text, 'og:site_name')).toBe('Acme Help');
    const home = await page(c.base);
    expect(all(home.text, 'link').find((l) => l.attribs.rel === 'canonical')?.attribs.href).toBe(`${ORIGIN}${c.base}`);
    expect(metaOf(home.text, 'og:type')).toBe('website');
  });

  it('the page shell: lang, viewport, landmarks, skip link, one h1, stylesheet with brand colours that contrast', async () => {
    const r = await page(`${c.base}/articles/how-to-pay-an-invoice`);
    const html = all(r.text, 'html')[0]!;
    expect(html.attribs.lang).toBe('en');
    expect(metaOf(r.text, 'viewport')).toBe('width=device-width, initial-scale=1');
    for (const tag of ['header', 'main', 'footer']) expect(all(r.text, tag), tag).toHaveLength(1);
    const navs = all(r.text, 'nav').map((n) => n.attribs['aria-label']);
    expect(new Set(navs).size).toBe(navs.length); // every nav named, names unique
    const skip = all(r.text, 'a')[0]!;
    expect(skip.attribs.href).toBe('#main');
    expect(all(r.text, 'main')[0]!.attribs.id).toBe('main');
    expect(all(r.text, 'h1')).toHaveLength(1);
    expect(r.headers.get('content-security-policy')).toMatch(/script-src 'none'/);
    expect(r.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');

    const href = all(r.text, 'link').find((l) => l.attribs.rel === 'stylesheet')!.attribs.href!;
    expect(href).toMatch(new RegExp(`^${c.base}/assets/help-center\\.[0-9a-f]{16}\\.css$`));
    const css = await page(href);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(css.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    // A light yellow brand: black text on it, links darkened to 4.5:1 on white.
    expect(css.text).toContain('--brand:#fde047;--on-brand:#000000');
    const link = /--link:(#[0-9a-f]{6})/.exec(css.text)![1]!;
    expect(contrast(link, '#ffffff')).toBeGreaterThanOrEqual(4.5);
    expect(css.text).toContain(':focus-visible');
    // The reader's colour scheme: a dark variant, with links of their own (checked in Chromium:
    // test/modules/help-center/help-center.browser.test.ts).
    expect(css.text).toContain('@media (prefers-color-scheme: dark)');
    expect(/--link-dark:(#[0-9a-f]{6})/.exec(css.text)![1]).toBe('#fde047');
    expect(metaOf(r.text, 'color-scheme')).toBe('light dark');
  });

  it('sitemap.xml lists home, collections with published articles and published articles with lastmod; robots.txt points at it', async () => {
    const r = await page(`${c.base}/sitemap.xml`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    expect(r.text.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
    expect(r.text).toContain('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">');
    const locs = [...r.text.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
    expect(locs).toContain(`${ORIGIN}${c.base}`);
    expect(locs).toContain(`${ORIGIN}${c.base}/billing-and-plans`);
    expect(locs).toContain(`${ORIGIN}${c.base}/articles/how-to-pay-an-invoice`);
    expect(locs).not.toContain(`${ORIGIN}${c.base}/empty`);
    expect(locs.some((l) => l!.includes(draft.slug))).toBe(false);
    expect([...r.text.matchAll(/<lastmod>([^<]+)<\/lastmod>/g)]).toHaveLength(locs.length);
    expect(r.text).toMatch(/<lastmod>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z<\/lastmod>/);

    const robots = await page(`${c.base}/robots.txt`);
    expect(robots.status).toBe(200);
    expect(robots.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(robots.text).toContain('User-agent: *');
    expect(robots.text).not.toMatch(/Disallow: \//);
    expect(robots.text).toContain(`Sitemap: ${ORIGIN}${c.base}/sitemap.xml`);
  });

  it('ETag and 304 on If-None-Match; pages may be held a minute', async () => {
    const r = await page(c.base);
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(r.headers.get('cache-control')).toBe('public, max-age=60');
    const again = await page(c.base, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect((await page(c.base, { 'if-none-match': '"other"' })).status).toBe(200);
    // A change to what the page shows changes the ETag.
    await post(c.t.as, '/v1/kb/articles', { collection_id: billing.id, title: 'Taxes', status: 'published' });
    const changed = await page(c.base, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });
});

describe('kept pages', () => {
  // Pages are rendered once and kept (src/modules/help-center/page-cache.ts): what a reader must
  // never see is a page as it was before a write the service made.
  it('an edit, an unpublish, a collection renamed or deleted, and the help center’s settings show at once', async () => {
    const c = await newCenter({ help_center_title: 'Old Title' });
    const col = await post(c.t.as, '/v1/kb/collections', { name: 'Accounts' });
    const a = await post(c.t.as, '/v1/kb/articles', {
      title: 'Reset a password',
      body_html: '<p>First version.</p>',
      collection_id: col.id,
      status: 'published',
    });
    const path = `${c.base}/articles/reset-a-password`;
    const h1 = async (p: string) => textOf((await page(p)).text, 'h1');
    // Read twice: the second answer comes from what was kept.
    expect((await page(path)).text).toContain('First version.');
    expect((await page(path)).text).toContain('First version.');
    expect(await h1(`${c.base}/accounts`)).toEqual(['Accounts']);
    expect(textOf((await page(c.base)).text, 'a')).toContain('Reset a password');

    await svc.api.patch(`/v1/kb/articles/${a.id}`, { body_html: '<p>Second version.</p>' }, c.t.as);
    const edited = await page(path);
    expect(edited.text).toContain('Second version.');
    expect(edited.text).not.toContain('First version.');

    await svc.api.patch(`/v1/kb/collections/${col.id}`, { name: 'Your account' }, c.t.as);
    expect(textOf((await page(path)).text, 'li')).toContain('Your account');
    expect(await h1(`${c.base}/accounts`)).toEqual(['Your account']); // the slug stays; the name follows

    await svc.api.patch('/v1/workspace', { settings: { help_center_title: 'New Title' } }, c.t.as);
    expect(textOf((await page(path)).text, 'title')[0]).toContain('New Title');

    await svc.api.patch(`/v1/kb/articles/${a.id}`, { status: 'draft' }, c.t.as);
    expect((await page(path)).status).toBe(404);
    expect(textOf((await page(c.base)).text, 'a')).not.toContain('Reset a password');

    await svc.api.patch(`/v1/kb/articles/${a.id}`, { status: 'published' }, c.t.as);
    expect((await page(path)).status).toBe(200);
    await svc.api.patch(`/v1/kb/articles/${a.id}`, { collection_id: null }, c.t.as); // a collection must be empty to go
    expect((await svc.api.delete(`/v1/kb/collections/${col.id}`, c.t.as)).status).toBe(204);
    expect((await page(`${c.base}/accounts`)).status).toBe(404);
    expect(textOf((await page(path)).text, 'li')).not.toContain('Your account');

    await svc.api.patch('/v1/workspace', { settings: { help_center_enabled: false } }, c.t.as);
    expect((await page(path)).status).toBe(404);
    expect((await page(c.base)).status).toBe(404);
  });

  it('a page being built while a write commits is not kept: the next reader sees the write', () => {
    const cache = new PageCache();
    const w = randomUUID();
    const html = (text: string) => ({ type: 'text/html', body: Buffer.from(text), etag: '"x"', maxAge: 60 });
    const before = cache.stamp(w); // taken before the page's queries
    cache.invalidate(w); // an article of the workspace changed meanwhile
    cache.keep(w, 'article a', before, html('old'));
    expect(cache.page(w, 'article a')).toBeUndefined();
    cache.keep(w, 'article a', cache.stamp(w), html('new'));
    expect(cache.page(w, 'article a')?.body.toString()).toBe('new');
    // Another workspace's write leaves this one's pages; a workspace's settings, every page.
    cache.invalidate(randomUUID());
    expect(cache.page(w, 'article a')?.body.toString()).toBe('new');
    cache.invalidateAll();
    expect(cache.page(w, 'article a')).toBeUndefined();
  });

  it('a page changed behind the service’s back is at most a minute old, as its Cache-Control allows', () => {
    let now = 0;
    const cache = new PageCache(1024 * 1024, 60_000, 100, () => now);
    const w = randomUUID();
    cache.keep(w, 'home', cache.stamp(w), { type: 'text/html', body: Buffer.from('x'), etag: '"x"', maxAge: 60 });
    now = 60_000;
    expect(cache.page(w, 'home')).toBeDefined();
    now = 60_001;
    expect(cache.page(w, 'home')).toBeUndefined();
  });

  it('holds no more than its bytes: the least recently read go first', () => {
    const cache = new PageCache(64 * 1024);
    const w = randomUUID();
    const page8k = { type: 'text/html', body: Buffer.alloc(7 * 1024), etag: '"x"', maxAge: 60 };
    for (let i = 0; i < 20; i++) {
      cache.keep(w, `article a${i}`, cache.stamp(w), page8k);
      cache.page(w, 'article a0'); // read often: stays
    }
    expect(cache.size).toBeLessThanOrEqual(9);
    expect(cache.page(w, 'article a0')).toBeDefined();
    expect(cache.page(w, 'article a19')).toBeDefined();
    expect(cache.page(w, 'article a1')).toBeUndefined();
  });
});
