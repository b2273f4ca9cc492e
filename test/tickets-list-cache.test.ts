// Lists keep each ticket's JSON between requests (src/modules/tickets/json-cache.ts). What a user
// would notice if that went wrong: a list showing a ticket, its contact, its assignee or its
// labels as they were before a change. Every step below changes one of them, by the API or
// behind the service's back (another process, SQL), then compares each item of the lists (the
// newest first, a relevance-ranked q list, the oldest first) with the ticket's GET, which builds
// its JSON afresh.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ticketJsonCache } from '../src/modules/tickets/json-cache.js';
import { newTenant, onPostgres, type Service, startService, type Tenant, unique } from './helpers.js';

let svc: Service;
let t: Tenant;
const ids: string[] = [];
let contactId: string;
let tags: Record<string, string>;

beforeAll(async () => {
  svc = await startService({}, { jobs: false });
  t = await newTenant(svc.api);
  const email = `${unique('cache')}@example.com`;
  for (const [i, extra] of [
    { tags: ['billing', 'vip'], assignee_id: t.owner.userId },
    { tags: ['billing'] },
    {},
  ].entries()) {
    const r = await svc.api.post(
      '/v1/tickets',
      { subject: `Quartzite order ${i}`, contact: { email, name: 'Jane Doe' }, ...extra },
      t.as,
    );
    expect(r.status, r.text).toBe(201);
    ids.push(r.body.id);
    contactId = r.body.contact.id;
  }
  const list = await svc.api.get('/v1/tags', t.as);
  tags = Object.fromEntries(list.body.data.map((g: { name: string; id: string }) => [g.name, g.id]));
});
afterAll(async () => svc?.stop());

const PATHS = ['/v1/tickets?limit=50', '/v1/tickets?q=quartzite', '/v1/tickets?sort=created_at&order=asc'];

/** Every list's items equal the tickets' GET, twice (the second read comes from the cache). */
async function listsMatchGet(): Promise<Record<string, any>> {
  const fresh: Record<string, any> = {};
  for (const id of ids) {
    const r = await svc.api.get(`/v1/tickets/${id}`, t.as);
    expect(r.status).toBe(200);
    fresh[id] = r.body;
  }
  for (let round = 0; round < 2; round++) {
    for (const path of PATHS) {
      const r = await svc.api.get(path, t.as);
      expect(r.status, r.text).toBe(200);
      expect(r.body.data.map((x: { id: string }) => x.id).sort()).toEqual([...ids].sort());
      for (const item of r.body.data) expect(item, `${path} round ${round}`).toEqual(fresh[item.id]);
    }
  }
  return fresh;
}

describe('lists after changes to what a ticket shows', () => {
  it('shows the ticket as it is now after each kind of change, by the API or behind its back', async () => {
    let now = await listsMatchGet();
    expect(ticketJsonCache(svc.rt.deps.database).size).toBeGreaterThanOrEqual(3);

    // The ticket itself.
    expect((await svc.api.patch(`/v1/tickets/${ids[0]}`, { priority: 'urgent' }, t.as)).status).toBe(200);
    now = await listsMatchGet();
    expect(now[ids[0]!].priority).toBe('urgent');

    // Its contact, renamed through the API: all three tickets show the new name.
    expect((await svc.api.patch(`/v1/contacts/${contactId}`, { name: 'Jane Roe' }, t.as)).status).toBe(200);
    now = await listsMatchGet();
    for (const id of ids) expect(now[id].contact.name).toBe('Jane Roe');

    // Its assignee, renamed by another writer (no event reaches this process).
    const db = svc.rt.deps.database.db;
    await db.updateTable('users').set({ name: 'Olivia Renamed' }).where('id', '=', t.owner.userId).execute();
    now = await listsMatchGet();
    expect(now[ids[0]!].assignee.name).toBe('Olivia Renamed');

    // Labels: added, renamed, recoloured, merged, removed, deleted.
    expect((await svc.api.patch(`/v1/tickets/${ids[2]}`, { add_tags: ['vip'] }, t.as)).status).toBe(200);
    now = await listsMatchGet();
    expect(now[ids[2]!].tags.map((g: { name: string }) => g.name)).toEqual(['vip']);

    expect((await svc.api.patch(`/v1/tags/${tags.vip}`, { name: 'priority-customer' }, t.as)).status).toBe(200);
    now = await listsMatchGet();
    expect(now[ids[2]!].tags.map((g: { name: string }) => g.name)).toEqual(['priority-customer']);

    expect((await svc.api.patch(`/v1/tags/${tags.billing}`, { color: 'purple' }, t.as)).status).toBe(200);
    now = await listsMatchGet();
    expect(now[ids[1]!].tags[0].color).toBe('purple');

    expect((await svc.api.post(`/v1/tags/${tags.vip}/merge`, { into: tags.billing }, t.as)).status).toBe(200);
    now = await listsMatchGet();
    expect(now[ids[2]!].tags.map((g: { name: string }) => g.name)).toEqual(['billing']);
    expect(now[ids[0]!].tags.map((g: { name: string }) => g.name)).toEqual(['billing']);

    expect((await svc.api.patch(`/v1/tickets/${ids[1]}`, { remove_tags: ['billing'] }, t.as)).status).toBe(200);
    now = await listsMatchGet();
    expect(now[ids[1]!].tags).toEqual([]);

    expect((await svc.api.delete(`/v1/tags/${tags.billing}`, t.as)).status).toBe(204);
    now = await listsMatchGet();
    for (const id of ids) expect(now[id].tags).toEqual([]);

    // A row changed by SQL alone (a migration, a repair): the list follows it too.
    await db.updateTable('tickets').set({ subject: 'Quartzite order, edited' }).where('id', '=', ids[1]!).execute();
    now = await listsMatchGet();
    expect(now[ids[1]!].subject).toBe('Quartzite order, edited');
  });

  it.runIf(onPostgres)('a second process on the same database sees the first one’s changes in its lists', async () => {
    const other = await startService({}, { jobs: false });
    try {
      const read = async (s: Service) =>
        (await s.api.get('/v1/tickets?limit=50', t.as)).body.data.find((x: { id: string }) => x.id === ids[0]);
      expect((await read(other)).priority).toBe('urgent');
      expect((await svc.api.patch(`/v1/tickets/${ids[0]}`, { priority: 'low' }, t.as)).status).toBe(200);
      expect((await svc.api.patch(`/v1/contacts/${contactId}`, { name: 'Jane Poe' }, t.as)).status).toBe(200);
      const seen = await read(other);
      expect(seen.priority).toBe('low');
      expect(seen.contact.name).toBe('Jane Poe');
    } finally {
      await other.stop();
    }
  });
});

describe('the cache itself', () => {
  it('keeps to its byte bound, least recently read out first', async () => {
    const { TicketJsonCache } = await import('../src/modules/tickets/json-cache.js');
    const json = Buffer.from(`{"x":"${'a'.repeat(1000)}"}`);
    const c = new TicketJsonCache(5 * 1400);
    for (let i = 0; i < 10; i++) c.set('w', `t${i}`, 'v1', json, 0);
    expect(c.size).toBe(5);
    expect(c.get('w', 't9', 'v1', 0)).toBe(json);
    expect(c.get('w', 't0', 'v1', 0)).toBeUndefined();
    // A version that moved on, another workspace or an old entry: not served.
    expect(c.get('w', 't9', 'v2', 0)).toBeUndefined();
    c.set('w', 't8', 'v1', json, 0);
    expect(c.get('other', 't8', 'v1', 0)).toBeUndefined();
    c.set('w', 't7', 'v1', json, 0);
    expect(c.get('w', 't7', 'v1', c.ttlMs + 1)).toBeUndefined();
  });
});
