// GET /v1/audit-logs: the AuditLog shape (user, API key and system actors), newest first,
// filters (action, actor, entity_type, from, to), pages whose cursor is bound to the filters,
// who may read it, and tenant isolation.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../../src/modules/audit/service.js';
import {
  addMember,
  isErrorBody,
  newApiKey,
  newTenant,
  type ReqOpts,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

const join = async (t: Tenant, role: 'admin' | 'agent' | 'viewer'): Promise<ReqOpts & { userId: string }> => {
  const m = await addMember(svc, t, role);
  return { ...m.as, userId: m.userId };
};

/** Every entry of a filtered list, following cursors with this page size. */
async function all(t: Tenant | ReqOpts, query: string, limit = 100): Promise<any[]> {
  const as = 'as' in t ? t.as : t;
  const out: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const sep = query ? '&' : '';
    const q: string = `?${query}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const r = await svc.api.get(`/v1/audit-logs${q}`, as);
    expect(r.status, r.text).toBe(200);
    out.push(...r.body.data);
    cursor = r.body.next_cursor;
    if (!cursor) return out;
  }
  throw new Error('too many pages');
}

describe('GET /v1/audit-logs', () => {
  it('shows entries newest first with user, API key and system actors', async () => {
    const t = await newTenant(svc.api);
    const agent = await join(t, 'agent');
    const key = await newApiKey(svc.api, t, ['settings:write']);
    await svc.api.patch(`/v1/members/${agent.userId}`, { role: 'viewer' }, t.as);
    const team = await svc.api.post('/v1/teams', { name: 'Audited' }, { token: key.key });
    await svc.rt.deps.database.db
      .transaction()
      .execute((trx) =>
        recordAudit(
          trx,
          { workspaceId: t.workspaceId, actor: { kind: 'system' }, ip: null },
          { action: 'workspace.cleanup', entityType: 'workspace', entityId: null, data: { removed: 3 } },
        ),
      );

    const r = await svc.api.get('/v1/audit-logs', t.as);
    expect(r.status).toBe(200);
    expect(r.body.next_cursor).toBeNull();
    expect(r.body.data.map((e: any) => e.action)).toEqual([
      'workspace.cleanup',
      'team.created',
      'member.role_changed',
      'api_key.created',
    ]);
    const [system, byKey, byUser, keyCreated] = r.body.data;
    expect(system).toEqual({
      id: expect.any(String),
      actor: { type: 'system', user: null, api_key_id: null },
      action: 'workspace.cleanup',
      entity_type: 'workspace',
      entity_id: null,
      data: { removed: 3 },
      ip: null,
      created_at: expect.stringMatching(/Z$/),
    });
    expect(byKey).toMatchObject({
      actor: { type: 'api_key', user: null, api_key_id: key.id },
      entity_type: 'team',
      entity_id: team.body.id,
      ip: expect.any(String),
    });
    expect(byUser).toMatchObject({
      actor: {
        type: 'user',
        user: { id: t.owner.userId, name: 'Olivia Owner', email: t.owner.email, avatar_url: null },
        api_key_id: null,
      },
      entity_type: 'member',
      entity_id: agent.userId,
      data: { from: 'agent', to: 'viewer' },
    });
    expect(keyCreated).toMatchObject({ action: 'api_key.created', entity_id: key.id });
    const times = r.body.data.map((e: any) => Date.parse(e.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('filters by action, actor (user or API key), entity type and time range', async () => {
    const t = await newTenant(svc.api);
    const admin = await join(t, 'admin');
    const key = await newApiKey(svc.api, t, ['settings:write']);
    const a = await svc.api.post('/v1/teams', { name: 'A' }, t.as);
    const b = await svc.api.post('/v1/teams', { name: 'B' }, admin);
    await svc.api.post('/v1/teams', { name: 'C' }, { token: key.key });
    await svc.api.patch(`/v1/teams/${a.body.id}`, { name: 'A2' }, admin);
    await svc.api.delete(`/v1/teams/${b.body.id}`, t.as);

    const ids = (entries: any[]) => entries.map((e) => `${e.action}:${e.entity_id}`);
    expect((await all(t, 'action=team.created')).map((e) => e.data.name)).toEqual(['C', 'B', 'A']);
    expect((await all(t, 'action=team.deleted')).map((e) => e.entity_id)).toEqual([b.body.id]);
    expect((await all(t, 'action=nothing.like.this')).length).toBe(0);

    expect(ids(await all(t, `actor=${admin.userId}`))).toEqual([
      `team.updated:${a.body.id}`,
      `team.created:${b.body.id}`,
    ]);
    const byKey = await all(t, `actor=${key.id}`);
    expect(byKey.map((e) => e.action)).toEqual(['team.created']);
    expect(byKey[0].actor.api_key_id).toBe(key.id);
    const byOwner = await all(t, `actor=${t.owner.userId.toUpperCase()}`);
    expect(byOwner.map((e) => e.action)).toEqual(['team.deleted', 'team.created', 'api_key.created']);

    expect((await all(t, 'entity_type=api_key')).map((e) => e.entity_id)).toEqual([key.id]);
    expect((await all(t, `entity_type=team&actor=${admin.userId}&action=team.created`)).length).toBe(1);

    // Time range: from inclusive, to exclusive.
    const everything = await all(t, '');
    expect(everything).toHaveLength(6);
    const mid = everything[2].created_at; // the third newest
    const fromMid = await all(t, `from=${encodeURIComponent(mid)}`);
    expect(fromMid.every((e) => Date.parse(e.created_at) >= Date.parse(mid))).toBe(true);
    expect(fromMid.map((e) => e.id)).toContain(everything[2].id);
    const toMid = await all(t, `to=${encodeURIComponent(mid)}`);
    expect(toMid.every((e) => Date.parse(e.created_at) < Date.parse(mid))).toBe(true);
    expect(toMid.map((e) => e.id)).not.toContain(everything[2].id);
    expect(fromMid.length + toMid.length).toBe(6);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await all(t, `from=${encodeURIComponent(future)}`)).toEqual([]);
    expect(await all(t, `to=${encodeURIComponent('2001-01-01T00:00:00Z')}`)).toEqual([]);
  });

  it('pages newest first; a cursor only continues its own filters and workspace', async () => {
    const t = await newTenant(svc.api);
    for (let i = 0; i < 7; i++) await svc.api.post('/v1/teams', { name: `T${i}` }, t.as);
    const full = await all(t, '');
    expect(full).toHaveLength(7);
    const paged = await all(t, '', 3);
    expect(paged.map((e) => e.id)).toEqual(full.map((e) => e.id));
    expect(paged.map((e) => e.data.name)).toEqual(['T6', 'T5', 'T4', 'T3', 'T2', 'T1', 'T0']);

    const first = await svc.api.get('/v1/audit-logs?limit=2&action=team.created', t.as);
    const cursor = encodeURIComponent(first.body.next_cursor);
    const other = await svc.api.get(`/v1/audit-logs?limit=2&action=team.updated&cursor=${cursor}`, t.as);
    expect(other.status).toBe(422);
    expect(other.body.errors[0].location).toBe('query.cursor');
    const foreign = await newTenant(svc.api);
    const moved = await svc.api.get(`/v1/audit-logs?limit=2&action=team.created&cursor=${cursor}`, foreign.as);
    expect(moved.status).toBe(422);
    const same = await svc.api.get(`/v1/audit-logs?limit=2&action=team.created&cursor=${cursor}`, t.as);
    expect(same.status).toBe(200);
    expect(same.body.data.map((e: any) => e.data.name)).toEqual(['T4', 'T3']);
  });

  it('pages exactly through entries written within the same millisecond', async () => {
    const t = await newTenant(svc.api);
    const db = svc.rt.deps.database.db;
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const id = randomUUID();
      ids.push(id);
      await db
        .insertInto('audit_logs')
        .values({
          workspace_id: t.workspaceId,
          id,
          actor_type: 'system',
          action: 'test.same_ms',
          entity_type: 'test',
          entity_id: null,
          data: JSON.stringify({ i }),
          ip: null,
          created_at: `2030-01-01T00:00:00.000${i}00Z`,
        })
        .execute();
    }
    const paged = await all(t, 'action=test.same_ms', 1);
    expect(paged.map((e) => e.data.i)).toEqual([5, 4, 3, 2, 1]);
    expect(new Set(paged.map((e) => e.created_at))).toEqual(new Set(['2030-01-01T00:00:00.000Z']));
  });

  it('refuses malformed filters with located 422s', async () => {
    const t = await newTenant(svc.api);
    for (const [q, location] of [
      ['actor=someone', 'query.actor'],
      ['from=yesterday', 'query.from'],
      ['to=2024-13-45T00:00:00Z', 'query.to'],
      ['from=2024-02-01T00:00:00Z&to=2024-01-01T00:00:00Z', 'query.to'],
      ['action=', 'query.action'],
      ['limit=0', 'query.limit'],
      ['sort=asc', 'query.sort'],
    ]) {
      const r = await svc.api.get(`/v1/audit-logs?${q}`, t.as);
      expect(r.status, q).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors[0].location, q).toBe(location);
    }
  });

  it('is for admins and keys with settings:read, and never shows another workspace', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    await svc.api.post('/v1/teams', { name: 'Mine' }, t.as);
    await svc.api.post('/v1/teams', { name: 'Theirs' }, other.as);
    const agent = await join(t, 'agent');
    const viewer = await join(t, 'viewer');
    const admin = await join(t, 'admin');
    expect((await svc.api.get('/v1/audit-logs', agent)).status).toBe(403);
    expect((await svc.api.get('/v1/audit-logs', viewer)).status).toBe(403);
    expect((await svc.api.get('/v1/audit-logs', admin)).status).toBe(200);
    const tickets = await newApiKey(svc.api, t, ['tickets:read', 'realtime']);
    expect((await svc.api.get('/v1/audit-logs', { token: tickets.key })).status).toBe(403);
    const read = await newApiKey(svc.api, t, ['settings:read']);
    const viaKey = await svc.api.get('/v1/audit-logs', { token: read.key, workspace: other.workspaceId });
    expect(viaKey.status).toBe(200);
    const names = viaKey.body.data.filter((e: any) => e.action === 'team.created').map((e: any) => e.data.name);
    expect(names).toEqual(['Mine']);
    // Filtering by the other workspace's owner finds nothing here.
    expect(await all(t, `actor=${other.owner.userId}`)).toEqual([]);
    expect((await svc.api.get('/v1/audit-logs')).status).toBe(401);
  });
});
