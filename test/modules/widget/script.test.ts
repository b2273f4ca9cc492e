// GET /widget.js, the chat widget's browser script (src/widget-client, bundled by esbuild with
// scripts/widget-bundle.mjs), and what it asks the service besides part 1's routes: its size
// (under 50 KB gzipped), its cache headers (a short max-age with an ETag on /widget.js, a year on
// /widget.<hash>.js), the session's socket topic, and the article suggestions of
// GET /v1/widget/articles (published articles only, the help center on, the visitor's credential,
// the allowed origins). The browser code's own type check runs here too (its program is not the
// server's: DOM and JSX, src/widget-client/tsconfig.json).
import { spawnSync } from 'node:child_process';
import { get, type IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

const MAX_GZIP_BYTES = 50 * 1024;

function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

describe('GET /widget.js', () => {
  it('is one script under 50 KB gzipped, cached 5 minutes with an ETag, and revalidates to a 304', async () => {
    const r = await fetch(`${svc.url}/widget.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(r.headers.get('cache-control')).toBe('public, max-age=300');
    expect(r.headers.get('access-control-allow-origin')).toBe('*');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    const body = Buffer.from(await r.arrayBuffer());
    expect(body.length).toBeGreaterThan(1000);
    expect(body.toString('utf8')).toContain('helpdesk-chat-widget');
    const gzipped = gzipSync(body, { level: 9 }).length;
    console.info(`widget.js: ${body.length} bytes, ${gzipped} gzipped`);
    expect(gzipped).toBeLessThan(MAX_GZIP_BYTES);

    const again = await fetch(`${svc.url}/widget.js`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');

    // Browsers get it compressed: the same bytes (node:http, which does not decompress).
    const gz = await rawGet(`${svc.url}/widget.js`, { 'accept-encoding': 'gzip, deflate, br' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toMatch(/accept-encoding/i);
    expect(gz.body.length).toBeLessThan(MAX_GZIP_BYTES);
    expect(gunzipSync(gz.body).equals(body)).toBe(true);
    const gzAgain = await rawGet(`${svc.url}/widget.js`, {
      'accept-encoding': 'gzip',
      'if-none-match': String(gz.headers.etag),
    });
    expect(gzAgain.status).toBe(304);

    const head = await fetch(`${svc.url}/widget.js`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('is also /widget.<hash>.js, immutable; an older hash gets today’s script for 5 minutes', async () => {
    const plain = await fetch(`${svc.url}/widget.js`, { headers: { 'accept-encoding': 'identity' } });
    const hash = plain.headers.get('etag')!.replaceAll('"', '');
    const body = Buffer.from(await plain.arrayBuffer());
    const pinned = await fetch(`${svc.url}/widget.${hash}.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(pinned.status).toBe(200);
    expect(pinned.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(await pinned.arrayBuffer()).equals(body)).toBe(true);
    const old = await fetch(`${svc.url}/widget.0123456789abcdef.js`);
    expect(old.status).toBe(200);
    expect(old.headers.get('cache-control')).toBe('public, max-age=300');
    expect((await fetch(`${svc.url}/widget.nothex.js`)).status).toBe(404);
  });

  it('stays out of the API document', async () => {
    const doc = (await svc.api.get('/v1/openapi.json')).body;
    expect(Object.keys(doc.paths).filter((p) => p.includes('widget.'))).toEqual([]);
  });

  it.skipIf(Boolean(process.env.DATABASE_URL))(
    'type-checks: the browser code has its own program (once per CI run: it does not depend on the database)',
    () => {
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
      const r = spawnSync(
        process.execPath,
        [tsc, '--noEmit', '-p', join(import.meta.dirname, '..', '..', '..', 'src', 'widget-client')],
        {
          encoding: 'utf8',
        },
      );
      expect(r.stdout + r.stderr).toBe('');
      expect(r.status).toBe(0);
    },
    60_000,
  );
});

describe("the widget's article suggestions", () => {
  let t: Tenant;
  let key: string;
  let visitor: string;
  const as = () => ({ headers: { authorization: `Visitor ${visitor}` } });

  beforeAll(async () => {
    t = await newTenant(svc.api);
    key = (await svc.api.get('/v1/workspace', t.as)).body.widget_key;
    const s = await svc.api.post('/v1/widget/session', { key });
    expect(s.status, s.text).toBe(200);
    visitor = s.body.visitor_token;
    expect(s.body.topic).toBe(`contact:${t.workspaceId}:${s.body.contact.id}`);
    const c = await svc.api.post('/v1/kb/collections', { name: 'Billing' }, t.as);
    for (const [title, status] of [
      ['How do I get a refund?', 'published'],
      ['Refund rules for 2027 (draft)', 'draft'],
    ] as const) {
      const a = await svc.api.post(
        '/v1/kb/articles',
        { collection_id: c.body.id, title, body_html: '<p>Refunds take five days.</p>', status },
        t.as,
      );
      expect(a.status, a.text).toBe(201);
    }
  });

  it('are empty while the help center is off, then the published articles matching q with their pages', async () => {
    expect((await svc.api.get('/v1/widget/articles?q=refund', as())).body).toEqual({ data: [] });
    const ws = await svc.api.patch('/v1/workspace', { settings: { help_center_enabled: true } }, t.as);
    expect(ws.status).toBe(200);
    const r = await svc.api.get('/v1/widget/articles?q=refund', as());
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).toEqual([
      {
        title: 'How do I get a refund?',
        excerpt: expect.any(String),
        url: new URL(`/hc/${ws.body.slug}/articles/how-do-i-get-a-refund`, svc.rt.deps.config.publicUrl).href,
      },
    ]);
    expect((await svc.api.get('/v1/widget/articles?q=%20', as())).body).toEqual({ data: [] });
    // A question as visitors type it: any of its words (all of them are in no article).
    const question = encodeURIComponent('How do I get a refund for order 1042? -refund "or" OR');
    const asked = await svc.api.get(`/v1/widget/articles?q=${question}`, as());
    expect(asked.body.data.map((a: { title: string }) => a.title)).toEqual(['How do I get a refund?']);
  });

  it('need the visitor credential, a short q, and an allowed origin', async () => {
    expect((await svc.api.get('/v1/widget/articles?q=refund')).status).toBe(401);
    expect((await svc.api.get('/v1/widget/articles?q=refund', t.as)).status).toBe(401);
    expect((await svc.api.get(`/v1/widget/articles?q=${'x'.repeat(201)}`, as())).status).toBe(422);
    expect((await svc.api.get('/v1/widget/articles', as())).status).toBe(422);
    const p = await svc.api.patch('/v1/widget/settings', { allowed_origins: ['https://shop.example.com'] }, t.as);
    expect(p.status).toBe(200);
    const refused = await svc.api.get('/v1/widget/articles?q=refund', {
      headers: { ...as().headers, origin: 'https://elsewhere.example' },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const allowed = await svc.api.get('/v1/widget/articles?q=refund', {
      headers: { ...as().headers, origin: 'https://shop.example.com' },
    });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://shop.example.com');
  });
});
