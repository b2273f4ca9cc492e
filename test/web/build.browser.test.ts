// The agent web app as built and served (web/, scripts/web-build.mjs, src/modules/web-app): the
// inbox's first load under 250 KB of JavaScript gzipped (the entry and everything it imports
// statically; the ticket page and settings are chunks of their own), index.html for the app's
// routes with a CSP of this service only and a fresh nonce, immutable hashed assets, and every
// route that was there before keeping its own answer. The browser code's own type check runs
// here too, against types generated from the API document this service serves (its program is
// not the server's: DOM and JSX, web/tsconfig.json).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get, type IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressMeta } from '../../src/modules/web-app/routes.js';
import { ApiError, errorText, retryAfterSeconds } from '../../web/src/lib/errors.js';
import { type Service, startService } from '../support/helpers.js';
import { ensureWebApp } from '../support/web-app.js';

const ROOT = join(import.meta.dirname, '..', '..');
const MAX_FIRST_LOAD_GZIP = 250 * 1024;

let svc: Service;
let web: string;
beforeAll(async () => {
  web = await ensureWebApp();
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

interface ManifestChunk {
  file: string;
  isEntry?: boolean;
  imports?: string[];
  dynamicImports?: string[];
}

function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('the web app’s build', () => {
  it('loads the inbox with under 250 KB of JavaScript gzipped; the ticket page and settings load later', () => {
    const manifest = JSON.parse(readFileSync(join(web, '.vite', 'manifest.json'), 'utf8')) as Record<
      string,
      ManifestChunk
    >;
    const entry = manifest['index.html'];
    expect(entry?.isEntry).toBe(true);
    // The first load: the entry and its static imports, transitively (what index.html and the
    // module graph fetch before the inbox renders; the inbox is in the entry).
    const first = new Set<string>();
    const visit = (key: string) => {
      const c = manifest[key];
      if (!c || first.has(c.file)) return;
      first.add(c.file);
      for (const i of c.imports ?? []) visit(i);
    };
    visit('index.html');
    const sizes = [...first].map((f) => {
      const body = readFileSync(join(web, f));
      return { f, raw: body.length, gz: gzipSync(body, { level: 9 }).length };
    });
    const total = sizes.reduce((n, s) => n + s.gz, 0);
    console.info(
      `inbox first load: ${sizes.map((s) => `${s.f} ${s.raw} B (${s.gz} gzipped)`).join(', ')}; ${total} B gzipped in all`,
    );
    expect(total).toBeLessThan(MAX_FIRST_LOAD_GZIP);
    // Code-split: the ticket page, settings, the knowledge base, chats and reports are not part of it.
    const lazyScreens = [
      'src/screens/ticket/index.tsx',
      'src/screens/settings/index.tsx',
      'src/screens/kb/index.tsx',
      'src/screens/chats/index.tsx',
      'src/screens/reports/index.tsx',
    ];
    expect(entry!.dynamicImports).toEqual(expect.arrayContaining(lazyScreens));
    for (const lazy of lazyScreens) {
      expect(first.has(manifest[lazy]!.file)).toBe(false);
    }
    // React's production build, not its development one.
    const main = readFileSync(join(web, entry!.file), 'utf8');
    expect(main).not.toContain('jsxDEV');
  });
});

describe('the web app’s error messages', () => {
  const res = (status: number, headers: Record<string, string> = {}) => new Response(null, { status, headers });

  it('say when to retry a 429, what failed on a 5xx, and the API’s own detail otherwise', async () => {
    const limited = await ApiError.from(res(429, { 'retry-after': '42' }), { code: 'rate_limited', detail: 'x' });
    expect(limited.message).toBe('Too many requests: try again in 42 seconds.');
    expect(limited.retryAfter).toBe(42);
    expect((await ApiError.from(res(429), null)).message).toBe('Too many requests: try again in a minute.');
    const failed = await ApiError.from(res(500), { code: 'internal_error', detail: 'request 1234' });
    expect(failed.message).toBe('The server failed (request 1234). Try again.');
    const invalid = await ApiError.from(res(422), {
      code: 'validation_failed',
      detail: 'body.name must NOT be empty',
      errors: [{ location: 'body.name', message: 'must NOT be empty' }],
    });
    expect(invalid.message).toBe('body.name must NOT be empty');
    expect(invalid.fields).toEqual([{ location: 'body.name', message: 'must NOT be empty' }]);
  });

  it('count a 429’s seconds down from when it was answered (an HTTP date works too)', async () => {
    const limited = await ApiError.from(res(429, { 'retry-after': '42' }), null);
    expect(limited.retryAt! - Date.now()).toBeGreaterThan(40_000);
    expect(errorText(limited)).toBe('Too many requests: try again in 42 seconds.');
    // What a screen rendering it again later says: the seconds left then.
    const later = (retryAt: number) => Object.assign(Object.create(limited) as ApiError, { retryAt });
    expect(errorText(later(Date.now() + 9_500))).toBe('Too many requests: try again in 10 seconds.');
    expect(errorText(later(Date.now() + 800))).toBe('Too many requests: try again in 1 second.');
    expect(errorText(later(Date.now() - 1))).toBe('Too many requests: try again now.');
    const dated = res(429, { 'retry-after': new Date(Date.now() + 30_000).toUTCString() });
    expect(retryAfterSeconds(dated)).toBeGreaterThanOrEqual(29);
    expect(retryAfterSeconds(dated)).toBeLessThanOrEqual(31);
    expect(retryAfterSeconds(res(429, { 'ratelimit-reset': '7' }))).toBe(7);
    expect(retryAfterSeconds(res(429, { 'retry-after': 'soon' }))).toBe(null);
  });
});

describe('serving the web app', () => {
  it('answers index.html for the app’s routes: never cached, a CSP of this service only, a fresh nonce', async () => {
    const nonces = new Set<string>();
    for (const path of [
      '/',
      '/login',
      '/signup',
      '/inbox',
      '/inbox?view=mine',
      '/tickets/42',
      '/settings',
      '/settings/mailboxes?connected=x',
      '/workspaces/new',
    ]) {
      const r = await fetch(svc.url + path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(r.headers.get('cache-control')).toBe('no-cache');
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      const csp = r.headers.get('content-security-policy')!;
      const nonce = /'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1];
      expect(nonce).toBeTruthy();
      nonces.add(nonce!);
      const origin = new URL(svc.rt.deps.config.publicUrl);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain(`script-src 'self' 'nonce-${nonce}'`);
      expect(csp).toContain(`connect-src 'self' ${origin.origin} ws://${origin.host}`);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      const html = await r.text();
      expect(html).toContain('<div id="root">');
      expect(html).toContain(`nonce="${nonce}"`);
      expect(html).not.toContain('CSP_NONCE_PLACEHOLDER');
      expect(html).toMatch(/src="\/app\/assets\/index-[\w-]+\.js"/);
      // Where the app's live updates work (the app says so when opened elsewhere).
      const { publicUrl, checkOrigins } = svc.rt.deps.config;
      expect(html).toContain(`<meta name="svc-public-url" content="${publicUrl}" />`);
      expect(html).toContain(`<meta name="svc-socket-origins" content="${checkOrigins.join(' ')}" />`);
    }
    expect(nonces.size).toBe(9);
    expect((await fetch(`${svc.url}/inbox`, { method: 'HEAD' })).status).toBe(200);
  });

  it('names the addresses in index.html as attribute text, whatever PUBLIC_URL holds', () => {
    const meta = addressMeta('https://help.example.com/"><script>alert(1)</script>', ['https://a.example.com']);
    expect(meta).not.toContain('<script>');
    expect(meta).toContain('content="https://help.example.com/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(meta).toContain('<meta name="svc-socket-origins" content="https://a.example.com" />');
  });

  it('serves the hashed assets immutable, gzipped to browsers that take it', async () => {
    const html = await (await fetch(`${svc.url}/inbox`)).text();
    const script = /src="(\/app\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const css = /href="(\/app\/assets\/[^"]+\.css)"/.exec(html)![1]!;
    const plain = await fetch(svc.url + script, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const body = Buffer.from(await plain.arrayBuffer());
    const gz = await rawGet(svc.url + script, { 'accept-encoding': 'gzip, br' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toMatch(/accept-encoding/i);
    expect(gunzipSync(gz.body).equals(body)).toBe(true);
    const style = await fetch(svc.url + css);
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const missing = await fetch(`${svc.url}/app/assets/index-00000000.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('not_found');
    expect((await fetch(`${svc.url}/app/assets/..%2Findex.html`)).status).toBe(404);
  });

  it('shadows none of the routes that were there: the API, its JSON 404, the help center, the widget, the docs', async () => {
    const notFound = await fetch(`${svc.url}/v1/no-such-route`);
    expect(notFound.status).toBe(404);
    expect(await notFound.json()).toMatchObject({ status: 404, code: 'not_found' });
    const unknown = await fetch(`${svc.url}/no-such-page`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/application\/json/);
    expect((await fetch(`${svc.url}/v1/me`)).status).toBe(401);
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
    const widget = await fetch(`${svc.url}/widget.js`);
    expect(widget.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const docs = await fetch(`${svc.url}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).not.toContain('<div id="root">');
    const hc = await fetch(`${svc.url}/hc/no-such-workspace`);
    expect(hc.status).toBe(404);
    expect(await hc.text()).not.toContain('<div id="root">');
    const csat = await fetch(`${svc.url}/csat/not-a-token`);
    expect(await csat.text()).not.toContain('<div id="root">');
    // A method the app's routes do not take: 405 with Allow, as for any route.
    const post = await fetch(`${svc.url}/inbox`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toContain('GET');
  });

  it('stays out of the API document', async () => {
    const doc = (await svc.api.get('/v1/openapi.json')).body;
    const app = /^\/(?:$|login|signup|inbox|tickets|settings|workspaces\/new|app\/)/;
    expect(Object.keys(doc.paths).filter((p) => app.test(p))).toEqual([]);
  });
});

describe.skipIf(Boolean(process.env.DATABASE_URL))('the web app’s type check (once per CI run)', () => {
  it('type-checks against types generated from the API document this service serves', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-openapi-'));
    try {
      const doc = join(dir, 'openapi.json');
      writeFileSync(doc, JSON.stringify((await svc.api.get('/v1/openapi.json')).body));
      const require = createRequire(import.meta.url);
      const gen = spawnSync(
        process.execPath,
        [
          join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'),
          doc,
          '--redocly',
          join(ROOT, 'examples', 'typed-client', 'redocly.yaml'),
          '-o',
          join(ROOT, 'web', 'src', 'api.gen.d.ts'),
        ],
        { encoding: 'utf8', cwd: ROOT },
      );
      expect(gen.status, gen.stderr).toBe(0);
      const tsc = spawnSync(
        process.execPath,
        [require.resolve('typescript/bin/tsc'), '--noEmit', '-p', join(ROOT, 'web')],
        { encoding: 'utf8' },
      );
      expect(tsc.stdout + tsc.stderr).toBe('');
      expect(tsc.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
