// What a client generated from /v1/openapi.json, a fuzzer or a broken HTTP client can send, and
// the service's one error body for each: NUL characters in any path or query value (every route
// of the route table), values the document's patterns accept but the database cannot use, requests
// Node's HTTP parser refuses before routing (431, malformed), unknown query parameters, `__proto__`
// keys, and a wrong method on a fixed path.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteEntry } from '../../../src/app.js';
import { isErrorBody, newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';

let svc: Service;
let t: Tenant;
/** A chat widget visitor of the tenant, for the visitor routes (src/modules/widget). */
let visitorToken: string;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
  t = await newTenant(svc.api);
  const key = (await svc.api.get('/v1/workspace', t.as)).body.widget_key;
  visitorToken = (await svc.api.post('/v1/widget/session', { key })).body.visitor_token;
});
afterAll(async () => svc?.stop());

/** `/v1/tickets/:id/messages` with each parameter filled in. */
const fill = (url: string, value: (name: string) => string) =>
  url.replace(/:(\w+)(\([^)]*\))?/g, (_m, name: string) => value(name));
const paramNames = (url: string) => [...url.matchAll(/:(\w+)/g)].map((m) => m[1]!);

/** One raw HTTP/1.1 exchange: what the server wrote back before closing. */
function rawExchange(request: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(svc.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let out = '';
    socket.on('data', (d) => {
      out += d.toString('latin1');
    });
    socket.on('end', () => resolve(out));
    socket.on('close', () => resolve(out));
    socket.on('error', (e) => (out ? resolve(out) : reject(e)));
    socket.write(request);
  });
}

/** Status code and parsed JSON body of a raw HTTP answer. */
function parseRaw(text: string): { status: number; type: string; body: any } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  const type = /\r\ncontent-type: ([^\r\n]+)/i.exec(head)?.[1] ?? '';
  return { status, type, body: body ? JSON.parse(body) : null };
}

describe('NUL characters in path and query values', () => {
  it('answers 422 validation_failed naming the value, on every route of the table, never a 500', async () => {
    const routes = svc.rt.app.routeTable.filter((r) => !r.url.startsWith('/docs'));
    const probes: Array<{ route: RouteEntry; url: string; location: string }> = [];
    for (const r of routes) {
      // Each path parameter in turn holds a NUL; the others hold a plausible value.
      for (const p of paramNames(r.url)) {
        probes.push({ route: r, url: fill(r.url, (n) => (n === p ? 'a%00b' : 'x')), location: `path.${p}` });
      }
      // And a query value: the route's first string parameter, or one it does not know.
      const query = r.schema.querystring as { properties?: Record<string, { type?: unknown }> } | undefined;
      const name = Object.entries(query?.properties ?? {}).find(([, s]) => s.type === 'string')?.[0] ?? 'q';
      probes.push({ route: r, url: `${fill(r.url, () => 'x')}?${name}=a%00b`, location: `query.${name}` });
    }
    expect(probes.length).toBeGreaterThan(routes.length);
    const wrong: string[] = [];
    for (const p of probes) {
      // The raw-mail route's own credential comes first (it answers 401 without it).
      const headers: Record<string, string> = p.route.url.startsWith('/v1/inbound/')
        ? { 'svc-inbound-secret': 'test-inbound-secret-0123456789' }
        : {};
      const res =
        p.route.access.kind === 'visitor'
          ? await svc.api.req(p.route.method, p.url, { headers: { authorization: `Visitor ${visitorToken}` } })
          : await svc.api.req(p.route.method, p.url, { ...t.as, headers });
      const ok =
        res.status === 422 &&
        isErrorBody(res.body, 422, 'validation_failed') &&
        res.body.errors?.[0]?.location === p.location;
      if (!ok) wrong.push(`${p.route.method} ${p.url} → ${res.status} ${res.text.slice(0, 160)}`);
    }
    expect(wrong).toEqual([]);
  });

  it('refuses the three values the fuzzer found (q and tag of /v1/tickets, q of /v1/search) with 422', async () => {
    for (const url of ['/v1/tickets?q=a%00b', '/v1/tickets?tag=a%00b', '/v1/search?q=a%00b']) {
      const r = await svc.api.get(url, t.as);
      expect(r.status, url).toBe(422);
      expect(r.body.errors[0].location, url).toBe(`query.${url.includes('tag=') ? 'tag' : 'q'}`);
    }
  });
});

describe('values the document accepts must not fail in the database', () => {
  it('refuses an assignee of 36 characters that is not a user id with 422; a real one filters', async () => {
    for (const value of ['-'.repeat(36), 'f'.repeat(36), 'ffffffff-ffff-ffff-ffff-ffff-fffffff']) {
      expect(value).toHaveLength(36);
      const r = await svc.api.get(`/v1/tickets?assignee=${encodeURIComponent(value)}`, t.as);
      expect(r.status, value).toBe(422);
      expect(r.body.errors[0].location).toBe('query.assignee');
    }
    const mine = await svc.api.get(`/v1/tickets?assignee=${t.owner.userId}`, t.as);
    expect(mine.status).toBe(200);
    expect(mine.body.data).toEqual([]);
  });

  it('refuses ids written as urn:uuid:… (a uuid format ajv accepts and PostgreSQL does not) with 422', async () => {
    const urn = `urn:uuid:${t.workspaceId}`;
    const r = await svc.api.get(`/v1/tickets?team_id=${encodeURIComponent(urn)}`, t.as);
    expect(r.status).toBe(422);
    expect(r.body.errors[0].location).toBe('query.team_id');
    const body = await svc.api.post('/v1/teams', { name: 'Urn', member_ids: [urn] }, t.as);
    expect(body.status).toBe(422);
    expect(body.body.errors[0].location).toBe('body.member_ids.0');
  });
});

describe('errors raised before routing use the one error body', () => {
  it('answers headers over the limit with 431 headers_too_large', async () => {
    const raw = await rawExchange(
      `GET /v1/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\nConnection: close\r\n\r\n`,
    );
    const r = parseRaw(raw);
    expect(r.status).toBe(431);
    expect(r.type).toMatch(/^application\/json/);
    expect(isErrorBody(r.body, 431, 'headers_too_large')).toBe(true);
  });

  it('answers a malformed request line or header, and an unknown method, with 400 bad_request', async () => {
    for (const request of [
      'GET /v1/me HTTP/1.1\r\nHost: x\r\nBroken header line\r\n\r\n',
      'GET /v1/me HTTP/9.9\r\nHost: x\r\n\r\n',
      'BREW /v1/me HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /v1/me HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ]) {
      const r = parseRaw(await rawExchange(request));
      expect(r.status, request).toBe(400);
      expect(isErrorBody(r.body, 400, 'bad_request'), request).toBe(true);
    }
  });

  it('answers a method the service does not serve on a known path with 405 and Allow', async () => {
    for (const method of ['PROPFIND', 'TRACE', 'OPTIONS', 'PUT', 'QUERY']) {
      const raw = await rawExchange(`${method} /v1/tickets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      const r = parseRaw(raw);
      expect(r.status, method).toBe(405);
      expect(isErrorBody(r.body, 405, 'method_not_allowed'), method).toBe(true);
      expect(/\r\nallow: ([^\r]+)/i.exec(raw)?.[1], method).toBe('GET, POST');
    }
  });
});

describe('a wrong method on a fixed path', () => {
  it('answers 405 with Allow instead of looking up a record named after the path', async () => {
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/v1/tickets/counts', 'GET'],
      ['PATCH', '/v1/tickets/counts', 'GET'],
      ['GET', '/v1/invitations/accept', 'POST'],
      ['PATCH', '/v1/custom-fields/reorder', 'POST'],
      ['DELETE', '/v1/tag-groups/reorder', 'POST'],
    ];
    for (const [method, path, allow] of cases) {
      const r = await svc.api.req(method, path, { ...t.as, ...(method === 'GET' ? {} : { body: {} }) });
      expect(r.status, `${method} ${path}`).toBe(405);
      expect(isErrorBody(r.body, 405, 'method_not_allowed')).toBe(true);
      expect(r.headers.get('allow'), `${method} ${path}`).toBe(allow);
    }
    // The fixed routes themselves still answer, and ids still reach the /{id} routes.
    expect((await svc.api.get('/v1/tickets/counts', t.as)).status).toBe(200);
    expect((await svc.api.delete('/v1/tickets/00000000-0000-4000-8000-000000000000', t.as)).status).toBe(404);
  });
});

describe('query parameters', () => {
  it('refuses a parameter a route does not know with 422, on every route that reads a query', async () => {
    const r = await svc.api.get('/v1/api-keys?colour=blue', t.as);
    expect(r.status).toBe(422);
    expect(r.body.errors[0]).toEqual({ location: 'query.colour', message: 'is not a known field' });
    // Every route's query schema says whether it takes unknown parameters (only the two OAuth
    // callbacks, mailbox connection and sign-in, do: the provider adds its own).
    const open = svc.rt.app.routeTable
      .filter((route) => route.schema.querystring)
      .filter(
        (route) => (route.schema.querystring as { additionalProperties?: unknown }).additionalProperties !== false,
      )
      .map((route) => `${route.method} ${route.url}`);
    expect(open.sort()).toEqual([
      'GET /v1/auth/oauth/:provider/callback',
      'GET /v1/mailboxes/oauth/:provider/callback',
    ]);
  });
});

describe('__proto__ in a JSON body', () => {
  it('is refused with 422 like any unknown field, at any depth, and changes nothing', async () => {
    const before = await svc.api.get('/v1/workspace', t.as);
    for (const [raw, location] of [
      ['{"__proto__": {"name": "Hijacked"}}', 'body.__proto__'],
      ['{"name": "Renamed", "__proto__": {}}', 'body.__proto__'],
      ['{"settings": {"__proto__": {"csat_enabled": true}}}', 'body.settings.__proto__'],
      ['{"settings": {"timezone": "UTC"}, "x": [{"__proto__": 1}]}', 'body.x.0.__proto__'],
    ] as const) {
      const r = await svc.api.req('PATCH', '/v1/workspace', { ...t.as, raw });
      expect(r.status, raw).toBe(422);
      expect(r.body.errors[0], raw).toEqual({ location, message: 'is not a known field' });
    }
    expect((await svc.api.get('/v1/workspace', t.as)).body).toEqual(before.body);
  });
});
