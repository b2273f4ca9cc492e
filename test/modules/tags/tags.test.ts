// /v1/tags: the Tag shape, name rules (letters of any script, digits, spaces and - _ . / : & + #;
// unique ignoring case), the default colour, limits, list order and filters, usage counts,
// reorder, merge (with exclusive groups), delete, events, audit entries, access and tenant
// isolation; then applyTags / tagRefsOf / tagIdsByName, the functions tickets, contacts and
// companies call inside their own transactions.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TagEntity } from '../../../src/modules/tags/kinds.js';
import { applyTags, tagIdsByName, tagRefsOf } from '../../../src/modules/tags/records.js';
import { defaultTagColor } from '../../../src/modules/tags/service.js';
import type { RequestContext, Role, Scope } from '../../../src/platform/http/context.js';
import { ApiError } from '../../../src/platform/http/errors.js';
import { makeCompany, makeContact, makeTicket } from '../../support/builders.js';
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
const db = () => svc.rt.deps.database.db;

async function tag(t: Tenant, body: Record<string, unknown>) {
  const r = await svc.api.post('/v1/tags', body, t.as);
  if (r.status !== 201) throw new Error(`tag: ${r.status} ${r.text}`);
  return r.body;
}
async function group(t: Tenant, body: Record<string, unknown>) {
  const r = await svc.api.post('/v1/tag-groups', body, t.as);
  if (r.status !== 201) throw new Error(`group: ${r.status} ${r.text}`);
  return r.body;
}
async function ticket(t: Tenant): Promise<string> {
  return (await makeTicket(svc.api, t, { subject: 'Hello', body_html: '<p>hi</p>' })).id;
}
async function contact(t: Tenant): Promise<string> {
  return (await makeContact(svc.api, t, { name: 'Cora' })).id;
}
async function company(t: Tenant): Promise<string> {
  return (await makeCompany(svc.api, t)).id;
}

/** A request context as a route would build it. */
function ctxOf(t: Tenant, role: Role | null = 'owner', scopes: Scope[] | null = null): RequestContext {
  return {
    workspaceId: t.workspaceId,
    actor:
      role === null
        ? { kind: 'api_key' as const, apiKeyId: randomUUID(), createdBy: null }
        : { kind: 'member' as const, userId: t.owner.userId, sessionId: randomUUID() },
    role,
    scopes: role === null ? (scopes ?? []) : null,
    teams: [],
    ip: '127.0.0.1',
  };
}

type Input = { tags?: string[]; add_tags?: string[]; remove_tags?: string[] };
const apply = (t: Tenant, entity: TagEntity, id: string, input: Input, ctx = ctxOf(t)) =>
  svc.rt.deps.writer.run(t.workspaceId, (u) => applyTags(u, ctx, { entity, id }, input));

/** The names on a record, by name. */
async function namesOn(t: Tenant, entity: TagEntity, id: string): Promise<string[]> {
  return ((await tagRefsOf(db(), t.workspaceId, entity, [id])).get(id) ?? []).map((r) => r.name);
}

async function refused(work: Promise<unknown>, status: number, code: string, location?: string) {
  const err = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'expected an ApiError').toBeInstanceOf(ApiError);
  const e = err as ApiError;
  expect(e.status).toBe(status);
  expect(e.code).toBe(code);
  if (location !== undefined) expect(e.errors?.[0]?.location).toBe(location);
  return e;
}

async function auditOf(t: Tenant, action: string) {
  return db()
    .selectFrom('audit_logs')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .where('action', '=', action)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

const expect422 = (r: { status: number; body: any }, location: string, code = 'validation_failed') => {
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(isErrorBody(r.body, 422, code)).toBe(true);
  expect(r.body.errors?.[0]?.location).toBe(location);
};

describe('creating and reading labels', () => {
  it('creates a label (201) with the spec shape, defaults, tag.created and an audit entry', async () => {
    const t = await newTenant(svc.api);
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post('/v1/tags', { name: '  Billing  ' }, t.as);
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/tags/${r.body.id}`);
    expect(r.body).toEqual({
      id: expect.stringMatching(ID),
      name: 'Billing',
      description: '',
      color: defaultTagColor('Billing'),
      group_id: null,
      position: 0,
      archived: false,
      applies_to: ['tickets', 'contacts', 'companies'],
      usage: { tickets: 0, contacts: 0, companies: 0 },
      created_at: expect.stringMatching(TIME),
      updated_at: expect.stringMatching(TIME),
    });
    expect(Object.keys(r.body)).toHaveLength(11);

    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['tag.created']);
    expect(events[0].data).toEqual({ tag: r.body });
    const audit = await auditOf(t, 'tag.created');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ entity_type: 'tag', entity_id: r.body.id, actor_user_id: t.owner.userId });

    // Every field given; position defaults to the end.
    const g = await group(t, { name: 'Plan' });
    const full = await tag(t, {
      name: 'Enterprise',
      color: 'violet',
      description: 'Big customers',
      group_id: g.id.toUpperCase(),
      applies_to: ['companies', 'contacts'],
    });
    expect(full).toMatchObject({
      name: 'Enterprise',
      color: 'violet',
      description: 'Big customers',
      group_id: g.id,
      applies_to: ['contacts', 'companies'],
      position: 1,
    });
    expect((await tag(t, { name: 'Third', position: 7 })).position).toBe(7);
    expect((await tag(t, { name: 'Fourth' })).position).toBe(8);

    const got = await svc.api.get(`/v1/tags/${full.id}`, t.as);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(full);
    expect((await svc.api.get(`/v1/tags/${full.id.toUpperCase()}`, t.as)).body).toEqual(full);
    expect((await svc.api.get(`/v1/tags/${randomUUID()}`, t.as)).status).toBe(404);
    expect((await svc.api.get('/v1/tags/not-an-id', t.as)).status).toBe(404);
  });

  it('accepts letters of any script, digits, spaces and - _ . / : & + #, 1 to 50 characters', async () => {
    const t = await newTenant(svc.api);
    for (const name of [
      'Größe',
      'Ошибка оплаты',
      '日本語',
      'عربي ٣',
      'हिन्दी',
      'v1.2/x:y & z+#_-',
      'a'.repeat(50),
      '7',
    ]) {
      const r = await svc.api.post('/v1/tags', { name }, t.as);
      expect(r.status, `${name}: ${r.text}`).toBe(201);
      expect(r.body.name).toBe(name);
    }
  });

  it('refuses names of 51 characters, forbidden characters, blank names (422 at body.name)', async () => {
    const t = await newTenant(svc.api);
    for (const name of ['a'.repeat(51), '<b>', 'semi;colon', 'fire 🔥', 'tab\there', 'line\nbreak', '   ', '', 'a"b']) {
      expect422(await svc.api.post('/v1/tags', { name }, t.as), 'body.name');
    }
    // After trimming, 50 characters are fine.
    expect((await svc.api.post('/v1/tags', { name: ` ${'b'.repeat(48)} ` }, t.as)).status).toBe(201);
    const ok = await tag(t, { name: 'Fine' });
    expect422(await svc.api.patch(`/v1/tags/${ok.id}`, { name: '<script>' }, t.as), 'body.name');
    expect422(await svc.api.patch(`/v1/tags/${ok.id}`, { name: 'x'.repeat(51) }, t.as), 'body.name');
  });

  it('answers 409 conflict for a name taken in another case, on create and rename', async () => {
    const t = await newTenant(svc.api);
    await tag(t, { name: 'Refund' });
    const other = await tag(t, { name: 'Other' });
    for (const name of ['refund', 'REFUND', ' Refund ']) {
      const r = await svc.api.post('/v1/tags', { name }, t.as);
      expect(r.status).toBe(409);
      expect(isErrorBody(r.body, 409, 'conflict')).toBe(true);
    }
    const rename = await svc.api.patch(`/v1/tags/${other.id}`, { name: 'rEfUnD' }, t.as);
    expect(rename.status).toBe(409);
    expect(isErrorBody(rename.body, 409, 'conflict')).toBe(true);
    // Changing only the case of its own name is a rename.
    const own = await svc.api.patch(`/v1/tags/${other.id}`, { name: 'OTHER' }, t.as);
    expect(own.status).toBe(200);
    expect(own.body.name).toBe('OTHER');
    // Another workspace may use the same name.
    expect((await svc.api.post('/v1/tags', { name: 'refund' }, (await newTenant(svc.api)).as)).status).toBe(201);
  });

  it('picks the default colour from the name: the same name gets the same colour in every workspace', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const names = ['Bug', 'Feature request', 'VIP', 'Urgent', 'Billing', 'Shipping', 'Спам', 'Refund'];
    const colours = new Set<string>();
    for (const name of names) {
      const x = await tag(a, { name });
      const y = await tag(b, { name: name.toUpperCase() });
      expect(x.color).toBe(y.color);
      expect(x.color).toBe(defaultTagColor(name));
      colours.add(x.color);
    }
    // A hash over the palette, not one fixed colour.
    expect(colours.size).toBeGreaterThan(2);
    expect(defaultTagColor('Bug')).toBe(defaultTagColor('bug'));
  });

  it('checks the other fields: description, colour, group, applies_to, position, archived only on PATCH', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const foreignGroup = await group(other, { name: 'Theirs' });
    expect422(await svc.api.post('/v1/tags', { name: 'A', description: 'd'.repeat(301) }, t.as), 'body.description');
    expect((await svc.api.post('/v1/tags', { name: 'A0', description: 'd'.repeat(300) }, t.as)).status).toBe(201);
    expect422(await svc.api.post('/v1/tags', { name: 'B', color: 'black' }, t.as), 'body.color');
    expect422(await svc.api.post('/v1/tags', { name: 'C', group_id: foreignGroup.id }, t.as), 'body.group_id');
    expect422(await svc.api.post('/v1/tags', { name: 'C', group_id: randomUUID() }, t.as), 'body.group_id');
    expect422(await svc.api.post('/v1/tags', { name: 'C', group_id: 'nope' }, t.as), 'body.group_id');
    expect422(await svc.api.post('/v1/tags', { name: 'D', applies_to: [] }, t.as), 'body.applies_to');
    expect422(await svc.api.post('/v1/tags', { name: 'D', applies_to: ['users'] }, t.as), 'body.applies_to.0');
    expect422(await svc.api.post('/v1/tags', { name: 'E', archived: true }, t.as), 'body.archived');
    expect422(await svc.api.post('/v1/tags', { name: 'F', position: -1 }, t.as), 'body.position');
    expect422(await svc.api.post('/v1/tags', { name: 'G', usage: {} }, t.as), 'body.usage');
    expect422(await svc.api.post('/v1/tags', {}, t.as), 'body.name');
    // None of them created anything.
    expect((await svc.api.get('/v1/tags', t.as)).body.data.map((x: any) => x.name)).toEqual(['A0']);
  });

  it('refuses the 1001st label of a workspace (422)', async () => {
    const t = await newTenant(svc.api);
    await sql`
      INSERT INTO tags (workspace_id, id, name, color, position)
      SELECT ${t.workspaceId}::uuid, gen_random_uuid(), 'label ' || i, 'gray', i FROM generate_series(1, 1000) AS i`.execute(
      db(),
    );
    const r = await svc.api.post('/v1/tags', { name: 'One too many' }, t.as);
    expect422(r, 'body');
    // Labels created by naming them on a record count too.
    const tk = await ticket(t);
    await refused(apply(t, 'ticket', tk, { add_tags: ['Also too many'] }), 422, 'validation_failed', 'body.add_tags');
    // Existing labels still apply.
    await apply(t, 'ticket', tk, { add_tags: ['LABEL 7'] });
    expect(await namesOn(t, 'ticket', tk)).toEqual(['label 7']);
    // After a delete there is room again.
    const list = await svc.api.get('/v1/tags?q=label%201000', t.as);
    expect((await svc.api.delete(`/v1/tags/${list.body.data[0].id}`, t.as)).status).toBe(204);
    expect((await svc.api.post('/v1/tags', { name: 'One too many' }, t.as)).status).toBe(201);
  });
});

describe('the label list', () => {
  it('orders by group position (ungrouped last), then position, then name', async () => {
    const t = await newTenant(svc.api);
    const g1 = await group(t, { name: 'First group' });
    const g2 = await group(t, { name: 'Second group' });
    await tag(t, { name: 'loose b', position: 0 });
    await tag(t, { name: 'Loose a', position: 0 });
    await tag(t, { name: 'g2 x', group_id: g2.id, position: 0 });
    await tag(t, { name: 'g1 late', group_id: g1.id, position: 9 });
    await tag(t, { name: 'g1 early', group_id: g1.id, position: 1 });
    await tag(t, { name: 'g1 same b', group_id: g1.id, position: 5 });
    await tag(t, { name: 'G1 same a', group_id: g1.id, position: 5 });
    const names = async () => (await svc.api.get('/v1/tags', t.as)).body.data.map((x: any) => x.name);
    expect(await names()).toEqual(['g1 early', 'G1 same a', 'g1 same b', 'g1 late', 'g2 x', 'Loose a', 'loose b']);
    // Moving the groups moves their labels.
    expect((await svc.api.post('/v1/tag-groups/reorder', { ids: [g2.id, g1.id] }, t.as)).status).toBe(200);
    expect(await names()).toEqual(['g2 x', 'g1 early', 'G1 same a', 'g1 same b', 'g1 late', 'Loose a', 'loose b']);
    // The complete list: no pages.
    const r = await svc.api.get('/v1/tags', t.as);
    expect(Object.keys(r.body)).toEqual(['data']);
  });

  it('filters by q, group_id (an id or none), archived (true, false, any) and applies_to', async () => {
    const t = await newTenant(svc.api);
    const g = await group(t, { name: 'Plans' });
    const a = await tag(t, { name: 'Plan Free', group_id: g.id });
    const b = await tag(t, { name: 'plan paid', group_id: g.id, applies_to: ['companies'] });
    const c = await tag(t, { name: 'snake_case', applies_to: ['tickets'] });
    const d = await tag(t, { name: 'Old plan' });
    await svc.api.patch(`/v1/tags/${d.id}`, { archived: true }, t.as);
    const ids = async (query: string) => {
      const r = await svc.api.get(`/v1/tags${query}`, t.as);
      expect(r.status, r.text).toBe(200);
      return r.body.data.map((x: any) => x.id);
    };
    expect(await ids('')).toEqual([a.id, b.id, c.id, d.id]);
    expect(await ids('?q=PLAN')).toEqual([a.id, b.id, d.id]);
    // % and _ are taken literally.
    expect(await ids('?q=E_C')).toEqual([c.id]);
    expect(await ids('?q=%25')).toEqual([]);
    expect(await ids('?q=plan_')).toEqual([]);
    expect(await ids(`?group_id=${g.id}`)).toEqual([a.id, b.id]);
    expect(await ids(`?group_id=${g.id.toUpperCase()}`)).toEqual([a.id, b.id]);
    expect(await ids(`?group_id=${randomUUID()}`)).toEqual([]);
    expect(await ids('?group_id=none')).toEqual([c.id, d.id]);
    expect(await ids('?archived=true')).toEqual([d.id]);
    expect(await ids('?archived=false')).toEqual([a.id, b.id, c.id]);
    expect(await ids('?archived=any')).toEqual([a.id, b.id, c.id, d.id]);
    expect(await ids('?applies_to=tickets')).toEqual([a.id, c.id, d.id]);
    expect(await ids('?applies_to=companies&q=plan&archived=false')).toEqual([a.id, b.id]);

    expect422(await svc.api.get('/v1/tags?archived=maybe', t.as), 'query.archived');
    expect422(await svc.api.get('/v1/tags?group_id=abc', t.as), 'query.group_id');
    expect422(await svc.api.get('/v1/tags?applies_to=users', t.as), 'query.applies_to');
    expect422(await svc.api.get('/v1/tags?limit=5', t.as), 'query.limit');
  });

  it('counts usage on tickets (deleted ones left out), contacts and companies', async () => {
    const t = await newTenant(svc.api);
    const [t1, t2, t3] = [await ticket(t), await ticket(t), await ticket(t)];
    const [c1, c2] = [await contact(t), await contact(t)];
    const co = await company(t);
    await apply(t, 'ticket', t1, { tags: ['VIP', 'Bug'] });
    await apply(t, 'ticket', t2, { tags: ['vip'] });
    await apply(t, 'ticket', t3, { tags: ['VIP'] });
    await apply(t, 'contact', c1, { tags: ['VIP'] });
    await apply(t, 'contact', c2, { tags: ['VIP'] });
    await apply(t, 'company', co, { tags: ['VIP', 'Bug'] });
    await db()
      .updateTable('tickets')
      .set({ deleted_at: new Date() })
      .where('workspace_id', '=', t.workspaceId)
      .where('id', '=', t3)
      .execute();
    const list = (await svc.api.get('/v1/tags', t.as)).body.data;
    const usage = Object.fromEntries(list.map((x: any) => [x.name, x.usage]));
    expect(usage).toEqual({
      Bug: { tickets: 1, contacts: 0, companies: 1 },
      VIP: { tickets: 2, contacts: 2, companies: 1 },
    });
    const vip = list.find((x: any) => x.name === 'VIP');
    expect((await svc.api.get(`/v1/tags/${vip.id}`, t.as)).body.usage).toEqual(usage.VIP);
    // A filtered list counts the same way.
    expect((await svc.api.get('/v1/tags?q=vi', t.as)).body.data[0].usage).toEqual(usage.VIP);
  });
});

describe('changing labels', () => {
  it('PATCH changes fields with tag.updated and an audit entry; a PATCH that changes nothing emits nothing', async () => {
    const t = await newTenant(svc.api);
    const g = await group(t, { name: 'Area' });
    const x = await tag(t, { name: 'Login', color: 'red' });
    let seq = await latestSeqOf(svc, t);
    const r = await svc.api.patch(
      `/v1/tags/${x.id}`,
      {
        name: 'Sign-in',
        color: 'blue',
        description: 'Sign-in trouble',
        group_id: g.id,
        applies_to: ['tickets'],
        position: 4,
        archived: true,
      },
      t.as,
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: x.id,
      name: 'Sign-in',
      color: 'blue',
      description: 'Sign-in trouble',
      group_id: g.id,
      applies_to: ['tickets'],
      position: 4,
      archived: true,
      created_at: x.created_at,
    });
    expect(r.body.updated_at >= x.updated_at).toBe(true);
    let events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['tag.updated']);
    expect(events[0].data).toEqual({ tag: r.body });
    const audit = await auditOf(t, 'tag.updated');
    expect(audit).toHaveLength(1);
    expect((audit[0]!.data as any).name).toEqual({ from: 'Login', to: 'Sign-in' });

    seq = await latestSeqOf(svc, t);
    const same = await svc.api.patch(
      `/v1/tags/${x.id}`,
      { name: 'Sign-in', color: 'blue', group_id: g.id, applies_to: ['tickets'], archived: true },
      t.as,
    );
    expect(same.status).toBe(200);
    expect(same.body).toEqual(r.body);
    expect(await eventsAfterOf(svc, t, seq)).toEqual([]);
    expect(await auditOf(t, 'tag.updated')).toHaveLength(1);

    // Ungroup, unarchive.
    const back = await svc.api.patch(`/v1/tags/${x.id}`, { group_id: null, archived: false }, t.as);
    expect(back.body).toMatchObject({ group_id: null, archived: false });
    events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['tag.updated']);
    expect422(await svc.api.patch(`/v1/tags/${x.id}`, { group_id: randomUUID() }, t.as), 'body.group_id');
    expect((await svc.api.patch(`/v1/tags/${randomUUID()}`, { name: 'X' }, t.as)).status).toBe(404);
  });

  it('a rename renames the label in the views that filter by it', async () => {
    const t = await newTenant(svc.api);
    const x = await tag(t, { name: 'Old name' });
    const view = randomUUID();
    await db()
      .insertInto('views')
      .values({
        workspace_id: t.workspaceId,
        id: view,
        name: 'V',
        shared: true,
        filters: JSON.stringify({ tag: 'old NAME' }),
      })
      .execute();
    expect((await svc.api.patch(`/v1/tags/${x.id}`, { name: 'New name' }, t.as)).status).toBe(200);
    const row = await db().selectFrom('views').select('filters').where('id', '=', view).executeTakeFirstOrThrow();
    expect((row.filters as any).tag).toBe('New name');
  });

  it('DELETE removes the label from every record, with tag.deleted {tag_id} and an audit entry', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t);
    const ct = await contact(t);
    const co = await company(t);
    for (const [entity, id] of [
      ['ticket', tk],
      ['contact', ct],
      ['company', co],
    ] as const) {
      await apply(t, entity, id, { tags: ['Gone', 'Kept'] });
    }
    const gone = (await svc.api.get('/v1/tags?q=gone', t.as)).body.data[0];
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.delete(`/v1/tags/${gone.id}`, t.as);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Kept']);
    expect(await namesOn(t, 'contact', ct)).toEqual(['Kept']);
    expect(await namesOn(t, 'company', co)).toEqual(['Kept']);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => [e.type, e.data])).toEqual([['tag.deleted', { tag_id: gone.id }]]);
    const audit = await auditOf(t, 'tag.deleted');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ entity_id: gone.id });
    expect((audit[0]!.data as any).name).toBe('Gone');
    expect((await svc.api.get(`/v1/tags/${gone.id}`, t.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/tags/${gone.id}`, t.as)).status).toBe(404);
  });
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

describe('applyTags, tagRefsOf, tagIdsByName', () => {
  it('tags replaces, add_tags adds, remove_tags removes, by name (trimmed, ignoring case)', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t);
    await tag(t, { name: 'Billing' });
    const seq = await latestSeqOf(svc, t);
    let r = await apply(t, 'ticket', tk, { tags: [' billing ', 'New one', 'BILLING'] });
    expect(r.added.map((x) => x.name)).toEqual(['New one', 'Billing']);
    expect(r.removed).toEqual([]);
    expect(r.added[0]).toEqual({
      id: expect.stringMatching(ID),
      name: 'New one',
      color: defaultTagColor('New one'),
      group_id: null,
    });
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Billing', 'New one']);
    // The unknown name created a label, with tag.created.
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => [e.type, e.data.tag?.name])).toEqual([['tag.created', 'New one']]);
    expect(events[0].data.tag).toMatchObject({ applies_to: ['tickets', 'contacts', 'companies'], position: 1 });

    r = await apply(t, 'ticket', tk, { add_tags: ['third'], remove_tags: ['NEW ONE', 'never existed'] });
    expect(r.added.map((x) => x.name)).toEqual(['third']);
    expect(r.removed.map((x) => x.name)).toEqual(['New one']);
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Billing', 'third']);
    r = await apply(t, 'ticket', tk, { add_tags: ['Billing'] });
    expect(r).toEqual({ added: [], removed: [] });
    r = await apply(t, 'ticket', tk, { tags: [] });
    expect(r.removed.map((x) => x.name)).toEqual(['Billing', 'third']);
    expect(await namesOn(t, 'ticket', tk)).toEqual([]);
    expect(await apply(t, 'ticket', tk, {})).toEqual({ added: [], removed: [] });

    // Contacts and companies the same way.
    const ct = await contact(t);
    const co = await company(t);
    await apply(t, 'contact', ct, { add_tags: ['Billing'] });
    await apply(t, 'company', co, { tags: ['billing', 'Partner'] });
    expect(await namesOn(t, 'contact', ct)).toEqual(['Billing']);
    expect(await namesOn(t, 'company', co)).toEqual(['Billing', 'Partner']);
  });

  it('refuses tags together with add_tags or remove_tags, bad names, and a missing record', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t);
    await refused(apply(t, 'ticket', tk, { tags: ['a'], add_tags: ['b'] }), 422, 'validation_failed', 'body.tags');
    await refused(apply(t, 'ticket', tk, { tags: ['a'], remove_tags: [] }), 422, 'validation_failed', 'body.tags');
    await refused(apply(t, 'ticket', tk, { tags: ['<b>'] }), 422, 'validation_failed', 'body.tags');
    await refused(
      apply(t, 'ticket', tk, { add_tags: ['ok', 'x'.repeat(51)] }),
      422,
      'validation_failed',
      'body.add_tags',
    );
    await refused(apply(t, 'ticket', tk, { add_tags: ['🔥'] }), 422, 'validation_failed', 'body.add_tags');
    await refused(apply(t, 'ticket', tk, { remove_tags: ['a;b'] }), 422, 'validation_failed', 'body.remove_tags');
    await refused(apply(t, 'ticket', tk, { add_tags: [' '] }), 422, 'validation_failed', 'body.add_tags');
    await refused(apply(t, 'ticket', tk, { add_tags: ['Same'], remove_tags: ['same'] }), 422, 'validation_failed');
    await refused(apply(t, 'ticket', randomUUID(), { tags: ['a'] }), 404, 'not_found');
    const other = await newTenant(svc.api);
    await refused(apply(t, 'ticket', await ticket(other), { tags: ['a'] }), 404, 'not_found');
    // Nothing was created by the refused writes.
    expect((await svc.api.get('/v1/tags', t.as)).body.data).toEqual([]);
    // A nested location is kept as given.
    const e = await refused(
      svc.rt.deps.writer.run(t.workspaceId, (u) =>
        applyTags(u, ctxOf(t), { entity: 'ticket', id: tk }, { tags: ['<'] }, { at: 'body.patch' }),
      ),
      422,
      'validation_failed',
      'body.patch.tags',
    );
    expect(e.detail).toContain('body.patch.tags');
  });

  it('label_creation admins: unknown names answer 422 unknown_label unless the caller is an admin or a settings:write key', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t);
    await tag(t, { name: 'Known' });
    expect((await svc.api.patch('/v1/workspace', { settings: { label_creation: 'admins' } }, t.as)).status).toBe(200);
    for (const ctx of [ctxOf(t, 'agent'), ctxOf(t, 'viewer'), ctxOf(t, null, ['tickets:write', 'settings:read'])]) {
      const e = await refused(
        apply(t, 'ticket', tk, { add_tags: ['Known', 'Brand new'] }, ctx),
        422,
        'unknown_label',
        'body.add_tags',
      );
      expect(e.errors?.[0]?.message).toContain('Brand new');
      await refused(apply(t, 'ticket', tk, { tags: ['Brand new'] }, ctx), 422, 'unknown_label', 'body.tags');
      // Existing labels are fine.
      await apply(t, 'ticket', tk, { tags: ['known'] }, ctx);
    }
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Known']);
    for (const [ctx, name] of [
      [ctxOf(t, 'admin'), 'By admin'],
      [ctxOf(t, 'owner'), 'By owner'],
      [ctxOf(t, null, ['settings:write']), 'By key'],
    ] as const) {
      expect((await apply(t, 'ticket', tk, { add_tags: [name] }, ctx)).added.map((x) => x.name)).toEqual([name]);
    }
    // Back to all: anyone who may change the record creates labels.
    await svc.api.patch('/v1/workspace', { settings: { label_creation: 'all' } }, t.as);
    expect((await apply(t, 'ticket', tk, { add_tags: ['By agent'] }, ctxOf(t, 'agent'))).added).toHaveLength(1);
  });

  it('refuses a label whose applies_to omits the record’s kind, and an archived label newly applied', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t);
    const ct = await contact(t);
    await tag(t, { name: 'Companies only', applies_to: ['companies'] });
    await refused(apply(t, 'ticket', tk, { add_tags: ['companies only'] }), 422, 'validation_failed', 'body.add_tags');
    await refused(apply(t, 'contact', ct, { tags: ['Companies only'] }), 422, 'validation_failed', 'body.tags');

    const old = await tag(t, { name: 'Old' });
    await apply(t, 'ticket', tk, { tags: ['Old', 'Fresh'] });
    await svc.api.patch(`/v1/tags/${old.id}`, { archived: true }, t.as);
    // It stays on the record through a replace that keeps it, and may be removed.
    await apply(t, 'ticket', tk, { tags: ['Old', 'Fresh', 'More'] });
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Fresh', 'More', 'Old']);
    await apply(t, 'ticket', tk, { add_tags: ['old'] });
    await refused(
      apply(t, 'ticket', await ticket(t), { add_tags: ['Old'] }),
      422,
      'validation_failed',
      'body.add_tags',
    );
    await refused(apply(t, 'contact', ct, { tags: ['Old'] }), 422, 'validation_failed', 'body.tags');
    const r = await apply(t, 'ticket', tk, { remove_tags: ['Old'] });
    expect(r.removed.map((x) => x.name)).toEqual(['Old']);
    await refused(apply(t, 'ticket', tk, { add_tags: ['Old'] }), 422, 'validation_failed', 'body.add_tags');
    // Narrowing applies_to keeps the label where it already is.
    const fresh = (await svc.api.get('/v1/tags?q=fresh', t.as)).body.data[0];
    await svc.api.patch(`/v1/tags/${fresh.id}`, { applies_to: ['contacts'] }, t.as);
    await apply(t, 'ticket', tk, { tags: ['Fresh'] });
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Fresh']);
  });

  it('exclusive groups: adding one removes the others, the last named wins, turning exclusive changes nothing', async () => {
    const t = await newTenant(svc.api);
    const prio = await group(t, { name: 'Priority', exclusive: true });
    for (const name of ['P1', 'P2', 'P3']) await tag(t, { name, group_id: prio.id });
    const tk = await ticket(t);
    await apply(t, 'ticket', tk, { tags: ['P1', 'Other'] });
    let r = await apply(t, 'ticket', tk, { add_tags: ['P2'] });
    expect(r.added.map((x) => x.name)).toEqual(['P2']);
    expect(r.removed.map((x) => x.name)).toEqual(['P1']);
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Other', 'P2']);
    r = await apply(t, 'ticket', tk, { add_tags: ['P1', 'P3'] });
    expect(r.added.map((x) => x.name)).toEqual(['P3']);
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Other', 'P3']);
    await apply(t, 'ticket', tk, { tags: ['P3', 'P1', 'Other', 'P2', 'P1'] });
    expect(await namesOn(t, 'ticket', tk)).toEqual(['Other', 'P1']);

    // A group that is not exclusive holds several; turning it exclusive leaves records as they are
    // until their labels change.
    const area = await group(t, { name: 'Area' });
    for (const name of ['A1', 'A2', 'A3']) await tag(t, { name, group_id: area.id });
    const other = await ticket(t);
    await apply(t, 'ticket', other, { tags: ['A1', 'A2'] });
    expect((await svc.api.patch(`/v1/tag-groups/${area.id}`, { exclusive: true }, t.as)).status).toBe(200);
    expect(await namesOn(t, 'ticket', other)).toEqual(['A1', 'A2']);
    await apply(t, 'ticket', other, { add_tags: ['Unrelated'] });
    expect(await namesOn(t, 'ticket', other)).toEqual(['A1', 'A2', 'Unrelated']);
    r = await apply(t, 'ticket', other, { add_tags: ['A3'] });
    expect(r.removed.map((x) => x.name)).toEqual(['A1', 'A2']);
    expect(await namesOn(t, 'ticket', other)).toEqual(['A3', 'Unrelated']);
  });

  it('holds at most 50 labels per record (422)', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t);
    const names = Array.from({ length: 50 }, (_, i) => `L${i}`);
    await apply(t, 'ticket', tk, { tags: names });
    expect(await namesOn(t, 'ticket', tk)).toHaveLength(50);
    await refused(apply(t, 'ticket', tk, { add_tags: ['L50'] }), 422, 'validation_failed', 'body.add_tags');
    await refused(apply(t, 'ticket', tk, { tags: [...names, 'L50'] }), 422, 'validation_failed', 'body.tags');
    // Swapping one for another is fine.
    await apply(t, 'ticket', tk, { add_tags: ['L50'], remove_tags: ['L0'] });
    expect(await namesOn(t, 'ticket', tk)).toHaveLength(50);
    // The refused writes created nothing (L50 exists once, from the last write).
    expect((await svc.api.get('/v1/tags', t.as)).body.data).toHaveLength(51);
  });

  it('concurrent writes naming one new label create it once', async () => {
    const t = await newTenant(svc.api);
    const ids = await Promise.all(Array.from({ length: 6 }, () => ticket(t)));
    await Promise.all(ids.map((id, i) => apply(t, 'ticket', id, { add_tags: [i % 2 ? 'Race' : 'RACE', `own ${i}`] })));
    const list = (await svc.api.get('/v1/tags?q=race', t.as)).body.data;
    expect(list).toHaveLength(1);
    expect(['Race', 'RACE']).toContain(list[0].name);
    expect(list[0].usage.tickets).toBe(6);
    // And concurrent changes of one record all land.
    const one = ids[0]!;
    await Promise.all(['c1', 'c2', 'c3', 'c4'].map((n) => apply(t, 'ticket', one, { add_tags: [n] })));
    expect(await namesOn(t, 'ticket', one)).toEqual(['c1', 'c2', 'c3', 'c4', 'own 0', list[0].name]);
  });

  it('tagRefsOf: each record’s TagRefs by name in one map; tagIdsByName: case-insensitive', async () => {
    const t = await newTenant(svc.api);
    const g = await group(t, { name: 'G' });
    await tag(t, { name: 'beta', group_id: g.id, color: 'teal' });
    const [a, b, c] = [await ticket(t), await ticket(t), await ticket(t)];
    await apply(t, 'ticket', a, { tags: ['beta', 'Alpha', 'gamma'] });
    await apply(t, 'ticket', b, { tags: ['Alpha'] });
    const map = await tagRefsOf(db(), t.workspaceId, 'ticket', [a, b, c.toUpperCase()]);
    expect([...map.keys()].sort()).toEqual([a, b, c].sort());
    expect(map.get(a)!.map((r) => r.name)).toEqual(['Alpha', 'beta', 'gamma']);
    expect(map.get(a)![1]).toEqual({ id: expect.stringMatching(ID), name: 'beta', color: 'teal', group_id: g.id });
    expect(map.get(b)!.map((r) => r.name)).toEqual(['Alpha']);
    expect(map.get(c)).toEqual([]);
    expect(await tagRefsOf(db(), t.workspaceId, 'contact', [])).toEqual(new Map());
    // Another workspace sees none of them.
    const other = await newTenant(svc.api);
    expect((await tagRefsOf(db(), other.workspaceId, 'ticket', [a])).get(a)).toEqual([]);

    const alpha = map.get(a)![0]!.id;
    expect(await tagIdsByName(db(), t.workspaceId, 'ALPHA')).toBe(alpha);
    expect(await tagIdsByName(db(), t.workspaceId, '  alpha ')).toBe(alpha);
    expect(await tagIdsByName(db(), t.workspaceId, 'alp')).toBeNull();
    expect(await tagIdsByName(db(), other.workspaceId, 'Alpha')).toBeNull();
  });
});
