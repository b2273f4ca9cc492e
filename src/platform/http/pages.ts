// The server-rendered pages' machinery (help center, portal, CSAT): how a page is sent (its
// headers and cache rules), the one error page policy, and the one form reader with its limit.
// The pages' templates and look stay with the help center (modules/help-center/render.ts).
//
// - Personal pages (the portal, CSAT, every error page): `Cache-Control: no-store`, the strict
//   CSP, `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer` (sendPage).
// - Public pages (the help center's): an ETag (304 on If-None-Match) and `public, max-age` (a
//   minute by default, a year for hashed assets), nosniff, `strict-origin-when-cross-origin`
//   (sendStored, sendCached).
// - Errors are pages, never a JSON body (pageErrors): a value the pipeline refuses in the path
//   names no page (404); any other refused value (query, body, a body that is no form) is a
//   400; everything else keeps the catalogue's status and headers (413, 429 with Retry-After...).
// - Forms: application/x-www-form-urlencoded up to FORM_BODY_LIMIT, the first value of each
//   name, as the database can hold it (readForms); multipart stays the portal's (portal/form.ts).
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from './errors.js';
import { toErrorBody } from './setup.js';

export const HTML = 'text/html; charset=utf-8';

/**
 * The largest urlencoded form body a page takes: the portal's longest form (a message of 20,000
 * characters, each up to 12 bytes percent-encoded, and its other fields) fits; the same bound
 * as one multipart field (portal/form.ts).
 */
export const FORM_BODY_LIMIT = 256 * 1024;

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

/** A personal page (or an error page): never cached, strict CSP, no referrer. */
export const sendPage = (reply: FastifyReply, status: number, body: string, csp: string): FastifyReply =>
  reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('content-security-policy', csp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .type(HTML)
    .send(body);

/** 303 to a page after a form post (post/redirect/get). */
export const seeOther = (reply: FastifyReply, location: string): FastifyReply =>
  reply.code(303).header('cache-control', 'no-store').header('location', location).send();

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

/** The status of an error's page (see the policy above). */
export function pageErrorStatus(body: ErrorBody): number {
  if (body.code === 'validation_failed') return body.errors?.[0]?.location.startsWith('path') ? 404 : 400;
  if (body.code === 'unsupported_media_type') return 400;
  return body.status;
}

/** Errors of a scope's routes are plain pages (the policy above). */
export function pageErrors(scope: FastifyInstance, csp: string): void {
  scope.setErrorHandler((err: Error, req, reply) => {
    const { body, headers } = toErrorBody(err);
    if (body.status >= 500)
      req.log.error({ reqId: req.id, error: { message: String(err.message).slice(0, 200) } }, 'page failed');
    if (headers) reply.headers(headers);
    const status = pageErrorStatus(body);
    return sendPage(reply, status, plainPage(status), csp);
  });
}

/** A field's text as the database can hold it (no NUL, no lone surrogates), with \n line ends. */
export const storable = (v: string): string => v.toWellFormed().replaceAll('\0', '').replace(/\r\n?/g, '\n');

/** A urlencoded form's fields: the first value of each name, storable. */
export function parseUrlencoded(body: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    if (!(k in out) && k !== '__proto__') out[k] = storable(v);
  }
  return out;
}

/** The scope's pages read urlencoded forms (req.body: parseUrlencoded's fields), up to FORM_BODY_LIMIT. */
export function readForms(scope: FastifyInstance): void {
  scope.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_req, body, done) => done(null, parseUrlencoded(body as string)),
  );
}

/** A public page as it is sent again and again: status 200 only. */
export interface StoredPage {
  type: string;
  body: Buffer;
  etag: string;
  /** Seconds for Cache-Control. */
  maxAge: number;
  /** The article an article page shows: its views are counted on every hit. */
  articleId?: string;
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

/** A page ready to send again: its bytes and ETag, made once (modules/help-center/page-cache.ts). */
export function storedPage(o: { type: string; body: string; maxAge?: number }): StoredPage {
  const body = Buffer.from(o.body);
  return { type: o.type, body, etag: etagOf(body), maxAge: o.maxAge ?? 60 };
}

/**
 * Sends a public page (or a stylesheet, the sitemap, robots.txt): 304 without a body when the
 * client holds this version. Pages may be held a minute by browsers and CDNs.
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
