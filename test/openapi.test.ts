// The OpenAPI 3.1 document at /v1/openapi.json and the interactive reference at /docs:
// every route of the route table documented with its credentials and the error body,
// the security schemes, the webhook envelope, nullable written as type arrays, and a
// reference page that works offline (nothing loaded from another origin).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteEntry } from '../src/app.js';
import { type Service, startService } from './helpers.js';

let svc: Service;
let doc: any;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
  const r = await svc.api.get('/v1/openapi.json');
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  doc = r.body;
});
afterAll(async () => svc?.stop());

const documented = (r: RouteEntry) => !r.url.startsWith('/docs') && r.url !== '/v1/openapi.json';
/** Fastify's `/:id` (with an optional regex) is OpenAPI's `/{id}`. */
const openapiPath = (url: string) => url.replace(/:(\w+)(\([^)]*\))?/g, '{$1}');
const operationOf = (r: RouteEntry) => doc.paths?.[openapiPath(r.url)]?.[r.method.toLowerCase()];

/** Every node of a JSON value with its path. */
function* walk(value: unknown, path = '$'): Generator<[string, any]> {
  yield [path, value];
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield* walk(value[i], `${path}[${i}]`);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) yield* walk(v, `${path}.${k}`);
  }
}

describe('GET /v1/openapi.json', () => {
  it('is an OpenAPI 3.1.0 document', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(typeof doc.info?.title).toBe('string');
    expect(typeof doc.info?.version).toBe('string');
  });

  it('documents every route of the route table with its method, parameters and body', () => {
    const routes = svc.rt.app.routeTable.filter(documented);
    expect(routes.length).toBeGreaterThan(5);
    const missing = routes.filter((r) => !operationOf(r)).map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
    for (const r of routes) {
      const op = operationOf(r);
      const where = `${r.method} ${r.url}`;
      const params: any[] = op.parameters ?? [];
      for (const [, name] of r.url.matchAll(/:(\w+)/g)) {
        expect(params, `${where} path parameter ${name}`).toContainEqual(
          expect.objectContaining({ in: 'path', name, required: true }),
        );
      }
      const query = r.schema.querystring as { properties?: Record<string, unknown> } | undefined;
      for (const name of Object.keys(query?.properties ?? {})) {
        expect(params, `${where} query parameter ${name}`).toContainEqual(
          expect.objectContaining({ in: 'query', name }),
        );
      }
      if (r.schema.body) {
        expect(op.requestBody?.content?.['application/json']?.schema, `${where} request body`).toBeTypeOf('object');
      }
    }
    // And nothing documented that the service does not serve.
    const served = new Set(routes.map((r) => `${r.method.toLowerCase()} ${openapiPath(r.url)}`));
    const extra = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops)
        .filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))
        .map((m) => `${m} ${path}`)
        .filter((k) => !served.has(k)),
    );
    expect(extra).toEqual([]);
  });

  it('gives each operation the security its access needs: none for public routes, the right credentials otherwise', () => {
    const schemes = doc.components?.securitySchemes ?? {};
    for (const r of svc.rt.app.routeTable.filter(documented)) {
      const where = `${r.method} ${r.url}`;
      const security: Array<Record<string, string[]>> = operationOf(r).security;
      expect(Array.isArray(security), where).toBe(true);
      const a = r.access;
      if (a.kind === 'public') {
        expect(security, where).toEqual([]);
        continue;
      }
      expect(security.length, where).toBeGreaterThan(0);
      for (const requirement of security) {
        for (const name of Object.keys(requirement)) expect(schemes, `${where} uses ${name}`).toHaveProperty(name);
      }
      const withToken = security.find((s) => 'accessToken' in s);
      const withKey = security.find((s) => 'apiKey' in s);
      expect(withToken, `${where} accepts an access token`).toBeDefined();
      switch (a.kind) {
        case 'user':
          expect(withKey, `${where} refuses API keys`).toBeUndefined();
          expect(withToken, `${where} needs no workspace`).not.toHaveProperty('workspace');
          break;
        case 'identity':
          expect(withKey, `${where} accepts API keys`).toBeDefined();
          expect(withToken, `${where} needs no workspace`).not.toHaveProperty('workspace');
          break;
        case 'workspace':
          expect(withToken, `${where} needs SVC-Workspace with a token`).toHaveProperty('workspace');
          if (a.scopes === null) expect(withKey, `${where} refuses API keys`).toBeUndefined();
          else expect([...(withKey?.apiKey ?? [])].sort(), `${where} key scopes`).toEqual([...a.scopes].sort());
          break;
      }
    }
  });

  it('documents the error body {status, code, detail, errors?} as the 4xx answer of every operation', () => {
    for (const r of svc.rt.app.routeTable.filter(documented)) {
      const responses = operationOf(r).responses ?? {};
      const key = Object.keys(responses).find((k) => /^4(?:XX|\d\d)$/.test(k));
      expect(key, `${r.method} ${r.url}`).toBeDefined();
      const schema = responses[key!].content?.['application/json']?.schema;
      expect(schema?.required, `${r.method} ${r.url}`).toEqual(expect.arrayContaining(['status', 'code', 'detail']));
      expect(schema.properties.status.type).toBe('integer');
      expect(schema.properties.code.type).toBe('string');
      expect(schema.properties.detail.type).toBe('string');
      expect(schema.properties.errors.items.properties).toMatchObject({
        location: { type: 'string' },
        message: { type: 'string' },
      });
    }
  });

  it('declares the access token, API key, visitor and workspace security schemes', () => {
    const s = doc.components?.securitySchemes;
    expect(s).toMatchObject({
      accessToken: { type: 'http', scheme: 'bearer' },
      apiKey: { type: 'http', scheme: 'bearer' },
      visitor: { type: 'apiKey', in: 'header', name: 'Authorization' },
      workspace: { type: 'apiKey', in: 'header', name: 'SVC-Workspace' },
    });
  });

  it('describes webhook deliveries with the event envelope in the top-level webhooks section', () => {
    expect(doc.webhooks).toBeTypeOf('object');
    const ops = Object.values(doc.webhooks as Record<string, Record<string, any>>).flatMap((item) =>
      Object.values(item),
    );
    const post = ops.find((op) => op?.requestBody?.content?.['application/json']?.schema);
    expect(post).toBeDefined();
    const envelope = post.requestBody.content['application/json'].schema;
    expect(Object.keys(envelope.properties)).toEqual(
      expect.arrayContaining(['id', 'seq', 'workspace_id', 'type', 'visibility', 'data', 'occurred_at']),
    );
    expect(envelope.properties.seq.type).toBe('integer');
    // Deliveries carry the envelope without topics.
    expect(envelope.properties).not.toHaveProperty('topics');
    const headers = (post.parameters ?? []).filter((p: any) => p.in === 'header').map((p: any) => p.name);
    expect(headers).toEqual(expect.arrayContaining(['SVC-Signature', 'SVC-Event-Id', 'SVC-Event-Type']));
  });

  it('writes nullable values as type arrays, never `nullable: true` or a "null" branch', () => {
    const me = doc.paths['/v1/me'].get.responses['200'].content['application/json'].schema;
    expect(me.properties.avatar_url.type).toEqual(['string', 'null']);
    let typeArrays = 0;
    const wrong: string[] = [];
    for (const [path, node] of walk(doc)) {
      if (node === null || typeof node !== 'object' || Array.isArray(node)) continue;
      if ('nullable' in node) wrong.push(`${path}.nullable`);
      if (Array.isArray(node.type) && node.type.includes('null')) typeArrays++;
      for (const k of ['anyOf', 'oneOf']) {
        if (Array.isArray(node[k]) && node[k].some((b: any) => b?.type === 'null')) wrong.push(`${path}.${k}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(typeArrays).toBeGreaterThan(3);
  });
});

describe('GET /docs', () => {
  const REMOTE: Array<[string, RegExp]> = [
    ['src="http', /src\s*=\s*["']?\s*(?:https?:)?\/\//i],
    ['href="http', /href\s*=\s*["']?\s*(?:https?:)?\/\//i],
    ['//cdn', /\/\/cdn/i],
    ['unpkg', /unpkg/i],
    ['jsdelivr', /jsdelivr/i],
    ['a remote CSS import or url()', /(?:@import\s+(?:url\()?|url\()\s*["']?(?:https?:)?\/\//i],
    ['Google Fonts', /fonts\.(?:googleapis|gstatic)\.com/i],
  ];
  const remoteIn = (text: string) => REMOTE.filter(([, re]) => re.test(text)).map(([what]) => what);

  it('serves an HTML reference that loads every script and style from this service', async () => {
    const page = await fetch(`${svc.url}/docs`); // follows a redirect if there is one
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toMatch(/<html/i);
    expect(remoteIn(html)).toEqual([]);

    const origin = new URL(svc.url).origin;
    const refs = [...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((m) => new URL(m[1]!, page.url));
    const scripts = refs.filter((u) => u.pathname.endsWith('.js'));
    const styles = refs.filter((u) => u.pathname.endsWith('.css'));
    expect(scripts.length).toBeGreaterThan(0);
    expect(styles.length).toBeGreaterThan(0);
    let initializer = '';
    for (const u of refs) {
      expect(u.origin, u.href).toBe(origin);
      const asset = await fetch(u);
      expect(asset.status, u.href).toBe(200);
      if (!/\.(?:js|css)$/.test(u.pathname)) continue;
      const text = await asset.text();
      expect(remoteIn(text), u.href).toEqual([]);
      if (/initializer/.test(u.pathname)) initializer = text;
    }
    // Swagger UI calls validator.swagger.io unless told not to; the page must switch it off.
    expect(initializer).toMatch(/validatorUrl:\s*null/);
  });

  it('shows the same document as /v1/openapi.json (the page loads ./json)', async () => {
    const spec = await svc.api.get('/docs/json');
    expect(spec.status).toBe(200);
    expect(spec.body.openapi).toBe('3.1.0');
    expect(Object.keys(spec.body.paths)).toEqual(Object.keys(doc.paths));
  });
});
