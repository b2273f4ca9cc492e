// The HTTP pipeline every route shares: error bodies, 404/405, parsing limits,
// pagination cursors, rate limits, health and readiness, request logs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isErrorBody,
  newApiKey,
  newTenant,
  onPostgres,
  type Res,
  type Service,
  startService,
  unique,
} from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => svc?.stop());

describe('errors', () => {
  it('answers an unknown route with 404 not_found in the error body', async () => {
    const r = await svc.api.get('/v1/no-such-thing');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ status: 404, code: 'not_found', detail: expect.any(String) });
  });

  it('answers a known path with the wrong method with 405 and Allow', async () => {
    const r = await svc.api.req('PUT', '/v1/workspace');
    expect(r.status).toBe(405);
    expect(isErrorBody(r.body, 405, 'method_not_allowed')).toBe(true);
    expect(r.headers.get('allow')).toBe('GET, PATCH, DELETE');
  });

  it('answers malformed JSON and invalid UTF-8 with 400, and non-JSON bodies with 415', async () => {
    const t = await newTenant(svc.api);
    const broken = await svc.api.req('PATCH', '/v1/workspace', { ...t.as, raw: '{"name": "x",' });
    expect(broken.status).toBe(400);
    expect(isErrorBody(broken.body, 400, 'bad_request')).toBe(true);
    const bytes = await svc.api.req('PATCH', '/v1/workspace', {
      ...t.as,
      raw: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    });
    expect(bytes.status).toBe(400);
    const form = await svc.api.req('PATCH', '/v1/workspace', {
      ...t.as,
      raw: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(isErrorBody(form.body, 415)).toBe(true);
  });

  it('answers a body over the limit with 413 too_large', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.patch('/v1/workspace', { name: 'x'.repeat(1_100_000) }, t.as);
    expect(r.status).toBe(413);
    expect(isErrorBody(r.body, 413, 'too_large')).toBe(true);
  });

  it('answers schema failures with 422 validation_failed locating each problem', async () => {
    const t = await newTenant(svc.api);
    const wrongType = await svc.api.patch('/v1/workspace', { name: 5 }, t.as);
    expect(wrongType.status).toBe(422);
    expect(wrongType.body.code).toBe('validation_failed');
    expect(wrongType.body.errors).toEqual([{ location: 'body.name', message: expect.any(String) }]);
    const nested = await svc.api.patch('/v1/workspace', { settings: { auto_assign: 'random' } }, t.as);
    expect(nested.body.errors[0].location).toBe('body.settings.auto_assign');
    const unknown = await svc.api.patch('/v1/workspace', { name: 'ok', owner_id: 'me' }, t.as);
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0]).toEqual({ location: 'body.owner_id', message: 'is not a known field' });
    const missing = await svc.api.post('/v1/api-keys', { name: 'k' }, t.as);
    expect(missing.body.errors[0].location).toBe('body.scopes');
    const nul = await svc.api.patch('/v1/workspace', { name: 'a\u0000b' }, t.as);
    expect(nul.status).toBe(422);
    expect(nul.body.errors[0].location).toBe('body.name');
    const query = await svc.api.get('/v1/api-keys?limit=0', t.as);
    expect(query.body.errors[0].location).toBe('query.limit');
    // Nothing changed.
    expect((await svc.api.get('/v1/workspace', t.as)).body.name).toBe('Acme Support');
  });

  it('hides the details of unexpected failures behind a request id, and says so in the log', async () => {
    const broken = await startService();
    const t = await newTenant(broken.api);
    await broken.rt.deps.database.close();
    const r = await broken.api.get('/v1/workspace', t.as);
    expect(r.status).toBe(500);
    expect(isErrorBody(r.body, 500, 'internal_error')).toBe(true);
    const id = r.headers.get('x-request-id')!;
    expect(r.body.detail).toContain(id);
    expect(broken.logs.some((l) => l.includes(id) && l.includes('"level":50'))).toBe(true);
    const ready = await broken.api.get('/readyz');
    expect(ready.status).toBe(503);
    expect(isErrorBody(ready.body, 503, 'unavailable')).toBe(true);
    expect(ready.body.errors).toContainEqual({ location: 'database', message: 'unreachable' });
    await broken.stop();
  });
});

describe('health', () => {
  it('answers /healthz and /readyz', async () => {
    expect((await svc.api.get('/healthz')).body).toEqual({ status: 'ok', role: 'all' });
    expect((await svc.api.get('/readyz')).body).toEqual({ status: 'ok', role: 'all', database: 'ok', bus: 'ok' });
  });
});

describe('pagination', () => {
  it('walks a list with limit and cursor, and refuses tampered or foreign cursors with 422', async () => {
    const t = await newTenant(svc.api);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await newApiKey(svc.api, t, ['kb:read'])).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const r = await svc.api.get(`/v1/api-keys${q}`, t.as);
      expect(r.status).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.data.map((k: any) => k.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());

    const page1 = await svc.api.get('/v1/api-keys?limit=2', t.as);
    const good: string = page1.body.next_cursor;
    // A key inserted meanwhile does not shift the next page.
    await newApiKey(svc.api, t, ['kb:read']);
    const page2 = await svc.api.get(`/v1/api-keys?limit=2&cursor=${encodeURIComponent(good)}`, t.as);
    expect(page2.body.data.map((k: any) => k.id)).toEqual([ids[2], ids[1]]);

    const [body, mac] = good.split('.');
    const forged = `${Buffer.from(JSON.stringify([4102444800000000, 'zzz'])).toString('base64url')}.${mac}`;
    const other = await newTenant(svc.api);
    await newApiKey(svc.api, other, ['kb:read']);
    await newApiKey(svc.api, other, ['kb:read']);
    await newApiKey(svc.api, other, ['kb:read']);
    const foreign = (await svc.api.get('/v1/api-keys?limit=1', other.as)).body.next_cursor;
    for (const c of [forged, `${body}.AAAA`, 'garbage', '%%%', `${body}`, foreign]) {
      const r = await svc.api.get(`/v1/api-keys?cursor=${encodeURIComponent(c)}`, t.as);
      expect(r.status, c).toBe(422);
      expect(r.body.errors[0].location).toBe('query.cursor');
    }
  });

  it('bounds limit to 1..100 with a default of 50', async () => {
    const t = await newTenant(svc.api);
    for (const l of ['0', '-1', '101', '1e9', 'ten']) {
      expect((await svc.api.get(`/v1/api-keys?limit=${l}`, t.as)).status, l).toBe(422);
    }
    expect((await svc.api.get('/v1/api-keys?limit=100', t.as)).status).toBe(200);
  });
});

describe('rate limits', () => {
  it('limits each credential per minute, counts writes double, and says when to retry', async () => {
    const limited = await startService({ RATE_LIMIT_PER_MINUTE: '6' });
    try {
      const t = await newTenant(limited.api); // register + create: separate IP and session buckets
      const k = await newApiKey(limited.api, t, ['settings:write']);
      const r1 = await limited.api.get('/v1/workspace', { token: k.key });
      expect(r1.status).toBe(200);
      expect(r1.headers.get('ratelimit-limit')).toBe('6');
      expect(r1.headers.get('ratelimit-remaining')).toBe('5');
      expect(Number(r1.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      const w = await limited.api.patch('/v1/workspace', { name: 'n' }, { token: k.key });
      expect(w.headers.get('ratelimit-remaining')).toBe('3');
      await limited.api.get('/v1/workspace', { token: k.key });
      await limited.api.get('/v1/workspace', { token: k.key });
      await limited.api.get('/v1/workspace', { token: k.key });
      const over = await limited.api.get('/v1/workspace', { token: k.key });
      expect(over.status).toBe(429);
      expect(isErrorBody(over.body, 429, 'rate_limited')).toBe(true);
      expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
      // Another credential has its own bucket.
      const k2 = await newApiKey(limited.api, t, ['settings:read']);
      expect((await limited.api.get('/v1/workspace', { token: k2.key })).status).toBe(200);
      // Health checks are not counted.
      for (let i = 0; i < 8; i++) expect((await limited.api.get('/healthz')).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });

  it('gives each session its own bucket: two sign-ins, another person and an API key are not refused with it', async () => {
    // Rate limits: a bucket per credential (API key, user session, visitor).
    const limited = await startService({ RATE_LIMIT_PER_MINUTE: '10' }, { jobs: false });
    try {
      const api = limited.api;
      // Unauthenticated writes count in the address's bucket, double: 6 of its 10.
      const email = `${unique('rl')}@example.com`;
      const password = 'correct horse battery';
      const reg = await api.post('/v1/auth/register', { email, password, name: 'Rae Limit' });
      expect(reg.status).toBe(201);
      const again = await api.post('/v1/auth/login', { email, password });
      expect(again.status).toBe(200);
      const other = await api.post('/v1/auth/register', {
        email: `${unique('rl')}@example.com`,
        password,
        name: 'Otto Other',
      });
      expect(other.status).toBe(201);
      const first = reg.body.access_token as string; // the first sign-in's session
      const second = again.body.access_token as string; // the same person's second session
      expect(second).not.toBe(first);

      // The first session: two writes (4 of its 10), then reads until refused: 6 more, then 429.
      const ws = await api.post('/v1/workspaces', { name: 'Limits' }, { token: first });
      expect(ws.status).toBe(201);
      const as = { token: first, workspace: ws.body.id as string };
      const key = await api.post('/v1/api-keys', { name: 'reader', scopes: ['settings:read'] }, as);
      expect(key.status).toBe(201);
      const statuses: number[] = [];
      let refused: Res | null = null;
      for (let i = 0; i < 7; i++) {
        const r = await api.get('/v1/workspace', as);
        statuses.push(r.status);
        if (r.status === 429) refused = r;
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429]);
      expect(isErrorBody(refused!.body, 429, 'rate_limited')).toBe(true);
      const retry = Number(refused!.headers.get('retry-after'));
      expect(Number.isInteger(retry)).toBe(true);
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(60);
      expect(refused!.headers.get('ratelimit-limit')).toBe('10');
      expect(refused!.headers.get('ratelimit-remaining')).toBe('0');
      expect(refused!.headers.get('ratelimit-reset')).toBe(String(retry));

      // The same person's second session, another person, and the API key: each a full bucket.
      const fresh = async (r: Res) => {
        expect(r.status).toBe(200);
        expect(r.headers.get('ratelimit-limit')).toBe('10');
        expect(r.headers.get('ratelimit-remaining')).toBe('9');
      };
      await fresh(await api.get('/v1/workspace', { token: second, workspace: as.workspace }));
      await fresh(await api.get('/v1/me', { token: other.body.access_token }));
      await fresh(await api.get('/v1/workspace', { token: key.body.key }));
      // And the first session is still refused.
      expect((await api.get('/v1/workspace', as)).status).toBe(429);
    } finally {
      await limited.stop();
    }
  });

  // Two server processes need one database to share API keys: PostgreSQL.
  it.runIf(Boolean(process.env.TEST_REDIS_URL) && onPostgres)(
    'shares the counters through Redis between server processes',
    async () => {
      const env = { RATE_LIMIT_PER_MINUTE: '5', REDIS_URL: process.env.TEST_REDIS_URL! };
      const a = await startService(env, { jobs: false });
      const b = await startService(env, { jobs: false });
      try {
        const t = await newTenant(a.api);
        const k = await newApiKey(a.api, t, ['settings:read']);
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++)
          statuses.push((await (i % 2 ? b : a).api.get('/v1/workspace', { token: k.key })).status);
        expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      } finally {
        await a.stop();
        await b.stop();
      }
    },
  );
});

describe('request log', () => {
  it('writes one JSON line per request with method, path, status and duration, without query strings', async () => {
    const before = svc.logs.length;
    const r = await svc.api.get('/healthz?token=supersecret');
    expect(r.status).toBe(200);
    await new Promise((res) => setTimeout(res, 50));
    const lines = svc.logs.slice(before).filter((l) => l.includes('"path":"/healthz"'));
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ method: 'GET', status: 200, msg: 'request', reqId: r.headers.get('x-request-id') });
    expect(typeof entry.ms).toBe('number');
    expect(lines[0]).not.toContain('supersecret');
  });
});
