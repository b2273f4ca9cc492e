// The help center's public pages, part 2 (part 1, the pages and kept pages: help-center.test.ts,
// the shared setup in setup.ts): escaping, views, search and the look.

import { DomUtils } from 'htmlparser2';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { contrast, DARK_SURFACES, LIGHT_SURFACES, paletteOf } from '../../../src/modules/help-center/look.js';
import { pruneArticleViews } from '../../../src/modules/help-center/views.js';
import type { Service } from '../../support/helpers.js';
import { all, BROWSER, doc, helpCenterSuite, metaOf, textOf } from './setup.js';

const suite = helpCenterSuite();
const { newCenter, post, workspaceChanged, page } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

describe('escaping', () => {
  it('an article whose title and body carry XSS vectors renders no script, handler or javascript: URL', async () => {
    const c = await newCenter({ help_center_title: '<img src=x onerror=alert(1)>' });
    const col = await post(c.t.as, '/v1/kb/collections', {
      name: '"><script>alert(1)</script>',
      description: "'><svg onload=alert(1)>",
    });
    const title = '<script>alert("t")</script><img src=x onerror=alert(2)>';
    const a = await post(c.t.as, '/v1/kb/articles', {
      collection_id: col.id,
      title,
      slug: 'xss',
      excerpt: '"><script>alert(3)</script>',
      body_html: [
        '<p>a</p><script>alert(1)</script>',
        '<img src=x onerror=alert(1)>',
        `<IMG SRC="javascript:alert('XSS');">`,
        '<a href="javascript:alert(1)">x</a>',
        '<a href="&#14;  javascript:alert(1)">y</a>',
        '<svg><script>alert(1)</script></svg>',
        '<iframe src="javascript:alert(1)"></iframe>',
        '<scr<script>ipt>alert(1)</scr</script>ipt>',
        '<p style="background:url(javascript:alert(1))">s</p>',
      ].join(''),
      status: 'published',
    });
    for (const path of [`${c.base}/articles/xss`, c.base, `${c.base}/${col.slug}`, `${c.base}/search?q=alert`]) {
      const r = await page(path);
      expect(r.status, path).toBe(200);
      const d = doc(r.text);
      const elements = DomUtils.findAll(() => true, d.children);
      expect(
        elements.filter((e) => ['script', 'iframe', 'svg', 'object', 'embed'].includes(e.name)),
        path,
      ).toEqual([]);
      for (const e of elements) {
        for (const [k, v] of Object.entries(e.attribs)) {
          expect(k, `${path} <${e.name} ${k}>`).not.toMatch(/^on/i);
          // biome-ignore lint/suspicious/noControlCharactersInRegex: browsers skip control characters in URLs
          expect(v.replace(/[\s\u0000-\u001f]/g, '').toLowerCase(), `${path} <${e.name} ${k}>`).not.toMatch(
            /^javascript:/,
          );
        }
      }
    }
    const r = await page(`${c.base}/articles/xss`);
    expect(textOf(r.text, 'h1')).toEqual([title]); // shown as text
    expect(r.text).toContain('&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;');
    expect(a.body_html).not.toMatch(/script|onerror|javascript/i);
  });
});

describe('views', () => {
  it('count once per visitor per 30 minutes, apart for two user agents, 304s included, never for crawlers', async () => {
    const c = await newCenter();
    const a = await post(c.t.as, '/v1/kb/articles', { title: 'Counted', status: 'published' });
    const path = `${c.base}/articles/counted`;
    // Views are counted a quarter of a second after the page is served: flush them before reading.
    const counter = svc.rt.deps.articleViews;
    const views = async () => {
      await counter.flush();
      return (await svc.api.get(`/v1/kb/articles/${a.id}`, c.t.as)).body.views;
    };

    const first = await page(path);
    expect(await views()).toBe(1);
    await page(path);
    await page(path, { 'if-none-match': first.headers.get('etag')! });
    expect(await views()).toBe(1);
    await page(path, { 'user-agent': `${BROWSER} Edg/130.0` });
    expect(await views()).toBe(2);
    await page(path, { 'user-agent': 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)' });
    await page(path, { 'user-agent': '' });
    await fetch(svc.url + path, { method: 'HEAD', headers: { 'user-agent': 'Mozilla/5.0 Firefox/133.0' } });
    expect(await views()).toBe(2);

    // 31 minutes later (the visitors' marks, and the process's memory of them): the next view
    // counts again, once.
    const db = svc.rt.deps.database.db;
    counter.now = () => Date.now() + 31 * 60_000;
    onTestFinished(() => {
      counter.now = Date.now;
    });
    await db
      .updateTable('kb_article_views')
      .set({ viewed_at: sql<Date>`now() - interval '31 minutes'` })
      .where('workspace_id', '=', c.t.workspaceId)
      .where('article_id', '=', a.id)
      .execute();
    await page(path);
    await page(path);
    expect(await views()).toBe(3);
    await page(path, { 'user-agent': `${BROWSER} Edg/130.0` });
    expect(await views()).toBe(4);
    const marks = await db
      .selectFrom('kb_article_views')
      .select(['visitor'])
      .where('workspace_id', '=', c.t.workspaceId)
      .execute();
    // Keyed hashes, not addresses or user agents.
    for (const m of marks) expect(m.visitor).toMatch(/^[\w-]{22}$/);

    // The maintenance job's prune: marks past the window go, recent ones stay.
    await db
      .updateTable('kb_article_views')
      .set({ viewed_at: sql<Date>`now() - interval '31 minutes'` })
      .where('workspace_id', '=', c.t.workspaceId)
      .where('visitor', '=', marks[0]!.visitor)
      .execute();
    expect(await pruneArticleViews(svc.rt.deps.database)).toBeGreaterThanOrEqual(1);
    const left = await db
      .selectFrom('kb_article_views')
      .select('visitor')
      .where('workspace_id', '=', c.t.workspaceId)
      .execute();
    expect(left).toHaveLength(marks.length - 1);
  });
});

describe('search', () => {
  it('finds published articles by a German stem with highlighted snippets; empty and no-query states', async () => {
    const c = await newCenter();
    await post(c.t.as, '/v1/kb/articles', {
      title: 'Rechnung herunterladen',
      body_html: '<p>So laden Sie jede Rechnung als PDF herunter.</p>',
      language: 'de',
      status: 'published',
    });
    await post(c.t.as, '/v1/kb/articles', {
      title: 'Rechnung Entwurf',
      body_html: '<p>Rechnung intern</p>',
      language: 'de',
    });
    const r = await page(`${c.base}/search?q=Rechnungen`);
    expect(r.status).toBe(200);
    expect(textOf(r.text, 'h1')).toEqual(['Results for “Rechnungen”']);
    expect(r.text).toContain(`href="${c.base}/articles/rechnung-herunterladen"`);
    expect(r.text).toContain('<mark>Rechnung</mark>');
    expect(r.text).not.toContain('Entwurf');
    expect(metaOf(r.text, 'robots')).toBe('noindex');
    const input = all(r.text, 'input').find((i) => i.attribs.name === 'q')!;
    expect(input.attribs.value).toBe('Rechnungen');

    const none = await page(`${c.base}/search?q=${encodeURIComponent('"><b>zzzqqq</b>')}`);
    expect(none.status).toBe(200);
    expect(none.text).toContain('No articles match your search.');
    expect(none.text).not.toContain('<b>zzzqqq</b>');

    const empty = await page(`${c.base}/search`);
    expect(empty.status).toBe(200);
    expect(textOf(empty.text, 'h1')).toEqual(['Search']);
    expect(empty.text).toContain('Type a question');
    expect((await page(`${c.base}/search?q=`)).text).toContain('Type a question');
  });

  it('finds an article by words of its excerpt and of its collection’s name, renamed or moved', async () => {
    const c = await newCenter();
    const found = async (q: string) => {
      const r = await page(`${c.base}/search?q=${encodeURIComponent(q)}`);
      expect(r.status).toBe(200);
      return [...r.text.matchAll(/href="[^"]*\/articles\/([a-z0-9-]+)"/g)].map((m) => m[1]).sort();
    };
    const shipping = await post(c.t.as, '/v1/kb/collections', { name: 'Shipping and deliveries' });
    const returns = await post(c.t.as, '/v1/kb/collections', { name: 'Returns' });
    const parcel = await post(c.t.as, '/v1/kb/articles', {
      collection_id: shipping.id,
      title: 'Where is my parcel?',
      excerpt: 'Tracking numbers arrive by courier notification.',
      body_html: '<p>Open your orders page and press Track.</p>',
      status: 'published',
    });
    await post(c.t.as, '/v1/kb/articles', {
      collection_id: returns.id,
      title: 'Send something back',
      body_html: '<p>Print the label and drop it off.</p>',
      status: 'published',
    });
    // A draft of the collection stays out of public results.
    await post(c.t.as, '/v1/kb/articles', { collection_id: shipping.id, title: 'Draft rates' });

    // Only the excerpt says "courier"; only the collection's name says "deliveries" (stemmed).
    expect(await found('courier')).toEqual([parcel.slug]);
    expect(await found('delivery')).toEqual([parcel.slug]);
    expect(await found('returns')).toEqual(['send-something-back']);
    // The API's search is the same engine: it finds them too (drafts included for agents).
    const api = await svc.api.get('/v1/kb/articles?q=deliveries', c.t.as);
    expect(api.body.data.map((a: any) => a.title).sort()).toEqual(['Draft rates', 'Where is my parcel?']);

    // The collection renamed: its new name finds the article, the old one no longer does.
    const renamed = await svc.api.patch(`/v1/kb/collections/${shipping.id}`, { name: 'Orders in transit' }, c.t.as);
    expect(renamed.status).toBe(200);
    expect(await found('transit')).toEqual([parcel.slug]);
    expect(await found('deliveries')).toEqual([]);
    // The article moved to another collection, then out of any: it follows.
    const moved = await svc.api.patch(`/v1/kb/articles/${parcel.id}`, { collection_id: returns.id }, c.t.as);
    expect(moved.status).toBe(200);
    expect(await found('transit')).toEqual([]);
    expect(await found('returns')).toEqual([parcel.slug, 'send-something-back'].sort());
    await svc.api.patch(`/v1/kb/articles/${parcel.id}`, { collection_id: null }, c.t.as);
    expect(await found('returns')).toEqual(['send-something-back']);
    // A new excerpt replaces the old one's words.
    await svc.api.patch(`/v1/kb/articles/${parcel.id}`, { excerpt: 'Follow the van on a map.' }, c.t.as);
    expect(await found('courier')).toEqual([]);
    expect(await found('van')).toEqual([parcel.slug]);
  });

  it('pages of ten results, best first, every match reachable; a page past the end or an odd page number', async () => {
    const c = await newCenter();
    // 23 matches: the one with the word in its title ranks first; one draft never shows.
    await post(c.t.as, '/v1/kb/articles', { title: 'Gateway timeouts', status: 'published' });
    for (let i = 1; i <= 22; i++) {
      await post(c.t.as, '/v1/kb/articles', {
        title: `Note ${String(i).padStart(2, '0')}`,
        body_html: `<p>Something about the gateway in note ${i}.</p>`,
        status: 'published',
      });
    }
    await post(c.t.as, '/v1/kb/articles', { title: 'Gateway draft', body_html: '<p>gateway</p>' });
    const links = (html: string) =>
      all(html, 'a')
        .map((a) => a.attribs.href ?? '')
        .filter((h) => h.startsWith(`${c.base}/articles/`));
    const pagerLink = (html: string, rel: string) =>
      all(html, 'a')
        .find((a) => a.attribs.rel === rel)
        ?.attribs.href?.replaceAll('&amp;', '&');

    const p1 = await page(`${c.base}/search?q=gateway&utm_source=x`);
    expect(links(p1.text)).toHaveLength(10);
    expect(links(p1.text)[0]).toBe(`${c.base}/articles/gateway-timeouts`);
    expect(p1.text).toContain('23 articles, 1 to 10 shown');
    expect(pagerLink(p1.text, 'prev')).toBeUndefined();
    const next = pagerLink(p1.text, 'next')!;
    expect(next).toBe(`${c.base}/search?q=gateway&page=2`);

    const seen = new Set(links(p1.text));
    const p2 = await page(next);
    for (const h of links(p2.text)) seen.add(h);
    const p3 = await page(pagerLink(p2.text, 'next')!);
    expect(links(p3.text)).toHaveLength(3);
    expect(p3.text).toContain('21 to 23 shown');
    expect(pagerLink(p3.text, 'next')).toBeUndefined();
    for (const h of links(p3.text)) seen.add(h);
    expect(seen.size).toBe(23); // every match once, none twice
    expect([...seen].some((h) => h.includes('draft'))).toBe(false);

    const past = await page(`${c.base}/search?q=gateway&page=9`);
    expect(past.status).toBe(200);
    expect(past.text).toContain('There are no more results.');
    expect(pagerLink(past.text, 'prev')).toBe(`${c.base}/search?q=gateway&page=3`);
    for (const odd of ['0', '-1', 'abc', '1e3', '99999']) {
      const r = await page(`${c.base}/search?q=gateway&page=${odd}`);
      expect(r.status).toBe(200);
      expect(links(r.text)[0]).toBe(`${c.base}/articles/gateway-timeouts`);
    }
  });

  it('an article in German has lang="de"; other pages en', async () => {
    const c = await newCenter();
    await post(c.t.as, '/v1/kb/articles', { title: 'Konto löschen', language: 'de', status: 'published' });
    const r = await page(`${c.base}/articles/konto-loeschen`);
    expect(all(r.text, 'html')[0]!.attribs.lang).toBe('de');
    expect(all((await page(c.base)).text, 'html')[0]!.attribs.lang).toBe('en');
  });
});

describe('look', () => {
  it('picks white or black text on the brand colour by contrast, and links that reach 4.5:1 in both schemes', () => {
    for (const brand of ['#2563eb', '#fde047', '#777777', '#ffffff', '#000000', '#10b981', '#ef4444', '#111827']) {
      const p = paletteOf(brand);
      expect(contrast(p.brand, p.onBrand), brand).toBeGreaterThanOrEqual(4.5);
      // Links on the light page and its raised surface (a customer's own message), and on the dark ones.
      for (const bg of LIGHT_SURFACES) expect(contrast(p.link, bg), `${brand} on ${bg}`).toBeGreaterThanOrEqual(4.5);
      for (const bg of DARK_SURFACES) expect(contrast(p.linkDark, bg), `${brand} on ${bg}`).toBeGreaterThanOrEqual(4.5);
    }
    // A colour already readable is kept as it is.
    expect(paletteOf('#fde047').linkDark).toBe('#fde047');
    expect(paletteOf('#1d4ed8').link).toBe('#1d4ed8');
    expect(paletteOf('#2563eb').onBrand).toBe('#ffffff');
    expect(paletteOf('#fde047').onBrand).toBe('#000000');
  });

  it('shows the logo (alt: the title) and the favicon when set, http(s) addresses only', async () => {
    const c = await newCenter({ help_center_title: 'Acme Help' });
    await svc.rt.deps.database.db
      .updateTable('workspaces')
      .set({
        images: JSON.stringify({
          help_center_logo: 'https://cdn.example.test/logo.png',
          help_center_favicon: 'javascript:alert(1)',
        }),
      } as never)
      .where('id', '=', c.t.workspaceId)
      .execute();
    const r = await page(c.base);
    const img = all(r.text, 'img').find((i) => i.attribs.src === 'https://cdn.example.test/logo.png');
    expect(img?.attribs.alt).toBe('Acme Help');
    // Not an http(s) URL: the empty icon instead (which keeps browsers from asking /favicon.ico).
    expect(all(r.text, 'link').find((l) => l.attribs.rel === 'icon')?.attribs.href).toBe('data:,');
    await svc.rt.deps.database.db
      .updateTable('workspaces')
      .set({ images: JSON.stringify({ help_center_favicon: 'https://cdn.example.test/favicon.ico' }) } as never)
      .where('id', '=', c.t.workspaceId)
      .execute();
    // Pages are kept until an event says the workspace changed (the image routes will emit it).
    await workspaceChanged(c.t.workspaceId);
    const again = await page(c.base);
    expect(all(again.text, 'link').find((l) => l.attribs.rel === 'icon')?.attribs.href).toBe(
      'https://cdn.example.test/favicon.ico',
    );
    expect(all(again.text, 'img')).toHaveLength(0); // no logo: the title as text
    expect(all(again.text, 'a').find((a) => a.attribs.class === 'brand')?.children.length).toBe(1);
  });
});
