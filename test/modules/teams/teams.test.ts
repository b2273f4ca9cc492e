// /v1/teams and /v1/teams/{id}: the Team shape, who may read and write, unique names,
// member_ids limited to workspace members, events, audit entries, teams.changed notices for
// people whose private teams change, tenant isolation, and canSeeTeam (the private-team rule
// ticket queries will use).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userResolver } from '../../../src/modules/auth/resolver.js';
import { canSeeTeam } from '../../../src/modules/teams/service.js';
import type { ControlMessage } from '../../../src/platform/bus/index.js';
import type { RequestContext } from '../../../src/platform/http/context.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Person,
  type ReqOpts,
  type Service,
  signUp,
  startService,
  type Tenant,
} from '../../support/helpers.js';

let svc: Service;
const control: ControlMessage[] = [];
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
  svc.rt.deps.bus.subscribeControl((m) => control.push(m));
});
afterAll(async () => svc?.stop());

type Joined = Person & { as: ReqOpts };
const join = (t: Tenant, role: 'owner' | 'admin' | 'agent' | 'viewer', name?: string): Promise<Joined> =>
  addMember(svc, t, role, name);
const latestSeq = (t: Tenant) => latestSeqOf(svc, t);
const eventsAfter = (t: Tenant, since: number) => eventsAfterOf(svc, t, since);
async function auditOf(t: Tenant, entityId: string) {
  return svc.rt.deps.database.db
    .selectFrom('audit_logs')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .where('entity_id', '=', entityId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
const settle = () => new Promise((r) => setTimeout(r, 20));
/** Control notices published by one action. */
async function noticesOf(action: () => Promise<unknown>): Promise<ControlMessage[]> {
  control.length = 0;
  await action();
  await settle();
  return [...control];
}
const sorted = (ids: string[]) => [...ids].sort();

describe('creating and reading teams', () => {
  it('creates a team (201) with team.created and an audit entry; any member reads it', async () => {
    const t = await newTenant(svc.api);
    const agent = await join(t, 'agent');
    const viewer = await join(t, 'viewer');
    const seq = await latestSeq(t);
    const r = await svc.api.post(
      '/v1/teams',
      { name: '  Tier 2  ', private: false, member_ids: [agent.userId, t.owner.userId.toUpperCase()] },
      t.as,
    );
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/teams/${r.body.id}`);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Tier 2',
      private: false,
      member_ids: sorted([agent.userId, t.owner.userId]),
      created_at: expect.stringMatching(/Z$/),
    });

    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['team.created']);
    expect(events[0].data).toEqual({ team: r.body });
    const audit = await auditOf(t, r.body.id);
    expect(audit.map((a) => a.action)).toEqual(['team.created']);
    expect(audit[0]).toMatchObject({ actor_user_id: t.owner.userId, data: { name: 'Tier 2', private: false } });

    for (const who of [viewer.as, agent.as]) {
      const one = await svc.api.get(`/v1/teams/${r.body.id}`, who);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(r.body);
      const list = await svc.api.get('/v1/teams', who);
      expect(list.body).toEqual({ data: [r.body], next_cursor: null });
    }
    // Defaults: public, no members.
    const bare = await svc.api.post('/v1/teams', { name: 'Bare' }, t.as);
    expect(bare.body).toMatchObject({ name: 'Bare', private: false, member_ids: [] });
  });

  it('lets every member see private teams too (privacy is about their tickets)', async () => {
    const t = await newTenant(svc.api);
    const agent = await join(t, 'agent');
    const secret = await svc.api.post('/v1/teams', { name: 'VIP', private: true }, t.as);
    const seen = await svc.api.get(`/v1/teams/${secret.body.id}`, agent.as);
    expect(seen.status).toBe(200);
    expect(seen.body.private).toBe(true);
  });

  it('pages through teams in the order they were created', async () => {
    const t = await newTenant(svc.api);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await svc.api.post('/v1/teams', { name: `Team ${i}` }, t.as)).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const r = await svc.api.get(`/v1/teams${q}`, t.as);
      seen.push(...r.body.data.map((x: any) => x.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
  });

  it('keeps names unique per workspace ignoring case (409 conflict), and validates the body', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    expect((await svc.api.post('/v1/teams', { name: 'Support' }, t.as)).status).toBe(201);
    const dup = await svc.api.post('/v1/teams', { name: ' sUPPORT ' }, t.as);
    expect(dup.status).toBe(409);
    expect(isErrorBody(dup.body, 409, 'conflict')).toBe(true);
    // Another workspace may use the name.
    expect((await svc.api.post('/v1/teams', { name: 'Support' }, other.as)).status).toBe(201);
    const sales = await svc.api.post('/v1/teams', { name: 'Sales' }, t.as);
    const rename = await svc.api.patch(`/v1/teams/${sales.body.id}`, { name: 'SUPPORT' }, t.as);
    expect(rename.status).toBe(409);
    expect((await svc.api.get(`/v1/teams/${sales.body.id}`, t.as)).body.name).toBe('Sales');

    for (const [body, location] of [
      [{ name: '' }, 'body.name'],
      [{ name: '   ' }, 'body.name'],
      [{ name: 'x'.repeat(101) }, 'body.name'],
      [{}, 'body.name'],
      [{ name: 'A', private: 'yes' }, 'body.private'],
      [{ name: 'A', member_ids: ['not-a-uuid'] }, 'body.member_ids.0'],
      [{ name: 'A', colour: 'red' }, 'body.colour'],
    ] as Array<[object, string]>) {
      const r = await svc.api.post('/v1/teams', body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.errors[0].location).toBe(location);
    }
    expect((await svc.api.post('/v1/teams', { name: 'x'.repeat(100) }, t.as)).status).toBe(201);
  });

  it('takes only members of the workspace in member_ids (422 at body.member_ids)', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const stranger = await signUp(svc.api);
    for (const id of [randomUUID(), other.owner.userId, stranger.userId]) {
      const r = await svc.api.post('/v1/teams', { name: `T ${id}`, member_ids: [id] }, t.as);
      expect(r.status).toBe(422);
      expect(r.body.errors[0].location).toBe('body.member_ids');
      expect(r.body.errors[0].message).toContain(id);
    }
    const team = await svc.api.post('/v1/teams', { name: 'Real' }, t.as);
    const patch = await svc.api.patch(`/v1/teams/${team.body.id}`, { member_ids: [other.owner.userId] }, t.as);
    expect(patch.status).toBe(422);
    expect(patch.body.errors[0].location).toBe('body.member_ids');
    const rows = await svc.rt.deps.database.db
      .selectFrom('teams')
      .select('id')
      .where('workspace_id', '=', t.workspaceId)
      .execute();
    expect(rows).toHaveLength(1);
  });

  it('lets only admins (keys: settings:write) write; reads need settings:read for keys', async () => {
    const t = await newTenant(svc.api);
    const agent = await join(t, 'agent');
    const viewer = await join(t, 'viewer');
    const team = await svc.api.post('/v1/teams', { name: 'Ops' }, t.as);
    for (const who of [agent.as, viewer.as]) {
      expect((await svc.api.post('/v1/teams', { name: 'Mine' }, who)).status).toBe(403);
      expect((await svc.api.patch(`/v1/teams/${team.body.id}`, { name: 'Mine' }, who)).status).toBe(403);
      expect((await svc.api.delete(`/v1/teams/${team.body.id}`, who)).status).toBe(403);
    }
    const read = await newApiKey(svc.api, t, ['settings:read']);
    expect((await svc.api.get('/v1/teams', { token: read.key })).status).toBe(200);
    expect((await svc.api.get(`/v1/teams/${team.body.id}`, { token: read.key })).status).toBe(200);
    expect((await svc.api.post('/v1/teams', { name: 'K' }, { token: read.key })).status).toBe(403);
    const tickets = await newApiKey(svc.api, t, ['tickets:read']);
    expect((await svc.api.get('/v1/teams', { token: tickets.key })).status).toBe(403);
    const write = await newApiKey(svc.api, t, ['settings:write']);
    const byKey = await svc.api.post('/v1/teams', { name: 'By key' }, { token: write.key });
    expect(byKey.status).toBe(201);
    expect((await auditOf(t, byKey.body.id))[0]).toMatchObject({ actor_type: 'api_key', actor_api_key_id: write.id });
    const admin = await join(t, 'admin');
    expect((await svc.api.patch(`/v1/teams/${team.body.id}`, { name: 'Ops 2' }, admin.as)).status).toBe(200);
    expect((await svc.api.get(`/v1/teams/${team.body.id}`, t.as)).body.name).toBe('Ops 2');
  });
});

describe('changing and deleting teams', () => {
  it('renames, replaces members and flips private with one team.updated event and an audit entry', async () => {
    const t = await newTenant(svc.api);
    const a = await join(t, 'agent');
    const b = await join(t, 'agent');
    const c = await join(t, 'agent');
    const team = await svc.api.post('/v1/teams', { name: 'Escalations', member_ids: [a.userId, b.userId] }, t.as);
    const seq = await latestSeq(t);
    const r = await svc.api.patch(
      `/v1/teams/${team.body.id}`,
      { name: 'Escalations EU', private: true, member_ids: [b.userId, c.userId] },
      t.as,
    );
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      id: team.body.id,
      name: 'Escalations EU',
      private: true,
      member_ids: sorted([b.userId, c.userId]),
      created_at: team.body.created_at,
    });
    expect((await svc.api.get(`/v1/teams/${team.body.id}`, t.as)).body).toEqual(r.body);
    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['team.updated']);
    expect(events[0].data).toEqual({ team: r.body });
    const audit = await auditOf(t, team.body.id);
    expect(audit.map((x) => x.action)).toEqual(['team.created', 'team.updated']);
    expect(audit[1]!.data).toEqual({
      name: { from: 'Escalations', to: 'Escalations EU' },
      private: { from: false, to: true },
      added_member_ids: [c.userId],
      removed_member_ids: [a.userId],
    });

    // Nothing to change: no event, no entry.
    const same = await svc.api.patch(`/v1/teams/${team.body.id}`, { name: 'Escalations EU', private: true }, t.as);
    expect(same.status).toBe(200);
    expect(await eventsAfter(t, seq + 1)).toEqual([]);
    expect(await auditOf(t, team.body.id)).toHaveLength(2);
  });

  it('deletes a team (204) with team.deleted carrying team_id', async () => {
    const t = await newTenant(svc.api);
    const team = await svc.api.post('/v1/teams', { name: 'Temp' }, t.as);
    const seq = await latestSeq(t);
    const r = await svc.api.delete(`/v1/teams/${team.body.id}`, t.as);
    expect(r.status).toBe(204);
    expect((await svc.api.get(`/v1/teams/${team.body.id}`, t.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/teams/${team.body.id}`, t.as)).status).toBe(404);
    const events = await eventsAfter(t, seq);
    expect(events.map((e) => [e.type, e.data])).toEqual([['team.deleted', { team_id: team.body.id }]]);
    expect((await auditOf(t, team.body.id)).map((a) => a.action)).toEqual(['team.created', 'team.deleted']);
    // The name is free again.
    expect((await svc.api.post('/v1/teams', { name: 'temp' }, t.as)).status).toBe(201);
  });
});

describe('teams.changed: sockets of people whose private teams changed', () => {
  it('names exactly those people, and nobody for public teams', async () => {
    const t = await newTenant(svc.api);
    const [a, b, c] = [await join(t, 'agent'), await join(t, 'agent'), await join(t, 'agent')];
    const notice = (ids: string[]) => [{ type: 'teams.changed', workspace_id: t.workspaceId, user_ids: sorted(ids) }];
    let id = '';

    expect(
      await noticesOf(async () => {
        id = (
          await svc.api.post('/v1/teams', { name: 'Private', private: true, member_ids: [a.userId, b.userId] }, t.as)
        ).body.id;
      }),
    ).toEqual(notice([a.userId, b.userId]));
    // b stays, a leaves, c joins: a and c.
    expect(await noticesOf(() => svc.api.patch(`/v1/teams/${id}`, { member_ids: [b.userId, c.userId] }, t.as))).toEqual(
      notice([a.userId, c.userId]),
    );
    // A rename changes nobody's private teams.
    expect(await noticesOf(() => svc.api.patch(`/v1/teams/${id}`, { name: 'Private 2' }, t.as))).toEqual([]);
    // Made public: every member loses it.
    expect(await noticesOf(() => svc.api.patch(`/v1/teams/${id}`, { private: false }, t.as))).toEqual(
      notice([b.userId, c.userId]),
    );
    // Member changes of a public team: nobody.
    expect(await noticesOf(() => svc.api.patch(`/v1/teams/${id}`, { member_ids: [a.userId] }, t.as))).toEqual([]);
    // Made private again: its members gain it.
    expect(await noticesOf(() => svc.api.patch(`/v1/teams/${id}`, { private: true }, t.as))).toEqual(
      notice([a.userId]),
    );
    // Deleted while private: its members lose it.
    expect(await noticesOf(() => svc.api.delete(`/v1/teams/${id}`, t.as))).toEqual(notice([a.userId]));

    const pub = await svc.api.post('/v1/teams', { name: 'Public', member_ids: [a.userId] }, t.as);
    expect(await noticesOf(() => svc.api.delete(`/v1/teams/${pub.body.id}`, t.as))).toEqual([]);
  });
});

describe('tenant isolation', () => {
  it('answers 404 for another workspace’s team on every {id} route, identical to a missing one', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const theirs = await svc.api.post('/v1/teams', { name: 'Theirs' }, b.as);
    const missingGet = await svc.api.get(`/v1/teams/${randomUUID()}`, a.as);
    expect(missingGet.status).toBe(404);
    expect(isErrorBody(missingGet.body, 404, 'not_found')).toBe(true);
    const get = await svc.api.get(`/v1/teams/${theirs.body.id}`, a.as);
    const patch = await svc.api.patch(`/v1/teams/${theirs.body.id}`, { name: 'Ours now' }, a.as);
    const del = await svc.api.delete(`/v1/teams/${theirs.body.id}`, a.as);
    for (const r of [get, patch, del]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual(missingGet.body);
    }
    const key = await newApiKey(svc.api, a, ['settings:write']);
    expect((await svc.api.delete(`/v1/teams/${theirs.body.id}`, { token: key.key })).status).toBe(404);
    for (const bad of ['nope', "1' or '1'='1", '00000000-0000-0000-0000-000000000000']) {
      expect((await svc.api.get(`/v1/teams/${encodeURIComponent(bad)}`, a.as)).status).toBe(404);
    }
    expect((await svc.api.get(`/v1/teams/${theirs.body.id}`, b.as)).body).toEqual(theirs.body);
    expect((await svc.api.get('/v1/teams', a.as)).body.data).toEqual([]);
  });
});

describe('canSeeTeam', () => {
  const ctx = (over: Partial<RequestContext>): RequestContext => ({
    workspaceId: randomUUID(),
    actor: { kind: 'member', userId: randomUUID(), sessionId: randomUUID() },
    role: 'agent',
    scopes: null,
    teams: [],
    ip: '127.0.0.1',
    ...over,
  });

  it('lets everyone see records without a private team, admins and owners every team, others their own', () => {
    const team = randomUUID();
    expect(canSeeTeam(ctx({ role: 'viewer' }), null)).toBe(true);
    expect(canSeeTeam(ctx({ role: 'agent' }), team)).toBe(false);
    expect(canSeeTeam(ctx({ role: 'viewer' }), team)).toBe(false);
    expect(canSeeTeam(ctx({ role: 'agent', teams: [randomUUID()] }), team)).toBe(false);
    expect(canSeeTeam(ctx({ role: 'agent', teams: [team] }), team)).toBe(true);
    expect(canSeeTeam(ctx({ role: 'agent', teams: [team] }), team.toUpperCase())).toBe(true);
    expect(canSeeTeam(ctx({ role: 'admin' }), team)).toBe(true);
    expect(canSeeTeam(ctx({ role: 'owner' }), team)).toBe(true);
    const key = ctx({
      role: null,
      scopes: ['tickets:read', 'realtime'],
      actor: { kind: 'api_key', apiKeyId: randomUUID(), createdBy: null },
    });
    expect(canSeeTeam(key, team)).toBe(false);
    expect(canSeeTeam(key, null)).toBe(true);
  });

  it('follows team membership through the request context the resolver builds', async () => {
    const t = await newTenant(svc.api);
    const inside = await join(t, 'agent');
    const outside = await join(t, 'agent');
    const viewerInside = await join(t, 'viewer');
    const admin = await join(t, 'admin');
    const priv = await svc.api.post(
      '/v1/teams',
      { name: 'Legal', private: true, member_ids: [inside.userId, viewerInside.userId] },
      t.as,
    );
    const pub = await svc.api.post('/v1/teams', { name: 'Open', member_ids: [outside.userId] }, t.as);
    const resolve = userResolver(svc.rt.deps);
    const ctxOf = async (p: Person) => (await resolve(p.token, t.workspaceId, '127.0.0.1'))!.member!;

    const ins = await ctxOf(inside);
    expect(ins.teams).toEqual([priv.body.id]);
    expect(canSeeTeam(ins, priv.body.id)).toBe(true);
    expect(canSeeTeam(await ctxOf(viewerInside), priv.body.id)).toBe(true);
    const out = await ctxOf(outside);
    // A public team is not a private team: its records pass null and everyone sees them.
    expect(out.teams).toEqual([]);
    expect(canSeeTeam(out, priv.body.id)).toBe(false);
    expect(canSeeTeam(await ctxOf(admin), priv.body.id)).toBe(true);
    expect(canSeeTeam(await ctxOf(t.owner), priv.body.id)).toBe(true);
    expect(pub.body.private).toBe(false);

    // Membership changes take effect on the next request.
    await svc.api.patch(`/v1/teams/${priv.body.id}`, { member_ids: [outside.userId] }, t.as);
    expect(canSeeTeam(await ctxOf(inside), priv.body.id)).toBe(false);
    expect(canSeeTeam(await ctxOf(outside), priv.body.id)).toBe(true);
    await svc.api.patch(`/v1/teams/${priv.body.id}`, { private: false }, t.as);
    expect((await ctxOf(outside)).teams).toEqual([]);
  });
});
