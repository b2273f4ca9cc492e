import { beforeAll, describe, expect, it } from 'vitest';
import { addOpenMinutes, compileCalendar } from '../../../src/modules/business-hours/calendar.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
} from '../../support/helpers.js';
import { plus, QUARTER_HOUR_A_WEEK } from '../../support/sla.js';
import { ID, MIN, slaSuite } from './setup.js';

const suite = slaSuite();
const { policy, ticket, getTicket } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

// ---------------------------------------------------------------------------------------------

describe('/v1/sla-policies', () => {
  it('creates, reads, lists, changes and deletes policies, with their events', async () => {
    const t = await newTenant(svc.api);
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post(
      '/v1/sla-policies',
      { name: '  Urgent  ', priority: 'urgent', first_response_minutes: 30, resolution_minutes: 240 },
      t.as,
    );
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/sla-policies/${r.body.id}`);
    expect(r.body).toEqual({
      id: expect.stringMatching(ID),
      name: 'Urgent',
      priority: 'urgent',
      first_response_minutes: 30,
      next_response_minutes: null,
      resolution_minutes: 240,
      business_hours: false,
      enabled: true,
      position: 0,
      created_at: expect.stringMatching(/Z$/),
      updated_at: r.body.created_at,
    });
    const any = await policy(t, { first_response_minutes: 120, resolution_minutes: 1440, business_hours: true });
    expect(any.priority).toBeNull();
    expect(any.position).toBe(1);
    expect(any.business_hours).toBe(true);

    expect((await svc.api.get(`/v1/sla-policies/${r.body.id}`, t.as)).body).toEqual(r.body);
    expect((await svc.api.get(`/v1/sla-policies/${r.body.id.toUpperCase()}`, t.as)).body).toEqual(r.body);
    expect((await svc.api.get('/v1/sla-policies', t.as)).body).toEqual({ data: [r.body, any] });

    const p = await svc.api.patch(
      `/v1/sla-policies/${r.body.id}`,
      { enabled: false, priority: null, resolution_minutes: 300, position: 5 },
      t.as,
    );
    expect(p.status).toBe(200);
    expect(p.body).toEqual({
      ...r.body,
      enabled: false,
      priority: null,
      resolution_minutes: 300,
      position: 5,
      updated_at: expect.stringMatching(/Z$/),
    });
    // The same values again: no change, no event.
    expect((await svc.api.patch(`/v1/sla-policies/${r.body.id}`, { enabled: false }, t.as)).body).toEqual(p.body);
    expect((await svc.api.get('/v1/sla-policies', t.as)).body.data.map((x: any) => x.id)).toEqual([any.id, r.body.id]);

    const d = await svc.api.delete(`/v1/sla-policies/${r.body.id}`, t.as);
    expect(d.status).toBe(204);
    expect((await svc.api.get(`/v1/sla-policies/${r.body.id}`, t.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/sla-policies/${r.body.id}`, t.as)).status).toBe(404);

    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual([
      'sla_policy.created',
      'sla_policy.created',
      'sla_policy.updated',
      'sla_policy.deleted',
    ]);
    expect(events[0].data).toEqual({ sla_policy: r.body });
    expect(events[2].data).toEqual({ sla_policy: p.body });
    expect(events[3].data).toEqual({ sla_policy_id: r.body.id });
  });

  it('lists in evaluation order: position, then oldest first', async () => {
    const t = await newTenant(svc.api);
    const a = await policy(t, { name: 'A', first_response_minutes: 1, resolution_minutes: 2 });
    const b = await policy(t, { name: 'B', first_response_minutes: 1, resolution_minutes: 2 });
    const c = await policy(t, { name: 'C', first_response_minutes: 1, resolution_minutes: 2, position: 0 });
    expect([a.position, b.position, c.position]).toEqual([0, 1, 0]);
    const list = await svc.api.get('/v1/sla-policies', t.as);
    expect(list.body.data.map((x: any) => x.name)).toEqual(['A', 'C', 'B']);
  });

  it('validates bodies with the location of each mistake, creating nothing', async () => {
    const t = await newTenant(svc.api);
    const ok = { name: 'P', first_response_minutes: 60, resolution_minutes: 480 };
    const cases: Array<[unknown, string]> = [
      [{ first_response_minutes: 60, resolution_minutes: 480 }, 'body.name'],
      [{ ...ok, name: '   ' }, 'body.name'],
      [{ ...ok, name: 'x'.repeat(101) }, 'body.name'],
      [{ ...ok, priority: 'critical' }, 'body.priority'],
      [{ ...ok, first_response_minutes: 0 }, 'body.first_response_minutes'],
      [{ ...ok, first_response_minutes: 525_601 }, 'body.first_response_minutes'],
      [{ ...ok, first_response_minutes: 1.5 }, 'body.first_response_minutes'],
      [{ ...ok, first_response_minutes: '60' }, 'body.first_response_minutes'],
      [{ name: 'P', first_response_minutes: 60 }, 'body.resolution_minutes'],
      [{ ...ok, position: -1 }, 'body.position'],
      [{ ...ok, business_hours: 'yes' }, 'body.business_hours'],
      [{ ...ok, breached: false }, 'body.breached'],
    ];
    for (const [body, location] of cases) {
      const r = await svc.api.post('/v1/sla-policies', body, t.as);
      expect(r.status, location).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(
        r.body.errors.map((e: any) => e.location),
        JSON.stringify(body),
      ).toContain(location);
    }
    expect((await svc.api.get('/v1/sla-policies', t.as)).body.data).toEqual([]);
    const p = await policy(t, ok);
    for (const [body, location] of [
      [{ enabled: 'no' }, 'body.enabled'],
      [{ resolution_minutes: 0 }, 'body.resolution_minutes'],
      [{ name: '' }, 'body.name'],
      [{ id: p.id }, 'body.id'],
    ] as Array<[unknown, string]>) {
      const r = await svc.api.patch(`/v1/sla-policies/${p.id}`, body, t.as);
      expect(r.status, location).toBe(422);
      expect(r.body.errors[0].location).toBe(location);
    }
    expect((await svc.api.get(`/v1/sla-policies/${p.id}`, t.as)).body).toEqual(p);
  });

  it('holds at most 100 policies per workspace', async () => {
    const t = await newTenant(svc.api);
    await svc.rt.deps.database.db
      .insertInto('sla_policies')
      .values(
        Array.from({ length: 100 }, (_, i) => ({
          workspace_id: t.workspaceId,
          id: crypto.randomUUID(),
          name: `P${i}`,
          priority: null,
          first_response_minutes: 60,
          resolution_minutes: 60,
          business_hours: false,
          enabled: false,
          position: i,
        })),
      )
      .execute();
    const r = await svc.api.post(
      '/v1/sla-policies',
      { name: 'One more', first_response_minutes: 1, resolution_minutes: 1 },
      t.as,
    );
    expect(r.status).toBe(422);
    expect(r.body.errors[0].location).toBe('body');
    expect((await svc.api.get('/v1/sla-policies', t.as)).body.data).toHaveLength(100);
  });

  it('is a setting: admins and settings keys; agents and viewers get 403; other workspaces 404', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const admin = await addMember(svc, t, 'admin');
    const agent = await addMember(svc, t, 'agent');
    const viewer = await addMember(svc, t, 'viewer');
    const reader = await newApiKey(svc.api, t, ['settings:read']);
    const writer = await newApiKey(svc.api, t, ['settings:write']);
    const tickets = await newApiKey(svc.api, t, ['tickets:read', 'tickets:write']);
    const body = { name: 'P', first_response_minutes: 60, resolution_minutes: 480 };
    const p = await policy(t, body);

    for (const as of [agent.as, viewer.as, { token: tickets.key }]) {
      for (const r of [
        await svc.api.get('/v1/sla-policies', as),
        await svc.api.get(`/v1/sla-policies/${p.id}`, as),
        await svc.api.post('/v1/sla-policies', body, as),
        await svc.api.patch(`/v1/sla-policies/${p.id}`, { name: 'X' }, as),
        await svc.api.delete(`/v1/sla-policies/${p.id}`, as),
      ]) {
        expect(r.status).toBe(403);
        expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
      }
    }
    const ro = { token: reader.key };
    expect((await svc.api.get('/v1/sla-policies', ro)).status).toBe(200);
    expect((await svc.api.get(`/v1/sla-policies/${p.id}`, ro)).status).toBe(200);
    expect((await svc.api.post('/v1/sla-policies', body, ro)).status).toBe(403);
    expect((await svc.api.patch(`/v1/sla-policies/${p.id}`, { name: 'X' }, ro)).status).toBe(403);
    expect((await svc.api.post('/v1/sla-policies', body, { token: writer.key })).status).toBe(201);
    expect((await svc.api.post('/v1/sla-policies', body, admin.as)).status).toBe(201);
    expect((await svc.api.get(`/v1/sla-policies/${p.id}`, { token: writer.key })).status).toBe(200);
    expect((await svc.api.get(`/v1/sla-policies/${p.id}`)).status).toBe(401);

    // Another workspace's policy is not there, exactly like a missing one.
    const foreign = await svc.api.get(`/v1/sla-policies/${p.id}`, other.as);
    const missing = await svc.api.get('/v1/sla-policies/0193c6a0-0000-7000-8000-00000000dead', other.as);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    expect((await svc.api.patch(`/v1/sla-policies/${p.id}`, { name: 'X' }, other.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/sla-policies/${p.id}`, other.as)).status).toBe(404);
    expect((await svc.api.get('/v1/sla-policies/not-an-id', t.as)).status).toBe(404);
    expect((await svc.api.get(`/v1/sla-policies/${p.id}`, t.as)).body.name).toBe('P');
  });
});

// ---------------------------------------------------------------------------------------------

describe('clocks on new tickets', () => {
  it('the first enabled policy by position for the priority (or any) sets the due dates', async () => {
    const t = await newTenant(svc.api);
    await policy(t, {
      name: 'Off',
      priority: 'high',
      first_response_minutes: 1,
      resolution_minutes: 1,
      enabled: false,
    });
    const urgent = await policy(t, { priority: 'urgent', first_response_minutes: 60, resolution_minutes: 240 });
    const any = await policy(t, { first_response_minutes: 120, resolution_minutes: 1440 });
    const seq = await latestSeqOf(svc, t);

    const u = await ticket(t, { priority: 'urgent' });
    expect(u.sla).toEqual({
      policy_id: urgent.id,
      first_response_due_at: plus(u.created_at, 60),
      next_response_due_at: null,
      resolution_due_at: plus(u.created_at, 240),
      breached: false,
    });
    const h = await ticket(t, { priority: 'high' });
    expect(h.sla).toEqual({
      policy_id: any.id,
      first_response_due_at: plus(h.created_at, 120),
      next_response_due_at: null,
      resolution_due_at: plus(h.created_at, 1440),
      breached: false,
    });
    expect((await getTicket(t, u.id)).sla).toEqual(u.sla);
    // ticket.created already carries the clocks.
    const created = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'ticket.created');
    expect(created.map((e) => e.data.ticket.sla)).toEqual([u.sla, h.sla]);

    // Moving the catch-all first makes it win for urgent tickets too.
    await svc.api.patch(`/v1/sla-policies/${any.id}`, { position: 0 }, t.as);
    await svc.api.patch(`/v1/sla-policies/${urgent.id}`, { position: 1 }, t.as);
    expect((await ticket(t, { priority: 'urgent' })).sla.policy_id).toBe(any.id);
  });

  it('leaves sla null without a matching policy; a ticket created solved or answered starts stopped clocks', async () => {
    const t = await newTenant(svc.api);
    expect((await ticket(t)).sla).toBeNull();
    const p = await policy(t, { priority: 'urgent', first_response_minutes: 60, resolution_minutes: 240 });
    expect((await ticket(t, { priority: 'low' })).sla).toBeNull();
    const solved = await ticket(t, { priority: 'urgent', status: 'solved' });
    expect(solved.sla).toEqual({
      policy_id: p.id,
      first_response_due_at: null,
      next_response_due_at: null,
      resolution_due_at: null,
      breached: false,
    });
    // Created with an agent's reply: answered already.
    const answered = await ticket(t, {
      priority: 'urgent',
      contact: { email: 'ann@example.com' },
      body_html: '<p>We are on it.</p>',
      kind: 'reply',
    });
    expect(answered.first_responded_at).not.toBeNull();
    expect(answered.sla.first_response_due_at).toBeNull();
    expect(answered.sla.resolution_due_at).toBe(plus(answered.created_at, 240));
  });

  it('counts only open minutes for a business-hours policy while business hours are enabled', async () => {
    const t = await newTenant(svc.api);
    // Open a quarter of an hour a week: 10 open minutes are days away, 20 more than a week.
    const hours = QUARTER_HOUR_A_WEEK;
    expect((await svc.api.req('PUT', '/v1/business-hours', { ...t.as, body: hours })).status).toBe(200);
    const bh = await policy(t, {
      priority: 'urgent',
      first_response_minutes: 10,
      resolution_minutes: 20,
      business_hours: true,
    });
    await policy(t, { priority: 'high', first_response_minutes: 10, resolution_minutes: 20 });

    const u = await ticket(t, { priority: 'urgent' });
    const calendar = compileCalendar(hours);
    const created = new Date(u.created_at);
    expect(u.sla).toEqual({
      policy_id: bh.id,
      first_response_due_at: addOpenMinutes(calendar, created, 10)!.toISOString(),
      next_response_due_at: null,
      resolution_due_at: addOpenMinutes(calendar, created, 20)!.toISOString(),
      breached: false,
    });
    const fr = new Date(u.sla.first_response_due_at!).getTime() - created.getTime();
    const res = new Date(u.sla.resolution_due_at!).getTime() - created.getTime();
    expect(fr).toBeGreaterThan(10 * MIN);
    expect(res).toBeGreaterThan(7 * 24 * 60 * MIN);
    // A policy without business_hours counts calendar time.
    const h = await ticket(t, { priority: 'high' });
    expect(h.sla.first_response_due_at).toBe(plus(h.created_at, 10));

    // Business hours disabled: calendar time even for the business-hours policy.
    await svc.api.req('PUT', '/v1/business-hours', { ...t.as, body: { ...hours, enabled: false } });
    const off = await ticket(t, { priority: 'urgent' });
    expect(off.sla.first_response_due_at).toBe(plus(off.created_at, 10));
    expect(off.sla.resolution_due_at).toBe(plus(off.created_at, 20));
  });
});
