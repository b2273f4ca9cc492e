// The agent web app (web/, docs/app.md), served by the service at / on the same port as the API:
//
// - index.html for the app's own routes (/, /login, /signup, /workspaces/new, /inbox, /tickets/…,
//   /settings/…): never cached (no-cache), with a Content-Security-Policy that allows this
//   service's origin only (plus ws/wss to it for the gateway) and a fresh nonce per answer for
//   the <style> elements libraries add (no 'unsafe-inline'). Two meta tags tell the app this
//   service's addresses: `svc-public-url` (PUBLIC_URL) and `svc-socket-origins` (CHECK_ORIGINS,
//   space-separated), so that an app opened at an address whose socket the gateway refuses says
//   which address to use (docs/decisions.md "The app's address").
// - the hashed build files under /app/assets/: cached a year, immutable; gzipped (once, at load)
//   for browsers that accept it.
//
// The routes are explicit paths, never a catch-all: /v1/*, /hc/*, /csat/*, /docs, /widget.js and
// the gateway's /socket/* and /health keep their own answers, and an unknown path keeps the API's
// JSON 404. The files: dist/web, written by scripts/build.mjs (scripts/web-build.mjs), next to the
// built modules; the service running from its sources (tests, `npm run dev`) reads the
// repository's dist/web (tests build it first when web/ changed: test/support/web-app.ts).
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { ApiError } from '../../platform/http/errors.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** dist/web next to the built modules (dist/), else the repository's when running from src/modules/web-app. */
export const WEB_DIRS = [join(HERE, 'web'), join(HERE, '..', '..', '..', 'dist', 'web')];

/** The app's routes: each answers index.html, and the app's router shows the screen. */
export const APP_PATHS = [
  '/',
  '/login',
  '/signup',
  '/workspaces/new',
  '/inbox',
  '/tickets/*',
  '/settings',
  '/settings/*',
  '/knowledge-base',
  '/knowledge-base/*',
  '/chats',
  '/chats/*',
  '/reports',
  '/assistant',
  '/invite/*',
  // The returns from Google/Microsoft sign-in (src/modules/auth/oauth): /sign-in#oauth_error=... or
  // #mfa_token=..., and /profile?linked=1 after linking an account.
  '/sign-in',
  '/profile',
];

const IMMUTABLE = 'public, max-age=31536000, immutable';
const NONCE_PLACEHOLDER = /CSP_NONCE_PLACEHOLDER/g;
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer | null;
}

export interface WebBuild {
  index: string;
  assets: Map<string, Asset>;
}

/** The built app, or null when it was not built. */
export function loadWebBuild(dirs = WEB_DIRS): WebBuild | null {
  const dir = dirs.find((d) => existsSync(join(d, 'index.html')));
  if (!dir) return null;
  const assets = new Map<string, Asset>();
  const assetDir = join(dir, 'assets');
  for (const name of existsSync(assetDir) ? readdirSync(assetDir) : []) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const body = readFileSync(join(assetDir, name));
    const compressible = /^(text|application)\/|svg/.test(type);
    assets.set(name, { type, body, gzip: compressible ? gzipSync(body, { level: 9 }) : null });
  }
  return { index: readFileSync(join(dir, 'index.html'), 'utf8'), assets };
}

/** The page's policy: this service only; `nonce` for the styles libraries add at run time. */
export function appCsp(publicUrl: string, nonce: string): string {
  const origin = new URL(publicUrl);
  const socket = `${origin.protocol === 'https:' ? 'wss:' : 'ws:'}//${origin.host}`;
  return [
    "default-src 'none'",
    `script-src 'self' 'nonce-${nonce}'`,
    `style-src 'self' 'nonce-${nonce}'`,
    `img-src 'self' ${origin.origin} data: blob:`,
    "font-src 'self'",
    `connect-src 'self' ${origin.origin} ${socket}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const attr = (v: string) =>
  v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The meta tags naming this service's public address and the origins its agent socket accepts. */
export function addressMeta(publicUrl: string, checkOrigins: string[]): string {
  return (
    `<meta name="svc-public-url" content="${attr(publicUrl)}" />` +
    `<meta name="svc-socket-origins" content="${attr(checkOrigins.join(' '))}" />`
  );
}

const acceptsGzip = (req: FastifyRequest): boolean => {
  const given = req.headers['accept-encoding'];
  return typeof given === 'string' && /\bgzip\b(?!\s*;\s*q=0(?:\.0*)?\s*(?:,|$))/i.test(given);
};

/** Public pages, outside the API document, not rate limited (static files). */
const pageRoute = { config: { access: access.public(), page: true, rateLimited: false } };

export default async function webAppRoutes(app: App, deps: Deps): Promise<void> {
  let build: WebBuild | null | undefined;
  /** Read once, on first use (a build made after the start is found then). */
  const current = (): WebBuild | null => {
    if (!build) build = loadWebBuild();
    return build;
  };

  const meta = addressMeta(deps.config.publicUrl, deps.config.checkOrigins);
  const index = (_req: FastifyRequest, reply: FastifyReply) => {
    const b = current();
    if (!b) {
      return reply
        .code(503)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send('The web app is not built: run `npm run build` (npm install and npm start build it).\n');
    }
    const nonce = randomBytes(16).toString('base64');
    return reply
      .code(200)
      .headers({
        'cache-control': 'no-cache',
        'content-security-policy': appCsp(deps.config.publicUrl, nonce),
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'same-origin',
        'cross-origin-opener-policy': 'same-origin',
      })
      .type('text/html; charset=utf-8')
      .send(b.index.replace(NONCE_PLACEHOLDER, nonce).replace('</head>', `${meta}</head>`));
  };
  for (const path of APP_PATHS) app.get(path, pageRoute, index);

  app.get('/app/assets/:file', pageRoute, async (req, reply) => {
    const asset = current()?.assets.get((req.params as { file: string }).file);
    if (!asset) throw new ApiError('not_found', 'No such file: the app may have been rebuilt; reload the page.');
    const gz = asset.gzip !== null && acceptsGzip(req);
    reply.headers({
      'content-type': asset.type,
      'cache-control': IMMUTABLE,
      'x-content-type-options': 'nosniff',
      vary: 'Accept-Encoding',
    });
    if (gz) reply.header('content-encoding', 'gzip');
    return reply.code(200).send(gz ? asset.gzip : asset.body);
  });
}
