// Rendering the help center's pages: Eta templates (templates/, autoescaping every `<%= %>`;
// only the article's stored body, sanitized when it was written, and search snippets, escaped
// when they were made, are placed raw with `<%~ %>`), and the answer's headers: a strict
// Content-Security-Policy, an ETag of the body (304 on If-None-Match) and Cache-Control so that
// a CDN may hold a page for a minute.
//
// The templates and the stylesheet sit next to this module: src/modules/help-center/templates,
// or dist/templates in the build (scripts/build.mjs copies them, as it copies the migrations).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Eta } from 'eta';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StoredPage } from './page-cache.js';
import type { HelpCenter } from './service.js';

export const TEMPLATES = join(dirname(fileURLToPath(import.meta.url)), 'templates');

const eta = new Eta({ views: TEMPLATES, autoEscape: true, autoTrim: [false, 'nl'], cache: true });

let baseCss: string | undefined;
/** The stylesheet's fixed part (read once). */
export const baseStylesheet = (): string => {
  baseCss ??= readFileSync(join(TEMPLATES, 'help-center.css'), 'utf8');
  return baseCss;
};

/** The CSP of every page: its own stylesheet, images from here, https: and data:, no script. */
export function pageCsp(publicUrl: string): string {
  return [
    "default-src 'none'",
    "style-src-elem 'self'",
    // Sanitized article bodies keep a few style attributes (colours, alignment): never script.
    "style-src-attr 'unsafe-inline'",
    `img-src 'self' ${new URL(publicUrl).origin} https: data:`,
    "script-src 'none'",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Everything the layout needs, whatever the page. */
export interface PageModel {
  hc: HelpCenter;
  /** <html lang>. */
  lang: string;
  /** The page's own title (the <title> adds the help center's). */
  title: string;
  description: string;
  /** Absolute; null for pages that are not to be indexed (search results, 404). */
  canonical: string | null;
  ogType: 'website' | 'article';
  /** contact and requests: the portal's contact form and customer area. */
  links: { home: string; search: string; css: string; contact: string; requests: string };
  breadcrumb?: Array<{ name: string; href: string | null }>;
  /** The search box's value. */
  q?: string;
}

/** A template's data: a page's model and what its own template shows, or the sitemap's. */
export const renderPage = (template: string, data: object): string => eta.render(template, data);

const PLAIN: Record<number, [string, string]> = {
  400: ['Bad request', 'This address could not be read.'],
  403: ['This form has expired', 'Go back, reload the page and send the form again.'],
  404: ['Page not found', 'There is no help center at this address.'],
  413: ['Too large', 'What you sent is larger than this form accepts.'],
  429: ['Too many requests', 'Please wait a minute, then try again.'],
  500: ['Something went wrong', 'Please try again in a moment.'],
};

/**
 * A page without the help center's look: for an unknown workspace or a help center that is off
 * (it shows nothing of the workspace) and for errors. Fixed texts only.
 */
export function plainPage(status: number): string {
  const [title, text] = PLAIN[status] ?? PLAIN[status >= 500 ? 500 : 400]!;
  return (
    '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark">' +
    '<meta name="robots" content="noindex">' +
    `<title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>\n`
  );
}

export const etagOf = (body: string | Buffer): string =>
  `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

/** True when the request's If-None-Match names this ETag (or is `*`). */
export function notModified(req: FastifyRequest, etag: string): boolean {
  const given = req.headers['if-none-match'];
  if (!given) return false;
  return given
    .split(',')
    .map((t) => t.trim().replace(/^W\//, ''))
    .some((t) => t === etag || t === '*');
}

/** A page ready to send again: its bytes and ETag, made once (src/modules/help-center/page-cache.ts). */
export function storedPage(o: { type: string; body: string; maxAge?: number }): StoredPage {
  const body = Buffer.from(o.body);
  return { type: o.type, body, etag: etagOf(body), maxAge: o.maxAge ?? 60 };
}

/**
 * Sends a page (or the stylesheet, the sitemap, robots.txt): 304 without a body when the client
 * holds this version. Pages may be held a minute by browsers and CDNs.
 */
export function sendStored(
  req: FastifyRequest,
  reply: FastifyReply,
  p: StoredPage,
  o: { status?: number; csp?: string | undefined; immutable?: boolean | undefined } = {},
): FastifyReply {
  const headers: Record<string, string> = {
    etag: p.etag,
    'cache-control': o.immutable ? 'public, max-age=31536000, immutable' : `public, max-age=${p.maxAge}`,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'strict-origin-when-cross-origin',
  };
  if (o.csp) headers['content-security-policy'] = o.csp;
  reply.headers(headers);
  const status = o.status ?? 200;
  if (status === 200 && notModified(req, p.etag)) return reply.code(304).send();
  return reply.code(status).type(p.type).send(p.body);
}

/** sendStored for a page made for this one answer. */
export function sendCached(
  req: FastifyRequest,
  reply: FastifyReply,
  o: { status?: number; type: string; body: string; csp?: string; maxAge?: number; immutable?: boolean },
): FastifyReply {
  return sendStored(req, reply, storedPage(o), o);
}
