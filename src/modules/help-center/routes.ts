// The help center's public pages (no credential): server-rendered HTML under /hc/{workspace_slug}
// (docs/help-center.md). Pages, not API operations: they stay out of the OpenAPI document and the
// route table (like /docs), answer errors as HTML pages (a slug with odd characters is a 404,
// never a 500 or a JSON body), and ignore query parameters they do not read (links shared on
// the web gain utm_source, fbclid and the like; the canonical URL leaves them out).
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { HTML, pageCsp, pageErrors, plainPage, sendCached, sendStored, storedPage } from '../../platform/http/pages.js';
import { stylesheetOf } from './look.js';
import { PageCache, type StoredPage } from './page-cache.js';
import { baseStylesheet, type PageModel, renderPage } from './render.js';
import {
  collectionArticles,
  findCollection,
  findHelpCenter,
  findPublishedArticle,
  type HelpCenter,
  latestArticles,
  listCollections,
  search,
  sitemapEntries,
} from './service.js';
import { isReader, visitorOf } from './views.js';

/** The search box's longest query (as GET /v1/kb/articles?q=). */
const Q_MAX = 200;
/** Search results per page, and the last page offered (the 500 best matches). */
const RESULTS = 10;
const MAX_PAGES = 50;

/** Every page: public, hidden from the API document, its query open (see above). */
const page = (querystring?: object) => ({
  config: { access: access.public(), page: true },
  schema: { hide: true, ...(querystring ? { querystring } : {}) },
});

/** Links of a help center: paths under PUBLIC_URL's path, absolute ones for canonical and sitemap. */
export function linksOf(publicUrl: string, slug: string) {
  const url = new URL(publicUrl);
  const base = `${url.pathname.replace(/\/+$/, '')}/hc/${slug}`;
  return {
    home: base,
    search: `${base}/search`,
    collection: (s: string) => `${base}/${s}`,
    article: (s: string) => `${base}/articles/${s}`,
    css: (hash: string) => `${base}/assets/help-center.${hash}.css`,
    sitemap: `${base}/sitemap.xml`,
    /** The portal (src/modules/portal): the contact form and the customer area. */
    contact: `${base}/new`,
    requests: `${base}/requests`,
    request: (n: number) => `${base}/requests/${n}`,
    signIn: (token: string) => `${base}/requests/sign-in/${token}`,
    signOut: `${base}/requests/sign-out`,
    absolute: (path: string) => `${url.origin}${path}`,
  };
}

const LANG = /^[a-z]{2}$/;
/** <html lang> of an article: its language code; `other` (no stemmer) says nothing: en. */
const langOf = (language: string): string => (LANG.test(language) ? language : 'en');

/** An author's h1 in a body would make a second h1 on the page: its headings go one level down. */
function demoteHeadings(html: string): string {
  if (!/<h1[\s>]/i.test(html)) return html;
  return html.replace(
    /<(\/?)h([1-6])(?=[\s>])/gi,
    (_m, slash: string, n: string) => `<${slash}h${Math.min(6, Number(n) + 1)}`,
  );
}

export default async function helpCenterRoutes(app: App, deps: Deps): Promise<void> {
  const config = deps.config;
  const csp = pageCsp(config.publicUrl);

  const model = (
    hc: HelpCenter,
    m: Omit<PageModel, 'hc' | 'links' | 'lang'> & { lang?: string } & Record<string, unknown>,
  ): PageModel => {
    const l = linksOf(config.publicUrl, hc.slug);
    const sheet = stylesheetOf(baseStylesheet(), hc.brandColor);
    return {
      lang: 'en',
      ...m,
      hc,
      links: { home: l.home, search: l.search, css: l.css(sheet.hash), contact: l.contact, requests: l.requests },
    };
  };

  const notFoundPage = (req: FastifyRequest, reply: FastifyReply, hc: HelpCenter | null) => {
    if (!hc) return sendCached(req, reply, { status: 404, type: HTML, body: plainPage(404), csp });
    const body = renderPage(
      'not-found',
      model(hc, {
        title: 'Page not found',
        description: 'This page does not exist.',
        canonical: null,
        ogType: 'website',
      }),
    );
    return sendCached(req, reply, { status: 404, type: HTML, body, csp });
  };

  // Rendered pages, kept until a write changes what they show (page-cache.ts).
  const cache = new PageCache();
  const unfollow = cache.follow(deps.bus);
  app.addHook('onClose', async () => unfollow());

  /** The workspace's help center (kept, or read and kept), or the plain 404 already sent (null). */
  const helpCenterOf = async (req: FastifyRequest, reply: FastifyReply): Promise<HelpCenter | null> => {
    const slug = (req.params as { workspace: string }).workspace;
    const kept = cache.center(slug);
    if (kept) return kept.hc;
    const generation = cache.workspacesGeneration;
    const hc = await findHelpCenter(deps, slug);
    if (!hc) notFoundPage(req, reply, null);
    else cache.keepCenter(slug, hc, generation);
    return hc;
  };

  /** A view of an article page, by a reader (not a crawler), on GET (HEAD is not reading). */
  const countView = (req: FastifyRequest, center: HelpCenter, page: StoredPage) => {
    if (page.articleId === undefined || req.method !== 'GET') return;
    const ua = String(req.headers['user-agent'] ?? '');
    if (isReader(ua)) {
      deps.articleViews.record(center.workspaceId, page.articleId, req.ip, ua, () => visitorOf(config, req.ip, ua));
    }
  };

  /**
   * Sends the page kept under `key`, or builds it (null: `build` answered itself, a 404 or a
   * redirect, which are not kept), sends and keeps it. A view counts when the page is served,
   * a 304 included (the reader is reading it again).
   */
  const servePage = async (
    req: FastifyRequest,
    reply: FastifyReply,
    key: string,
    build: (center: HelpCenter) => Promise<StoredPage | null>,
    o: { csp: boolean } = { csp: true },
  ) => {
    const generation = cache.workspacesGeneration;
    const center = await helpCenterOf(req, reply);
    if (!center) return reply;
    const send = (p: StoredPage) => {
      countView(req, center, p);
      return sendStored(req, reply, p, { csp: o.csp ? csp : undefined });
    };
    const kept = cache.page(center.workspaceId, key);
    if (kept) return send(kept);
    const stamp = cache.stamp(center.workspaceId, generation);
    const built = await build(center);
    if (!built) return reply;
    cache.keep(center.workspaceId, key, stamp, built);
    return send(built);
  };

  await app.register(async (hc: FastifyInstance) => {
    // Errors of these routes are pages too: a value the pipeline refuses in the path (NUL,
    // broken Unicode) names no page (404); anything else keeps its status, on a plain page.
    pageErrors(hc, csp);

    hc.get('/hc/:workspace', page(), (req, reply) =>
      servePage(req, reply, 'home', async (center) => {
        const l = linksOf(config.publicUrl, center.slug);
        const [collections, latest] = await Promise.all([
          listCollections(deps, center.workspaceId),
          latestArticles(deps, center.workspaceId, 10),
        ]);
        const body = renderPage(
          'home',
          model(center, {
            title: center.title,
            description: `Answers and guides from ${center.title}.`,
            canonical: l.absolute(l.home),
            ogType: 'website',
            collections: collections
              .filter((c) => c.articleCount > 0)
              .map((c) => ({ ...c, href: l.collection(c.slug) })),
            latest: latest.map((a) => ({ ...a, href: l.article(a.slug) })),
          }),
        );
        return storedPage({ type: HTML, body });
      }),
    );

    hc.get(
      '/hc/:workspace/search',
      page(
        Type.Object(
          { q: Type.Optional(Type.String()), page: Type.Optional(Type.String()) },
          { additionalProperties: true },
        ),
      ),
      async (req, reply) => {
        const center = await helpCenterOf(req, reply);
        if (!center) return reply;
        const l = linksOf(config.publicUrl, center.slug);
        const query = req.query as { q?: string; page?: string };
        const q = [...(query.q ?? '').trim()].slice(0, Q_MAX).join('');
        // ?page=N, 1 to MAX_PAGES; anything else is the first page (a link cut short, a typo).
        const asked = /^[1-9]\d{0,3}$/.test(query.page ?? '') ? Number(query.page) : 1;
        const n = Math.min(asked, MAX_PAGES);
        const found =
          q === '' ? { total: 0, hits: [] } : await search(deps, center.workspaceId, q, (n - 1) * RESULTS, RESULTS);
        const pages = Math.min(MAX_PAGES, Math.ceil(found.total / RESULTS));
        const pageHref = (k: number) => `${l.search}?${new URLSearchParams(k === 1 ? { q } : { q, page: String(k) })}`;
        const body = renderPage(
          'search',
          model(center, {
            title: q === '' ? 'Search' : n > 1 ? `Results for “${q}”, page ${n}` : `Results for “${q}”`,
            description: `Search the articles of ${center.title}.`,
            canonical: null,
            ogType: 'website',
            q,
            breadcrumb: [
              { name: center.title, href: l.home },
              { name: 'Search', href: null },
            ],
            total: found.total,
            first: (n - 1) * RESULTS + 1,
            results: found.hits.map((r) => ({ ...r, href: l.article(r.slug) })),
            pager:
              pages > 1
                ? {
                    page: n,
                    pages,
                    prev: n > 1 ? pageHref(Math.min(n - 1, pages)) : null,
                    next: n < pages ? pageHref(n + 1) : null,
                  }
                : null,
          }),
        );
        return sendCached(req, reply, { type: HTML, body, csp });
      },
    );

    hc.get('/hc/:workspace/sitemap.xml', page(), (req, reply) =>
      servePage(
        req,
        reply,
        'sitemap',
        async (center) => {
          const l = linksOf(config.publicUrl, center.slug);
          const { articles, collections } = await sitemapEntries(deps, center.workspaceId);
          const newest = [...articles, ...collections].reduce<Date | null>(
            (m, e) => (m === null || e.lastmod > m ? e.lastmod : m),
            null,
          );
          const urls = [
            { loc: l.absolute(l.home), lastmod: newest?.toISOString() ?? null },
            ...collections.map((c) => ({ loc: l.absolute(l.collection(c.slug)), lastmod: c.lastmod.toISOString() })),
            ...articles.map((a) => ({ loc: l.absolute(l.article(a.slug)), lastmod: a.lastmod.toISOString() })),
          ];
          const body = renderPage('sitemap', { urls });
          return storedPage({ type: 'application/xml; charset=utf-8', body, maxAge: 300 });
        },
        { csp: false },
      ),
    );

    hc.get('/hc/:workspace/robots.txt', page(), async (req, reply) => {
      const center = await helpCenterOf(req, reply);
      if (!center) return reply;
      const l = linksOf(config.publicUrl, center.slug);
      const body = `User-agent: *\nAllow: /\n\nSitemap: ${l.absolute(l.sitemap)}\n`;
      return sendCached(req, reply, { type: 'text/plain; charset=utf-8', body, maxAge: 300 });
    });

    hc.get('/hc/:workspace/assets/:file', page(), async (req, reply) => {
      const center = await helpCenterOf(req, reply);
      if (!center) return reply;
      const sheet = stylesheetOf(baseStylesheet(), center.brandColor);
      const file = (req.params as { file: string }).file;
      // A page held in a cache may name the stylesheet of a brand colour changed since: it gets
      // today's, for a minute.
      if (!/^help-center\.[0-9a-f]{16}\.css$/.test(file)) return notFoundPage(req, reply, center);
      const current = file === `help-center.${sheet.hash}.css`;
      return sendCached(req, reply, { type: 'text/css; charset=utf-8', body: sheet.css, immutable: current });
    });

    hc.get('/hc/:workspace/articles/:article', page(), (req, reply) => {
      const slug = (req.params as { article: string }).article;
      return servePage(req, reply, `article ${slug}`, async (center) => {
        const l = linksOf(config.publicUrl, center.slug);
        const found = await findPublishedArticle(deps, center.workspaceId, slug);
        if (found.kind === 'none') {
          notFoundPage(req, reply, center);
          return null;
        }
        if (found.kind === 'moved') {
          reply
            .code(301)
            .header('location', l.article(found.slug))
            .header('cache-control', 'public, max-age=3600')
            .send();
          return null;
        }
        const a = found.article;
        const lang = langOf(a.language);
        const updated = new Date(a.updated_at);
        const body = renderPage(
          'article',
          model(center, {
            lang,
            title: a.title,
            description: a.excerpt,
            canonical: l.absolute(l.article(a.slug)),
            ogType: 'article',
            breadcrumb: [
              { name: center.title, href: l.home },
              ...(found.collection ? [{ name: found.collection.name, href: l.collection(found.collection.slug) }] : []),
              { name: a.title, href: null },
            ],
            article: a,
            bodyHtml: demoteHeadings(a.body_html),
            updatedIso: updated.toISOString(),
            updatedText: new Intl.DateTimeFormat(lang, { dateStyle: 'long', timeZone: 'UTC' }).format(updated),
          }),
        );
        return { ...storedPage({ type: HTML, body }), articleId: a.id };
      });
    });

    hc.get('/hc/:workspace/:collection', page(), (req, reply) => {
      const slug = (req.params as { collection: string }).collection;
      return servePage(req, reply, `collection ${slug}`, async (center) => {
        const l = linksOf(config.publicUrl, center.slug);
        // /hc/{slug}/ is the home page's address with a slash: the home page's own.
        if (slug === '') {
          reply.code(301).header('location', l.home).send();
          return null;
        }
        const c = await findCollection(deps, center.workspaceId, slug);
        if (!c) {
          notFoundPage(req, reply, center);
          return null;
        }
        const articles = await collectionArticles(deps, center.workspaceId, c.id);
        const body = renderPage(
          'collection',
          model(center, {
            title: c.name,
            description: c.description ?? `Articles in ${c.name}.`,
            canonical: l.absolute(l.collection(c.slug)),
            ogType: 'website',
            breadcrumb: [
              { name: center.title, href: l.home },
              { name: c.name, href: null },
            ],
            collection: c,
            articles: articles.map((a) => ({ ...a, href: l.article(a.slug) })),
          }),
        );
        return storedPage({ type: HTML, body });
      });
    });

    // Any other path under a help center: its 404 page.
    hc.get('/hc/:workspace/*', page(), async (req, reply) => {
      const center = await helpCenterOf(req, reply);
      if (!center) return reply;
      return notFoundPage(req, reply, center);
    });
  });
}
