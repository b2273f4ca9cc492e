// /v1/companies: the Company shape, domain rules (hostname, lower-case, unique: 409), custom
// merging, contact_count, linking and unlinking contacts, deleting a company (its contacts
// stay, without a company), filters and pages, events, access, other workspaces' records.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCompany, makeContact } from '../../support/builders.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newApiKey,
  newTenant,
  type ReqOpts,
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

const join = async (t: Tenant, role: 'admin' | 'agent' | 'viewer'): Promise<ReqOpts> =>
  (await addMember(svc, t, role)).as;
const latestSeq = (t: Tenant) => latestSeqOf(svc, t);
const eventsAfter = (t: Tenant, since: number) => eventsAfterOf(svc, t, since);
const domain = () => `${unique('d')}.example.com`.toLowerCase();
const company = (t: Tenant, body: Record<string, unknown> = {}) =>
  makeCompany(svc.api, t, { domain: domain(), ...body });
const contact = (t: Tenant, body: Record<string, unknown> = {}) => makeContact(svc.api, t, body);

describe('creating and reading companies', () => {
  it('creates a company (201) with company.created; the domain is stored lower-case', async () => {
    const t = await newTenant(svc.api);
    const seq = await latestSeq(t);
    const r = await svc.api.post(
      '/v1/companies',
      { name: '  Globex ', domain: ' Globex.Example.COM. ', notes: 'Big one', custom: { tier: 1 } },
      t.as,
    );
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/companies/${r.body.id}`);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Globex',
      domain: 'globex.example.com',
      notes: 'Big one',
      custom: { tier: 1 },
      tags: [],
      fields: {},
      contact_count: 0,
      avatar_url: null,
      avatar_source: null,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['company.created']);
    expect(events[0].data).toEqual({ company: r.body });
    expect((await svc.api.get(`/v1/companies/${r.body.id}`, t.as)).body).toEqual(r.body);
    // A company without a domain.
    const bare = await svc.api.post('/v1/companies', { name: 'No Domain' }, t.as);
    expect(bare.body).toMatchObject({ domain: null, notes: null, custom: {} });
  });

  it('refuses bad input (422 at the field)', async () => {
    const t = await newTenant(svc.api);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'body.name'],
      [{ name: '' }, 'body.name'],
      [{ name: '   ' }, 'body.name'],
      [{ name: 'n'.repeat(201) }, 'body.name'],
      [{ name: 'A', domain: 'not a domain' }, 'body.domain'],
      [{ name: 'A', domain: 'localhost' }, 'body.domain'],
      [{ name: 'A', domain: 'https://example.com' }, 'body.domain'],
      [{ name: 'A', domain: '-bad.example.com' }, 'body.domain'],
      [{ name: 'A', domain: `${'a'.repeat(64)}.com` }, 'body.domain'],
      [{ name: 'A', domain: 'd'.repeat(254) }, 'body.domain'],
      [{ name: 'A', notes: 'x'.repeat(10001) }, 'body.notes'],
      [{ name: 'A', custom: 'x' }, 'body.custom'],
      [{ name: 'A', custom: [1] }, 'body.custom'],
      [{ name: 'A', website: 'x' }, 'body.website'],
      [{ name: 'A', tags: ['<b>'] }, 'body.tags'],
    ];
    for (const [body, location] of cases) {
      const r = await svc.api.post('/v1/companies', body, t.as);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors[0].location, JSON.stringify(body).slice(0, 80)).toBe(location);
    }
    expect((await svc.api.get('/v1/companies', t.as)).body.data).toEqual([]);
  });

  it('keeps domains unique per workspace, whatever the case (409); two workspaces may share one', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    await company(a, { domain: 'shared.example' });
    const dup = await svc.api.post('/v1/companies', { name: 'Copy', domain: 'SHARED.example' }, a.as);
    expect(dup.status).toBe(409);
    expect(isErrorBody(dup.body, 409, 'conflict')).toBe(true);
    const other = await company(a);
    const clash = await svc.api.patch(`/v1/companies/${other.id}`, { domain: 'Shared.Example' }, a.as);
    expect(clash.status).toBe(409);
    expect((await svc.api.post('/v1/companies', { name: 'B', domain: 'shared.example' }, b.as)).status).toBe(201);
  });
});

describe('changing and deleting companies', () => {
  it('patches, merges custom, emits company.updated; an empty change emits nothing', async () => {
    const t = await newTenant(svc.api);
    const co = await company(t, { custom: { a: 1, b: 2 } });
    const seq = await latestSeq(t);
    const r = await svc.api.patch(
      `/v1/companies/${co.id}`,
      { name: 'Renamed', domain: 'New.Example', notes: 'n', custom: { a: null, c: 3 } },
      t.as,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ name: 'Renamed', domain: 'new.example', notes: 'n', custom: { b: 2, c: 3 } });
    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['company.updated']);
    expect(events[0].data).toEqual({ company: r.body });
    const seq2 = await latestSeq(t);
    expect((await svc.api.patch(`/v1/companies/${co.id}`, { name: 'Renamed' }, t.as)).status).toBe(200);
    expect(await eventsAfter(t, seq2)).toEqual([]);
    const cleared = await svc.api.patch(`/v1/companies/${co.id}`, { domain: null, notes: null }, t.as);
    expect(cleared.body).toMatchObject({ domain: null, notes: null });
    const bad = await svc.api.patch(`/v1/companies/${co.id}`, { domain: 'nope' }, t.as);
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].location).toBe('body.domain');
  });

  it('counts contacts, follows link and unlink, and shows the company on its contacts', async () => {
    const t = await newTenant(svc.api);
    const co = await company(t, { name: 'Counted' });
    const other = await company(t);
    const c1 = await contact(t, { company_id: co.id });
    const c2 = await contact(t, { company_id: co.id });
    await contact(t);
    expect((await svc.api.get(`/v1/companies/${co.id}`, t.as)).body.contact_count).toBe(2);
    await svc.api.patch(`/v1/contacts/${c2.id}`, { company_id: other.id }, t.as);
    expect((await svc.api.get(`/v1/companies/${co.id}`, t.as)).body.contact_count).toBe(1);
    expect((await svc.api.get(`/v1/companies/${other.id}`, t.as)).body.contact_count).toBe(1);
    await svc.api.patch(`/v1/contacts/${c1.id}`, { company_id: null }, t.as);
    expect((await svc.api.get(`/v1/companies/${co.id}`, t.as)).body.contact_count).toBe(0);
    // The list shows counts too.
    const list = await svc.api.get('/v1/companies', t.as);
    expect(Object.fromEntries(list.body.data.map((c: any) => [c.id, c.contact_count]))).toEqual({
      [co.id]: 0,
      [other.id]: 1,
    });
    // A rename shows on the contact.
    await svc.api.patch(`/v1/companies/${other.id}`, { name: 'Other Renamed' }, t.as);
    expect((await svc.api.get(`/v1/contacts/${c2.id}`, t.as)).body.company).toEqual({
      id: other.id,
      name: 'Other Renamed',
      domain: other.domain,
    });
  });

  it('deletes a company (204, company.deleted); its contacts remain without a company', async () => {
    const t = await newTenant(svc.api);
    const co = await company(t);
    const keep = await company(t);
    const c1 = await contact(t, { company_id: co.id });
    const c2 = await contact(t, { company_id: keep.id });
    const seq = await latestSeq(t);
    const r = await svc.api.delete(`/v1/companies/${co.id}`, t.as);
    expect(r.status).toBe(204);
    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['company.deleted']);
    expect(events[0].data).toEqual({ company_id: co.id });
    expect((await svc.api.get(`/v1/companies/${co.id}`, t.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/companies/${co.id}`, t.as)).status).toBe(404);
    const after1 = await svc.api.get(`/v1/contacts/${c1.id}`, t.as);
    expect(after1.status).toBe(200);
    expect(after1.body.company).toBeNull();
    expect((await svc.api.get(`/v1/contacts/${c2.id}`, t.as)).body.company.id).toBe(keep.id);
    // The row is in the right workspace still (the foreign key nulls company_id only).
    const row = await svc.rt.deps.database.db
      .selectFrom('contacts')
      .select(['workspace_id', 'company_id'])
      .where('id', '=', c1.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ workspace_id: t.workspaceId, company_id: null });
    // The domain is free again.
    expect((await svc.api.post('/v1/companies', { name: 'Again', domain: co.domain }, t.as)).status).toBe(201);
  });
});

describe('lists', () => {
  it('pages newest first and filters by part of the name or domain', async () => {
    const t = await newTenant(svc.api);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await company(t, { name: `Firm ${i}` })).id);
    const hooli = await company(t, { name: 'Hooli', domain: 'hooli.xyz' });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = await svc.api.get(
        `/v1/companies?q=firm&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        t.as,
      );
      expect(r.status).toBe(200);
      seen.push(...r.body.data.map((c: any) => c.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
    const byDomain = await svc.api.get('/v1/companies?q=LI.XY', t.as);
    expect(byDomain.body.data.map((c: any) => c.id)).toEqual([hooli.id]);
    const all = await svc.api.get('/v1/companies', t.as);
    expect(all.body.data.map((c: any) => c.id)).toEqual([hooli.id, ...[...ids].reverse()]);
    expect((await svc.api.get('/v1/companies?q=nothing-like-it', t.as)).body.data).toEqual([]);
    expect((await svc.api.get('/v1/companies?cursor=garbage', t.as)).status).toBe(422);
  });
});

describe('access', () => {
  it('viewers read but get 403 on writes; agents write', async () => {
    const t = await newTenant(svc.api);
    const viewer = await join(t, 'viewer');
    const agent = await join(t, 'agent');
    const co = await company(t);
    expect((await svc.api.get('/v1/companies', viewer)).status).toBe(200);
    expect((await svc.api.get(`/v1/companies/${co.id}`, viewer)).status).toBe(200);
    for (const r of [
      await svc.api.post('/v1/companies', { name: 'V' }, viewer),
      await svc.api.patch(`/v1/companies/${co.id}`, { name: 'V' }, viewer),
      await svc.api.delete(`/v1/companies/${co.id}`, viewer),
    ]) {
      expect(r.status).toBe(403);
      expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
    }
    const made = await svc.api.post('/v1/companies', { name: 'By agent' }, agent);
    expect(made.status).toBe(201);
    expect((await svc.api.delete(`/v1/companies/${made.body.id}`, agent)).status).toBe(204);
  });

  it('keys: contacts:read reads only, contacts:write writes, tickets scopes see nothing', async () => {
    const t = await newTenant(svc.api);
    const co = await company(t);
    const reader = { token: (await newApiKey(svc.api, t, ['contacts:read'])).key };
    const writer = { token: (await newApiKey(svc.api, t, ['contacts:write'])).key };
    const tickets = { token: (await newApiKey(svc.api, t, ['tickets:read'])).key };
    expect((await svc.api.get(`/v1/companies/${co.id}`, reader)).status).toBe(200);
    expect((await svc.api.post('/v1/companies', { name: 'K' }, reader)).status).toBe(403);
    expect((await svc.api.patch(`/v1/companies/${co.id}`, { name: 'K' }, reader)).status).toBe(403);
    expect((await svc.api.post('/v1/companies', { name: 'K' }, writer)).status).toBe(201);
    expect((await svc.api.get('/v1/companies', writer)).status).toBe(200);
    expect((await svc.api.get('/v1/companies', tickets)).status).toBe(403);
    expect((await svc.api.get(`/v1/companies/${co.id}`, tickets)).status).toBe(403);
  });

  it("answers 404 for another workspace's company, identical to a missing one", async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const co = await company(a, { name: 'Mine' });
    const missing = randomUUID();
    for (const [m, body] of [
      ['GET', undefined],
      ['PATCH', { name: 'Stolen' }],
      ['DELETE', undefined],
    ] as const) {
      const foreign = await svc.api.req(m, `/v1/companies/${co.id}`, { ...b.as, body });
      const none = await svc.api.req(m, `/v1/companies/${missing}`, { ...b.as, body });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(none.body);
    }
    expect((await svc.api.get(`/v1/companies/${co.id}`, a.as)).body.name).toBe('Mine');
    expect((await svc.api.get('/v1/companies', b.as)).body.data).toEqual([]);
  });
});
