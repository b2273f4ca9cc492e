// Lists keep each ticket's JSON between requests (src/modules/tickets/json-cache.ts). What a user
// would notice if that went wrong: a list showing a ticket, its contact, its assignee or its
// labels as they were before a change. Every step below changes one of them, by the API or
// behind the service's back (another process, SQL), then compares each item of the lists (the
// newest first, a relevance-ranked q list, the oldest first) with the ticket's GET, which builds
// its JSON afresh.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ticketJsonCache } from '../../../src/modules/tickets/json-cache.js';
import { makeTicket, uniqueEmail } from '../../support/builders.js';
import {
  addMember,
  newApiKey,
  newTenant,
  onPostgres,
  type Service,
  startService,
  type Tenant,
  unique,
} from '../../support/helpers.js';

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
    const tk = await makeTicket(svc.api, t, {
      subject: `Quartzite order ${i}`,
      contact: { email, name: 'Jane Doe' },
      ...extra,
    });
    ids.push(tk.id);
    contactId = tk.contact.id;
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

// A list's statement is built once and kept (src/modules/tickets/list.ts, compiledPages): the
// same request again runs it without building it. What a user would notice if that went wrong:
// someone else's list (a private team's ticket, another person's "mine"), or a list that does not
// follow the data or a label's new name.
describe('lists asked for again', () => {
  it('are each caller’s own, follow new tickets, and follow a label’s new name', async () => {
    const w = await newTenant(svc.api);
    const insider = await addMember(svc, w, 'agent', 'Ina Insider');
    const outsider = await addMember(svc, w, 'agent', 'Otto Outsider');
    const key = await newApiKey(svc.api, w, ['tickets:read']);
    const team = await svc.api.post(
      '/v1/teams',
      { name: unique('Vault'), private: true, member_ids: [insider.userId] },
      w.as,
    );
    expect(team.status, team.text).toBe(201);
    const create = async (body: Record<string, unknown>) =>
      (await makeTicket(svc.api, w, { contact: { email: uniqueEmail() }, ...body })).id as string;
    const secret = await create({ subject: 'Basaltic vault', team_id: team.body.id });
    const open = await create({ subject: 'Basaltic lobby', assignee_id: outsider.userId, tags: ['granite'] });
    const mine = await create({ subject: 'Pumice desk', assignee_id: insider.userId });
    const paths = ['/v1/tickets?limit=50', '/v1/tickets?q=basaltic', '/v1/tickets?q=basaltic&order=asc'];
    const idsOf = async (path: string, as: object) => {
      const r = await svc.api.get(path, as);
      expect(r.status, r.text).toBe(200);
      return r.body.data.map((x: { id: string }) => x.id) as string[];
    };
    // The team's member first, then those outside it, then the member again: the same requests.
    for (const round of [0, 1]) {
      for (const path of paths) {
        expect(await idsOf(path, insider.as), `${path} round ${round}`).toContain(secret);
        expect(await idsOf(path, outsider.as), path).not.toContain(secret);
        expect(await idsOf(path, { token: key.key }), path).not.toContain(secret);
        expect(await idsOf(path, w.as), path).toContain(secret);
      }
    }
    expect(await idsOf('/v1/tickets?assignee=me', insider.as)).toEqual([mine]);
    expect(await idsOf('/v1/tickets?assignee=me', outsider.as)).toEqual([open]);
    // A new match shows on the very same request.
    const later = await create({ subject: 'Basaltic annex' });
    expect(await idsOf('/v1/tickets?q=basaltic', outsider.as)).toEqual([later, open]);
    expect((await idsOf('/v1/tickets?limit=50', outsider.as))[0]).toBe(later);
    // A label renamed: the list by its old name is empty, by its new name it has the ticket.
    expect(await idsOf('/v1/tickets?tag=granite', outsider.as)).toEqual([open]);
    const labels = (await svc.api.get('/v1/tags', w.as)).body.data as Array<{ id: string; name: string }>;
    const granite = labels.find((g) => g.name === 'granite')!;
    expect((await svc.api.patch(`/v1/tags/${granite.id}`, { name: 'marble' }, w.as)).status).toBe(200);
    expect(await idsOf('/v1/tickets?tag=granite', outsider.as)).toEqual([]);
    expect(await idsOf('/v1/tickets?tag=marble', outsider.as)).toEqual([open]);
  });
});

describe('the cache itself', () => {
  it('keeps to its byte bound, least recently read out first', async () => {
    const { TicketJsonCache } = await import('../../../src/modules/tickets/json-cache.js');
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
