// Idempotency-Key, rules 1-7 of interface.md "Idempotency".
import Fastify from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installIdempotency } from '../src/platform/http/idempotency.js';
import { isErrorBody, newApiKey, newTenant, type Service, startService, unique } from './helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => svc?.stop());

const keyCount = async (workspaceId: string) =>
  (await svc.rt.deps.database.db.selectFrom('api_keys').select('id').where('workspace_id', '=', workspaceId).execute())
    .length;

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
    const body = { name: 'Slow', scopes: ['tickets:read'] };
    // A first request that has claimed the key and not finished (as a running request leaves it).
    const raw = JSON.stringify(body);
    const { createHash } = await import('node:crypto');
    await svc.rt.deps.database.db
      .insertInto('idempotency_keys')
      .values({
        caller: `u:${t.owner.userId}:${t.workspaceId}`,
        key,
        workspace_id: t.workspaceId,
        route: 'POST /v1/api-keys',
        body_hash: createHash('sha256').update(`/v1/api-keys\n${raw}`).digest('base64url'),
        state: 'running',
        locked_until: new Date(Date.now() + 30_000),
      })
      .execute();
    const r = await svc.api.req('POST', '/v1/api-keys', { ...t.as, raw, headers: { 'idempotency-key': key } });
    expect(r.status).toBe(409);
    expect(isErrorBody(r.body, 409, 'idempotency_in_progress')).toBe(true);
    expect(await keyCount(t.workspaceId)).toBe(0);

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
    const raw = JSON.stringify({ name: 'Orphan', scopes: ['tickets:read'] });
    const { createHash } = await import('node:crypto');
    await svc.rt.deps.database.db
      .insertInto('idempotency_keys')
      .values({
        caller: `u:${t.owner.userId}:${t.workspaceId}`,
        key,
        workspace_id: t.workspaceId,
        route: 'POST /v1/api-keys',
        body_hash: createHash('sha256').update(`/v1/api-keys\n${raw}`).digest('base64url'),
        state: 'running',
        locked_until: new Date(Date.now() - 1000),
      })
      .execute();
    const r = await svc.api.req('POST', '/v1/api-keys', { ...t.as, raw, headers: { 'idempotency-key': key } });
    expect(r.status).toBe(201);
    expect(await keyCount(t.workspaceId)).toBe(1);
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
        actor: { type: 'api_key', apiKeyId: 'mini-app-key', createdBy: null },
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
