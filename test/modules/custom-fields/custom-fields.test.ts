// Custom fields: definitions (immutable entity/key/type, key from the name, options, limits,
// archive, reorder, delete), values on tickets, contacts and companies (every type validated and
// normalised, clearing, undefined keys, archived fields, field_changed activities), removed
// options and deleted fields clearing stored values, required_on_solve on PATCH, bulk and
// reply-with-status (not on merge), and the field filters and sorts of the three lists.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTicket } from '../../support/builders.js';
import {
  addMember,
  eventsAfterOf,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
  startService,
  type Tenant,
  unique,
} from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

const api = () => svc.api;
async function field(t: Tenant, body: Record<string, unknown>) {
  const r = await api().post('/v1/custom-fields', { entity: 'ticket', ...body }, t.as);
  expect(r.status, r.text).toBe(201);
  return r.body;
}
const ticket = (t: Tenant, body: Record<string, unknown> = {}) =>
  makeTicket(api(), t, { subject: 'Order problem', ...body });
const ids = (r: any) => r.body.data.map((x: any) => x.number ?? x.id);

describe('definitions', () => {
  it('creates with a key from the name, default option ids and colours; reads, lists in order', async () => {
    const t = await newTenant(api());
    const seq = await latestSeqOf(svc, t);
    const f = await field(t, {
      type: 'select',
      name: 'Plan Tier (2026)',
      options: [{ label: 'Gold Plus' }, { label: 'Silver', color: 'blue' }, { id: 'bronze', label: 'Bronze' }],
      description: 'What they pay for',
      required_on_solve: true,
    });
    expect(f).toMatchObject({
      entity: 'ticket',
      key: 'plan_tier_2026',
      name: 'Plan Tier (2026)',
      type: 'select',
      options: [
        { id: 'gold-plus', label: 'Gold Plus', color: 'gray' },
        { id: 'silver', label: 'Silver', color: 'blue' },
        { id: 'bronze', label: 'Bronze', color: 'gray' },
      ],
      required_on_solve: true,
      description: 'What they pay for',
      position: 0,
      archived: false,
    });
    const c = await field(t, { entity: 'contact', type: 'text', name: 'Nickname' });
    const second = await field(t, { type: 'number', name: 'Seats' });
    expect(second.position).toBe(1);
    expect((await api().get(`/v1/custom-fields/${f.id}`, t.as)).body).toEqual(f);
    const list = await api().get('/v1/custom-fields', t.as);
    expect(list.body.data.map((x: any) => x.key)).toEqual(['plan_tier_2026', 'seats', 'nickname']);
    expect((await api().get('/v1/custom-fields?entity=contact', t.as)).body.data.map((x: any) => x.id)).toEqual([c.id]);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['custom_field.created', 'custom_field.created', 'custom_field.created']);
    const audit = await api().get('/v1/audit-logs?action=custom_field.created', t.as);
    expect(audit.body.data).toHaveLength(3);
    // Readable by viewers and keys with tickets:read; written only by admins and settings:write.
    const viewer = await addMember(svc, t, 'viewer');
    const agent = await addMember(svc, t, 'agent');
    const readKey = await newApiKey(api(), t, ['tickets:read']);
    expect((await api().get('/v1/custom-fields', viewer.as)).status).toBe(200);
    expect((await api().get('/v1/custom-fields', { token: readKey.key })).status).toBe(200);
    expect(
      (await api().post('/v1/custom-fields', { entity: 'ticket', type: 'text', name: 'X' }, agent.as)).status,
    ).toBe(403);
    expect((await api().patch(`/v1/custom-fields/${f.id}`, { name: 'Y' }, { token: readKey.key })).status).toBe(403);
  });

  it('refuses bad definitions with the exact status and location', async () => {
    const t = await newTenant(api());
    await field(t, { type: 'text', name: 'Order', key: 'order_no' });
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ type: 'text', name: 'Other', key: 'order_no' }, 409, ''],
      [{ type: 'text', name: 'Order No', key: 'Bad-Key' }, 422, 'body.key'],
      [{ type: 'text', name: 'x', key: '1abc' }, 422, 'body.key'],
      [{ type: 'text', name: 'a'.repeat(61) }, 422, 'body.name'],
      [{ type: 'text', name: 'Evil <b>' }, 422, 'body.name'],
      [{ type: 'text', name: '!!!' }, 422, 'body.key'],
      [{ type: 'colour', name: 'x' }, 422, 'body.type'],
      [{ type: 'text', name: 'Opt', options: [{ label: 'a' }] }, 422, 'body.options'],
      [{ type: 'select', name: 'Dup', options: [{ label: 'A' }, { label: 'a' }] }, 422, 'body.options.1.id'],
      [
        { type: 'select', name: 'Many', options: Array.from({ length: 201 }, (_, i) => ({ label: `o${i}` })) },
        422,
        'body.options',
      ],
      [{ entity: 'contact', type: 'text', name: 'Req', required_on_solve: true }, 422, 'body.required_on_solve'],
      [{ type: 'text', name: 'Arch', archived: true }, 422, 'body.archived'],
      [{ type: 'text', name: 'Desc', description: 'd'.repeat(301) }, 422, 'body.description'],
    ];
    for (const [body, status, location] of cases) {
      const r = await api().post('/v1/custom-fields', { entity: 'ticket', ...body }, t.as);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(status);
      if (status === 409) expect(r.body.code).toBe('conflict');
      else expect(r.body.errors[0].location, JSON.stringify(body).slice(0, 80)).toBe(location);
    }
    // The same key on another entity is fine; entity, key and type never change.
    await field(t, { entity: 'contact', type: 'text', name: 'Order', key: 'order_no' });
    const f = (await api().get('/v1/custom-fields?entity=ticket', t.as)).body.data[0];
    for (const k of ['entity', 'key', 'type']) {
      const r = await api().patch(`/v1/custom-fields/${f.id}`, { [k]: 'x' }, t.as);
      expect(r.status).toBe(422);
      expect(r.body.errors[0].location).toBe(`body.${k}`);
    }
  });

  it('refuses the 101st field of an entity', async () => {
    const t = await newTenant(api());
    const db = svc.rt.deps.database.db;
    await db
      .insertInto('custom_fields')
      .values(
        Array.from({ length: 100 }, (_, i) => ({
          workspace_id: t.workspaceId,
          id: randomUUID(),
          entity: 'ticket' as const,
          key: `f${i}`,
          name: `F ${i}`,
          type: 'text',
          position: i,
        })),
      )
      .execute();
    const r = await api().post('/v1/custom-fields', { entity: 'ticket', type: 'text', name: 'One more' }, t.as);
    expect(r.status).toBe(422);
    expect(r.body.errors[0].location).toBe('body.entity');
    await field(t, { entity: 'company', type: 'text', name: 'Fine elsewhere' });
  });

  it('reorders one entity, archives, and deletes with its values', async () => {
    const t = await newTenant(api());
    const a = await field(t, { type: 'text', name: 'A' });
    const b = await field(t, { type: 'text', name: 'B' });
    const c = await field(t, { type: 'text', name: 'C' });
    const r = await api().post('/v1/custom-fields/reorder', { entity: 'ticket', ids: [c.id, a.id, b.id] }, t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body.data.map((x: any) => [x.key, x.position])).toEqual([
      ['c', 0],
      ['a', 1],
      ['b', 2],
    ]);
    expect((await api().post('/v1/custom-fields/reorder', { entity: 'ticket', ids: [c.id, a.id] }, t.as)).status).toBe(
      422,
    );
    const tk = await ticket(t, { fields: { a: 'one', b: 'two' } });
    expect(tk.fields).toEqual({ a: 'one', b: 'two' });
    // Archived: the value stays, a change is refused, clearing too.
    expect((await api().patch(`/v1/custom-fields/${a.id}`, { archived: true }, t.as)).body.archived).toBe(true);
    expect((await api().get(`/v1/tickets/${tk.id}`, t.as)).body.fields).toEqual({ a: 'one', b: 'two' });
    for (const v of ['changed', null]) {
      const x = await api().patch(`/v1/tickets/${tk.id}`, { fields: { a: v } }, t.as);
      expect(x.status).toBe(422);
      expect(x.body.errors[0].location).toBe('body.fields.a');
    }
    // Deleting a field removes its values everywhere.
    const seq = await latestSeqOf(svc, t);
    expect((await api().delete(`/v1/custom-fields/${b.id}`, t.as)).status).toBe(204);
    expect((await api().get(`/v1/tickets/${tk.id}`, t.as)).body.fields).toEqual({ a: 'one' });
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['custom_field.deleted', { custom_field_id: b.id, entity: 'ticket', key: 'b' }],
    ]);
    expect((await api().get(`/v1/custom-fields/${b.id}`, t.as)).status).toBe(404);
  });
});

describe('values', () => {
  async function everyType(t: Tenant, entity = 'ticket') {
    const mk = (body: Record<string, unknown>) => field(t, { entity, ...body });
    await mk({ type: 'text', name: 'Text' });
    await mk({ type: 'long_text', name: 'Long' });
    await mk({ type: 'number', name: 'Num' });
    await mk({ type: 'select', name: 'Sel', options: [{ label: 'Red' }, { label: 'Blue' }] });
    await mk({ type: 'multi_select', name: 'Multi', options: [{ label: 'A' }, { label: 'B' }, { label: 'C' }] });
    await mk({ type: 'date', name: 'Day' });
    await mk({ type: 'checkbox', name: 'Flag' });
    await mk({ type: 'url', name: 'Link' });
    await mk({ type: 'email', name: 'Mail' });
    await mk({ type: 'user', name: 'Owner' });
  }

  it('validates and normalises every type; merges; clears with null, "" and []', async () => {
    const t = await newTenant(api());
    await everyType(t);
    const good = {
      text: 'one line',
      long: 'many\nlines',
      num: 12.5,
      sel: 'red',
      multi: ['b', 'a', 'b'],
      day: '2024-02-29',
      flag: false,
      link: 'https://example.com/x?y=1',
      mail: 'Jane.Doe@Example.COM',
      owner: t.owner.userId,
    };
    const tk = await ticket(t, { fields: good });
    expect(tk.fields).toEqual({ ...good, multi: ['b', 'a'], mail: 'jane.doe@example.com' });
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ text: 'two\nlines' }, 'text'],
      [{ text: 'x'.repeat(1001) }, 'text'],
      [{ long: 'x'.repeat(10001) }, 'long'],
      [{ num: '12' }, 'num'],
      [{ sel: 'green' }, 'sel'],
      [{ sel: ['red'] }, 'sel'],
      [{ multi: 'a' }, 'multi'],
      [{ multi: ['a', 'zzz'] }, 'multi'],
      [{ day: '2026-02-30' }, 'day'],
      [{ day: '2026-2-3' }, 'day'],
      [{ flag: 'yes' }, 'flag'],
      [{ link: 'ftp://example.com/' }, 'link'],
      [{ link: 'javascript:alert(1)' }, 'link'],
      [{ mail: 'not-an-address' }, 'mail'],
      [{ owner: randomUUID() }, 'owner'],
      [{ nope: 'x' }, 'nope'],
    ];
    for (const [fields, key] of bad) {
      const r = await api().patch(`/v1/tickets/${tk.id}`, { fields }, t.as);
      expect(r.status, JSON.stringify(fields).slice(0, 60)).toBe(422);
      expect(r.body.errors[0].location).toBe(`body.fields.${key}`);
    }
    expect((await api().get(`/v1/tickets/${tk.id}`, t.as)).body.fields).toEqual(tk.fields);
    // Merging: only named keys change; null, "" and [] clear.
    const seq = await latestSeqOf(svc, t);
    const r = await api().patch(`/v1/tickets/${tk.id}`, { fields: { num: 3, text: null, long: '', multi: [] } }, t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body.fields).toEqual({
      num: 3,
      sel: 'red',
      day: '2024-02-29',
      flag: false,
      link: good.link,
      mail: 'jane.doe@example.com',
      owner: t.owner.userId,
    });
    const events = await eventsAfterOf(svc, t, seq);
    const updated = events.find((e) => e.type === 'ticket.updated');
    expect(updated.data.changes).toEqual(['fields']);
    const acts = events.filter((e) => e.type === 'activity.created').map((e) => e.data.activity);
    expect(acts.map((a: any) => [a.type, a.data.key, a.data.from, a.data.to])).toEqual([
      ['field_changed', 'num', 12.5, 3],
      ['field_changed', 'text', 'one line', null],
      ['field_changed', 'long', 'many\nlines', null],
      ['field_changed', 'multi', ['b', 'a'], null],
    ]);
  });

  it('contacts and companies take fields too, with their own definitions', async () => {
    const t = await newTenant(api());
    await field(t, { entity: 'contact', type: 'number', name: 'Score' });
    await field(t, {
      entity: 'company',
      type: 'select',
      name: 'Size',
      options: [{ label: 'Small' }, { label: 'Large' }],
    });
    const c = await api().post('/v1/contacts', { email: `${unique('c')}@example.com`, fields: { score: 7 } }, t.as);
    expect(c.status, c.text).toBe(201);
    expect(c.body.fields).toEqual({ score: 7 });
    expect((await api().post('/v1/contacts', { fields: { size: 'small' } }, t.as)).status).toBe(422);
    const co = await api().post('/v1/companies', { name: 'Big Co', fields: { size: 'large' } }, t.as);
    expect(co.body.fields).toEqual({ size: 'large' });
    const p = await api().patch(`/v1/companies/${co.body.id}`, { fields: { size: null } }, t.as);
    expect(p.body.fields).toEqual({});
    expect((await api().get(`/v1/contacts?field.score[gte]=5`, t.as)).body.data.map((x: any) => x.id)).toEqual([
      c.body.id,
    ]);
    expect((await api().get(`/v1/contacts?field.score[gt]=7`, t.as)).body.data).toEqual([]);
    expect((await api().get(`/v1/companies?field.size=large`, t.as)).body.data).toEqual([]);
    expect((await api().get(`/v1/companies?field.size[not_set]=`, t.as)).body.data).toHaveLength(1);
  });

  it('removing an option clears it from stored values, select and multi-select', async () => {
    const t = await newTenant(api());
    const sel = await field(t, { type: 'select', name: 'Sel', options: [{ label: 'Red' }, { label: 'Blue' }] });
    const multi = await field(t, { type: 'multi_select', name: 'Multi', options: [{ label: 'A' }, { label: 'B' }] });
    const one = await ticket(t, { fields: { sel: 'red', multi: ['a', 'b'] } });
    const two = await ticket(t, { fields: { sel: 'blue', multi: ['a'] } });
    await api().patch(`/v1/custom-fields/${sel.id}`, { options: [{ id: 'blue', label: 'Blue' }] }, t.as);
    await api().patch(`/v1/custom-fields/${multi.id}`, { options: [{ id: 'b', label: 'B' }] }, t.as);
    expect((await api().get(`/v1/tickets/${one.id}`, t.as)).body.fields).toEqual({ multi: ['b'] });
    expect((await api().get(`/v1/tickets/${two.id}`, t.as)).body.fields).toEqual({ sel: 'blue' });
  });
});

describe('required_on_solve', () => {
  it('is enforced on PATCH, bulk and reply-with-status; not on merge; filling it in the same PATCH works', async () => {
    const t = await newTenant(api());
    await field(t, { type: 'text', name: 'Cause', required_on_solve: true });
    await field(t, { type: 'select', name: 'Area', required_on_solve: true, options: [{ label: 'Billing' }] });
    const tk = await ticket(t);
    const r = await api().patch(`/v1/tickets/${tk.id}`, { status: 'solved' }, t.as);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('field_required');
    expect(r.body.errors.map((e: any) => e.location)).toEqual(['body.fields.cause', 'body.fields.area']);
    const closed = await api().patch(`/v1/tickets/${tk.id}`, { status: 'closed', fields: { cause: 'printer' } }, t.as);
    expect(closed.body.errors.map((e: any) => e.location)).toEqual(['body.fields.area']);
    const bulk = await api().post('/v1/tickets/bulk', { ids: [tk.id], patch: { status: 'solved' } }, t.as);
    expect(bulk.status).toBe(422);
    expect(bulk.body.code).toBe('field_required');
    const reply = await api().post(
      `/v1/tickets/${tk.id}/messages`,
      { kind: 'reply', body_html: 'done', status: 'solved' },
      t.as,
    );
    expect(reply.status).toBe(422);
    expect(reply.body.code).toBe('field_required');
    const after = (await api().get(`/v1/tickets/${tk.id}`, t.as)).body;
    expect(after).toMatchObject({ status: 'open', message_count: 0, fields: {} });
    // Filled in the same PATCH: solved.
    const ok = await api().patch(
      `/v1/tickets/${tk.id}`,
      { status: 'solved', fields: { cause: 'x', area: 'billing' } },
      t.as,
    );
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.status).toBe('solved');
    // Pending needs nothing; merging closes the source without the check.
    const other = await ticket(t, { status: 'pending' });
    const target = await ticket(t);
    const merged = await api().post(`/v1/tickets/${other.id}/merge`, { into_id: target.id }, t.as);
    expect(merged.status, merged.text).toBe(200);
    expect((await api().get(`/v1/tickets/${other.id}`, t.as)).body.status).toBe('closed');
  });
});

describe('list filters and sorts', () => {
  it('filters with exactly the operators of each type, sorts with missing values lowest, q matches text values', async () => {
    const t = await newTenant(api());
    const agent = await addMember(svc, t, 'agent');
    await field(t, { type: 'text', name: 'Order', key: 'order' });
    await field(t, { type: 'number', name: 'Seats' });
    await field(t, { type: 'date', name: 'Renewal' });
    await field(t, { type: 'checkbox', name: 'Vip' });
    await field(t, { type: 'select', name: 'Plan', options: [{ label: 'Free' }, { label: 'Pro' }, { label: 'Max' }] });
    await field(t, {
      type: 'multi_select',
      name: 'Areas',
      options: [{ label: 'Api' }, { label: 'Ui' }, { label: 'Db' }],
    });
    await field(t, { type: 'user', name: 'Owner' });
    const t1 = await ticket(t, {
      fields: {
        order: 'ORD-1001',
        seats: 5,
        renewal: '2026-01-15',
        vip: true,
        plan: 'pro',
        areas: ['api', 'ui'],
        owner: agent.userId,
      },
    });
    const t2 = await ticket(t, {
      fields: { order: 'ord-2002', seats: 50, renewal: '2026-06-01', vip: false, plan: 'max', areas: ['db'] },
    });
    const t3 = await ticket(t, { fields: { seats: 1, plan: 'free', areas: ['api'] } });
    const t4 = await ticket(t);
    const n = async (qs: string, as = t.as) => {
      const r = await api().get(`/v1/tickets?sort=created_at&order=asc&${qs}`, as);
      expect(r.status, `${qs}: ${r.text}`).toBe(200);
      return ids(r);
    };
    const [a, b, c, d] = [t1.number, t2.number, t3.number, t4.number];
    expect(await n('field.order=ord-1001')).toEqual([a]);
    expect(await n('field.order[ne]=ORD-1001')).toEqual([b, c, d]);
    expect(await n('field.order[contains]=ord')).toEqual([a, b]);
    expect(await n('field.order[not_contains]=200')).toEqual([a, c, d]);
    expect(await n('field.order[set]=x')).toEqual([a, b]);
    expect(await n('field.order[not_set]=x')).toEqual([c, d]);
    expect(await n('field.seats=5')).toEqual([a]);
    expect(await n('field.seats[gt]=1')).toEqual([a, b]);
    expect(await n('field.seats[gte]=1')).toEqual([a, b, c]);
    expect(await n('field.seats[lt]=50')).toEqual([a, c]);
    expect(await n('field.seats[lte]=50&field.seats[ne]=5')).toEqual([b, c]);
    expect(await n('field.renewal[gte]=2026-02-01')).toEqual([b]);
    expect(await n('field.vip=true')).toEqual([a]);
    expect(await n('field.vip[ne]=true')).toEqual([b, c, d]);
    expect(await n('field.plan=pro,max')).toEqual([a, b]);
    expect(await n('field.plan[eq]=free')).toEqual([c]);
    expect(await n('field.plan[none]=free,pro')).toEqual([b, d]);
    expect(await n('field.areas=api')).toEqual([a, c]);
    expect(await n('field.areas[all]=api,ui')).toEqual([a]);
    expect(await n('field.areas[none]=api')).toEqual([b, d]);
    expect(await n('field.areas[eq]=api')).toEqual([c]);
    expect(await n('field.areas[ne]=api')).toEqual([a, b, d]);
    expect(await n('field.owner=me', agent.as)).toEqual([a]);
    expect(await n(`field.owner[ne]=${agent.userId}`)).toEqual([b, c, d]);
    // An operator the type does not take, an unknown field, a bad value: 422 naming the parameter.
    for (const [qs, location] of [
      ['field.seats[contains]=5', 'query.field.seats[contains]'],
      ['field.vip[gt]=true', 'query.field.vip[gt]'],
      ['field.plan[all]=pro', 'query.field.plan[all]'],
      ['field.order[any]=x', 'query.field.order[any]'],
      ['field.nope=1', 'query.field.nope'],
      ['field.seats=many', 'query.field.seats'],
      ['field.renewal=2026-02-30', 'query.field.renewal'],
      ['field.plan=gold', 'query.field.plan'],
      ['field.Bad-Key=1', 'query.field.Bad-Key'],
    ] as const) {
      const r = await api().get(`/v1/tickets?${qs}`, t.as);
      expect(r.status, qs).toBe(422);
      expect(r.body.errors[0].location, qs).toBe(location);
    }
    // Sorts: ascending by default, records without a value lowest; pages keep the order.
    const bySeats = ids(await api().get('/v1/tickets?sort=field.seats', t.as));
    expect(bySeats).toEqual([d, c, a, b]);
    expect(ids(await api().get('/v1/tickets?sort=field.seats&order=desc', t.as))).toEqual([b, a, c, d]);
    expect(ids(await api().get('/v1/tickets?sort=field.plan', t.as))).toEqual([d, c, a, b]);
    // Text sorts ignore case; ties (no value) go by id, which grows with creation time.
    expect(ids(await api().get('/v1/tickets?sort=field.order', t.as))).toEqual([c, d, a, b]);
    const paged: number[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await api().get(
        `/v1/tickets?sort=field.renewal&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        t.as,
      );
      paged.push(...ids(r));
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(paged).toEqual(ids(await api().get('/v1/tickets?sort=field.renewal', t.as)));
    expect(paged.slice(-2)).toEqual([a, b]);
    expect((await api().get('/v1/tickets?sort=field.areas', t.as)).status).toBe(422);
    // q matches text field values.
    expect(ids(await api().get('/v1/tickets?q=ORD-20', t.as))).toEqual([b]);
  });
});

describe('sorting on number, date and checkbox fields (the sort-key walk)', () => {
  /** Every page of a list, `limit` at a time. */
  async function allPages(t: Tenant, qs: string, limit: number): Promise<number[]> {
    const out: number[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await api().get(
        `/v1/tickets?${qs}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        t.as,
      );
      expect(r.status, r.text).toBe(200);
      out.push(...ids(r));
      cursor = r.body.next_cursor;
    } while (cursor);
    return out;
  }

  it('orders like the values themselves (no value lowest, ties by id), in pages both ways, after edits too', async () => {
    const t = await newTenant(api());
    await field(t, { type: 'number', name: 'Amount' });
    await field(t, { type: 'date', name: 'Renews' });
    await field(t, { type: 'checkbox', name: 'Urgent' });
    await field(t, {
      type: 'select',
      name: 'Tier',
      options: [
        { id: 'a', label: 'A' },
        { id: 'b', label: 'B' },
      ],
    });
    const amounts = [7, null, -2.5, 7, 1000, null, 0, 7, 3, null, 12.25, 0];
    const made: Array<{
      number: number;
      id: string;
      amount: number | null;
      renews: string | null;
      urgent: boolean | null;
      tier: string;
    }> = [];
    for (const [i, amount] of amounts.entries()) {
      const fields: Record<string, unknown> = { tier: i % 3 === 0 ? 'a' : 'b' };
      if (amount !== null) fields.amount = amount;
      const renews = i % 4 === 1 ? null : `2026-0${(i % 9) + 1}-1${i % 3}`;
      if (renews) fields.renews = renews;
      const urgent = i % 5 === 0 ? null : i % 2 === 0;
      if (urgent !== null) fields.urgent = urgent;
      const tk = await ticket(t, { fields });
      made.push({ number: tk.number, id: tk.id, amount, renews, urgent, tier: fields.tier as string });
    }
    // The reference order: no value first, then by value; ties by id (ids grow with creation).
    const expected = (key: 'amount' | 'renews' | 'urgent', rows = made) =>
      [...rows]
        .sort((x, y) => {
          const a = x[key];
          const b = y[key];
          if (a !== b) {
            if (a === null) return -1;
            if (b === null) return 1;
            return a < b ? -1 : 1;
          }
          return x.id < y.id ? -1 : 1;
        })
        .map((r) => r.number);
    for (const key of ['amount', 'renews', 'urgent'] as const) {
      const asc = expected(key);
      expect(await allPages(t, `sort=field.${key}`, 50), key).toEqual(asc);
      for (const limit of [1, 2, 5]) {
        expect(await allPages(t, `sort=field.${key}`, limit), `${key} by ${limit}`).toEqual(asc);
        expect(await allPages(t, `sort=field.${key}&order=desc`, limit), `${key} desc by ${limit}`).toEqual(
          [...asc].reverse(),
        );
      }
      // With a filter on another field, only its matches, in the same order.
      expect(await allPages(t, `sort=field.${key}&field.tier=a`, 2), `${key} tier a`).toEqual(
        expected(
          key,
          made.filter((r) => r.tier === 'a'),
        ),
      );
    }
    // Values change and clear: the order follows at once.
    const change = async (i: number, amount: number | null) => {
      const r = await api().patch(`/v1/tickets/${made[i]!.id}`, { fields: { amount } }, t.as);
      expect(r.status, r.text).toBe(200);
      made[i]!.amount = amount;
    };
    await change(1, 5);
    await change(4, null);
    await change(0, -100);
    expect(await allPages(t, 'sort=field.amount', 3)).toEqual(expected('amount'));
    expect(await allPages(t, 'sort=field.amount&order=desc', 3)).toEqual([...expected('amount')].reverse());
    // A deleted ticket leaves the list.
    expect((await api().delete(`/v1/tickets/${made[2]!.id}`, t.as)).status).toBe(204);
    expect(await allPages(t, 'sort=field.amount', 4)).toEqual(expected('amount').filter((n) => n !== made[2]!.number));
  });
});
