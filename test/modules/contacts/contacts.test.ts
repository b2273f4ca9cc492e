// /v1/contacts: the Contact shape, validation (email format, lengths, unknown fields, custom),
// case-insensitive unique email and unique external_id (409), filters and pages, the company
// link, custom merging, events, who may read and write, and other workspaces' records.
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
const email = () => `${unique('c')}@example.com`;
const contact = (t: Tenant, body: Record<string, unknown> = {}) => makeContact(svc.api, t, body);
const company = (t: Tenant, body: Record<string, unknown> = {}) =>
  makeCompany(svc.api, t, { domain: `${unique('d')}.example.com`, ...body });
/** Every page of a list, following next_cursor. */
async function allPages(path: string, as: ReqOpts, limit: number) {
  const pages: any[][] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const r: any = await svc.api.get(
      `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      as,
    );
    expect(r.status, r.text).toBe(200);
    pages.push(r.body.data);
    cursor = r.body.next_cursor;
  } while (cursor !== null && pages.length < 50);
  return pages;
}

describe('creating and reading contacts', () => {
  it('creates a contact (201) with every field, contact.created, and reads it back', async () => {
    const t = await newTenant(svc.api);
    const co = await company(t, { name: 'Acme', domain: 'acme.example' });
    const seq = await latestSeq(t);
    const r = await svc.api.post(
      '/v1/contacts',
      {
        email: 'Jane.Doe@Example.com',
        name: '  Jane Doe ',
        phone: '+1 555 0100',
        company_id: co.id,
        external_id: 'crm-1',
        notes: 'VIP',
        custom: { plan: 'gold', seats: 5, nested: { a: [1, 2] } },
        blocked: false,
      },
      t.as,
    );
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/contacts/${r.body.id}`);
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email: 'Jane.Doe@Example.com',
      unverified_email: null,
      name: 'Jane Doe',
      phone: '+1 555 0100',
      avatar_url: null,
      avatar_source: null,
      company: { id: co.id, name: 'Acme', domain: 'acme.example' },
      external_id: 'crm-1',
      notes: 'VIP',
      custom: { plan: 'gold', seats: 5, nested: { a: [1, 2] } },
      tags: [],
      fields: {},
      blocked: false,
      ticket_count: 0,
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['contact.created']);
    expect(events[0].data).toEqual({ contact: r.body });
    expect(events[0].visibility).toBe('agents');

    const one = await svc.api.get(`/v1/contacts/${r.body.id}`, t.as);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(r.body);
    const upper = await svc.api.get(`/v1/contacts/${r.body.id.toUpperCase()}`, t.as);
    expect(upper.body).toEqual(r.body);
  });

  it('creates a contact with nothing but defaults', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.post('/v1/contacts', {}, t.as);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      email: null,
      name: null,
      phone: null,
      company: null,
      external_id: null,
      notes: null,
      custom: {},
      blocked: false,
    });
  });

  it('answers 404 for an unknown or malformed id', async () => {
    const t = await newTenant(svc.api);
    for (const id of [randomUUID(), 'nope']) {
      for (const [m, path] of [
        ['GET', `/v1/contacts/${id}`],
        ['PATCH', `/v1/contacts/${id}`],
        ['DELETE', `/v1/contacts/${id}`],
        ['GET', `/v1/contacts/${id}/tickets`],
      ] as const) {
        const r = await svc.api.req(m, path, { ...t.as, body: m === 'PATCH' ? { name: 'x' } : undefined });
        expect(r.status, `${m} ${path}`).toBe(404);
        expect(isErrorBody(r.body, 404, 'not_found')).toBe(true);
      }
    }
  });
});

describe('validation', () => {
  it('refuses bad emails, long strings, unknown fields, wrong types and a non-object custom', async () => {
    const t = await newTenant(svc.api);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ email: 'not-an-email' }, 'body.email'],
      [{ email: 'a@' }, 'body.email'],
      [{ email: `${'a'.repeat(250)}@example.com` }, 'body.email'],
      [{ name: 'n'.repeat(201) }, 'body.name'],
      [{ phone: '1'.repeat(51) }, 'body.phone'],
      [{ external_id: 'e'.repeat(256) }, 'body.external_id'],
      [{ external_id: '' }, 'body.external_id'],
      [{ external_id: '   ' }, 'body.external_id'],
      [{ notes: 'x'.repeat(10001) }, 'body.notes'],
      [{ nickname: 'Jo' }, 'body.nickname'],
      [{ fields: { tier: 'gold' } }, 'body.fields.tier'],
      [{ custom: 'gold' }, 'body.custom'],
      [{ custom: ['gold'] }, 'body.custom'],
      [{ custom: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, i])) }, 'body.custom'],
      [{ custom: { big: 'x'.repeat(17_000) } }, 'body.custom'],
      [{ blocked: 'yes' }, 'body.blocked'],
      [{ company_id: 'not-a-uuid' }, 'body.company_id'],
      [{ company_id: randomUUID() }, 'body.company_id'],
    ];
    for (const [body, location] of cases) {
      const r = await svc.api.post('/v1/contacts', body, t.as);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors[0].location, JSON.stringify(body).slice(0, 80)).toBe(location);
    }
    const list = await svc.api.get('/v1/contacts', t.as);
    expect(list.body.data).toEqual([]);
  });

  it('never links a company of another workspace (422, as if it did not exist)', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const foreign = await company(b);
    const r = await svc.api.post('/v1/contacts', { company_id: foreign.id }, a.as);
    expect(r.status).toBe(422);
    expect(r.body.errors[0].location).toBe('body.company_id');
    const missing = await svc.api.post('/v1/contacts', { company_id: randomUUID() }, a.as);
    expect(r.body.detail).toBe(missing.body.detail);
    const c = await contact(a);
    const p = await svc.api.patch(`/v1/contacts/${c.id}`, { company_id: foreign.id }, a.as);
    expect(p.status).toBe(422);
    expect((await svc.api.get(`/v1/contacts/${c.id}`, a.as)).body.company).toBeNull();
  });

  it('keeps email unique per workspace whatever the case (409), stored as given', async () => {
    const t = await newTenant(svc.api);
    const first = await contact(t, { email: 'Sam@Example.com' });
    expect(first.email).toBe('Sam@Example.com');
    const dup = await svc.api.post('/v1/contacts', { email: 'sam@EXAMPLE.com' }, t.as);
    expect(dup.status).toBe(409);
    expect(isErrorBody(dup.body, 409, 'conflict')).toBe(true);
    expect(dup.body.detail).toMatch(/email/);
    // Through PATCH too.
    const other = await contact(t);
    const clash = await svc.api.patch(`/v1/contacts/${other.id}`, { email: 'SAM@example.com' }, t.as);
    expect(clash.status).toBe(409);
    // The same contact may change the case of its own email.
    const own = await svc.api.patch(`/v1/contacts/${first.id}`, { email: 'sam@example.com' }, t.as);
    expect(own.status).toBe(200);
    expect(own.body.email).toBe('sam@example.com');
    // Several contacts without an email are fine.
    await contact(t, { email: null });
    await contact(t, { email: null });
  });

  it('keeps external_id unique per workspace (409)', async () => {
    const t = await newTenant(svc.api);
    await contact(t, { external_id: 'ext-1' });
    const dup = await svc.api.post('/v1/contacts', { email: email(), external_id: 'ext-1' }, t.as);
    expect(dup.status).toBe(409);
    expect(dup.body.detail).toMatch(/external_id/);
    const other = await contact(t, { external_id: 'ext-2' });
    const clash = await svc.api.patch(`/v1/contacts/${other.id}`, { external_id: 'ext-1' }, t.as);
    expect(clash.status).toBe(409);
    expect((await svc.api.get(`/v1/contacts/${other.id}`, t.as)).body.external_id).toBe('ext-2');
  });

  it('lets two workspaces hold the same email and external_id', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    await contact(a, { email: 'shared@example.com', external_id: 'same' });
    const r = await svc.api.post('/v1/contacts', { email: 'Shared@example.com', external_id: 'same' }, b.as);
    expect(r.status).toBe(201);
  });
});

describe('changing and deleting contacts', () => {
  it('patches fields, merges custom (null removes a key) and emits contact.updated', async () => {
    const t = await newTenant(svc.api);
    const co = await company(t);
    const c = await contact(t, { name: 'Old', custom: { a: 1, b: 2 } });
    const seq = await latestSeq(t);
    const r = await svc.api.patch(
      `/v1/contacts/${c.id}`,
      { name: 'New', phone: '555', company_id: co.id, custom: { b: null, c: 'three' }, blocked: true, notes: 'n' },
      t.as,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      id: c.id,
      email: c.email,
      name: 'New',
      phone: '555',
      company: { id: co.id, name: co.name, domain: co.domain },
      custom: { a: 1, c: 'three' },
      blocked: true,
      notes: 'n',
      created_at: c.created_at,
    });
    expect(Date.parse(r.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(c.updated_at));
    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['contact.updated']);
    expect(events[0].data).toEqual({ contact: r.body });

    // Clearing: null unsets; company_id null unlinks.
    const cleared = await svc.api.patch(`/v1/contacts/${c.id}`, { phone: null, company_id: null, email: null }, t.as);
    expect(cleared.body).toMatchObject({ phone: null, company: null, email: null });

    // A PATCH that changes nothing emits nothing.
    const seq2 = await latestSeq(t);
    const same = await svc.api.patch(`/v1/contacts/${c.id}`, { name: 'New', custom: { zzz: null } }, t.as);
    expect(same.status).toBe(200);
    expect(same.body).toEqual(cleared.body);
    expect(await eventsAfter(t, seq2)).toEqual([]);
  });

  it('deletes a contact for good (204) with contact.deleted', async () => {
    const t = await newTenant(svc.api);
    const c = await contact(t, { external_id: 'gone' });
    const seq = await latestSeq(t);
    const r = await svc.api.delete(`/v1/contacts/${c.id}`, t.as);
    expect(r.status).toBe(204);
    expect((await svc.api.get(`/v1/contacts/${c.id}`, t.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/contacts/${c.id}`, t.as)).status).toBe(404);
    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['contact.deleted']);
    expect(events[0].data).toEqual({ contact_id: c.id });
    // Its email and external_id are free again.
    expect((await svc.api.post('/v1/contacts', { email: c.email, external_id: 'gone' }, t.as)).status).toBe(201);
  });

  it("lists the contact's tickets newest first, counts them, and refuses foreign cursors", async () => {
    const t = await newTenant(svc.api);
    const c = await contact(t);
    expect((await svc.api.get(`/v1/contacts/${c.id}/tickets`, t.as)).body).toEqual({ data: [], next_cursor: null });
    const made: string[] = [];
    for (const subject of ['one', 'two', 'three']) {
      made.push((await svc.api.post('/v1/tickets', { subject, contact_id: c.id }, t.as)).body.id);
    }
    await svc.api.post('/v1/tickets', { subject: 'someone else', contact: { email: email() } }, t.as);
    await svc.api.delete(`/v1/tickets/${made[0]}`, t.as);
    const r = await svc.api.get(`/v1/contacts/${c.id}/tickets?limit=1`, t.as);
    expect(r.status).toBe(200);
    expect(r.body.data.map((x: any) => x.subject)).toEqual(['three']);
    const next = await svc.api.get(
      `/v1/contacts/${c.id}/tickets?limit=1&cursor=${encodeURIComponent(r.body.next_cursor)}`,
      t.as,
    );
    expect(next.body.data.map((x: any) => x.subject)).toEqual(['two']);
    expect(next.body.next_cursor).toBeNull();
    expect((await svc.api.get(`/v1/contacts/${c.id}`, t.as)).body.ticket_count).toBe(2);
    const page = await svc.api.get('/v1/contacts?limit=1', t.as);
    expect(page.body.next_cursor).not.toBeNull();
    const bad = await svc.api.get(
      `/v1/contacts/${c.id}/tickets?cursor=${encodeURIComponent(page.body.next_cursor)}`,
      t.as,
    );
    expect(bad.status).toBe(422);
    // Deleting the contact keeps its tickets, without a contact.
    expect((await svc.api.delete(`/v1/contacts/${c.id}`, t.as)).status).toBe(204);
    const kept = await svc.api.get(`/v1/tickets/${made[2]}`, t.as);
    expect(kept.status).toBe(200);
    expect(kept.body.contact).toBeNull();
  });
});

describe('lists', () => {
  it('pages through every contact newest first with no repeats or gaps', async () => {
    const t = await newTenant(svc.api);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await contact(t, { name: `Person ${i}` })).id);
    const pages = await allPages('/v1/contacts', t.as, 3);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(pages.flat().map((c) => c.id)).toEqual([...ids].reverse());
  });

  it('filters by q (name, email, phone; case-insensitive substring) and by company_id', async () => {
    const t = await newTenant(svc.api);
    const co = await company(t);
    const alice = await contact(t, { name: 'Alice Liddell', email: 'alice@wonder.example', phone: '+44 20 7946 0001' });
    const bob = await contact(t, { name: 'Bob Stone', email: 'bob@builder.example', company_id: co.id });
    const carol = await contact(t, { name: 'Carol 100%_done', email: 'carol@x.example', company_id: co.id });
    const ids = async (qs: string) => {
      const r = await svc.api.get(`/v1/contacts?${qs}`, t.as);
      expect(r.status, r.text).toBe(200);
      return r.body.data.map((c: any) => c.id);
    };
    expect(await ids('q=LIDDELL')).toEqual([alice.id]);
    expect(await ids('q=builder.EX')).toEqual([bob.id]);
    expect(await ids('q=7946')).toEqual([alice.id]);
    expect(await ids('q=%2B44')).toEqual([alice.id]);
    expect(await ids('q=o')).toEqual([carol.id, bob.id, alice.id]);
    // LIKE characters are literal.
    expect(await ids(`q=${encodeURIComponent('%_')}`)).toEqual([carol.id]);
    expect(await ids(`q=${encodeURIComponent('_')}`)).toEqual([carol.id]);
    expect(await ids('q=nobody')).toEqual([]);
    expect(await ids(`company_id=${co.id}`)).toEqual([carol.id, bob.id]);
    expect(await ids(`company_id=${co.id}&q=bob`)).toEqual([bob.id]);
    expect(await ids(`company_id=${randomUUID()}`)).toEqual([]);
    // Pages keep their filter; a cursor of one filter does not serve another.
    const pages = await allPages(`/v1/contacts?company_id=${co.id}`, t.as, 1);
    expect(pages.flat().map((c) => c.id)).toEqual([carol.id, bob.id]);
    const first = await svc.api.get(`/v1/contacts?company_id=${co.id}&limit=1`, t.as);
    const other = await svc.api.get(`/v1/contacts?q=o&cursor=${encodeURIComponent(first.body.next_cursor)}`, t.as);
    expect(other.status).toBe(422);
    // Bad filters.
    expect((await svc.api.get('/v1/contacts?company_id=nope', t.as)).status).toBe(422);
    expect((await svc.api.get(`/v1/contacts?q=${'q'.repeat(201)}`, t.as)).status).toBe(422);
    expect((await svc.api.get('/v1/contacts?q=', t.as)).status).toBe(422);
    expect((await svc.api.get(`/v1/contacts?tag=${'t'.repeat(51)}`, t.as)).status).toBe(422);
  });

  it("never lists another workspace's contacts", async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    await contact(a, { name: 'Only In A' });
    const r = await svc.api.get('/v1/contacts?q=Only', b.as);
    expect(r.body).toEqual({ data: [], next_cursor: null });
  });
});

describe('access', () => {
  it('lets any member read and agents and above write; viewers get 403 on writes', async () => {
    const t = await newTenant(svc.api);
    const viewer = await join(t, 'viewer');
    const agent = await join(t, 'agent');
    const c = await contact(t);
    expect((await svc.api.get('/v1/contacts', viewer)).status).toBe(200);
    expect((await svc.api.get(`/v1/contacts/${c.id}`, viewer)).status).toBe(200);
    expect((await svc.api.get(`/v1/contacts/${c.id}/tickets`, viewer)).status).toBe(200);
    for (const r of [
      await svc.api.post('/v1/contacts', { email: email() }, viewer),
      await svc.api.patch(`/v1/contacts/${c.id}`, { name: 'x' }, viewer),
      await svc.api.delete(`/v1/contacts/${c.id}`, viewer),
    ]) {
      expect(r.status).toBe(403);
      expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
    }
    const made = await svc.api.post('/v1/contacts', { email: email() }, agent);
    expect(made.status).toBe(201);
    expect((await svc.api.patch(`/v1/contacts/${made.body.id}`, { name: 'Agent made' }, agent)).status).toBe(200);
    expect((await svc.api.delete(`/v1/contacts/${made.body.id}`, agent)).status).toBe(204);
  });

  it('lets keys with contacts:read read only, contacts:write write, and others nothing', async () => {
    const t = await newTenant(svc.api);
    const c = await contact(t);
    const reader = { token: (await newApiKey(svc.api, t, ['contacts:read'])).key };
    const writer = { token: (await newApiKey(svc.api, t, ['contacts:write'])).key };
    const tickets = { token: (await newApiKey(svc.api, t, ['tickets:read', 'tickets:write'])).key };
    expect((await svc.api.get('/v1/contacts', reader)).status).toBe(200);
    expect((await svc.api.get(`/v1/contacts/${c.id}`, reader)).status).toBe(200);
    expect((await svc.api.post('/v1/contacts', { email: email() }, reader)).status).toBe(403);
    expect((await svc.api.patch(`/v1/contacts/${c.id}`, { name: 'x' }, reader)).status).toBe(403);
    expect((await svc.api.delete(`/v1/contacts/${c.id}`, reader)).status).toBe(403);
    expect((await svc.api.get(`/v1/contacts/${c.id}`, writer)).status).toBe(200);
    const made = await svc.api.post('/v1/contacts', { email: email() }, writer);
    expect(made.status).toBe(201);
    expect((await svc.api.patch(`/v1/contacts/${made.body.id}`, { name: 'Key made' }, writer)).status).toBe(200);
    expect((await svc.api.get('/v1/contacts', tickets)).status).toBe(403);
    expect((await svc.api.get(`/v1/contacts/${c.id}`, tickets)).status).toBe(403);
    expect((await svc.api.post('/v1/contacts', { email: email() }, tickets)).status).toBe(403);
  });

  it("answers 404 for another workspace's contact, identical to a missing one, and changes nothing", async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const c = await contact(a, { name: 'Private' });
    const missing = randomUUID();
    for (const [m, suffix, body] of [
      ['GET', '', undefined],
      ['GET', '/tickets', undefined],
      ['PATCH', '', { name: 'Stolen' }],
      ['DELETE', '', undefined],
    ] as const) {
      const foreign = await svc.api.req(m, `/v1/contacts/${c.id}${suffix}`, { ...b.as, body });
      const none = await svc.api.req(m, `/v1/contacts/${missing}${suffix}`, { ...b.as, body });
      expect(foreign.status, `${m} ${suffix}`).toBe(404);
      expect(foreign.body).toEqual(none.body);
    }
    const still = await svc.api.get(`/v1/contacts/${c.id}`, a.as);
    expect(still.body.name).toBe('Private');
  });
});

describe('company link by id or domain', () => {
  it('links by {id}, finds or creates by {domain}, unlinks with null, and refuses mixtures', async () => {
    const t = await newTenant(svc.api);
    const co = await company(t, { name: 'Acme', domain: 'acme.example' });
    const byId = await svc.api.post('/v1/contacts', { email: email(), company: { id: co.id } }, t.as);
    expect(byId.status, byId.text).toBe(201);
    expect(byId.body.company).toEqual({ id: co.id, name: 'Acme', domain: 'acme.example' });
    // An existing domain (any case) is found; a new one is created, named as asked.
    const seq = await latestSeq(t);
    const byDomain = await svc.api.post('/v1/contacts', { email: email(), company: { domain: 'ACME.example' } }, t.as);
    expect(byDomain.body.company.id).toBe(co.id);
    const fresh = await svc.api.post(
      '/v1/contacts',
      { email: email(), company: { domain: 'globex.example', name: 'Globex' } },
      t.as,
    );
    expect(fresh.body.company).toMatchObject({ name: 'Globex', domain: 'globex.example' });
    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['contact.created', 'company.created', 'contact.created']);
    const unlinked = await svc.api.patch(`/v1/contacts/${fresh.body.id}`, { company: null }, t.as);
    expect(unlinked.body.company).toBeNull();
    const bad: Array<[unknown, string]> = [
      [{ id: co.id, domain: 'acme.example' }, 'body.company'],
      [{}, 'body.company'],
      [{ id: randomUUID() }, 'body.company.id'],
      [{ domain: 'not a domain' }, 'body.company.domain'],
      [{ id: co.id, name: 'x' }, 'body.company.name'],
    ];
    for (const [link, location] of bad) {
      const r = await svc.api.post('/v1/contacts', { email: email(), company: link }, t.as);
      expect(r.status, JSON.stringify(link)).toBe(422);
      expect(r.body.errors[0].location).toBe(location);
    }
    const both = await svc.api.post(
      '/v1/contacts',
      { email: email(), company: { id: co.id }, company_id: co.id },
      t.as,
    );
    expect(both.status).toBe(422);
    // Another workspace's company id is unknown here.
    const other = await newTenant(svc.api);
    const foreign = await svc.api.post('/v1/contacts', { email: email(), company: { id: co.id } }, other.as);
    expect(foreign.status).toBe(422);
  });
});
