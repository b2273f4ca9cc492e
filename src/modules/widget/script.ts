// GET /widget.js: the chat widget's browser script (src/widget-client, docs/widget.md "Embedding
// the widget"), and GET /widget.<hash>.js, the same bytes under a name that changes with them.
//
// - /widget.js is what pages embed: cached 5 minutes (max-age=300) with an ETag (the content's
//   hash), so a deploy reaches every page within minutes and a browser revalidates with a 304.
// - /widget.<hash>.js (hash: the first 16 hex digits of the script's SHA-256) is immutable: cached
//   a year. A page pinned to an older hash gets today's script, cached 5 minutes, rather than a
//   404 that would take the chat off that page.
// - Both are public, not rate limited (a static file, as /docs), readable from any origin, and sent
//   gzipped (compressed once, at load) to browsers that accept it.
//
// The bytes: dist/widget/widget.js, written by scripts/build.mjs next to the built modules (dist/).
// When the service runs from its TypeScript sources (tests, `npm run dev`) there is no build: the
// script is bundled in memory on first use with the same definition (scripts/widget-bundle.mjs).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';

export interface WidgetScript {
  body: Buffer;
  gzip: Buffer;
  /** The first 16 hex digits of the body's SHA-256: the immutable file's name. */
  hash: string;
  etag: string;
}

const HERE = dirname(fileURLToPath(import.meta.url));
/** Where scripts/build.mjs puts the bundle: dist/widget/widget.js, next to the built modules. */
const BUILT = join(HERE, 'widget', 'widget.js');
/** Running from src/modules/widget: the repository's root, for the sources and the bundle's definition. */
const SOURCE_ROOT = join(HERE, '..', '..', '..');

export const SHORT_MAX_AGE = 300;
const IMMUTABLE = 'public, max-age=31536000, immutable';

async function bundleFromSources(): Promise<Uint8Array> {
  const definition = join(SOURCE_ROOT, 'scripts', 'widget-bundle.mjs');
  if (!existsSync(definition)) {
    throw new Error(`the widget script is not built (${BUILT}) and its sources are not here: run npm run build`);
  }
  // Paths computed at run time: the server's bundle keeps them as imports (esbuild is a dependency).
  const esbuild = await import('esbuild');
  const { bundleWidget } = (await import(pathToFileURL(definition).href)) as {
    bundleWidget(e: unknown): Promise<Uint8Array>;
  };
  return bundleWidget(esbuild);
}

/** The script's bytes, hash and compressed form. */
export async function loadWidgetScript(): Promise<WidgetScript> {
  const body = existsSync(BUILT) ? await readFile(BUILT) : Buffer.from(await bundleFromSources());
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
  return { body, gzip: gzipSync(body, { level: 9 }), hash, etag: `"${hash}"` };
}

let loading: Promise<WidgetScript> | null = null;
/** Loaded once per process, on first use; a failed load is tried again on the next request. */
export function widgetScript(): Promise<WidgetScript> {
  if (!loading) {
    loading = loadWidgetScript().catch((err) => {
      loading = null;
      throw err;
    });
  }
  return loading;
}

const acceptsGzip = (req: FastifyRequest): boolean => {
  const given = req.headers['accept-encoding'];
  return typeof given === 'string' && /\bgzip\b(?!\s*;\s*q=0(?:\.0*)?\s*(?:,|$))/i.test(given);
};

const notModified = (req: FastifyRequest, etag: string): boolean => {
  const given = req.headers['if-none-match'];
  if (!given) return false;
  return given
    .split(',')
    .map((t) => t.trim().replace(/^W\//, '').replace(/-gz"$/, '"'))
    .some((t) => t === etag || t === '*');
};

function send(req: FastifyRequest, reply: FastifyReply, s: WidgetScript, cacheControl: string): FastifyReply {
  const gz = acceptsGzip(req);
  reply.headers({
    'content-type': 'text/javascript; charset=utf-8',
    'cache-control': cacheControl,
    // The compressed and plain forms are two representations: two tags (a 304 accepts either).
    etag: gz ? `"${s.hash}-gz"` : s.etag,
    vary: 'Accept-Encoding',
    'x-content-type-options': 'nosniff',
    // Any website embeds it: readable from any origin (a <script crossorigin>, integrity checks).
    'access-control-allow-origin': '*',
    'cross-origin-resource-policy': 'cross-origin',
  });
  if (notModified(req, s.etag)) return reply.code(304).send();
  if (gz) reply.header('content-encoding', 'gzip');
  return reply.code(200).send(gz ? s.gzip : s.body);
}

/** Public, outside the API document (a page, like the help center's), not rate limited (a static file). */
const scriptRoute = { config: { access: access.public(), page: true, rateLimited: false } };

export default async function widgetScriptRoutes(app: App): Promise<void> {
  app.get('/widget.js', scriptRoute, async (req, reply) =>
    send(req, reply, await widgetScript(), `public, max-age=${SHORT_MAX_AGE}`),
  );
  app.get('/widget.:hash(^[0-9a-f]{16}).js', scriptRoute, async (req, reply) => {
    const s = await widgetScript();
    const current = (req.params as { hash: string }).hash === s.hash;
    return send(req, reply, s, current ? IMMUTABLE : `public, max-age=${SHORT_MAX_AGE}`);
  });
}
