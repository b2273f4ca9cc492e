// /v1/tag-groups: the TagGroup shape, names (1 to 50, unique ignoring case), colour, the
// exclusive flag, the 50-group limit, order and reorder, delete keeping the labels ungrouped,
// events, audit entries, access and tenant isolation.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTicket } from '../../support/builders.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newApiKey,
  newTenant,
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
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function group(t: Tenant, body: Record<string, unknown>) {
  const r = await svc.api.post('/v1/tag-groups', body, t.as);
  if (r.status !== 201) throw new Error(`group: ${r.status} ${r.text}`);
  return r.body;
}
async function tag(t: Tenant, body: Record<string, unknown>) {
  const r = await svc.api.post('/v1/tags', body, t.as);
  if (r.status !== 201) throw new Error(`tag: ${r.status} ${r.text}`);
  return r.body;
}
async function auditOf(t: Tenant, action: string) {
  return svc.rt.deps.database.db
    .selectFrom('audit_logs')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .where('action', '=', action)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
const expect422 = (r: { status: number; body: any }, location: string) => {
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
  expect(r.body.errors?.[0]?.location).toBe(location);
};

describe('label groups', () => {
  it('creates a group (201) with the spec shape, tag_group.created and an audit entry', async () => {
    const t = await newTenant(svc.api);
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post('/v1/tag-groups', { name: '  Priority  ' }, t.as);
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/tag-groups/${r.body.id}`);
    expect(r.body).toEqual({
      id: expect.stringMatching(ID),
      name: 'Priority',
      color: null,
      exclusive: false,
      position: 0,
      tag_count: 0,
      created_at: expect.stringMatching(TIME),
      updated_at: expect.stringMatching(TIME),
    });
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => [e.type, e.data])).toEqual([['tag_group.created', { tag_group: r.body }]]);
    expect(await auditOf(t, 'tag_group.created')).toHaveLength(1);

    const second = await group(t, { name: 'Plan', color: 'amber', exclusive: true });
    expect(second).toMatchObject({ name: 'Plan', color: 'amber', exclusive: true, position: 1 });
    await tag(t, { name: 'Free', group_id: second.id });
    const archived = await tag(t, { name: 'Legacy', group_id: second.id });
    await svc.api.patch(`/v1/tags/${archived.id}`, { archived: true }, t.as);
    const got = await svc.api.get(`/v1/tag-groups/${second.id}`, t.as);
    expect(got.status).toBe(200);
    expect(got.body.tag_count).toBe(2);
    const list = await svc.api.get('/v1/tag-groups', t.as);
    expect(Object.keys(list.body)).toEqual(['data']);
    expect(list.body.data.map((g: any) => [g.name, g.tag_count])).toEqual([
      ['Priority', 0],
      ['Plan', 2],
    ]);
    expect((await svc.api.get(`/v1/tag-groups/${randomUUID()}`, t.as)).status).toBe(404);
    expect((await svc.api.get('/v1/tag-groups/nope', t.as)).status).toBe(404);
  });

  it('checks names (1 to 50, unique ignoring case: 409) and colours', async () => {
    const t = await newTenant(svc.api);
    await group(t, { name: 'Priority' });
    const other = await group(t, { name: 'Other' });
    expect422(await svc.api.post('/v1/tag-groups', { name: 'x'.repeat(51) }, t.as), 'body.name');
    expect422(await svc.api.post('/v1/tag-groups', { name: '   ' }, t.as), 'body.name');
    expect422(await svc.api.post('/v1/tag-groups', { name: '' }, t.as), 'body.name');
    expect422(await svc.api.post('/v1/tag-groups', {}, t.as), 'body.name');
    expect422(await svc.api.post('/v1/tag-groups', { name: 'C', color: 'black' }, t.as), 'body.color');
    expect422(await svc.api.post('/v1/tag-groups', { name: 'C', exclusive: 'yes' }, t.as), 'body.exclusive');
    expect422(await svc.api.post('/v1/tag-groups', { name: 'C', position: 1 }, t.as), 'body.position');
    expect((await svc.api.post('/v1/tag-groups', { name: 'y'.repeat(50), color: null }, t.as)).status).toBe(201);
    for (const name of ['priority', ' PRIORITY ']) {
      const r = await svc.api.post('/v1/tag-groups', { name }, t.as);
      expect(r.status).toBe(409);
      expect(isErrorBody(r.body, 409, 'conflict')).toBe(true);
    }
    const rename = await svc.api.patch(`/v1/tag-groups/${other.id}`, { name: 'PRIORITY' }, t.as);
    expect(rename.status).toBe(409);
    expect(isErrorBody(rename.body, 409, 'conflict')).toBe(true);
    expect((await svc.api.post('/v1/tag-groups', { name: 'Priority' }, (await newTenant(svc.api)).as)).status).toBe(
      201,
    );
  });

  it('refuses the 51st group of a workspace (422)', async () => {
    const t = await newTenant(svc.api);
    await sql`
      INSERT INTO tag_groups (workspace_id, id, name, position)
      SELECT ${t.workspaceId}::uuid, gen_random_uuid(), 'group ' || i, i FROM generate_series(1, 50) AS i`.execute(
      svc.rt.deps.database.db,
    );
    expect422(await svc.api.post('/v1/tag-groups', { name: 'One too many' }, t.as), 'body');
    const first = (await svc.api.get('/v1/tag-groups', t.as)).body.data[0];
    expect((await svc.api.delete(`/v1/tag-groups/${first.id}`, t.as)).status).toBe(204);
    expect((await svc.api.post('/v1/tag-groups', { name: 'One too many' }, t.as)).status).toBe(201);
  });

  it('PATCH changes name, colour and exclusive with tag_group.updated; no change emits nothing', async () => {
    const t = await newTenant(svc.api);
    const g = await group(t, { name: 'Area', color: 'red' });
    let seq = await latestSeqOf(svc, t);
    const r = await svc.api.patch(`/v1/tag-groups/${g.id}`, { name: 'Areas', color: null, exclusive: true }, t.as);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: g.id, name: 'Areas', color: null, exclusive: true, created_at: g.created_at });
    let events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => [e.type, e.data])).toEqual([['tag_group.updated', { tag_group: r.body }]]);
    const audit = await auditOf(t, 'tag_group.updated');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.data).toEqual({
      name: { from: 'Area', to: 'Areas' },
      color: { from: 'red', to: null },
      exclusive: { from: false, to: true },
    });
    seq = await latestSeqOf(svc, t);
    const same = await svc.api.patch(`/v1/tag-groups/${g.id}`, { name: 'Areas', exclusive: true }, t.as);
    expect(same.body).toEqual(r.body);
    events = await eventsAfterOf(svc, t, seq);
    expect(events).toEqual([]);
    expect((await svc.api.patch(`/v1/tag-groups/${randomUUID()}`, { name: 'X' }, t.as)).status).toBe(404);
    expect422(await svc.api.patch(`/v1/tag-groups/${g.id}`, { tag_count: 3 }, t.as), 'body.tag_count');
  });

  it('DELETE keeps the labels, ungrouped (tag.updated each), then tag_group.deleted; audited', async () => {
    const t = await newTenant(svc.api);
    const g = await group(t, { name: 'Doomed', exclusive: true });
    const keep = await group(t, { name: 'Stays' });
    const a = await tag(t, { name: 'A', group_id: g.id });
    const b = await tag(t, { name: 'B', group_id: g.id });
    const c = await tag(t, { name: 'C', group_id: keep.id });
    const tk = await makeTicket(svc.api, t, { subject: 'Hi', body_html: '<p>x</p>' });
    await svc.rt.deps.database.db
      .insertInto('ticket_tags')
      .values({ workspace_id: t.workspaceId, ticket_id: tk.id, tag_id: a.id })
      .execute();
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.delete(`/v1/tag-groups/${g.id}`, t.as);
    expect(r.status).toBe(204);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['tag.updated', 'tag.updated', 'tag_group.deleted']);
    expect(
      events
        .slice(0, 2)
        .map((e) => [e.data.tag.id, e.data.tag.group_id])
        .sort(),
    ).toEqual(
      [
        [a.id, null],
        [b.id, null],
      ].sort(),
    );
    expect(events[2].data).toEqual({ tag_group_id: g.id });
    const audit = await auditOf(t, 'tag_group.deleted');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.data).toMatchObject({ name: 'Doomed', tag_ids: [a.id, b.id].sort() });

    const list = (await svc.api.get('/v1/tags', t.as)).body.data;
    expect(list.map((x: any) => [x.name, x.group_id])).toEqual([
      ['C', keep.id],
      ['A', null],
      ['B', null],
    ]);
    expect(list.find((x: any) => x.id === a.id).usage.tickets).toBe(1);
    expect((await svc.api.get(`/v1/tags/${c.id}`, t.as)).body.group_id).toBe(keep.id);
    expect((await svc.api.get(`/v1/tag-groups/${g.id}`, t.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/tag-groups/${g.id}`, t.as)).status).toBe(404);
  });

  it('reorders: position becomes the index; every group exactly once (422 at body.ids)', async () => {
    const t = await newTenant(svc.api);
    const a = await group(t, { name: 'A' });
    const b = await group(t, { name: 'B' });
    const c = await group(t, { name: 'C' });
    const foreign = await group(await newTenant(svc.api), { name: 'F' });
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post('/v1/tag-groups/reorder', { ids: [b.id, c.id.toUpperCase(), a.id] }, t.as);
    expect(r.status).toBe(200);
    expect(r.body.data.map((g: any) => [g.name, g.position])).toEqual([
      ['B', 0],
      ['C', 1],
      ['A', 2],
    ]);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => [e.type, e.data.tag_group.name])).toEqual([
      ['tag_group.updated', 'B'],
      ['tag_group.updated', 'C'],
      ['tag_group.updated', 'A'],
    ]);
    expect(await auditOf(t, 'tag_group.reordered')).toHaveLength(1);
    expect422(await svc.api.post('/v1/tag-groups/reorder', { ids: [a.id, b.id] }, t.as), 'body.ids');
    expect422(await svc.api.post('/v1/tag-groups/reorder', { ids: [a.id, b.id, c.id, foreign.id] }, t.as), 'body.ids');
    expect422(await svc.api.post('/v1/tag-groups/reorder', { ids: [a.id, b.id, foreign.id] }, t.as), 'body.ids');
    expect422(await svc.api.post('/v1/tag-groups/reorder', { ids: [a.id, b.id, b.id] }, t.as), 'body.ids');
    expect422(
      await svc.api.post('/v1/tag-groups/reorder', { ids: Array.from({ length: 51 }, () => randomUUID()) }, t.as),
      'body.ids',
    );
    expect((await svc.api.get('/v1/tag-groups', t.as)).body.data.map((g: any) => g.name)).toEqual(['B', 'C', 'A']);
  });

  it('every member reads; only admins and owners change; keys by scope; other workspaces get 404', async () => {
    const t = await newTenant(svc.api);
    const g = await group(t, { name: 'G' });
    const viewer = await addMember(svc, t, 'viewer');
    const agent = await addMember(svc, t, 'agent');
    const admin = await addMember(svc, t, 'admin');
    const writes = (as: any) => [
      () => svc.api.post('/v1/tag-groups', { name: 'New' }, as),
      () => svc.api.patch(`/v1/tag-groups/${g.id}`, { exclusive: true }, as),
      () => svc.api.post('/v1/tag-groups/reorder', { ids: [g.id] }, as),
      () => svc.api.delete(`/v1/tag-groups/${g.id}`, as),
    ];
    for (const who of [viewer, agent]) {
      expect((await svc.api.get('/v1/tag-groups', who.as)).status).toBe(200);
      expect((await svc.api.get(`/v1/tag-groups/${g.id}`, who.as)).status).toBe(200);
      for (const w of writes(who.as)) {
        const r = await w();
        expect(r.status).toBe(403);
        expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
      }
    }
    for (const scopes of [['settings:read'], ['tickets:read'], ['contacts:write']]) {
      const key = await newApiKey(svc.api, t, scopes);
      expect((await svc.api.get('/v1/tag-groups', { token: key.key })).status).toBe(200);
      for (const w of writes({ token: key.key })) expect((await w()).status).toBe(403);
    }
    expect(
      (await svc.api.get('/v1/tag-groups', { token: (await newApiKey(svc.api, t, ['kb:read'])).key })).status,
    ).toBe(403);
    const key = await newApiKey(svc.api, t, ['settings:write']);
    expect((await svc.api.post('/v1/tag-groups', { name: 'By key' }, { token: key.key })).status).toBe(201);
    expect((await svc.api.post('/v1/tag-groups', { name: 'By admin' }, admin.as)).status).toBe(201);
    expect((await svc.api.patch(`/v1/tag-groups/${g.id}`, { exclusive: true }, admin.as)).status).toBe(200);

    const other = await newTenant(svc.api);
    expect((await svc.api.get(`/v1/tag-groups/${g.id}`, other.as)).status).toBe(404);
    expect((await svc.api.patch(`/v1/tag-groups/${g.id}`, { name: 'Mine' }, other.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/tag-groups/${g.id}`, other.as)).status).toBe(404);
    expect((await svc.api.get('/v1/tag-groups', other.as)).body.data).toEqual([]);
    expect((await svc.api.get(`/v1/tag-groups/${g.id}`, t.as)).body).toMatchObject({ name: 'G', exclusive: true });
    expect((await svc.api.delete(`/v1/tag-groups/${g.id}`, admin.as)).status).toBe(204);
  });
});
