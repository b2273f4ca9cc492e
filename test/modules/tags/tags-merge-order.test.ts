// /v1/tags, part 2 (part 1: tags.test.ts, shared setup in setup.ts): merging and reordering
// labels, who may read and change them.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
} from '../../support/helpers.js';
import { expect422, tagsSuite } from './setup.js';

const suite = tagsSuite();
const { db, tag, group, ticket, contact, apply, namesOn, auditOf } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

describe('merging labels', () => {
  it('moves every record to `into` (records that had both keep one), deletes the source, emits tag.merged', async () => {
    const t = await newTenant(svc.api);
    const [t1, t2] = [await ticket(t), await ticket(t)];
    const ct = await contact(t);
    await apply(t, 'ticket', t1, { tags: ['bug', 'Other'] });
    await apply(t, 'ticket', t2, { tags: ['bug', 'Defect'] });
    await apply(t, 'contact', ct, { tags: ['bug'] });
    const list = (await svc.api.get('/v1/tags', t.as)).body.data;
    const src = list.find((x: any) => x.name === 'bug');
    const into = list.find((x: any) => x.name === 'Defect');
    const view = randomUUID();
    await db()
      .insertInto('views')
      .values({
        workspace_id: t.workspaceId,
        id: view,
        name: 'Bugs',
        shared: true,
        filters: JSON.stringify({ tag: 'Bug' }),
      })
      .execute();

    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post(`/v1/tags/${src.id}/merge`, { into: into.id }, t.as);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: into.id, name: 'Defect', usage: { tickets: 2, contacts: 1, companies: 0 } });
    expect(await namesOn(t, 'ticket', t1)).toEqual(['Defect', 'Other']);
    expect(await namesOn(t, 'ticket', t2)).toEqual(['Defect']);
    expect(await namesOn(t, 'contact', ct)).toEqual(['Defect']);
    expect((await svc.api.get(`/v1/tags/${src.id}`, t.as)).status).toBe(404);
    const events = await eventsAfterOf(svc, t, seq);
    const merged = events.filter((e) => e.type === 'tag.merged');
    expect(merged.map((e) => e.data)).toEqual([{ tag_id: src.id, into: into.id }]);
    expect(events.filter((e) => e.type.startsWith('ticket.') || e.type.startsWith('contact.'))).toEqual([]);
    const audit = await auditOf(t, 'tag.merged');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.data).toMatchObject({ name: 'bug', into: into.id, into_name: 'Defect' });
    // Views are rewritten.
    const row = await db().selectFrom('views').select('filters').where('id', '=', view).executeTakeFirstOrThrow();
    expect((row.filters as any).tag).toBe('Defect');
  });

  it('into an exclusive group: the records lose the group’s other labels', async () => {
    const t = await newTenant(svc.api);
    const prio = await group(t, { name: 'Priority', exclusive: true });
    const p1 = await tag(t, { name: 'P1', group_id: prio.id });
    const p2 = await tag(t, { name: 'P2', group_id: prio.id });
    const urgent = await tag(t, { name: 'urgent' });
    const [a, b, c] = [await ticket(t), await ticket(t), await ticket(t)];
    await apply(t, 'ticket', a, { tags: ['urgent', 'P2', 'Keep'] });
    await apply(t, 'ticket', b, { tags: ['urgent'] });
    await apply(t, 'ticket', c, { tags: ['P2'] }); // without the source: untouched
    const r = await svc.api.post(`/v1/tags/${urgent.id}/merge`, { into: p1.id }, t.as);
    expect(r.status).toBe(200);
    expect(await namesOn(t, 'ticket', a)).toEqual(['Keep', 'P1']);
    expect(await namesOn(t, 'ticket', b)).toEqual(['P1']);
    expect(await namesOn(t, 'ticket', c)).toEqual(['P2']);
    expect((await svc.api.get(`/v1/tags/${p2.id}`, t.as)).body.usage.tickets).toBe(1);

    // Not exclusive: the group's other labels stay.
    const area = await group(t, { name: 'Area' });
    const x = await tag(t, { name: 'X', group_id: area.id });
    await tag(t, { name: 'Y', group_id: area.id });
    const d = await ticket(t);
    await apply(t, 'ticket', d, { tags: ['source', 'Y'] });
    const source = (await svc.api.get('/v1/tags?q=source', t.as)).body.data[0];
    expect((await svc.api.post(`/v1/tags/${source.id}/merge`, { into: x.id }, t.as)).status).toBe(200);
    expect(await namesOn(t, 'ticket', d)).toEqual(['X', 'Y']);
  });

  it('widens into’s applies_to to the source’s kinds, so no record carries a label that does not apply', async () => {
    const t = await newTenant(svc.api);
    const into = await tag(t, { name: 'Tickets only', applies_to: ['tickets'] });
    const ct = await contact(t);
    await apply(t, 'contact', ct, { tags: ['Person label'] });
    const src = (await svc.api.get('/v1/tags?q=person', t.as)).body.data[0];
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post(`/v1/tags/${src.id}/merge`, { into: into.id }, t.as);
    expect(r.body.applies_to).toEqual(['tickets', 'contacts', 'companies']);
    expect((await eventsAfterOf(svc, t, seq)).map((e) => e.type)).toEqual(['tag.updated', 'tag.merged']);
    expect(await namesOn(t, 'contact', ct)).toEqual(['Tickets only']);
  });

  it('refuses merging into itself or into a label that is not in the workspace (422 at body.into)', async () => {
    const t = await newTenant(svc.api);
    const x = await tag(t, { name: 'X' });
    const foreign = await tag(await newTenant(svc.api), { name: 'Y' });
    expect422(await svc.api.post(`/v1/tags/${x.id}/merge`, { into: x.id }, t.as), 'body.into');
    expect422(await svc.api.post(`/v1/tags/${x.id}/merge`, { into: foreign.id }, t.as), 'body.into');
    expect422(await svc.api.post(`/v1/tags/${x.id}/merge`, { into: randomUUID() }, t.as), 'body.into');
    expect422(await svc.api.post(`/v1/tags/${x.id}/merge`, { into: 'X' }, t.as), 'body.into');
    expect422(await svc.api.post(`/v1/tags/${x.id}/merge`, {}, t.as), 'body.into');
    expect((await svc.api.post(`/v1/tags/${randomUUID()}/merge`, { into: x.id }, t.as)).status).toBe(404);
    expect((await svc.api.get(`/v1/tags/${x.id}`, t.as)).status).toBe(200);
  });
});

describe('reordering labels', () => {
  it('sets each position to its index; tag.updated for the labels that moved; one audit entry', async () => {
    const t = await newTenant(svc.api);
    const a = await tag(t, { name: 'A' });
    const b = await tag(t, { name: 'B' });
    const c = await tag(t, { name: 'C' });
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post('/v1/tags/reorder', { ids: [c.id, a.id.toUpperCase(), b.id] }, t.as);
    expect(r.status).toBe(200);
    expect(r.body.data.map((x: any) => [x.name, x.position])).toEqual([
      ['C', 0],
      ['A', 1],
      ['B', 2],
    ]);
    const events = await eventsAfterOf(svc, t, seq);
    // A was at 0, B at 1, C at 2: every one moved.
    expect(events.map((e) => [e.type, e.data.tag.name])).toEqual([
      ['tag.updated', 'C'],
      ['tag.updated', 'A'],
      ['tag.updated', 'B'],
    ]);
    expect(await auditOf(t, 'tag.reordered')).toHaveLength(1);
    // The same order again moves nothing.
    const seq2 = await latestSeqOf(svc, t);
    expect((await svc.api.post('/v1/tags/reorder', { ids: [c.id, a.id, b.id] }, t.as)).status).toBe(200);
    expect(await eventsAfterOf(svc, t, seq2)).toEqual([]);
  });

  it('needs every label of the workspace exactly once (422 at body.ids)', async () => {
    const t = await newTenant(svc.api);
    const a = await tag(t, { name: 'A' });
    const b = await tag(t, { name: 'B' });
    const foreign = await tag(await newTenant(svc.api), { name: 'F' });
    expect422(await svc.api.post('/v1/tags/reorder', { ids: [b.id] }, t.as), 'body.ids');
    expect422(await svc.api.post('/v1/tags/reorder', { ids: [b.id, a.id, foreign.id] }, t.as), 'body.ids');
    expect422(await svc.api.post('/v1/tags/reorder', { ids: [b.id, foreign.id] }, t.as), 'body.ids');
    expect422(await svc.api.post('/v1/tags/reorder', { ids: [b.id, a.id, a.id] }, t.as), 'body.ids');
    expect422(await svc.api.post('/v1/tags/reorder', { ids: [b.id, a.id.toUpperCase(), a.id] }, t.as), 'body.ids');
    expect422(await svc.api.post('/v1/tags/reorder', { ids: [] }, t.as), 'body.ids');
    expect422(await svc.api.post('/v1/tags/reorder', {}, t.as), 'body.ids');
    const list = (await svc.api.get('/v1/tags', t.as)).body.data;
    expect(list.map((x: any) => [x.name, x.position])).toEqual([
      ['A', 0],
      ['B', 1],
    ]);
    // An empty workspace reorders an empty list.
    expect((await svc.api.post('/v1/tags/reorder', { ids: [] }, (await newTenant(svc.api)).as)).body).toEqual({
      data: [],
    });
  });
});

describe('who may read and change labels', () => {
  it('every member reads; only admins and owners change; keys by scope', async () => {
    const t = await newTenant(svc.api);
    const x = await tag(t, { name: 'X' });
    const y = await tag(t, { name: 'Y' });
    const viewer = await addMember(svc, t, 'viewer');
    const agent = await addMember(svc, t, 'agent');
    const admin = await addMember(svc, t, 'admin');
    for (const who of [viewer, agent]) {
      expect((await svc.api.get('/v1/tags', who.as)).status).toBe(200);
      expect((await svc.api.get(`/v1/tags/${x.id}`, who.as)).status).toBe(200);
    }
    const writes = (as: any) => [
      () => svc.api.post('/v1/tags', { name: 'New' }, as),
      () => svc.api.patch(`/v1/tags/${x.id}`, { color: 'red' }, as),
      () => svc.api.post('/v1/tags/reorder', { ids: [y.id, x.id] }, as),
      () => svc.api.post(`/v1/tags/${x.id}/merge`, { into: y.id }, as),
      () => svc.api.delete(`/v1/tags/${x.id}`, as),
    ];
    for (const who of [viewer, agent]) {
      for (const w of writes(who.as)) {
        const r = await w();
        expect(r.status).toBe(403);
        expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
      }
    }
    for (const scopes of [
      ['settings:read'],
      ['settings:write'],
      ['tickets:read'],
      ['tickets:write'],
      ['contacts:read'],
      ['contacts:write'],
    ]) {
      const key = await newApiKey(svc.api, t, scopes);
      expect((await svc.api.get('/v1/tags', { token: key.key })).status, scopes.join()).toBe(200);
      expect((await svc.api.get(`/v1/tags/${x.id}`, { token: key.key })).status, scopes.join()).toBe(200);
    }
    for (const scopes of [['kb:read', 'kb:write'], ['realtime']]) {
      const key = await newApiKey(svc.api, t, scopes);
      expect((await svc.api.get('/v1/tags', { token: key.key })).status).toBe(403);
    }
    for (const scopes of [['settings:read'], ['tickets:write', 'contacts:write']]) {
      const key = await newApiKey(svc.api, t, scopes);
      for (const w of writes({ token: key.key })) expect((await w()).status).toBe(403);
    }
    const writer = await newApiKey(svc.api, t, ['settings:write']);
    const seq = await latestSeqOf(svc, t);
    const made = await svc.api.post('/v1/tags', { name: 'By key' }, { token: writer.key });
    expect(made.status).toBe(201);
    expect((await auditOf(t, 'tag.created')).at(-1)).toMatchObject({
      actor_type: 'api_key',
      actor_api_key_id: writer.id,
    });
    expect((await eventsAfterOf(svc, t, seq)).map((e) => e.type)).toEqual(['tag.created']);
    // An admin does everything.
    expect((await svc.api.post('/v1/tags', { name: 'By admin' }, admin.as)).status).toBe(201);
    expect((await svc.api.patch(`/v1/tags/${x.id}`, { color: 'red' }, admin.as)).status).toBe(200);
    expect((await svc.api.post(`/v1/tags/${x.id}/merge`, { into: y.id }, admin.as)).status).toBe(200);
    const ids = (await svc.api.get('/v1/tags', admin.as)).body.data.map((l: any) => l.id).reverse();
    expect((await svc.api.post('/v1/tags/reorder', { ids }, admin.as)).status).toBe(200);
    expect((await svc.api.delete(`/v1/tags/${y.id}`, admin.as)).status).toBe(204);
  });

  it('another workspace’s labels answer 404 like missing ones and stay unchanged', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const x = await tag(a, { name: 'Mine' });
    const y = await tag(b, { name: 'Theirs' });
    expect((await svc.api.get(`/v1/tags/${x.id}`, b.as)).status).toBe(404);
    expect((await svc.api.patch(`/v1/tags/${x.id}`, { name: 'Stolen' }, b.as)).status).toBe(404);
    expect((await svc.api.post(`/v1/tags/${x.id}/merge`, { into: y.id }, b.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/tags/${x.id}`, b.as)).status).toBe(404);
    expect((await svc.api.get('/v1/tags', b.as)).body.data.map((t: any) => t.name)).toEqual(['Theirs']);
    expect((await svc.api.get(`/v1/tags/${x.id}`, a.as)).body).toEqual(x);
  });
});
