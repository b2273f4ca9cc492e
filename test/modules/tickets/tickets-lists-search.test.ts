// /v1/tickets, part 2 (part 1: tickets.test.ts, whose setup this file repeats): lists, who may do
// what, snooze, search and q on common words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeContact, makeTicket } from '../../support/builders.js';
import {
  addMember,
  eventsAfterOf,
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

const api = () => svc.api;
const ticket = (t: Tenant | ReqOpts, body: Record<string, unknown> = {}) => makeTicket(api(), t, body);

describe('lists', () => {
  it('filters, sorts and pages without skipping or repeating under concurrent inserts', async () => {
    const t = await newTenant(api());
    const agent = await addMember(svc, t, 'agent');
    const made: any[] = [];
    for (let i = 0; i < 9; i++) {
      made.push(
        await ticket(t, {
          priority: (['low', 'normal', 'high', 'urgent'] as const)[i % 4],
          severity: i % 3 === 0 ? null : `sev${(i % 4) + 1}`,
          status: i % 2 === 0 ? 'open' : 'pending',
          ...(i < 3 ? { assignee_id: agent.userId } : {}),
        }),
      );
    }
    // Pages of 2, newest activity first, while new tickets arrive: every earlier ticket once.
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: any = await api().get(
        `/v1/tickets?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        t.as,
      );
      expect(r.status, r.text).toBe(200);
      seen.push(...r.body.data.map((x: any) => x.id));
      cursor = r.body.next_cursor;
      if (pages++ === 1) await ticket(t, { subject: 'arrives meanwhile' });
    } while (cursor);
    expect(seen).toEqual([...made].reverse().map((m) => m.id));

    const ids = async (query: string, as = t.as) => {
      const r = await api().get(`/v1/tickets?${query}`, as);
      expect(r.status, `${query}: ${r.text}`).toBe(200);
      return r.body.data.map((x: any) => x.number);
    };
    expect(await ids('status=pending&sort=created_at&order=asc')).toEqual([2, 4, 6, 8]);
    expect(await ids('priority=urgent,high&sort=created_at&order=asc')).toEqual([3, 4, 7, 8]);
    expect(await ids('severity=none&sort=created_at&order=asc')).toEqual([1, 4, 7, 10]);
    expect(await ids(`assignee=${agent.userId}&sort=created_at&order=asc`)).toEqual([1, 2, 3]);
    expect(await ids('assignee=me', agent.as)).toEqual([3, 2, 1]);
    expect((await ids('assignee=none')).length).toBe(7);
    // priority desc: urgent first; severity desc: sev1 first, none last.
    const byPriority = (await api().get('/v1/tickets?sort=priority', t.as)).body.data.map((x: any) => x.priority);
    expect(byPriority.slice(0, 2)).toEqual(['urgent', 'urgent']);
    expect(byPriority.at(-1)).toBe('low');
    const bySeverity = (await api().get('/v1/tickets?sort=severity', t.as)).body.data.map((x: any) => x.severity);
    expect(bySeverity[0]).toBe('sev1');
    expect(bySeverity.slice(-4)).toEqual([null, null, null, null]);
    // Severity pages of 3 give the same order as one page.
    const paged: Array<string | null> = [];
    let c: string | null = null;
    do {
      const r: any = await api().get(
        `/v1/tickets?sort=severity&limit=3${c ? `&cursor=${encodeURIComponent(c)}` : ''}`,
        t.as,
      );
      paged.push(...r.body.data.map((x: any) => x.severity));
      c = r.body.next_cursor;
    } while (c);
    expect(paged).toEqual(bySeverity);
    // A cursor of another list is refused.
    const first = await api().get('/v1/tickets?limit=1', t.as);
    const wrong = await api().get(`/v1/tickets?status=open&cursor=${encodeURIComponent(first.body.next_cursor)}`, t.as);
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].location).toBe('query.cursor');
    for (const bad of [
      'status=done',
      'sort=subject',
      'assignee=someone',
      'limit=101',
      'spam=maybe',
      'view_id=x',
      'colour=red',
    ]) {
      expect((await api().get(`/v1/tickets?${bad}`, t.as)).status, bad).toBe(422);
    }
  });

  it('q finds words of the subject, message bodies (partial words too), the contact, and the number; ranked', async () => {
    await qFindsAndRanks(svc);
  });

  it('spam is left out unless asked for; counts', async () => {
    const t = await newTenant(api());
    const agent = await addMember(svc, t, 'agent');
    const s = await ticket(t);
    await api().patch(`/v1/tickets/${s.id}`, { spam: true }, t.as);
    await ticket(t, { assignee_id: agent.userId });
    await ticket(t, { status: 'pending' });
    await ticket(t, { status: 'solved' });
    await ticket(t, { status: 'on_hold', assignee_id: agent.userId });
    expect((await api().get('/v1/tickets', t.as)).body.data).toHaveLength(4);
    expect((await api().get('/v1/tickets?spam=true', t.as)).body.data.map((x: any) => x.id)).toEqual([s.id]);
    const counts = await api().get('/v1/tickets/counts', agent.as);
    expect(counts.status).toBe(200);
    expect(counts.body).toEqual({
      unassigned: 1,
      mine: 2,
      open: 1,
      pending: 1,
      on_hold: 1,
      solved: 1,
      spam: 1,
      views: {},
    });
  });
});

describe('who may do what', () => {
  it('viewers and read keys read; agents and write keys write; a private team hides its tickets', async () => {
    const t = await newTenant(api());
    const viewer = await addMember(svc, t, 'viewer');
    const agent = await addMember(svc, t, 'agent');
    const insider = await addMember(svc, t, 'agent');
    const readKey = await newApiKey(api(), t, ['tickets:read']);
    const contactsKey = await newApiKey(api(), t, ['contacts:read']);
    const tk = await ticket(t);
    expect((await api().get(`/v1/tickets/${tk.id}`, viewer.as)).status).toBe(200);
    expect((await api().get(`/v1/tickets/${tk.id}`, { token: readKey.key })).status).toBe(200);
    expect((await api().patch(`/v1/tickets/${tk.id}`, { priority: 'low' }, viewer.as)).status).toBe(403);
    expect((await api().post('/v1/tickets', { subject: 'x' }, { token: readKey.key })).status).toBe(403);
    expect((await api().get('/v1/tickets', { token: contactsKey.key })).status).toBe(403);
    expect((await api().patch(`/v1/tickets/${tk.id}`, { priority: 'low' }, agent.as)).status).toBe(200);

    const team = await api().post(
      '/v1/teams',
      { name: unique('VIP'), private: true, member_ids: [insider.userId] },
      t.as,
    );
    const secret = await ticket(t, { team_id: team.body.id, subject: 'Secret' });
    const insiderAs = insider.as;
    for (const as of [agent.as, viewer.as, { token: readKey.key }]) {
      expect((await api().get(`/v1/tickets/${secret.id}`, as)).status).toBe(404);
      expect((await api().get('/v1/tickets', as)).body.data.map((x: any) => x.id)).not.toContain(secret.id);
      expect((await api().get(`/v1/tickets/${secret.id}/messages`, as)).status).toBe(404);
    }
    expect((await api().get(`/v1/tickets/${secret.id}`, insiderAs)).status).toBe(200);
    expect((await api().get(`/v1/tickets/${secret.id}`, t.as)).status).toBe(200);
    // Its events are stand-ins for those who may not see it.
    const seq = await latestSeqOf(svc, t);
    await api().patch(`/v1/tickets/${secret.id}`, { priority: 'high' }, t.as);
    const seen = (await api().get(`/v1/events?since=${seq}`, agent.as)).body.data;
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((e: any) => e.type === 'event.hidden')).toBe(true);
  });
});

describe('snooze', () => {
  it('wakes a snoozed pending ticket: snooze cleared, open again, a system activity and ticket.updated', async () => {
    const { wakeSnoozedTickets } = await import('../../../src/modules/tickets/snooze.js');
    const t = await newTenant(api());
    const tk = await ticket(t, { status: 'pending' });
    const later = await ticket(t, { status: 'on_hold' });
    const at = new Date(Date.now() + 60_000);
    await api().patch(`/v1/tickets/${tk.id}`, { snoozed_until: at.toISOString() }, t.as);
    await api().patch(
      `/v1/tickets/${later.id}`,
      { snoozed_until: new Date(Date.now() + 3_600_000).toISOString() },
      t.as,
    );
    const seq = await latestSeqOf(svc, t);
    // Before its time nothing happens; a minute later it wakes, the other one not yet.
    await wakeSnoozedTickets(svc.rt.deps, new Date());
    expect((await api().get(`/v1/tickets/${tk.id}`, t.as)).body.status).toBe('pending');
    await wakeSnoozedTickets(svc.rt.deps, new Date(at.getTime() + 1000));
    const woke = (await api().get(`/v1/tickets/${tk.id}`, t.as)).body;
    expect(woke).toMatchObject({ status: 'open', snoozed_until: null });
    expect((await api().get(`/v1/tickets/${later.id}`, t.as)).body.status).toBe('on_hold');
    const acts = (await api().get(`/v1/tickets/${tk.id}/activities`, t.as)).body.data;
    expect(acts.at(-1)).toMatchObject({
      type: 'status_changed',
      data: { from: 'pending', to: 'open' },
      actor: { type: 'system', user: null, api_key_id: null },
    });
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['activity.created', 'ticket.updated']);
    expect(events[1].data.changes).toEqual(['snoozed_until', 'status']);
  });
});

describe('search', () => {
  it('GET /v1/search: up to five tickets and contacts each, best first; keys see only their kinds', async () => {
    const t = await newTenant(api());
    for (let i = 0; i < 7; i++) await ticket(t, { subject: `Refund request ${i}` });
    await makeContact(api(), t, { email: 'refundo.fan@example.com', name: 'Refundo Fan' });
    await makeContact(api(), t, { email: 'other@example.com', name: 'Other' });
    const r = await api().get('/v1/search?q=refund', t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body.tickets).toHaveLength(5);
    expect(r.body.tickets.every((x: any) => x.subject.startsWith('Refund request'))).toBe(true);
    expect(r.body.contacts.map((c: any) => c.name)).toEqual(['Refundo Fan']);
    expect(r.body.articles).toEqual([]);
    const ticketsOnly = await newApiKey(api(), t, ['tickets:read']);
    const k = await api().get('/v1/search?q=refund', { token: ticketsOnly.key });
    expect(k.body.tickets).toHaveLength(5);
    expect(k.body.contacts).toEqual([]);
    expect((await api().get('/v1/search', t.as)).status).toBe(422);
    const other = await newTenant(api());
    expect((await api().get('/v1/search?q=refund', other.as)).body.tickets).toEqual([]);
  });
});

/**
 * What q finds and in which order, the same whichever way PostgreSQL is asked (collecting the
 * matches of rare words, or walking the list for common ones: SEARCH_WALK_ABOVE).
 */
async function qFindsAndRanks(s: Service) {
  const t = await newTenant(s.api);
  const mk = async (body: Record<string, unknown>) => {
    const r = await s.api.post('/v1/tickets', { subject: 'Printer on fire', ...body }, t.as);
    expect(r.status, r.text).toBe(201);
    return r.body;
  };
  const f = await s.api.post('/v1/custom-fields', { entity: 'ticket', name: 'Order ref', type: 'text' }, t.as);
  expect(f.status, f.text).toBe(201);
  const a = await mk({ subject: 'Invoice for March is wrong' });
  const b = await mk({ subject: 'Hello', body_html: '<p>My <i>invoice</i> shows a duplicate charge</p>' });
  const c = await mk({
    subject: 'Login trouble',
    contact: { email: 'zelda.quartermaine@example.org', name: 'Zelda Q' },
  });
  const d = await mk({ subject: 'Shipping', fields: { [f.body.key]: 'INV-Invoice-7731' } });
  const e = await mk({ subject: 'Invoice copy', body_html: '<p>Please send the invoice again</p>' });
  await mk({ subject: 'Unrelated' });
  // Another workspace with the same words everywhere: never found (rare words are looked up by
  // the words alone, then kept to the caller's workspace).
  const other = await newTenant(s.api);
  for (const body of [
    { subject: 'Invoice for March is wrong' },
    { subject: 'Hello', body_html: '<p>My invoice shows a duplicate charge</p>' },
    { subject: 'Login', contact: { email: 'zelda.quartermaine@example.com', name: 'Zelda Q' } },
  ]) {
    expect((await s.api.post('/v1/tickets', body, other.as)).status).toBe(201);
  }
  const find = async (q: string, extra = '') => {
    const r = await s.api.get(`/v1/tickets?q=${encodeURIComponent(q)}${extra}`, t.as);
    expect(r.status, r.text).toBe(200);
    return r.body.data.map((x: any) => x.id);
  };
  // Subject matches first (newest first), then messages, contacts and fields (newest first).
  expect(await find('invoice')).toEqual([e.id, a.id, d.id, b.id]);
  expect(await find('invo')).toEqual([e.id, a.id, d.id, b.id]);
  expect(await find('duplicate charge')).toEqual([b.id]);
  expect(await find('quarterm')).toEqual([c.id]);
  expect(await find('Zelda')).toEqual([c.id]);
  expect(await find('inv-invoice-77')).toEqual([d.id]);
  expect(await find(`#${c.number}`)).toEqual([c.id]);
  expect(await find('nothing-like-this')).toEqual([]);
  expect(await find("o'brien & | ! :* (")).toEqual([]);
  // With a sort of its own, q is a filter.
  expect(await find('invoice', '&sort=created_at&order=asc')).toEqual([a.id, b.id, d.id, e.id]);
  // Every page of a list in pages of 1, as ids (stops at 10 pages).
  const paged = async (query: string) => {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const r: any = await s.api.get(
        `/v1/tickets?${query}&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        t.as,
      );
      expect(r.status, r.text).toBe(200);
      ids.push(...r.body.data.map((x: any) => x.id));
      cursor = r.body.next_cursor;
    } while (cursor !== null && ids.length < 10);
    return ids;
  };
  // Pages of 1 keep the ranked order across the tiers, without repeats.
  expect(await paged('q=invoice')).toEqual([e.id, a.id, d.id, b.id]);
  // order=asc turns the ranking round: the least relevant first, oldest first within a tier,
  // in one page and in pages of 1 (the cursor's tier and every tier after it).
  expect(await find('invoice', '&order=asc')).toEqual([b.id, d.id, a.id, e.id]);
  expect(await paged('q=invoice&order=asc')).toEqual([b.id, d.id, a.id, e.id]);
  // A page the first tier fills: the second tier's newer matches wait for the next page.
  const two = await s.api.get('/v1/tickets?q=invoice&limit=2', t.as);
  expect(two.body.data.map((x: any) => x.id)).toEqual([e.id, a.id]);
  const next = await s.api.get(
    `/v1/tickets?q=invoice&limit=2&cursor=${encodeURIComponent(two.body.next_cursor)}`,
    t.as,
  );
  expect(next.body.data.map((x: any) => x.id)).toEqual([d.id, b.id]);
  // The number is its own, first tier: ticket a's number and the word in its subject.
  const byNumber = await find(String(a.number));
  expect(byNumber[0]).toBe(a.id);

  // Long subjects: over 400 bytes they are walked on an index of their own and merged with the
  // short ones by recency (migration 0026). The longest subject of distinct short words, whose
  // words would not fit in an index entry, is saved and found like any other.
  const t2 = await newTenant(s.api);
  const pairs: string[] = [];
  for (let i = 0; i < 26 * 26; i++) pairs.push(String.fromCharCode(97 + Math.floor(i / 26), 97 + (i % 26)));
  const long = (head: string) => `${head} ${pairs.join(' ')}`.slice(0, 998 - ' ozymandias'.length) + ' ozymandias';
  const mk2 = async (subject: string) => {
    const r = await s.api.post('/v1/tickets', { subject }, t2.as);
    expect(r.status, r.text).toBe(201);
    expect(r.body.subject).toBe(subject);
    return r.body.id as string;
  };
  const s1 = await mk2('Receipt one');
  const l1 = await mk2(long('Receipt long one'));
  const s2 = await mk2('Receipt two');
  const l2 = await mk2(long('Receipt long two'));
  await mk2('Something else');
  const find2 = async (q: string, extra = '') => {
    const r = await s.api.get(`/v1/tickets?q=${encodeURIComponent(q)}${extra}`, t2.as);
    expect(r.status, r.text).toBe(200);
    return r.body.data.map((x: any) => x.id);
  };
  expect(await find2('receipt')).toEqual([l2, s2, l1, s1]);
  expect(await find2('receipt', '&order=asc')).toEqual([s1, l1, s2, l2]);
  expect(await find2('ozymandias')).toEqual([l2, l1]);
  const pages: string[] = [];
  let cursor: string | null = null;
  do {
    const r: any = await s.api.get(
      `/v1/tickets?q=receipt&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      t2.as,
    );
    pages.push(...r.body.data.map((x: any) => x.id));
    cursor = r.body.next_cursor;
  } while (cursor !== null && pages.length < 10);
  expect(pages).toEqual([l2, s2, l1, s1]);
}

describe('q on common words (the list walked in order: SEARCH_WALK_ABOVE=0)', () => {
  let walking: Service;
  beforeAll(async () => {
    walking = await startService({ SEARCH_WALK_ABOVE: '0' }, { jobs: false });
  });
  afterAll(async () => walking?.stop());

  it('finds and ranks exactly what collecting the matches finds', async () => {
    await qFindsAndRanks(walking);
  });
});
