// Idempotency-Key, rules 1-7 of docs/api.md "Idempotency", through HTTP: what a caller sees,
// not how the keys are stored.
import type { LookupAddress } from 'node:dns';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installIdempotency } from '../../../src/platform/http/idempotency.js';
import {
  isErrorBody,
  newApiKey,
  newTenant,
  type ReqOpts,
  type Res,
  type Service,
  startService,
  unique,
} from '../../support/helpers.js';

// The webhook URL check resolves the URL's name inside the request, after the request has claimed
// its Idempotency-Key: `held.test` is answered only when the test says so (holdNext), which keeps
// a request running for as long as the test needs. Every other name is a public address.
const PUBLIC = '93.184.215.14';
let holdNext = false;
const held: Array<(address: string) => void> = [];
async function resolve(host: string): Promise<LookupAddress[]> {
  if (host === 'held.test' && holdNext) {
    holdNext = false;
    return new Promise((answer) => held.push((address) => answer([{ address, family: 4 }])));
  }
  return [{ address: PUBLIC, family: 4 }];
}

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false, webhooks: { resolve } });
});
afterAll(async () => svc?.stop());

const keyCount = async (workspaceId: string) =>
  (await svc.rt.deps.database.db.selectFrom('api_keys').select('id').where('workspace_id', '=', workspaceId).execute())
    .length;

const webhooksOf = async (as: ReqOpts) => {
  const r = await svc.api.get('/v1/webhooks', as);
  expect(r.status).toBe(200);
  return r.body.data as Array<{ id: string }>;
};

/**
 * Starts a webhook create that stays running (in its URL check) until `held` is answered; its
 * answer comes later (wrapped: an async function returning the promise would wait for it).
 */
async function heldCreate(as: ReqOpts, key: string): Promise<{ answer: Promise<Res> }> {
  holdNext = true;
  const answer = svc.api.post(
    '/v1/webhooks',
    { url: 'https://held.test/hook', events: ['team.created'] },
    { ...as, headers: { 'idempotency-key': key } },
  );
  await expect.poll(() => held.length, { timeout: 10_000 }).toBe(1);
  return { answer };
}

describe('Idempotency-Key', () => {
  it('1. replays the stored answer for the same key, route and body, with Idempotent-Replayed', async () => {
    const t = await newTenant(svc.api);
    const key = unique('idem');
    const body = { name: 'CI key', scopes: ['tickets:read'] };
    const first = await svc.api.post('/v1/api-keys', body, { ...t.as, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await svc.api.post('/v1/api-keys', body, { ...t.as, headers: { 'idempotency-key': key } });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    expect(again.text).toBe(first.text);
    expect(await keyCount(t.workspaceId)).toBe(1);
    // The stored answer holds the new key's secret: it is kept encrypted.
    const stored = await svc.rt.deps.database.db
      .selectFrom('idempotency_keys')
      .select('body')
      .where('key', '=', key)
      .executeTakeFirstOrThrow();
    expect(stored.body).not.toContain(first.body.key);
    expect(stored.body).toMatch(/^v1\./);

    // Location is replayed too.
    const owner = t.owner;
    const wsKey = unique('ws');
    const w1 = await svc.api.post(
      '/v1/workspaces',
      { name: 'Second' },
      { token: owner.token, headers: { 'idempotency-key': wsKey } },
    );
    const w2 = await svc.api.post(
      '/v1/workspaces',
      { name: 'Second' },
      { token: owner.token, headers: { 'idempotency-key': wsKey } },
    );
    expect(w2.status).toBe(201);
    expect(w2.body.id).toBe(w1.body.id);
    expect(w2.headers.get('location')).toBe(w1.headers.get('location'));
  });

  it('2. refuses the same key with another body or route (422 idempotency_key_reused)', async () => {
    const t = await newTenant(svc.api);
    const key = unique('idem');
    const h = { ...t.as, headers: { 'idempotency-key': key } };
    expect((await svc.api.post('/v1/api-keys', { name: 'A', scopes: ['tickets:read'] }, h)).status).toBe(201);
    const otherBody = await svc.api.post('/v1/api-keys', { name: 'B', scopes: ['tickets:read'] }, h);
    expect(otherBody.status).toBe(422);
    expect(isErrorBody(otherBody.body, 422, 'idempotency_key_reused')).toBe(true);
    const otherRoute = await svc.api.post('/v1/workspaces', { name: 'A' }, h);
    expect(otherRoute.status).toBe(422);
    expect(otherRoute.body.code).toBe('idempotency_key_reused');
    expect(await keyCount(t.workspaceId)).toBe(1);
  });

  it('3. answers 409 idempotency_in_progress while the first request runs', async () => {
    const t = await newTenant(svc.api);
    const key = unique('idem');
    const h = { ...t.as, headers: { 'idempotency-key': key } };
    const body = { url: 'https://held.test/hook', events: ['team.created'] };
    // A first request that has claimed the key and not finished.
    const first = await heldCreate(t.as, key);
    const r = await svc.api.post('/v1/webhooks', body, h);
    expect(r.status).toBe(409);
    expect(isErrorBody(r.body, 409, 'idempotency_in_progress')).toBe(true);
    expect(await webhooksOf(t.as)).toEqual([]);
    // Once it has finished, the same request gets its answer.
    held.shift()!(PUBLIC);
    const done = await first.answer;
    expect(done.status).toBe(201);
    const replay = await svc.api.post('/v1/webhooks', body, h);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.id).toBe(done.body.id);
    expect((await webhooksOf(t.as)).map((w) => w.id)).toEqual([done.body.id]);

    // Concurrent duplicates: exactly one creates, the others wait it out or replay.
    const key2 = unique('idem');
    const answers = await Promise.all(
      Array.from({ length: 6 }, () =>
        svc.api.post(
          '/v1/api-keys',
          { name: 'Race', scopes: ['kb:read'] },
          { ...t.as, headers: { 'idempotency-key': key2 } },
        ),
      ),
    );
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    expect(await keyCount(t.workspaceId)).toBe(1);
  });

  it('3b. lets a retry take over the claim of a request whose process died', async () => {
    const t = await newTenant(svc.api);
    const key = unique('idem');
    const body = { url: 'https://held.test/hook', events: ['team.created'] };
    // A first request claims the key, and its process dies before answering: its claim stays
    // until it expires. The test moves the claim's clock on, as a minute passing would.
    const first = await heldCreate(t.as, key);
    await svc.rt.deps.database.db
      .updateTable('idempotency_keys')
      .set({ locked_until: new Date(Date.now() - 1000) })
      .where('key', '=', key)
      .execute();
    const retry = await svc.api.post('/v1/webhooks', body, { ...t.as, headers: { 'idempotency-key': key } });
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    // The "dead" request ends without writing anything (its URL now resolves to loopback): one
    // webhook, the retry's. (The URL check gives up on a name after 3 s and lets it through, so
    // the steps above must take less than that.)
    held.shift()!('127.0.0.1');
    expect((await first.answer).status).toBe(422);
    expect((await webhooksOf(t.as)).map((w) => w.id)).toEqual([retry.body.id]);
  });

  it('4. stores nothing for a 5xx, so a retry runs again', async () => {
    const t = await newTenant(svc.api);
    const name = unique('boom');
    const db = svc.rt.deps.database.db;
    // A database failure for this one name only (other test files share the database).
    await sql
      .raw(`CREATE OR REPLACE FUNCTION fail_${name.replace(/\W/g, '_')}() RETURNS trigger AS $$
        BEGIN IF NEW.name = '${name}' THEN RAISE EXCEPTION 'induced failure'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql;
        CREATE TRIGGER trg_${name.replace(/\W/g, '_')} BEFORE INSERT ON api_keys FOR EACH ROW EXECUTE FUNCTION fail_${name.replace(/\W/g, '_')}();`)
      .execute(db);
    const key = unique('idem');
    const h = { ...t.as, headers: { 'idempotency-key': key } };
    try {
      const failed = await svc.api.post('/v1/api-keys', { name, scopes: ['tickets:read'] }, h);
      expect(failed.status).toBe(500);
      expect(isErrorBody(failed.body, 500, 'internal_error')).toBe(true);
      expect(failed.text).not.toContain('induced failure');
      expect(failed.text).not.toMatch(/insert|api_keys/i);
      expect(failed.body.detail).toContain(failed.headers.get('x-request-id'));
      // The log has the request id, and no stack trace or SQL.
      const line = svc.logs.find(
        (l) => l.includes(failed.headers.get('x-request-id')!) && l.includes('request failed'),
      );
      expect(line).toBeDefined();
      expect(line).not.toMatch(/\n\s+at |insert into/i);
    } finally {
      await sql.raw(`DROP TRIGGER trg_${name.replace(/\W/g, '_')} ON api_keys`).execute(db);
    }
    const retry = await svc.api.post('/v1/api-keys', { name, scopes: ['tickets:read'] }, h);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await keyCount(t.workspaceId)).toBe(1);
  });

  it('4b. stores nothing for a 429 or a body over 1 MiB; stores 4xx answers', async () => {
    const database = svc.rt.deps.database;
    const app = Fastify();
    app.decorateRequest('ctx', null as never);
    app.addHook('onRequest', async (req) => {
      req.ctx = {
        workspaceId: null as never,
        actor: { kind: 'api_key', apiKeyId: 'mini-app-key', createdBy: null },
        role: null,
        scopes: [],
        teams: [],
        ip: '127.0.0.1',
      };
    });
    installIdempotency(app, database, svc.rt.deps.secrets, svc.rt.deps.writer, 60_000);
    let runs = 0;
    const route = { config: { access: { kind: 'workspace' as const, role: 'agent' as const, scopes: [] } } };
    app.post('/big', route, async () => {
      runs++;
      return { blob: 'x'.repeat(1024 * 1024 + 10) };
    });
    app.post('/limited', route, async (_req, reply) => {
      runs++;
      reply.code(429);
      return { status: 429, code: 'rate_limited', detail: 'slow down' };
    });
    app.post('/refused', route, async (_req, reply) => {
      runs++;
      reply.code(403);
      return { status: 403, code: 'forbidden', detail: 'no' };
    });
    await app.ready();
    const send = (url: string, key: string) =>
      app.inject({
        method: 'POST',
        url,
        headers: { 'idempotency-key': key, 'content-type': 'application/json' },
        payload: '{}',
      });
    try {
      for (const url of ['/big', '/limited']) {
        runs = 0;
        const key = unique('mini');
        const a = await send(url, key);
        const b = await send(url, key);
        expect(b.headers['idempotent-replayed']).toBeUndefined();
        expect(b.statusCode).toBe(a.statusCode);
        expect(runs).toBe(2);
      }
      runs = 0;
      const key = unique('mini');
      await send('/refused', key);
      const again = await send('/refused', key);
      expect(again.statusCode).toBe(403);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(runs).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('5. refuses an invalid key value with 422 validation_failed', async () => {
    const t = await newTenant(svc.api);
    for (const bad of ['', 'x'.repeat(256), 'tab\there', 'ünïcode']) {
      const r = await svc.api.post(
        '/v1/api-keys',
        { name: 'x', scopes: ['kb:read'] },
        { ...t.as, headers: { 'idempotency-key': bad } },
      );
      expect(r.status, JSON.stringify(bad)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
    }
    expect(await keyCount(t.workspaceId)).toBe(0);
  });

  it('6. scopes keys per caller: the same key from another caller is a new request', async () => {
    const t = await newTenant(svc.api);
    const k1 = await newApiKey(svc.api, t, ['settings:write']);
    const k2 = await newApiKey(svc.api, t, ['settings:write']);
    const idem = unique('idem');
    const body = { name: 'same', scopes: ['settings:write'] };
    const a = await svc.api.post('/v1/api-keys', body, { token: k1.key, headers: { 'idempotency-key': idem } });
    const b = await svc.api.post('/v1/api-keys', body, { token: k2.key, headers: { 'idempotency-key': idem } });
    const c = await svc.api.post('/v1/api-keys', body, { ...t.as, headers: { 'idempotency-key': idem } });
    expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
    expect(new Set([a.body.id, b.body.id, c.body.id]).size).toBe(3);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
  });

  it('6b. scopes a person’s keys per workspace: the same key in two workspaces makes two records', async () => {
    const t = await newTenant(svc.api);
    const other = await svc.api.post('/v1/workspaces', { name: 'Second desk' }, { token: t.owner.token });
    expect(other.status).toBe(201);
    const inA = t.as;
    const inB = { token: t.owner.token, workspace: other.body.id as string };
    const idem = unique('idem');
    const body = { name: 'Support' };
    const a = await svc.api.post('/v1/teams', body, { ...inA, headers: { 'idempotency-key': idem } });
    const b = await svc.api.post('/v1/teams', body, { ...inB, headers: { 'idempotency-key': idem } });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
    expect(b.body.id).not.toBe(a.body.id);
    // Each workspace has its own team, and a retry in each gets that workspace's answer.
    expect((await svc.api.get('/v1/teams', inA)).body.data.map((x: any) => x.id)).toEqual([a.body.id]);
    expect((await svc.api.get('/v1/teams', inB)).body.data.map((x: any) => x.id)).toEqual([b.body.id]);
    for (const [as, first] of [
      [inA, a],
      [inB, b],
    ] as const) {
      const again = await svc.api.post('/v1/teams', body, { ...as, headers: { 'idempotency-key': idem } });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body.id).toBe(first.body.id);
    }
  });

  it('7. does not apply to sign-in routes, or to PATCH and DELETE', async () => {
    const t = await newTenant(svc.api);
    const idem = unique('idem');
    const l1 = await svc.api.post(
      '/v1/auth/login',
      { email: t.owner.email, password: t.owner.password },
      { headers: { 'idempotency-key': idem } },
    );
    const l2 = await svc.api.post(
      '/v1/auth/login',
      { email: t.owner.email, password: t.owner.password },
      { headers: { 'idempotency-key': idem } },
    );
    expect(l1.status).toBe(200);
    expect(l2.status).toBe(200);
    expect(l2.headers.get('idempotent-replayed')).toBeNull();
    expect(l2.body.access_token).not.toBe(l1.body.access_token);
    const p1 = await svc.api.patch('/v1/workspace', { name: 'P' }, { ...t.as, headers: { 'idempotency-key': idem } });
    const p2 = await svc.api.patch('/v1/workspace', { name: 'P' }, { ...t.as, headers: { 'idempotency-key': idem } });
    expect(p2.headers.get('idempotent-replayed')).toBeNull();
    expect([p1.status, p2.status]).toEqual([200, 200]);
    const ev = await svc.api.get('/v1/events?since=0&limit=1', t.as);
    expect(ev.body.latest_seq).toBe(3);
  });

  it('keeps answers 24 hours: an older stored answer no longer replays', async () => {
    const t = await newTenant(svc.api);
    const idem = unique('idem');
    const h = { ...t.as, headers: { 'idempotency-key': idem } };
    expect((await svc.api.post('/v1/api-keys', { name: 'day', scopes: ['kb:read'] }, h)).status).toBe(201);
    await svc.rt.deps.database.db
      .updateTable('idempotency_keys')
      .set({ created_at: new Date(Date.now() - 25 * 3600 * 1000) })
      .where('key', '=', idem)
      .execute();
    const r = await svc.api.post('/v1/api-keys', { name: 'day', scopes: ['kb:read'] }, h);
    expect(r.status).toBe(201);
    expect(r.headers.get('idempotent-replayed')).toBeNull();
    expect(await keyCount(t.workspaceId)).toBe(2);
  });
});
