// GET /v1/members, PATCH and DELETE /v1/members/{user_id}: the Member shape, pages, role
// changes and their limits (no owner made here, only owners touch owners, the last owner
// stays), removal with its team memberships, events, audit entries, control notices and
// tenant isolation.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlMessage } from '../../../src/platform/bus/index.js';
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

type Role = 'owner' | 'admin' | 'agent' | 'viewer';
type Joined = Person & { as: ReqOpts };

/** A new person who is a member of the tenant's workspace with this role. */
const join = (t: Tenant, role: Role, name?: string): Promise<Joined> => addMember(svc, t, role, name);

const latestSeq = (t: Tenant) => latestSeqOf(svc, t);
const eventsAfter = (t: Tenant, since: number) => eventsAfterOf(svc, t, since);
async function auditOf(t: Tenant, action: string) {
  return svc.rt.deps.database.db
    .selectFrom('audit_logs')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .where('action', '=', action)
    .orderBy('created_at')
    .execute();
}
async function roleOf(t: Tenant, userId: string): Promise<string | undefined> {
  const r = await svc.rt.deps.database.db
    .selectFrom('members')
    .select('role')
    .where('workspace_id', '=', t.workspaceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return r?.role;
}
const settle = () => new Promise((r) => setTimeout(r, 20));

describe('GET /v1/members', () => {
  it('lists members with the Member fields, in the order they joined, for any member', async () => {
    const t = await newTenant(svc.api);
    const agent = await join(t, 'agent', 'Andy Agent');
    const viewer = await join(t, 'viewer', 'Vera Viewer');
    await svc.rt.deps.database.db
      .updateTable('members')
      .set({ availability: 'away', max_open_tickets: 12, last_seen_at: new Date('2030-01-02T03:04:05Z') })
      .where('workspace_id', '=', t.workspaceId)
      .where('user_id', '=', agent.userId)
      .execute();

    const r = await svc.api.get('/v1/members', viewer.as);
    expect(r.status).toBe(200);
    expect(r.body.next_cursor).toBeNull();
    expect(r.body.data.map((m: any) => m.user.id)).toEqual([t.owner.userId, agent.userId, viewer.userId]);
    const [owner, a] = r.body.data;
    expect(owner).toEqual({
      user: {
        id: t.owner.userId,
        name: 'Olivia Owner',
        email: t.owner.email,
        avatar_url: null,
        avatar_source: null,
      },
      role: 'owner',
      availability: 'online',
      presence: 'online',
      max_open_tickets: null,
      open_tickets: 0,
      last_seen_at: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    expect(a).toMatchObject({
      role: 'agent',
      availability: 'away',
      presence: 'away',
      max_open_tickets: 12,
      last_seen_at: '2030-01-02T03:04:05.000Z',
    });
    // No secret field leaks, at any depth (field names: a random email or id may hold "mfa").
    const keys: string[] = [];
    JSON.stringify(r.body, (k, v) => {
      keys.push(k);
      return v;
    });
    expect(keys.filter((k) => /password|mfa/i.test(k))).toEqual([]);
  });

  it('pages with limit and a cursor bound to its workspace', async () => {
    const t = await newTenant(svc.api);
    const others = [];
    for (let i = 0; i < 4; i++) others.push(await join(t, 'agent', `Agent ${i}`));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const r = await svc.api.get(`/v1/members${q}`, t.as);
      expect(r.status).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.data.map((m: any) => m.user.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([t.owner.userId, ...others.map((o) => o.userId)]);

    const first = await svc.api.get('/v1/members?limit=1', t.as);
    const other = await newTenant(svc.api);
    const foreign = await svc.api.get(
      `/v1/members?limit=1&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      other.as,
    );
    expect(foreign.status).toBe(422);
    expect(foreign.body.errors[0].location).toBe('query.cursor');
  });

  it('pages exactly through members who joined within the same millisecond', async () => {
    const t = await newTenant(svc.api);
    const people: string[] = [];
    for (let i = 1; i <= 4; i++) {
      const p = await signUp(svc.api, `Same ms ${i}`);
      people.push(p.userId);
      await svc.rt.deps.database.db
        .insertInto('members')
        .values({
          workspace_id: t.workspaceId,
          user_id: p.userId,
          role: 'agent',
          created_at: `2030-01-01T00:00:00.000${5 - i}00Z`,
        })
        .execute();
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const q: string = cursor ? `?limit=1&cursor=${encodeURIComponent(cursor)}` : '?limit=1';
      const r = await svc.api.get(`/v1/members${q}`, t.as);
      seen.push(...r.body.data.map((m: any) => m.user.id));
      cursor = r.body.next_cursor;
      if (!cursor) break;
    }
    // The owner joined first (now); then, by microsecond, the people in reverse order of signing up.
    expect(seen).toEqual([t.owner.userId, ...[...people].reverse()]);
  });

  it('is open to keys with settings:read or settings:write only, and shows only the key’s workspace', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const read = await newApiKey(svc.api, t, ['settings:read']);
    const r = await svc.api.get('/v1/members', { token: read.key, workspace: other.workspaceId });
    expect(r.status).toBe(200);
    expect(r.body.data.map((m: any) => m.user.id)).toEqual([t.owner.userId]);
    const tickets = await newApiKey(svc.api, t, ['tickets:read']);
    const no = await svc.api.get('/v1/members', { token: tickets.key });
    expect(no.status).toBe(403);
    expect(isErrorBody(no.body, 403, 'forbidden')).toBe(true);
    expect((await svc.api.get('/v1/members')).status).toBe(401);
  });
});

describe('PATCH /v1/members/{user_id}', () => {
  it('changes a role, with member.updated to the person’s topic and a member.role_changed audit entry', async () => {
    const t = await newTenant(svc.api);
    const agent = await join(t, 'agent');
    expect((await svc.api.get('/v1/invitations', agent.as)).status).toBe(403);
    const seq = await latestSeq(t);

    const r = await svc.api.patch(`/v1/members/${agent.userId}`, { role: 'admin' }, t.as);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ user: { id: agent.userId }, role: 'admin', open_tickets: 0 });
    expect(await roleOf(t, agent.userId)).toBe('admin');
    // The new role applies to the person's next request.
    expect((await svc.api.get('/v1/invitations', agent.as)).status).toBe(200);

    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['member.updated']);
    expect(events[0].topics).toEqual([`workspace:${t.workspaceId}`, `user:${agent.userId}`]);
    expect(events[0].data.member).toEqual(r.body);

    const audit = await auditOf(t, 'member.role_changed');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      entity_type: 'member',
      entity_id: agent.userId,
      actor_type: 'user',
      actor_user_id: t.owner.userId,
      data: { from: 'agent', to: 'admin' },
    });

    // The same role again changes nothing and says nothing.
    const same = await svc.api.patch(`/v1/members/${agent.userId}`, { role: 'admin' }, t.as);
    expect(same.status).toBe(200);
    expect(await eventsAfter(t, seq + 1)).toEqual([]);
    expect(await auditOf(t, 'member.role_changed')).toHaveLength(1);
  });

  it('never makes an owner: 422 at body.role for anyone, the owner included', async () => {
    const t = await newTenant(svc.api);
    const admin = await join(t, 'admin');
    const agent = await join(t, 'agent');
    for (const [who, target] of [
      [admin.as, admin.userId],
      [admin.as, agent.userId],
      [t.as, agent.userId],
    ] as Array<[ReqOpts, string]>) {
      const r = await svc.api.patch(`/v1/members/${target}`, { role: 'owner' }, who);
      expect(r.status).toBe(422);
      expect(r.body.errors[0].location).toBe('body.role');
    }
    expect(await roleOf(t, admin.userId)).toBe('admin');
    expect(await roleOf(t, agent.userId)).toBe('agent');
    for (const body of [{}, { role: 'superuser' }, { role: 'agent', extra: 1 }, { role: null }]) {
      const r = await svc.api.patch(`/v1/members/${agent.userId}`, body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
    }
  });

  it('lets only owners change an owner: 403 for an admin and for an API key', async () => {
    const t = await newTenant(svc.api);
    const admin = await join(t, 'admin');
    const key = await newApiKey(svc.api, t, ['settings:write']);
    const byAdmin = await svc.api.patch(`/v1/members/${t.owner.userId}`, { role: 'viewer' }, admin.as);
    expect(byAdmin.status).toBe(403);
    expect(isErrorBody(byAdmin.body, 403, 'forbidden')).toBe(true);
    const byKey = await svc.api.patch(`/v1/members/${t.owner.userId}`, { role: 'agent' }, { token: key.key });
    expect(byKey.status).toBe(403);
    const removeByAdmin = await svc.api.delete(`/v1/members/${t.owner.userId}`, admin.as);
    expect(removeByAdmin.status).toBe(403);
    const removeByKey = await svc.api.delete(`/v1/members/${t.owner.userId}`, { token: key.key });
    expect(removeByKey.status).toBe(403);
    expect(await roleOf(t, t.owner.userId)).toBe('owner');
    expect(await auditOf(t, 'member.role_changed')).toHaveLength(0);
  });

  it('refuses agents and viewers (403) and keys without settings:write', async () => {
    const t = await newTenant(svc.api);
    const agent = await join(t, 'agent');
    const viewer = await join(t, 'viewer');
    const other = await join(t, 'agent');
    for (const who of [agent, viewer]) {
      const up = await svc.api.patch(`/v1/members/${who.userId}`, { role: 'admin' }, who.as);
      expect(up.status).toBe(403);
      const side = await svc.api.patch(`/v1/members/${other.userId}`, { role: 'viewer' }, who.as);
      expect(side.status).toBe(403);
      const rm = await svc.api.delete(`/v1/members/${other.userId}`, who.as);
      expect(rm.status).toBe(403);
    }
    const read = await newApiKey(svc.api, t, ['settings:read']);
    expect((await svc.api.patch(`/v1/members/${other.userId}`, { role: 'viewer' }, { token: read.key })).status).toBe(
      403,
    );
    expect(await roleOf(t, agent.userId)).toBe('agent');
    expect(await roleOf(t, viewer.userId)).toBe('viewer');
    expect(await roleOf(t, other.userId)).toBe('agent');
  });

  it('lets an admin promote and demote non-owners, itself included; a key with settings:write too', async () => {
    const t = await newTenant(svc.api);
    const admin = await join(t, 'admin');
    const agent = await join(t, 'agent');
    expect((await svc.api.patch(`/v1/members/${agent.userId}`, { role: 'admin' }, admin.as)).status).toBe(200);
    const key = await newApiKey(svc.api, t, ['settings:write']);
    const byKey = await svc.api.patch(`/v1/members/${agent.userId}`, { role: 'viewer' }, { token: key.key });
    expect(byKey.status).toBe(200);
    const audit = await auditOf(t, 'member.role_changed');
    expect(audit[1]).toMatchObject({ actor_type: 'api_key', actor_api_key_id: key.id, actor_user_id: null });
    const self = await svc.api.patch('/v1/members/me', { role: 'agent' }, admin.as);
    expect(self.status).toBe(200);
    expect(self.body.user.id).toBe(admin.userId);
    expect((await svc.api.patch(`/v1/members/${agent.userId}`, { role: 'admin' }, admin.as)).status).toBe(403);
  });

  it('closes the sockets of someone who gains or loses the admin role (teams.changed)', async () => {
    const t = await newTenant(svc.api);
    const agent = await join(t, 'agent');
    control.length = 0;
    await svc.api.patch(`/v1/members/${agent.userId}`, { role: 'viewer' }, t.as);
    await settle();
    expect(control).toEqual([]);
    await svc.api.patch(`/v1/members/${agent.userId}`, { role: 'admin' }, t.as);
    await settle();
    expect(control).toEqual([{ type: 'teams.changed', workspace_id: t.workspaceId, user_ids: [agent.userId] }]);
  });
});

describe('the last owner', () => {
  it('cannot be demoted or removed (422); with two owners, an owner can demote or remove the other', async () => {
    const t = await newTenant(svc.api);
    const demote = await svc.api.patch(`/v1/members/${t.owner.userId}`, { role: 'admin' }, t.as);
    expect(demote.status).toBe(422);
    expect(isErrorBody(demote.body, 422, 'validation_failed')).toBe(true);
    expect(demote.body.errors[0].location).toBe('body.role');
    const leave = await svc.api.delete('/v1/members/me', t.as);
    expect(leave.status).toBe(422);
    expect(leave.body.errors[0].location).toBe('path.user_id');
    expect(await roleOf(t, t.owner.userId)).toBe('owner');

    const second = await join(t, 'owner', 'Second Owner');
    const third = await join(t, 'owner', 'Third Owner');
    const r = await svc.api.patch(`/v1/members/${second.userId}`, { role: 'admin' }, t.as);
    expect(r.status).toBe(200);
    expect(r.body.role).toBe('admin');
    expect((await svc.api.delete(`/v1/members/${third.userId}`, t.as)).status).toBe(204);
    // Back to one owner: protected again, even against itself.
    expect((await svc.api.patch('/v1/members/me', { role: 'agent' }, t.as)).status).toBe(422);
    expect((await svc.api.delete(`/v1/members/${t.owner.userId}`, t.as)).status).toBe(422);
  });

  it('survives two owners demoting each other at the same time: one of them stays owner', async () => {
    const t = await newTenant(svc.api);
    const second = await join(t, 'owner');
    const [a, b] = await Promise.all([
      svc.api.patch(`/v1/members/${second.userId}`, { role: 'admin' }, t.as),
      svc.api.patch(`/v1/members/${t.owner.userId}`, { role: 'admin' }, second.as),
    ]);
    // The loser is refused either as no longer an owner (403) or as the last owner's demoter (422).
    const statuses = [a.status, b.status];
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.find((s) => s !== 200)).toBeOneOf([403, 422]);
    const owners = await svc.rt.deps.database.db
      .selectFrom('members')
      .select('user_id')
      .where('workspace_id', '=', t.workspaceId)
      .where('role', '=', 'owner')
      .execute();
    expect(owners).toHaveLength(1);
  });
});

describe('DELETE /v1/members/{user_id}', () => {
  it('removes the member and their team memberships, with events, an audit entry and a control notice', async () => {
    const t = await newTenant(svc.api);
    const agent = await join(t, 'agent', 'Leaving Agent');
    const stay = await join(t, 'agent');
    const team = await svc.api.post(
      '/v1/teams',
      { name: 'Billing', private: true, member_ids: [agent.userId, stay.userId] },
      t.as,
    );
    expect(team.status).toBe(201);
    expect((await svc.api.get('/v1/members', agent.as)).status).toBe(200);
    const seq = await latestSeq(t);
    control.length = 0;

    const r = await svc.api.delete(`/v1/members/${agent.userId}`, t.as);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    await settle();
    expect(control).toEqual([{ type: 'member.removed', workspace_id: t.workspaceId, user_id: agent.userId }]);

    expect(await roleOf(t, agent.userId)).toBeUndefined();
    const after = await svc.api.get(`/v1/teams/${team.body.id}`, t.as);
    expect(after.body.member_ids).toEqual([stay.userId]);
    // Removed means removed: the person's next request in this workspace is a 404.
    const gone = await svc.api.get('/v1/members', agent.as);
    expect(gone.status).toBe(404);

    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['team.updated', 'member.removed']);
    expect(events[0].data.team).toEqual(after.body);
    expect(events[1].data).toEqual({ user_id: agent.userId });
    expect(events[1].topics).toContain(`user:${agent.userId}`);

    const audit = await auditOf(t, 'member.removed');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      entity_id: agent.userId,
      actor_user_id: t.owner.userId,
      data: { role: 'agent', name: 'Leaving Agent', email: agent.email },
    });
    expect((await svc.api.delete(`/v1/members/${agent.userId}`, t.as)).status).toBe(404);
  });

  it('lets an admin remove agents and other admins, and a member leave with `me`', async () => {
    const t = await newTenant(svc.api);
    const admin = await join(t, 'admin');
    const admin2 = await join(t, 'admin');
    const viewer = await join(t, 'viewer');
    expect((await svc.api.delete(`/v1/members/${admin2.userId}`, admin.as)).status).toBe(204);
    expect((await svc.api.delete(`/v1/members/${viewer.userId}`, admin.as)).status).toBe(204);
    expect((await svc.api.delete('/v1/members/me', admin.as)).status).toBe(204);
    const left = await svc.api.get('/v1/members', t.as);
    expect(left.body.data.map((m: any) => m.user.id)).toEqual([t.owner.userId]);
    // An API key has no `me`.
    const key = await newApiKey(svc.api, t, ['settings:write']);
    expect((await svc.api.delete('/v1/members/me', { token: key.key })).status).toBe(404);
  });
});

describe('tenant isolation', () => {
  it('answers 404 for a member of another workspace exactly as for an unknown id, and changes nothing', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const bAgent = await join(b, 'agent');
    const missing = await svc.api.patch(`/v1/members/${randomUUID()}`, { role: 'viewer' }, a.as);
    expect(missing.status).toBe(404);
    expect(isErrorBody(missing.body, 404, 'not_found')).toBe(true);
    for (const id of [bAgent.userId, b.owner.userId]) {
      const patch = await svc.api.patch(`/v1/members/${id}`, { role: 'viewer' }, a.as);
      expect(patch.status).toBe(404);
      expect(patch.body).toEqual(missing.body);
      const del = await svc.api.delete(`/v1/members/${id}`, a.as);
      expect(del.status).toBe(404);
      expect(del.body).toEqual(missing.body);
    }
    const key = await newApiKey(svc.api, a, ['settings:write']);
    expect((await svc.api.delete(`/v1/members/${bAgent.userId}`, { token: key.key })).status).toBe(404);
    for (const bad of ['not-a-uuid', "1' or '1'='1", '00000000-0000-0000-0000-000000000000']) {
      const r = await svc.api.delete(`/v1/members/${encodeURIComponent(bad)}`, a.as);
      expect(r.status).toBe(404);
    }
    expect(await roleOf(b, bAgent.userId)).toBe('agent');
    expect(await roleOf(b, b.owner.userId)).toBe('owner');
    expect(await auditOf(a, 'member.removed')).toHaveLength(0);
  });
});
