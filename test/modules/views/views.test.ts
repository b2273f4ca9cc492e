// /v1/views and /v1/views/{id}: the View shape, strict filters (custom field keys and operators
// checked against the workspace's ticket fields), personal views seen only by their maker,
// shared views managed by admins and settings:write keys, events (a personal view's go to its
// owner's topic), tenant isolation, and the exports the ticket list and labels use
// (viewFiltersOf, visibleViews, renameTagInViews).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renameTagInViews, viewFiltersOf, visibleViews } from '../../../src/modules/views/service.js';
import type { RequestContext } from '../../../src/platform/http/context.js';
import {
  addMember,
  isErrorBody,
  type Member,
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

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Events after `since` as this caller sees them. */
async function eventsSince(as: ReqOpts, since: number): Promise<any[]> {
  const r = await svc.api.get(`/v1/events?since=${since}&limit=1000`, as);
  if (r.status !== 200) throw new Error(`events: ${r.status} ${r.text}`);
  return r.body.data;
}
const latest = async (as: ReqOpts): Promise<number> => (await svc.api.get('/v1/events?since=0', as)).body.latest_seq;

/** A ticket custom field, written directly (the custom-fields routes are not what is tested here). */
async function ticketField(t: Tenant, key: string, type: string, options: Array<{ id: string }> = []) {
  await svc.rt.deps.database.db
    .insertInto('custom_fields')
    .values({
      workspace_id: t.workspaceId,
      id: randomUUID(),
      entity: 'ticket',
      key,
      name: key,
      type,
      options: JSON.stringify(options.map((o) => ({ ...o, label: o.id, color: 'gray' }))),
    })
    .execute();
}

const ctxOf = (t: Tenant, who: Member | null, role: RequestContext['role'] = 'agent'): RequestContext =>
  who
    ? {
        workspaceId: t.workspaceId,
        actor: { kind: 'member', userId: who.userId, sessionId: randomUUID() },
        role,
        scopes: null,
        teams: [],
        ip: '127.0.0.1',
      }
    : {
        workspaceId: t.workspaceId,
        actor: { kind: 'api_key', apiKeyId: randomUUID(), createdBy: null },
        role: null,
        scopes: ['tickets:read'],
        teams: [],
        ip: '127.0.0.1',
      };

describe('creating and reading views', () => {
  it('creates a personal view (201) with its filters cleaned, view.created to its owner only', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    await ticketField(t, 'plan', 'select', [{ id: 'gold' }, { id: 'free' }]);
    const team = randomUUID().toUpperCase();
    const seq = await latest(agent.as);
    const r = await svc.api.post(
      '/v1/views',
      {
        name: '  My urgent billing  ',
        filters: {
          status: ['open', 'pending'],
          priority: ['urgent', 'high'],
          assignee: 'me',
          team_id: team,
          tag: ' Billing ',
          channel: 'email',
          q: ' refund ',
          fields: [
            { key: 'plan', op: 'any', value: ['gold'] },
            { key: 'plan', op: 'set', value: 'ignored' },
          ],
        },
      },
      agent.as,
    );
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/views/${r.body.id}`);
    expect(r.body).toEqual({
      id: expect.stringMatching(ID),
      name: 'My urgent billing',
      shared: false,
      position: 0,
      filters: {
        status: ['open', 'pending'],
        priority: ['urgent', 'high'],
        assignee: 'me',
        team_id: team.toLowerCase(),
        tag: 'Billing',
        channel: 'email',
        q: 'refund',
        fields: [
          { key: 'plan', op: 'any', value: ['gold'] },
          { key: 'plan', op: 'set' },
        ],
      },
      created_at: expect.stringMatching(/Z$/),
      updated_at: r.body.created_at,
    });
    const events = await eventsSince(agent.as, seq);
    expect(events.map((e) => e.type)).toEqual(['view.created']);
    expect(events[0].data).toEqual({ view: r.body });
    expect(events[0].topics).toContain(`user:${agent.userId}`);

    expect((await svc.api.get(`/v1/views/${r.body.id}`, agent.as)).body).toEqual(r.body);
    expect((await svc.api.get('/v1/views', agent.as)).body).toEqual({ data: [r.body] });

    // No filters: every ticket. Defaults: personal, at the end.
    const bare = await svc.api.post('/v1/views', { name: 'All' }, agent.as);
    expect(bare.status).toBe(201);
    expect(bare.body).toMatchObject({ shared: false, position: 1, filters: {} });
  });

  it('lists shared views and the caller’s own by position, then creation', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const other = await addMember(svc, t, 'agent');
    const s1 = await svc.api.post('/v1/views', { name: 'S1', shared: true, position: 5 }, t.as);
    const p1 = await svc.api.post('/v1/views', { name: 'P1', position: 2 }, agent.as);
    const s2 = await svc.api.post('/v1/views', { name: 'S2', shared: true }, t.as);
    const p2 = await svc.api.post('/v1/views', { name: 'P2', position: 2 }, agent.as);
    const hidden = await svc.api.post('/v1/views', { name: 'Other', position: 0 }, other.as);
    expect([s1, p1, s2, p2, hidden].map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(s2.body.position).toBe(6);
    const names = async (as: ReqOpts) => (await svc.api.get('/v1/views', as)).body.data.map((v: any) => v.name);
    expect(await names(agent.as)).toEqual(['P1', 'P2', 'S1', 'S2']);
    expect(await names(other.as)).toEqual(['Other', 'S1', 'S2']);
    expect(await names(t.as)).toEqual(['S1', 'S2']);
    const key = await newApiKey(svc.api, t, ['tickets:read']);
    expect(await names({ token: key.key })).toEqual(['S1', 'S2']);
  });
});

describe('personal and shared views', () => {
  it('hides a personal view from everyone but its maker (404, like a missing view), owners and keys included', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const other = await addMember(svc, t, 'agent');
    const admin = await addMember(svc, t, 'admin');
    const mine = await svc.api.post('/v1/views', { name: 'Mine', filters: { assignee: 'me' } }, agent.as);
    const key = await newApiKey(svc.api, t, ['tickets:read', 'settings:write']);
    const missing = `/v1/views/${randomUUID()}`;
    for (const as of [other.as, admin.as, t.as, { token: key.key }]) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { name: 'Taken' }],
        ['DELETE', undefined],
      ] as Array<[string, unknown]>) {
        const seen = await svc.api.req(method, `/v1/views/${mine.body.id}`, { ...as, body });
        const none = await svc.api.req(method, missing, { ...as, body });
        expect(seen.status, `${method} as ${as.token?.slice(0, 12)}`).toBe(404);
        expect(seen.body).toEqual(none.body);
      }
      expect((await svc.api.get('/v1/views', as)).body.data).toEqual([]);
    }
    expect((await svc.api.get(`/v1/views/${mine.body.id}`, agent.as)).body).toEqual(mine.body);
  });

  it('lets only admins and settings:write keys create or change shared views (403 otherwise)', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const viewer = await addMember(svc, t, 'viewer');
    const admin = await addMember(svc, t, 'admin');
    const shared = await svc.api.post('/v1/views', { name: 'Team inbox', shared: true }, admin.as);
    expect(shared.status).toBe(201);
    expect(shared.body.shared).toBe(true);
    for (const who of [agent, viewer]) {
      for (const res of [
        await svc.api.post('/v1/views', { name: 'S', shared: true }, who.as),
        await svc.api.patch(`/v1/views/${shared.body.id}`, { name: 'Mine now' }, who.as),
        await svc.api.delete(`/v1/views/${shared.body.id}`, who.as),
      ]) {
        expect(res.status).toBe(403);
        expect(isErrorBody(res.body, 403, 'forbidden')).toBe(true);
      }
      // Every member reads shared views.
      expect((await svc.api.get(`/v1/views/${shared.body.id}`, who.as)).status).toBe(200);
    }
    // Personal views: any member, viewers included, manages their own.
    const own = await svc.api.post('/v1/views', { name: 'Viewer’s' }, viewer.as);
    expect(own.status).toBe(201);
    expect((await svc.api.patch(`/v1/views/${own.body.id}`, { name: 'Renamed' }, viewer.as)).status).toBe(200);
    expect((await svc.api.patch(`/v1/views/${own.body.id}`, { shared: true }, viewer.as)).status).toBe(403);
    expect((await svc.api.delete(`/v1/views/${own.body.id}`, viewer.as)).status).toBe(204);

    // Keys: reading with a tickets or settings scope; writing with settings:write, shared views only.
    for (const scopes of [['tickets:read'], ['tickets:write'], ['settings:read']]) {
      const k = await newApiKey(svc.api, t, scopes);
      expect((await svc.api.get('/v1/views', { token: k.key })).status).toBe(200);
      expect((await svc.api.get(`/v1/views/${shared.body.id}`, { token: k.key })).status).toBe(200);
      const post = await svc.api.post('/v1/views', { name: 'K', shared: true }, { token: k.key });
      expect(post.status).toBe(403);
      expect((await svc.api.patch(`/v1/views/${shared.body.id}`, { name: 'K' }, { token: k.key })).status).toBe(403);
    }
    const contacts = await newApiKey(svc.api, t, ['contacts:read']);
    expect((await svc.api.get('/v1/views', { token: contacts.key })).status).toBe(403);
    const writer = await newApiKey(svc.api, t, ['settings:write']);
    const byKey = await svc.api.post('/v1/views', { name: 'By key' }, { token: writer.key });
    expect(byKey.status).toBe(201);
    expect(byKey.body.shared).toBe(true);
    const personal = await svc.api.post('/v1/views', { name: 'K', shared: false }, { token: writer.key });
    expect(personal.status).toBe(422);
    expect(personal.body.errors[0].location).toBe('body.shared');
    const unshare = await svc.api.patch(`/v1/views/${byKey.body.id}`, { shared: false }, { token: writer.key });
    expect(unshare.status).toBe(422);
    expect(unshare.body.errors[0].location).toBe('body.shared');
    expect((await svc.api.patch(`/v1/views/${shared.body.id}`, { position: 3 }, { token: writer.key })).status).toBe(
      200,
    );
    expect((await svc.api.delete(`/v1/views/${byKey.body.id}`, { token: writer.key })).status).toBe(204);
    expect((await svc.api.delete(`/v1/views/${shared.body.id}`, t.as)).status).toBe(204);
  });

  it('shares a personal view (admins) and unshares a shared one into the admin’s own, with events', async () => {
    const t = await newTenant(svc.api);
    const admin = await addMember(svc, t, 'admin');
    const agent = await addMember(svc, t, 'agent');
    const agentsOwn = await svc.api.post('/v1/views', { name: 'Agent’s' }, agent.as);
    expect((await svc.api.patch(`/v1/views/${agentsOwn.body.id}`, { shared: true }, agent.as)).status).toBe(403);

    const v = await svc.api.post('/v1/views', { name: 'Draft', filters: { status: ['open'] } }, admin.as);
    let seq = await latest(admin.as);
    const shared = await svc.api.patch(`/v1/views/${v.body.id}`, { shared: true }, admin.as);
    expect(shared.status).toBe(200);
    expect(shared.body).toMatchObject({ id: v.body.id, shared: true, name: 'Draft' });
    expect((await svc.api.get(`/v1/views/${v.body.id}`, agent.as)).body).toEqual(shared.body);
    let events = await eventsSince(agent.as, seq);
    expect(events.map((e) => e.type)).toEqual(['view.updated']);
    expect(events[0].topics.filter((x: string) => x.startsWith('user:'))).toEqual([]);
    expect(events[0].data).toEqual({ view: shared.body });
    // Its maker leaving keeps a shared view.
    await svc.rt.deps.database.db
      .deleteFrom('members')
      .where('workspace_id', '=', t.workspaceId)
      .where('user_id', '=', admin.userId)
      .execute();
    expect((await svc.api.get(`/v1/views/${v.body.id}`, agent.as)).status).toBe(200);

    seq = await latest(t.as);
    const unshared = await svc.api.patch(`/v1/views/${v.body.id}`, { shared: false, name: 'Owner’s' }, t.as);
    expect(unshared.status).toBe(200);
    expect(unshared.body).toMatchObject({ shared: false, name: 'Owner’s' });
    expect((await svc.api.get(`/v1/views/${v.body.id}`, agent.as)).status).toBe(404);
    expect((await svc.api.get(`/v1/views/${v.body.id}`, t.as)).body).toEqual(unshared.body);
    events = await eventsSince(t.as, seq);
    expect(events.map((e) => e.type)).toEqual(['view.deleted', 'view.updated']);
    expect(events[0].data).toEqual({ view_id: v.body.id });
    expect(events[0].topics.filter((x: string) => x.startsWith('user:'))).toEqual([]);
    expect(events[1].data).toEqual({ view: unshared.body });
    expect(events[1].topics).toContain(`user:${t.owner.userId}`);

    // A member who leaves takes their personal views along.
    await svc.rt.deps.database.db
      .deleteFrom('members')
      .where('workspace_id', '=', t.workspaceId)
      .where('user_id', '=', agent.userId)
      .execute();
    const left = await svc.rt.deps.database.db
      .selectFrom('views')
      .select('id')
      .where('workspace_id', '=', t.workspaceId)
      .where('id', '=', agentsOwn.body.id)
      .execute();
    expect(left).toEqual([]);
  });
});

describe('validating views', () => {
  it('refuses bad names and filters with 422 validation_failed at the field', async () => {
    const t = await newTenant(svc.api);
    await ticketField(t, 'plan', 'select', [{ id: 'gold' }]);
    await ticketField(t, 'seats', 'number');
    const f = (filters: object) => ({ name: 'V', filters });
    const cases: Array<[object, string]> = [
      [{}, 'body.name'],
      [{ name: '' }, 'body.name'],
      [{ name: '   ' }, 'body.name'],
      [{ name: 'x'.repeat(101) }, 'body.name'],
      [{ name: 'V', shared: 'yes' }, 'body.shared'],
      [{ name: 'V', position: -1 }, 'body.position'],
      [{ name: 'V', position: 1.5 }, 'body.position'],
      [{ name: 'V', owner_id: randomUUID() }, 'body.owner_id'],
      [{ name: 'V', filters: 'open' }, 'body.filters'],
      [f({ severity: ['sev1'] }), 'body.filters.severity'],
      [f({ Status: ['open'] }), 'body.filters.Status'],
      [f({ status: ['done'] }), 'body.filters.status.0'],
      [f({ status: 'open' }), 'body.filters.status'],
      [f({ status: [] }), 'body.filters.status'],
      [f({ status: ['open', 'open'] }), 'body.filters.status'],
      [f({ priority: ['critical'] }), 'body.filters.priority.0'],
      [f({ assignee: 'someone' }), 'body.filters.assignee'],
      [f({ assignee: 'ME' }), 'body.filters.assignee'],
      [f({ team_id: 'not-a-uuid' }), 'body.filters.team_id'],
      [f({ team_id: null }), 'body.filters.team_id'],
      [f({ mailbox_id: '123' }), 'body.filters.mailbox_id'],
      [f({ tag: '' }), 'body.filters.tag'],
      [f({ tag: '   ' }), 'body.filters.tag'],
      [f({ tag: '<b>' }), 'body.filters.tag'],
      [f({ tag: 'x'.repeat(51) }), 'body.filters.tag'],
      [f({ channel: 'fax' }), 'body.filters.channel'],
      [f({ channel: ['email'] }), 'body.filters.channel'],
      [f({ q: '' }), 'body.filters.q'],
      [f({ q: '  ' }), 'body.filters.q'],
      [f({ q: 'x'.repeat(201) }), 'body.filters.q'],
      [f({ fields: { plan: 'gold' } }), 'body.filters.fields'],
      [f({ fields: Array.from({ length: 21 }, () => ({ key: 'plan', op: 'set' })) }), 'body.filters.fields'],
      [f({ fields: [{ key: 'Plan', op: 'eq', value: 'gold' }] }), 'body.filters.fields.0.key'],
      [f({ fields: [{ key: 'x'.repeat(41), op: 'eq', value: 'gold' }] }), 'body.filters.fields.0.key'],
      [f({ fields: [{ op: 'eq', value: 'gold' }] }), 'body.filters.fields.0.key'],
      [f({ fields: [{ key: 'plan', op: 'like', value: 'gold' }] }), 'body.filters.fields.0.op'],
      [f({ fields: [{ key: 'plan', value: 'gold' }] }), 'body.filters.fields.0.op'],
      [f({ fields: [{ key: 'plan', op: 'eq', value: null }] }), 'body.filters.fields.0.value'],
      [f({ fields: [{ key: 'plan', op: 'eq', value: { id: 'gold' } }] }), 'body.filters.fields.0.value'],
      [f({ fields: [{ key: 'plan', op: 'any', value: [1] }] }), 'body.filters.fields.0.value'],
      [f({ fields: [{ key: 'plan', op: 'eq', value: 'gold', not: true }] }), 'body.filters.fields.0.not'],
      [f({ fields: [{ key: 'plan', op: 'eq' }] }), 'body.filters.fields.0.value'],
      // Checked against the workspace's ticket fields: the key exists, the type allows the op.
      [f({ fields: [{ key: 'nosuch', op: 'eq', value: 'x' }] }), 'body.filters.fields.0.key'],
      [
        f({
          fields: [
            { key: 'plan', op: 'set' },
            { key: 'plan', op: 'contains', value: 'go' },
          ],
        }),
        'body.filters.fields.1',
      ],
      [f({ fields: [{ key: 'plan', op: 'any', value: ['platinum'] }] }), 'body.filters.fields.0'],
      [f({ fields: [{ key: 'seats', op: 'gt', value: 'many' }] }), 'body.filters.fields.0'],
    ];
    for (const [body, location] of cases) {
      const r = await svc.api.post('/v1/views', body, t.as);
      const label = JSON.stringify(body).slice(0, 120);
      expect(r.status, label).toBe(422);
      expect(r.body.code, label).toBe('validation_failed');
      expect(r.body.errors[0].location.startsWith(location), `${label}: ${r.body.errors[0].location}`).toBe(true);
      if (!location.startsWith('body.filters.fields.')) expect(r.body.errors[0].location, label).toBe(location);
    }
    expect((await svc.api.get('/v1/views', t.as)).body.data).toEqual([]);

    // The same rules on PATCH; a valid view is untouched by a refused change.
    const ok = await svc.api.post(
      '/v1/views',
      f({
        assignee: randomUUID(),
        tag: 'Tier 1 / EU & more #2',
        fields: [
          { key: 'seats', op: 'gte', value: 10 },
          { key: 'plan', op: 'none', value: ['gold'] },
        ],
      }),
      t.as,
    );
    expect(ok.status).toBe(201);
    for (const [body, location] of [
      [{ filters: { unknown: 1 } }, 'body.filters.unknown'],
      [{ filters: { fields: [{ key: 'nosuch', op: 'set' }] } }, 'body.filters.fields.0.key'],
      [{ name: ' ' }, 'body.name'],
      [{ id: randomUUID() }, 'body.id'],
    ] as Array<[object, string]>) {
      const r = await svc.api.patch(`/v1/views/${ok.body.id}`, body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.errors[0].location).toBe(location);
    }
    expect((await svc.api.get(`/v1/views/${ok.body.id}`, t.as)).body).toEqual(ok.body);
  });

  it('replaces filters as a whole on PATCH, with view.updated; a no-op emits nothing', async () => {
    const t = await newTenant(svc.api);
    const v = await svc.api.post(
      '/v1/views',
      { name: 'V', shared: true, filters: { status: ['open'], tag: 'VIP' } },
      t.as,
    );
    const seq = await latest(t.as);
    const p = await svc.api.patch(`/v1/views/${v.body.id}`, { filters: { priority: ['urgent'] } }, t.as);
    expect(p.status).toBe(200);
    expect(p.body.filters).toEqual({ priority: ['urgent'] });
    expect(Date.parse(p.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(v.body.updated_at));
    const same = await svc.api.patch(`/v1/views/${v.body.id}`, { name: 'V', filters: { priority: ['urgent'] } }, t.as);
    expect(same.body).toEqual(p.body);
    const events = await eventsSince(t.as, seq);
    expect(events.map((e) => e.type)).toEqual(['view.updated']);
    expect(events[0].data).toEqual({ view: p.body });
  });

  it('limits shared views per workspace and personal views per person to 100', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const rows = (shared: boolean, owner: string | null) =>
      Array.from({ length: 100 }, (_, i) => ({
        workspace_id: t.workspaceId,
        id: randomUUID(),
        name: `V${i}`,
        shared,
        owner_id: owner,
        position: i,
      }));
    const db = svc.rt.deps.database.db;
    await db.insertInto('views').values(rows(true, null)).execute();
    const shared = await svc.api.post('/v1/views', { name: 'One more', shared: true }, t.as);
    expect(shared.status).toBe(422);
    expect(shared.body.errors[0].location).toBe('body.shared');
    expect((await svc.api.post('/v1/views', { name: 'Personal' }, agent.as)).status).toBe(201);
    await db.insertInto('views').values(rows(false, t.owner.userId)).execute();
    expect((await svc.api.post('/v1/views', { name: 'One more' }, t.as)).status).toBe(422);
    expect((await svc.api.get('/v1/views', t.as)).body.data).toHaveLength(200);
  });
});

describe('deleting views', () => {
  it('deletes with view.deleted (a personal view’s to its owner’s topic); the id is then 404', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const mine = await svc.api.post('/v1/views', { name: 'Mine' }, agent.as);
    const shared = await svc.api.post('/v1/views', { name: 'Ours', shared: true }, t.as);
    const seq = await latest(agent.as);
    expect((await svc.api.delete(`/v1/views/${mine.body.id}`, agent.as)).status).toBe(204);
    expect((await svc.api.delete(`/v1/views/${shared.body.id}`, t.as)).status).toBe(204);
    const events = await eventsSince(agent.as, seq);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['view.deleted', { view_id: mine.body.id }],
      ['view.deleted', { view_id: shared.body.id }],
    ]);
    expect(events[0].topics).toContain(`user:${agent.userId}`);
    expect(events[1].topics.filter((x: string) => x.startsWith('user:'))).toEqual([]);
    for (const id of [mine.body.id, shared.body.id, 'not-an-id']) {
      const r = await svc.api.get(`/v1/views/${id}`, agent.as);
      expect(r.status).toBe(404);
      expect(isErrorBody(r.body, 404, 'not_found')).toBe(true);
    }
  });

  it("answers another workspace's views exactly like missing ones", async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const keyB = await newApiKey(svc.api, b, ['tickets:read', 'settings:write']);
    const shared = await svc.api.post('/v1/views', { name: 'A shared', shared: true }, a.as);
    const personal = await svc.api.post('/v1/views', { name: 'A personal' }, a.as);
    for (const id of [shared.body.id, personal.body.id]) {
      for (const as of [b.as, { token: keyB.key }]) {
        for (const [method, body] of [
          ['GET', undefined],
          ['PATCH', { name: 'Mine' }],
          ['DELETE', undefined],
        ] as Array<[string, unknown]>) {
          const foreign = await svc.api.req(method, `/v1/views/${id}`, { ...as, body });
          const none = await svc.api.req(method, `/v1/views/${randomUUID()}`, { ...as, body });
          expect(foreign.status).toBe(404);
          expect(foreign.body).toEqual(none.body);
        }
      }
    }
    expect((await svc.api.get('/v1/views', b.as)).body.data).toEqual([]);
    expect((await svc.api.get('/v1/views', a.as)).body.data.map((v: any) => v.name)).toEqual([
      'A shared',
      'A personal',
    ]);
  });
});

describe('exports for the ticket list and labels', () => {
  it('viewFiltersOf and visibleViews answer what the caller may see', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const peer = await addMember(svc, t, 'agent');
    const shared = await svc.api.post('/v1/views', { name: 'S', shared: true, filters: { status: ['open'] } }, t.as);
    const mine = await svc.api.post('/v1/views', { name: 'M', filters: { assignee: 'me' } }, agent.as);
    const foreign = await svc.api.post('/v1/views', { name: 'F', shared: true, filters: { q: 'x' } }, other.as);
    const db = svc.rt.deps.database.db;

    expect(await viewFiltersOf(db, ctxOf(t, agent), shared.body.id)).toEqual({ status: ['open'] });
    expect(await viewFiltersOf(db, ctxOf(t, agent), mine.body.id.toUpperCase())).toEqual({ assignee: 'me' });
    expect(await viewFiltersOf(db, ctxOf(t, peer), mine.body.id)).toBeNull();
    expect(await viewFiltersOf(db, ctxOf(t, null), mine.body.id)).toBeNull();
    expect(await viewFiltersOf(db, ctxOf(t, null), shared.body.id)).toEqual({ status: ['open'] });
    expect(await viewFiltersOf(db, ctxOf(t, agent), foreign.body.id)).toBeNull();
    expect(await viewFiltersOf(db, ctxOf(t, agent), randomUUID())).toBeNull();
    expect(await viewFiltersOf(db, ctxOf(t, agent), "1' OR '1'='1")).toBeNull();

    expect(await visibleViews(db, ctxOf(t, agent))).toEqual([
      { id: shared.body.id, filters: { status: ['open'] } },
      { id: mine.body.id, filters: { assignee: 'me' } },
    ]);
    expect(await visibleViews(db, ctxOf(t, peer))).toEqual([{ id: shared.body.id, filters: { status: ['open'] } }]);
    expect(await visibleViews(db, ctxOf(t, null))).toEqual([{ id: shared.body.id, filters: { status: ['open'] } }]);
  });

  it('renameTagInViews rewrites the tag filter (any case) in every view of the workspace, with view.updated', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const make = async (as: ReqOpts, body: object) => (await svc.api.post('/v1/views', body, as)).body;
    const sharedOld = await make(t.as, { name: 'A', shared: true, filters: { tag: 'Old', status: ['open'] } });
    const personalOld = await make(agent.as, { name: 'B', filters: { tag: 'old' } });
    const otherTag = await make(t.as, { name: 'C', shared: true, filters: { tag: 'Older' } });
    const noTag = await make(t.as, { name: 'D', shared: true, filters: { q: 'Old' } });
    const foreign = await make(other.as, { name: 'E', shared: true, filters: { tag: 'Old' } });
    const seq = await latest(agent.as);
    const foreignSeq = await latest(other.as);

    await svc.rt.deps.writer.run(t.workspaceId, (u) => renameTagInViews(u, 'OLD', 'New'));

    const get = async (as: ReqOpts, id: string) => (await svc.api.get(`/v1/views/${id}`, as)).body;
    const a = await get(t.as, sharedOld.id);
    const b = await get(agent.as, personalOld.id);
    expect(a.filters).toEqual({ tag: 'New', status: ['open'] });
    expect(b.filters).toEqual({ tag: 'New' });
    expect(await get(t.as, otherTag.id)).toEqual(otherTag);
    expect(await get(t.as, noTag.id)).toEqual(noTag);
    expect(await get(other.as, foreign.id)).toEqual(foreign);

    const events = await eventsSince(agent.as, seq);
    expect(events.map((e) => e.type)).toEqual(['view.updated', 'view.updated']);
    const byId = new Map(events.map((e) => [e.data.view.id, e]));
    expect(byId.get(sharedOld.id).data).toEqual({ view: a });
    expect(byId.get(personalOld.id).data).toEqual({ view: b });
    expect(byId.get(personalOld.id).topics).toContain(`user:${agent.userId}`);
    expect(byId.get(sharedOld.id).topics.filter((x: string) => x.startsWith('user:'))).toEqual([]);
    expect(await eventsSince(other.as, foreignSeq)).toEqual([]);

    // Nothing left to rename: no events.
    const after = await latest(t.as);
    await svc.rt.deps.writer.run(t.workspaceId, (u) => renameTagInViews(u, 'Old', 'New'));
    await svc.rt.deps.writer.run(t.workspaceId, (u) => renameTagInViews(u, 'new', 'New'));
    expect(await latest(t.as)).toBe(after);
    // A change of case alone is a rename too.
    await svc.rt.deps.writer.run(t.workspaceId, (u) => renameTagInViews(u, 'new', 'NEW'));
    expect((await get(t.as, sharedOld.id)).filters.tag).toBe('NEW');
  });
});
