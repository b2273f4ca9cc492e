// Labels on tickets, contacts and companies through their own routes (tags replaces, add_tags
// adds, remove_tags removes, by name), tagged/untagged activities and `tags` in ticket.updated
// changes, exclusive groups, label_creation for admins only (422 unknown_label), applies_to,
// the `tag` list filters; and saved views on the ticket list (view_id) and in the counts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeContact, makeTicket } from '../../support/builders.js';
import {
  addMember,
  eventsAfterOf,
  latestSeqOf,
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
const ticket = (t: Tenant, body: Record<string, unknown> = {}) => makeTicket(api(), t, { subject: 'Help', ...body });
const names = (x: any) => x.tags.map((g: any) => g.name);

describe('labels on tickets', () => {
  it('create with tags; PATCH adds, removes and replaces; activities, changes, list filter', async () => {
    const t = await newTenant(api());
    const tk = await ticket(t, { tags: ['Billing', 'vip'] });
    expect(names(tk)).toEqual(['Billing', 'vip']);
    expect(tk.tags[0]).toMatchObject({ name: 'Billing', group_id: null });
    expect(typeof tk.tags[0]!.color).toBe('string');
    const seq = await latestSeqOf(svc, t);
    const r = await api().patch(`/v1/tickets/${tk.id}`, { add_tags: ['urgent'], remove_tags: ['VIP'] }, t.as);
    expect(r.status, r.text).toBe(200);
    expect(names(r.body)).toEqual(['Billing', 'urgent']);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual([
      'tag.created',
      'activity.created',
      'activity.created',
      'ticket.updated',
    ]);
    expect(events[3].data.changes).toEqual(['tags']);
    const acts = (await api().get(`/v1/tickets/${tk.id}/activities`, t.as)).body.data;
    expect(acts.map((a: any) => [a.type, a.data.tag.name])).toEqual([
      ['tagged', 'urgent'],
      ['untagged', 'vip'],
    ]);
    const replaced = await api().patch(`/v1/tickets/${tk.id}`, { tags: ['vip'] }, t.as);
    expect(names(replaced.body)).toEqual(['vip']);
    const other = await ticket(t, { tags: ['billing'] });
    const list = async (tag: string) =>
      (await api().get(`/v1/tickets?tag=${encodeURIComponent(tag)}`, t.as)).body.data.map((x: any) => x.id);
    expect(await list('VIP')).toEqual([tk.id]);
    expect(await list('billing')).toEqual([other.id]);
    expect(await list('no such label')).toEqual([]);
    expect((await api().patch(`/v1/tickets/${tk.id}`, { tags: ['x'], add_tags: ['y'] }, t.as)).status).toBe(422);
    const bad = await api().patch(`/v1/tickets/${tk.id}`, { add_tags: ['<script>'] }, t.as);
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].location).toBe('body.add_tags');
  });

  it('exclusive groups keep one label per record, the last named wins; bulk applies to each ticket', async () => {
    const t = await newTenant(api());
    const g = await api().post('/v1/tag-groups', { name: 'Tier', exclusive: true }, t.as);
    for (const name of ['Gold', 'Silver']) {
      expect((await api().post('/v1/tags', { name, group_id: g.body.id }, t.as)).status).toBe(201);
    }
    const tk = await ticket(t, { tags: ['Gold', 'Silver', 'other'] });
    expect(names(tk)).toEqual(['other', 'Silver']);
    const r = await api().patch(`/v1/tickets/${tk.id}`, { add_tags: ['gold'] }, t.as);
    expect(names(r.body)).toEqual(['Gold', 'other']);
    const two = await ticket(t);
    const bulk = await api().post('/v1/tickets/bulk', { ids: [tk.id, two.id], patch: { add_tags: ['Silver'] } }, t.as);
    expect(bulk.status, bulk.text).toBe(200);
    expect(bulk.body.data.map(names)).toEqual([['other', 'Silver'], ['Silver']]);
  });

  it('admins-only label creation: agents get 422 unknown_label for new names; applies_to is enforced', async () => {
    const t = await newTenant(api());
    const agent = await addMember(svc, t, 'agent');
    expect((await api().patch('/v1/workspace', { settings: { label_creation: 'admins' } }, t.as)).status).toBe(200);
    await api().post('/v1/tags', { name: 'Known' }, t.as);
    await api().post('/v1/tags', { name: 'People only', applies_to: ['contacts'] }, t.as);
    const r = await api().post('/v1/tickets', { subject: 'x', tags: ['Brand new'] }, agent.as);
    expect(r.status).toBe(422);
    expect(r.body.code).toBe('unknown_label');
    expect(r.body.errors[0].location).toBe('body.tags');
    expect((await api().post('/v1/tickets', { subject: 'x', tags: ['known'] }, agent.as)).status).toBe(201);
    const admin = await api().post('/v1/tickets', { subject: 'x', tags: ['Brand new'] }, t.as);
    expect(admin.status).toBe(201);
    const wrongKind = await api().post('/v1/tickets', { subject: 'x', tags: ['People only'] }, t.as);
    expect(wrongKind.status).toBe(422);
    expect(wrongKind.body.errors[0].location).toBe('body.tags');
    // Nothing was left behind by the refused creates.
    expect((await api().get('/v1/tickets', t.as)).body.data).toHaveLength(2);
  });
});

describe('labels on contacts and companies', () => {
  it('create, change and filter by label; a contact event carries the labels', async () => {
    const t = await newTenant(api());
    const c = await api().post('/v1/contacts', { email: `${unique('c')}@example.com`, tags: ['VIP'] }, t.as);
    expect(c.status, c.text).toBe(201);
    expect(names(c.body)).toEqual(['VIP']);
    await makeContact(api(), t);
    const seq = await latestSeqOf(svc, t);
    const p = await api().patch(`/v1/contacts/${c.body.id}`, { add_tags: ['Churn risk'] }, t.as);
    expect(names(p.body)).toEqual(['Churn risk', 'VIP']);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['tag.created', 'contact.updated']);
    expect(names(events[1].data.contact)).toEqual(['Churn risk', 'VIP']);
    expect((await api().get('/v1/contacts?tag=vip', t.as)).body.data.map((x: any) => x.id)).toEqual([c.body.id]);
    const co = await api().post('/v1/companies', { name: 'Acme', tags: ['Enterprise'] }, t.as);
    expect(names(co.body)).toEqual(['Enterprise']);
    expect((await api().get('/v1/companies?tag=enterprise', t.as)).body.data).toHaveLength(1);
    const cleared = await api().patch(`/v1/companies/${co.body.id}`, { remove_tags: ['Enterprise'] }, t.as);
    expect(cleared.body.tags).toEqual([]);
    expect((await api().get('/v1/companies?tag=enterprise', t.as)).body.data).toHaveLength(0);
  });
});

describe('views on the ticket list', () => {
  it('view_id applies the view (fields, tag, assignee me), adds to other filters; counts per view', async () => {
    const t = await newTenant(api());
    const agent = await addMember(svc, t, 'agent');
    await api().post(
      '/v1/custom-fields',
      { entity: 'ticket', type: 'select', name: 'Plan', options: [{ label: 'Free' }, { label: 'Pro' }] },
      t.as,
    );
    const a = await ticket(t, { tags: ['vip'], fields: { plan: 'pro' }, assignee_id: agent.userId });
    const b = await ticket(t, { tags: ['vip'], fields: { plan: 'free' }, status: 'pending' });
    await ticket(t, { fields: { plan: 'pro' } });
    const shared = await api().post(
      '/v1/views',
      { name: 'VIP pro', shared: true, filters: { tag: 'VIP', fields: [{ key: 'plan', op: 'any', value: ['pro'] }] } },
      t.as,
    );
    expect(shared.status, shared.text).toBe(201);
    const mine = await api().post('/v1/views', { name: 'Mine', shared: false, filters: { assignee: 'me' } }, agent.as);
    expect(mine.status, mine.text).toBe(201);
    const allVip = await api().post('/v1/views', { name: 'VIP', shared: true, filters: { tag: 'vip' } }, t.as);
    const ids = async (qs: string, as = t.as) => {
      const r = await api().get(`/v1/tickets?${qs}`, as);
      expect(r.status, r.text).toBe(200);
      return r.body.data.map((x: any) => x.id);
    };
    expect(await ids(`view_id=${shared.body.id}`)).toEqual([a.id]);
    expect(await ids(`view_id=${mine.body.id}`, agent.as)).toEqual([a.id]);
    expect(await ids(`view_id=${allVip.body.id}&status=pending`)).toEqual([b.id]);
    // Someone else's personal view is unknown here.
    const r = await api().get(`/v1/tickets?view_id=${mine.body.id}`, t.as);
    expect(r.status).toBe(422);
    expect(r.body.errors[0].location).toBe('query.view_id');
    const counts = (await api().get('/v1/tickets/counts', agent.as)).body.views;
    expect(counts).toEqual({ [shared.body.id]: 1, [mine.body.id]: 1, [allVip.body.id]: 2 });
    const ownerCounts = (await api().get('/v1/tickets/counts', t.as)).body.views;
    expect(Object.keys(ownerCounts).sort()).toEqual([shared.body.id, allVip.body.id].sort());
  });
});
