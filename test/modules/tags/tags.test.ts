// /v1/tags: the Tag shape, name rules (letters of any script, digits, spaces and - _ . / : & + #;
// unique ignoring case), the default colour, limits, list order and filters, usage counts,
// reorder, merge (with exclusive groups), delete, events, audit entries, access and tenant
// isolation; then applyTags / tagRefsOf / tagIdsByName, the functions tickets, contacts and
// companies call inside their own transactions.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultTagColor } from '../../../src/modules/tags/service.js';
import { eventsAfterOf, isErrorBody, latestSeqOf, newTenant, type Service } from '../../support/helpers.js';
import { expect422, ID, refused, TIME, tagsSuite } from './setup.js';

const suite = tagsSuite();
const { db, tag, group, ticket, contact, company, apply, namesOn, auditOf } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

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
