// GET /v1/reports/overview: exact figures on a hand-built set of tickets (created through the API,
// then their times, CSAT and SLA set in the database so medians are known), spam, deleted, merged
// and other workspaces' tickets left out, by_day in the workspace's time zone across midnight,
// private teams, range rules (422 with the location) and who may read it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTicket } from '../../support/builders.js';
import {
  addMember,
  isErrorBody,
  type Member,
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

const db = () => svc.rt.deps.database.db;

/** A ticket created through the API, then given known values in the database. */
async function ticket(t: Tenant, body: Record<string, unknown>, set: Record<string, unknown> = {}): Promise<string> {
  const { id } = await makeTicket(svc.api, t, { subject: 'Report me', ...body });
  const values: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(set)) {
    values[k] = k === 'csat' || k === 'sla' ? (v === null ? null : JSON.stringify(v)) : v;
  }
  if (Object.keys(values).length > 0) {
    await db()
      .updateTable('tickets')
      .set(values as never)
      .where('workspace_id', '=', t.workspaceId)
      .where('id', '=', id)
      .execute();
  }
  return id;
}

const at = (s: string) => new Date(s);
const plus = (s: string, minutes: number) => new Date(Date.parse(s) + minutes * 60_000);

describe('the overview of a hand-built month', () => {
  let t: Tenant;
  let ann: Member;
  let bob: Member;

  beforeAll(async () => {
    t = await newTenant(svc.api);
    expect((await svc.api.patch('/v1/workspace', { settings: { timezone: 'America/New_York' } }, t.as)).status).toBe(
      200,
    );
    ann = await addMember(svc, t, 'agent', 'Ann Agent');
    bob = await addMember(svc, t, 'agent', 'Bob Agent');

    // In range (New York, 2026-03-01 to 2026-03-04 exclusive = 05:00Z to 05:00Z).
    // T1: Mar 1, email, sev1, Ann; first reply 10 min, solved after 120 min, CSAT 5, SLA breached.
    await ticket(
      t,
      { channel: 'email', severity: 'sev1', assignee_id: ann.userId },
      {
        created_at: at('2026-03-01T14:00:00Z'),
        first_responded_at: plus('2026-03-01T14:00:00Z', 10),
        status: 'solved',
        solved_at: plus('2026-03-01T14:00:00Z', 120),
        csat: { score: 5, comment: 'great' },
        sla: { policy_id: null, first_response_due_at: null, resolution_due_at: null, breached: true },
      },
    );
    // T2: 23:30 on Mar 1 in New York (04:30Z on Mar 2), chat, no severity, Ann; first reply 30 min,
    // solved 240 min later (03:30 on Mar 2 in New York), closed since, CSAT 3.
    await ticket(
      t,
      { assignee_id: ann.userId },
      {
        channel: 'chat',
        created_at: at('2026-03-02T04:30:00Z'),
        first_responded_at: plus('2026-03-02T04:30:00Z', 30),
        status: 'closed',
        solved_at: plus('2026-03-02T04:30:00Z', 240),
        csat: { score: 3 },
      },
    );
    // T3: 00:30 on Mar 2 in New York, api, sev2, Bob; first reply 25 min; still open; SLA not breached.
    await ticket(
      t,
      { severity: 'sev2', assignee_id: bob.userId },
      {
        created_at: at('2026-03-02T05:30:00Z'),
        first_responded_at: plus('2026-03-02T05:30:00Z', 25),
        sla: { policy_id: null, first_response_due_at: null, resolution_due_at: null, breached: false },
      },
    );
    // T4: Mar 3, portal, sev4, nobody; no reply; pending.
    await ticket(
      t,
      { severity: 'sev4' },
      { channel: 'portal', created_at: at('2026-03-03T15:00:00Z'), status: 'pending' },
    );
    // T5: created before the range, solved in it (Mar 3) by Bob after 11 days; CSAT 5.
    await ticket(
      t,
      { channel: 'email', assignee_id: bob.userId },
      {
        created_at: at('2026-02-20T12:00:00Z'),
        first_responded_at: plus('2026-02-20T12:00:00Z', 5),
        status: 'solved',
        solved_at: at('2026-03-03T12:00:00Z'),
        csat: { score: 5 },
      },
    );
    // Left out: spam, deleted, merged away, the end bound itself, a minute before the start.
    const breached = { policy_id: null, first_response_due_at: null, resolution_due_at: null, breached: true };
    await ticket(
      t,
      { assignee_id: ann.userId },
      {
        created_at: at('2026-03-02T12:00:00Z'),
        first_responded_at: at('2026-03-02T12:01:00Z'),
        status: 'solved',
        solved_at: at('2026-03-02T13:00:00Z'),
        spam: true,
        csat: { score: 1 },
        sla: breached,
      },
    );
    await ticket(
      t,
      { assignee_id: ann.userId },
      {
        created_at: at('2026-03-02T12:00:00Z'),
        status: 'solved',
        solved_at: at('2026-03-02T13:00:00Z'),
        deleted_at: at('2026-03-02T14:00:00Z'),
        sla: breached,
      },
    );
    const source = await ticket(t, {}, { created_at: at('2026-03-02T12:00:00Z') });
    const into = await ticket(
      t,
      {},
      { created_at: at('2026-01-02T12:00:00Z'), status: 'closed', solved_at: at('2026-01-03T12:00:00Z') },
    );
    expect((await svc.api.post(`/v1/tickets/${source}/merge`, { into_id: into }, t.as)).status).toBe(200);
    await db()
      .updateTable('tickets')
      .set({ solved_at: at('2026-03-02T13:00:00Z') })
      .where('workspace_id', '=', t.workspaceId)
      .where('id', '=', source)
      .execute();
    await ticket(t, {}, { created_at: at('2026-03-04T05:00:00Z') }); // open, at `to`: outside
    await ticket(t, {}, { created_at: at('2026-03-01T04:59:00Z') }); // open, 23:59 on Feb 28 in New York

    // Another workspace's tickets in the same range never count.
    const other = await newTenant(svc.api);
    await ticket(
      other,
      { channel: 'email', severity: 'sev1' },
      {
        created_at: at('2026-03-02T12:00:00Z'),
        first_responded_at: at('2026-03-02T12:01:00Z'),
        status: 'solved',
        solved_at: at('2026-03-02T13:00:00Z'),
        csat: { score: 1 },
        sla: breached,
      },
    );
  });

  it('counts, medians, CSAT and SLA breaches exactly, per day in the workspace time zone', async () => {
    const r = await svc.api.get('/v1/reports/overview?from=2026-03-01&to=2026-03-04', t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({
      from: '2026-03-01T05:00:00.000Z',
      to: '2026-03-04T05:00:00.000Z',
      timezone: 'America/New_York',
      created: 4,
      solved: 3,
      // T3 open, T4 pending, and the two open ones outside the range (open_now ignores the range).
      open_now: 4,
      first_response_p50_minutes: 25, // 10, 25, 30
      resolution_p50_minutes: 240, // 120, 240, 15840
      csat_avg: 4.33, // (5 + 3 + 5) / 3
      csat_count: 3,
      sla_breached: 1,
      // Each day's medians and CSAT: first response of that day's created tickets, resolution and
      // CSAT of that day's solved ones.
      by_day: [
        {
          date: '2026-03-01',
          created: 2,
          solved: 1,
          first_response_p50_minutes: 20, // T1 10, T2 30
          resolution_p50_minutes: 120, // T1
          csat_avg: 5,
          csat_count: 1,
        },
        {
          date: '2026-03-02',
          created: 1,
          solved: 1,
          first_response_p50_minutes: 25, // T3
          resolution_p50_minutes: 240, // T2
          csat_avg: 3,
          csat_count: 1,
        },
        {
          date: '2026-03-03',
          created: 1,
          solved: 1,
          first_response_p50_minutes: null, // T4 not answered
          resolution_p50_minutes: 15840, // T5
          csat_avg: 5,
          csat_count: 1,
        },
      ],
      by_channel: { email: 1, chat: 1, api: 1, portal: 1 },
      by_severity: { sev1: 1, sev2: 1, sev3: 0, sev4: 1, none: 1 },
      by_agent: [
        {
          user: { id: ann.userId, name: 'Ann Agent', email: ann.email, avatar_url: null },
          solved: 2,
          first_response_p50_minutes: 20, // median of 10 and 30
        },
        {
          user: { id: bob.userId, name: 'Bob Agent', email: bob.email, avatar_url: null },
          solved: 1,
          first_response_p50_minutes: 25,
        },
      ],
    });

    // The same instants as date-times give the same report.
    const same = await svc.api.get('/v1/reports/overview?from=2026-03-01T00:00:00-05:00&to=2026-03-04T05:00:00Z', t.as);
    expect(same.status).toBe(200);
    expect(same.body).toEqual(r.body);
  });

  it('timezone moves the days: in UTC the ticket of 23:30 New York time is on the next day', async () => {
    const r = await svc.api.get('/v1/reports/overview?from=2026-03-01&to=2026-03-04&timezone=UTC', t.as);
    expect(r.status).toBe(200);
    expect(r.body.from).toBe('2026-03-01T00:00:00.000Z');
    expect(r.body.timezone).toBe('UTC');
    // 04:59Z on Mar 1 is now inside the range; 04:30Z on Mar 2 is Mar 2.
    expect(r.body.by_day.map((d: any) => ({ date: d.date, created: d.created, solved: d.solved }))).toEqual([
      { date: '2026-03-01', created: 2, solved: 1 },
      { date: '2026-03-02', created: 2, solved: 1 },
      { date: '2026-03-03', created: 1, solved: 1 },
    ]);
    expect(r.body.created).toBe(5);
  });

  it('a range without tickets: zeros, null medians and every day listed', async () => {
    const r = await svc.api.get('/v1/reports/overview?from=2025-06-01&to=2025-06-03', t.as);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      created: 0,
      solved: 0,
      open_now: 4,
      first_response_p50_minutes: null,
      resolution_p50_minutes: null,
      csat_avg: null,
      csat_count: 0,
      sla_breached: 0,
      by_day: [
        { date: '2025-06-01', created: 0, solved: 0 },
        { date: '2025-06-02', created: 0, solved: 0 },
      ],
      by_channel: { email: 0, chat: 0, api: 0, portal: 0 },
      by_severity: { sev1: 0, sev2: 0, sev3: 0, sev4: 0, none: 0 },
      by_agent: [],
    });
  });

  it('defaults to the last 30 days, today included, in the workspace time zone', async () => {
    const r = await svc.api.get('/v1/reports/overview', t.as);
    expect(r.status).toBe(200);
    expect(r.body.by_day).toHaveLength(30);
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(new Date());
    expect(r.body.by_day.at(-1).date).toBe(today);
    expect(Date.parse(r.body.to) - Date.now()).toBeGreaterThan(0);
    expect(Date.parse(r.body.to) - Date.now()).toBeLessThanOrEqual(25 * 3600_000);
  });

  it('API keys with tickets:read read it; agents and admins do; viewers and other keys get 403', async () => {
    const key = await newApiKey(svc.api, t, ['tickets:read']);
    const q = '/v1/reports/overview?from=2026-03-01&to=2026-03-04';
    const byKey = await svc.api.get(q, { token: key.key });
    expect(byKey.status).toBe(200);
    expect(byKey.body.created).toBe(4);
    expect((await svc.api.get(q, ann.as)).status).toBe(200);
    const admin = await addMember(svc, t, 'admin');
    expect((await svc.api.get(q, admin.as)).status).toBe(200);

    const viewer = await addMember(svc, t, 'viewer');
    const v = await svc.api.get(q, viewer.as);
    expect(v.status).toBe(403);
    expect(isErrorBody(v.body, 403, 'forbidden')).toBe(true);
    const contactsKey = await newApiKey(svc.api, t, ['contacts:read', 'settings:read']);
    expect((await svc.api.get(q, { token: contactsKey.key })).status).toBe(403);
    expect((await svc.api.get(q)).status).toBe(401);
  });
});

describe('private teams', () => {
  it("counts a private team's tickets only for its members, admins and owners", async () => {
    const t = await newTenant(svc.api);
    const inside = await addMember(svc, t, 'agent', 'In Team');
    const outside = await addMember(svc, t, 'agent', 'Out Team');
    const team = await svc.api.post('/v1/teams', { name: 'VIP', private: true, member_ids: [inside.userId] }, t.as);
    expect(team.status, team.text).toBe(201);
    await ticket(t, { team_id: team.body.id }, { created_at: at('2026-05-02T12:00:00Z') });
    await ticket(t, {}, { created_at: at('2026-05-02T12:00:00Z') });
    const q = '/v1/reports/overview?from=2026-05-01&to=2026-05-03';
    const created = async (as: object) => (await svc.api.get(q, as)).body.created;
    expect(await created(t.as)).toBe(2);
    expect(await created(inside.as)).toBe(2);
    expect(await created(outside.as)).toBe(1);
    const key = await newApiKey(svc.api, t, ['tickets:read']);
    expect(await created({ token: key.key })).toBe(1);
  });
});

describe('bad ranges', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await newTenant(svc.api);
  });

  const cases: Array<[string, string]> = [
    ['from=2026-03-04&to=2026-03-01', 'query.to'],
    ['from=2026-03-04&to=2026-03-04', 'query.to'],
    ['from=2026-03-04T10:00:00Z&to=2026-03-04T09:59:59Z', 'query.to'],
    ['from=2025-01-01&to=2026-01-02', 'query.to'],
    ['from=2020-01-01', 'query.from'],
    ['from=2999-01-01', 'query.from'],
    ['from=2026-02-30&to=2026-03-04', 'query.from'],
    ['from=yesterday', 'query.from'],
    ['from=2026-03-01&to=2026-03-04T10:00:00', 'query.to'],
    ['to=2026-13-01', 'query.to'],
    ['from=2026-03-01&to=2026-03-04&timezone=Mars/Olympus', 'query.timezone'],
  ];
  for (const [qs, location] of cases) {
    it(`${qs} → 422 at ${location}`, async () => {
      const r = await svc.api.get(`/v1/reports/overview?${qs}`, t.as);
      expect(r.status, r.text).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors.map((e: { location: string }) => e.location)).toContain(location);
    });
  }

  it('exactly one year is allowed; an unknown parameter is refused', async () => {
    expect((await svc.api.get('/v1/reports/overview?from=2025-01-01&to=2026-01-01', t.as)).status).toBe(200);
    const r = await svc.api.get('/v1/reports/overview?from=2025-01-01&bogus=1', t.as);
    expect(r.status).toBe(422);
  });
});
