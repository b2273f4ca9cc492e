// SLA clocks, part 2 (part 1, the policies and clocks on new tickets: sla.test.ts; the shared setup:
// setup.ts): clocks as tickets change, sort=due, the breach sweep, a deadline that passed while
// the service was down.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sweepSlaBreaches } from '../../../src/modules/sla/breaches.js';
import { parseSla, slaColumns } from '../../../src/modules/sla/engine.js';
import { openDatabase } from '../../../src/platform/db/index.js';
import { makeMessage } from '../../support/builders.js';
import {
  addMember,
  eventsAfterOf,
  latestSeqOf,
  newTenant,
  type Service,
  startService,
  type Tenant,
} from '../../support/helpers.js';
import { ownDatabase } from '../../support/own-database.js';
import { plus } from '../../support/sla.js';
import { MIN, slaSuite } from './setup.js';

const suite = slaSuite();
const { policy, ticket, getTicket } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

/**
 * Moves a ticket's clocks: due dates set `minutesAgo` before now (as if time had passed), the
 * indexed columns with them. A clock not named keeps its date.
 */
async function moveClock(
  s: Service,
  ticketId: string,
  minutesAgo: { first_response?: number; resolution?: number },
): Promise<void> {
  const db = s.rt.deps.database.db;
  const row = await db
    .selectFrom('tickets')
    .select(['sla', 'status', 'first_responded_at', 'spam', 'created_at'])
    .where('id', '=', ticketId)
    .executeTakeFirstOrThrow();
  const sla = parseSla(row.sla)!;
  const ago = (m: number) => new Date(Date.now() - m * MIN).toISOString();
  if (minutesAgo.first_response !== undefined) sla.first_response_due_at = ago(minutesAgo.first_response);
  if (minutesAgo.resolution !== undefined) sla.resolution_due_at = ago(minutesAgo.resolution);
  await db
    .updateTable('tickets')
    .set({ sla: JSON.stringify(sla), ...slaColumns(sla, row) })
    .where('id', '=', ticketId)
    .execute();
}

async function activitiesOf(t: Tenant, id: string, type = 'sla_breached') {
  const r = await svc.api.get(`/v1/tickets/${id}/activities`, t.as);
  if (r.status !== 200) throw new Error(`activities: ${r.status} ${r.text}`);
  return (r.body.data as any[]).filter((a) => a.type === type);
}

async function slaNotices(s: Service, userId: string) {
  return s.rt.deps.database.db
    .selectFrom('notifications')
    .select(['ticket_id', 'data'])
    .where('user_id', '=', userId)
    .where('type', '=', 'sla_breached')
    .orderBy('created_at')
    .execute();
}

// ---------------------------------------------------------------------------------------------

describe('clocks as tickets change', () => {
  it('a priority change recomputes the due dates from the creation (event ticket.updated with sla)', async () => {
    const t = await newTenant(svc.api);
    const urgent = await policy(t, { priority: 'urgent', first_response_minutes: 60, resolution_minutes: 240 });
    const normal = await policy(t, { priority: 'normal', first_response_minutes: 600, resolution_minutes: 2880 });
    const tk = await ticket(t);
    expect(tk.sla.policy_id).toBe(normal.id);
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.patch(`/v1/tickets/${tk.id}`, { priority: 'urgent' }, t.as);
    expect(r.status).toBe(200);
    const expected = {
      policy_id: urgent.id,
      first_response_due_at: plus(tk.created_at, 60),
      next_response_due_at: null,
      resolution_due_at: plus(tk.created_at, 240),
      breached: false,
    };
    expect(r.body.sla).toEqual(expected);
    expect((await getTicket(t, tk.id)).sla).toEqual(expected);
    const updates = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type === 'ticket.updated');
    expect(updates.map((e) => e.data.changes)).toEqual([['priority'], ['sla']]);
    expect(updates[1].data.ticket.sla).toEqual(expected);

    // A priority without a policy: the clocks stop (no SLA).
    const low = await svc.api.patch(`/v1/tickets/${tk.id}`, { priority: 'low' }, t.as);
    expect(low.body.sla).toBeNull();
    // A ticket without clocks gets them when its priority gains a policy.
    const back = await svc.api.patch(`/v1/tickets/${tk.id}`, { priority: 'urgent' }, t.as);
    expect(back.body.sla).toEqual(expected);
  });

  it('follows a priority an automation sets on creation', async () => {
    const t = await newTenant(svc.api);
    await policy(t, { priority: 'normal', first_response_minutes: 600, resolution_minutes: 2880 });
    const high = await policy(t, { priority: 'high', first_response_minutes: 30, resolution_minutes: 120 });
    const auto = await svc.api.post(
      '/v1/automations',
      { name: 'Raise', trigger: 'ticket_created', actions: [{ type: 'set_priority', value: 'high' }] },
      t.as,
    );
    expect(auto.status).toBe(201);
    const tk = await ticket(t);
    expect(tk.priority).toBe('high');
    expect(tk.sla).toEqual({
      policy_id: high.id,
      first_response_due_at: plus(tk.created_at, 30),
      next_response_due_at: null,
      resolution_due_at: plus(tk.created_at, 120),
      breached: false,
    });
  });

  it('the first agent reply stops the first-response clock (a note does not); solving stops both', async () => {
    const t = await newTenant(svc.api);
    await policy(t, { first_response_minutes: 60, resolution_minutes: 240 });
    const tk = await ticket(t, { contact: { email: 'bo@example.com' } });
    const note = await svc.api.post(`/v1/tickets/${tk.id}/messages`, { kind: 'note', body_html: 'Looking' }, t.as);
    expect(note.status).toBe(201);
    expect((await getTicket(t, tk.id)).sla).toEqual(tk.sla);

    const seq = await latestSeqOf(svc, t);
    const reply = await svc.api.post(`/v1/tickets/${tk.id}/messages`, { kind: 'reply', body_html: 'Fixed?' }, t.as);
    expect(reply.status).toBe(201);
    const after = await getTicket(t, tk.id);
    expect(after.first_responded_at).not.toBeNull();
    expect(after.sla).toEqual({ ...tk.sla, first_response_due_at: null });
    const slaEvents = (await eventsAfterOf(svc, t, seq)).filter(
      (e) => e.type === 'ticket.updated' && e.data.changes.includes('sla'),
    );
    expect(slaEvents).toHaveLength(1);
    expect(slaEvents[0].data.changes).toEqual(['sla']);
    expect(slaEvents[0].data.ticket.sla).toEqual(after.sla);

    const solved = await svc.api.patch(`/v1/tickets/${tk.id}`, { status: 'solved' }, t.as);
    expect(solved.body.sla).toEqual({ ...tk.sla, first_response_due_at: null, resolution_due_at: null });

    // Solved without any reply: both clocks stop too.
    const quiet = await ticket(t);
    const s2 = await svc.api.patch(`/v1/tickets/${quiet.id}`, { status: 'closed' }, t.as);
    expect(s2.body.sla).toEqual({ ...quiet.sla, first_response_due_at: null, resolution_due_at: null });
  });

  it('reopening starts a fresh resolution clock from the reopening; the first response stays stopped', async () => {
    const t = await newTenant(svc.api);
    await policy(t, { first_response_minutes: 60, resolution_minutes: 240 });
    const tk = await ticket(t);
    await svc.api.patch(`/v1/tickets/${tk.id}`, { status: 'solved' }, t.as);
    const before = Date.now();
    const r = await svc.api.patch(`/v1/tickets/${tk.id}`, { status: 'open' }, t.as);
    const after = Date.now();
    expect(r.body.sla.first_response_due_at).toBeNull();
    const due = new Date(r.body.sla.resolution_due_at).getTime();
    expect(due).toBeGreaterThanOrEqual(before - 1000 + 240 * MIN);
    expect(due).toBeLessThanOrEqual(after + 240 * MIN);
    // pending and on_hold do not stop the clock.
    const pending = await svc.api.patch(`/v1/tickets/${tk.id}`, { status: 'pending' }, t.as);
    expect(pending.body.sla).toEqual(r.body.sla);
  });
});

// ---------------------------------------------------------------------------------------------

describe('sort=due', () => {
  it('lists the earliest due date first (overdue ones first of all), tickets without one last', async () => {
    const t = await newTenant(svc.api);
    await policy(t, { priority: 'urgent', first_response_minutes: 60, resolution_minutes: 240 });
    await policy(t, { priority: 'high', first_response_minutes: 120, resolution_minutes: 480 });
    await policy(t, { priority: 'normal', first_response_minutes: 600, resolution_minutes: 1440 });
    const low = await ticket(t, { priority: 'low' });
    const normal = await ticket(t, { priority: 'normal' });
    const high = await ticket(t, { priority: 'high' });
    const urgent = await ticket(t, { priority: 'urgent' });
    const solved = await ticket(t, { priority: 'urgent' });
    await svc.api.patch(`/v1/tickets/${solved.id}`, { status: 'solved' }, t.as);
    const ids = async (q: string) => {
      const r = await svc.api.get(`/v1/tickets?sort=due${q}`, t.as);
      expect(r.status).toBe(200);
      return r.body;
    };
    const noDue = [low.id, solved.id].sort();
    expect((await ids('')).data.map((x: any) => x.id)).toEqual([urgent.id, high.id, normal.id, ...noDue]);

    // The normal ticket's first response is overdue (breached): it comes first.
    await moveClock(svc, normal.id, { first_response: 10 });
    await sweepSlaBreaches(svc.rt.deps);
    const all = await ids('');
    expect(all.data.map((x: any) => x.id)).toEqual([normal.id, urgent.id, high.id, ...noDue]);
    expect(all.data[0].sla.breached).toBe(true);
    // Pages of 2 walk the same order.
    const p1 = await ids('&limit=2');
    const p2 = await ids(`&limit=2&cursor=${encodeURIComponent(p1.next_cursor)}`);
    const p3 = await ids(`&limit=2&cursor=${encodeURIComponent(p2.next_cursor)}`);
    expect([...p1.data, ...p2.data, ...p3.data].map((x: any) => x.id)).toEqual(all.data.map((x: any) => x.id));
  });
});

// ---------------------------------------------------------------------------------------------

describe('the breach sweep', () => {
  it('marks a clock past due once: breached, activity, notification to the assignee, ticket.updated', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent', 'Ada Agent');
    await policy(t, { first_response_minutes: 60, resolution_minutes: 240, position: 5 });
    const tk = await ticket(t, { assignee_id: agent.userId });
    await moveClock(svc, tk.id, { first_response: 5 });
    const moved = await getTicket(t, tk.id);
    const seq = await latestSeqOf(svc, t);

    expect(await sweepSlaBreaches(svc.rt.deps)).toBe(1);
    const after = await getTicket(t, tk.id);
    expect(after.sla).toEqual({ ...moved.sla, breached: true });
    const acts = await activitiesOf(t, tk.id);
    expect(acts).toHaveLength(1);
    expect(acts[0]).toMatchObject({
      type: 'sla_breached',
      data: { kind: 'first_response' },
      actor: { type: 'system' },
    });
    const notices = await slaNotices(svc, agent.userId);
    expect(notices).toEqual([{ ticket_id: tk.id, data: { kind: 'first_response' } }]);
    // As the assignee sees them (a notification is on its recipient's topic only).
    const r = await svc.api.get(`/v1/events?since=${seq}&limit=100`, agent.as);
    const events: any[] = r.body.data;
    expect(events.map((e) => e.type)).toEqual(['activity.created', 'notification.created', 'ticket.updated']);
    expect((await eventsAfterOf(svc, t, seq)).map((e) => e.type)).toEqual([
      'activity.created',
      'event.hidden',
      'ticket.updated',
    ]);
    expect(events[1].data.notification).toMatchObject({
      type: 'sla_breached',
      ticket: { id: tk.id, number: tk.number, subject: tk.subject },
      data: { kind: 'first_response' },
    });
    expect(events[2].data.changes).toEqual(['sla']);
    expect(events[2].data.ticket.sla.breached).toBe(true);

    // A second sweep finds nothing to do.
    const seq2 = await latestSeqOf(svc, t);
    expect(await sweepSlaBreaches(svc.rt.deps)).toBe(0);
    expect(await eventsAfterOf(svc, t, seq2)).toEqual([]);
    expect(await activitiesOf(t, tk.id)).toHaveLength(1);

    // The resolution clock breaches on its own, once; breached stays true.
    await moveClock(svc, tk.id, { resolution: 1 });
    expect(await sweepSlaBreaches(svc.rt.deps)).toBe(1);
    expect(await sweepSlaBreaches(svc.rt.deps)).toBe(0);
    expect((await activitiesOf(t, tk.id)).map((a) => a.data.kind)).toEqual(['first_response', 'resolution']);
    expect((await slaNotices(svc, agent.userId)).map((n) => n.data)).toEqual([
      { kind: 'first_response' },
      { kind: 'resolution' },
    ]);
    expect((await getTicket(t, tk.id)).sla.breached).toBe(true);

    // A priority change keeps breached, and a breached clock is not marked again.
    await policy(t, { priority: 'urgent', first_response_minutes: 1, resolution_minutes: 2, position: 0 });
    const up = await svc.api.patch(`/v1/tickets/${tk.id}`, { priority: 'urgent' }, t.as);
    expect(up.body.sla.breached).toBe(true);
    // (A sweep ten minutes ahead: other tests' tickets may breach then, not this one again.)
    await sweepSlaBreaches(svc.rt.deps, new Date(Date.now() + 10 * MIN));
    expect(await activitiesOf(t, tk.id)).toHaveLength(2);
    expect(await slaNotices(svc, agent.userId)).toHaveLength(2);
  });

  it('marks both clocks in one sweep; no assignee, no notification', async () => {
    const t = await newTenant(svc.api);
    await policy(t, { first_response_minutes: 60, resolution_minutes: 240 });
    const tk = await ticket(t);
    await moveClock(svc, tk.id, { first_response: 30, resolution: 10 });
    expect(await sweepSlaBreaches(svc.rt.deps)).toBe(1);
    expect((await activitiesOf(t, tk.id)).map((a) => a.data.kind).sort()).toEqual(['first_response', 'resolution']);
    const n = await svc.rt.deps.database.db
      .selectFrom('notifications')
      .select('id')
      .where('ticket_id', '=', tk.id)
      .where('type', '=', 'sla_breached')
      .execute();
    expect(n).toEqual([]);
  });

  it('re-checks each ticket: stopped clocks and spam do not breach', async () => {
    const t = await newTenant(svc.api);
    await policy(t, { first_response_minutes: 60, resolution_minutes: 240 });
    // Answered: the first-response due date is past in the stored SLA (as if the clock had not
    // been stopped), but the ticket has its first reply.
    const answered = await ticket(t, { contact: { email: 'cy@example.com' } });
    await makeMessage(svc.api, t, answered.id, { kind: 'reply', body_html: 'Hi' });
    await moveClock(svc, answered.id, { first_response: 5 });
    const seq = await latestSeqOf(svc, t);
    expect(await sweepSlaBreaches(svc.rt.deps)).toBe(0);
    expect(await activitiesOf(t, answered.id)).toEqual([]);
    const fixed = await getTicket(t, answered.id);
    expect(fixed.sla.first_response_due_at).toBeNull();
    expect(fixed.sla.breached).toBe(false);
    expect((await eventsAfterOf(svc, t, seq)).map((e) => e.data.changes)).toEqual([['sla']]);

    // Spam does not breach while it is spam; unmarked, the clock breaches.
    const spam = await ticket(t);
    await svc.api.patch(`/v1/tickets/${spam.id}`, { spam: true }, t.as);
    await moveClock(svc, spam.id, { first_response: 5 });
    expect(await sweepSlaBreaches(svc.rt.deps)).toBe(0);
    await svc.api.patch(`/v1/tickets/${spam.id}`, { spam: false }, t.as);
    expect(await sweepSlaBreaches(svc.rt.deps)).toBe(1);
    expect(await activitiesOf(t, spam.id)).toHaveLength(1);
  });
});

describe('a deadline that passed while the service was down', () => {
  it('is marked when the service comes back', async () => {
    const db = await ownDatabase('sla_restart');
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-sla-restart-'));
    const env: Record<string, string> = { ...db.env, DATABASE_IN_MEMORY: 'false', DATA_DIR: dataDir };
    let first: Service | null = await startService(env, { jobs: false });
    let second: Service | null = null;
    try {
      const t = await newTenant(first.api);
      const agent = await addMember(first, t, 'agent');
      const r = await first.api.post(
        '/v1/sla-policies',
        { name: 'P', first_response_minutes: 60, resolution_minutes: 240 },
        t.as,
      );
      expect(r.status).toBe(201);
      const tk = await first.api.post('/v1/tickets', { subject: 'Down', assignee_id: agent.userId }, t.as);
      expect(tk.status).toBe(201);
      await first.stop();
      first = null;

      // While no process runs, the first-response deadline passes.
      const offline = await openDatabase({
        databaseUrl: env.DATABASE_URL ?? process.env.DATABASE_URL ?? null,
        dataDir,
        memory: false,
      });
      const row = await offline.db
        .selectFrom('tickets')
        .selectAll()
        .where('id', '=', tk.body.id)
        .executeTakeFirstOrThrow();
      const sla = parseSla(row.sla)!;
      sla.first_response_due_at = new Date(Date.now() - 2 * MIN).toISOString();
      await offline.db
        .updateTable('tickets')
        .set({ sla: JSON.stringify(sla), ...slaColumns(sla, row) })
        .where('id', '=', tk.body.id)
        .execute();
      await offline.close();

      // Back up, with its jobs: the sweep runs at start.
      second = await startService(env);
      const s = second;
      const until = Date.now() + 30_000;
      let now = (await s.api.get(`/v1/tickets/${tk.body.id}`, t.as)).body;
      while (!now.sla.breached && Date.now() < until) {
        await new Promise((res) => setTimeout(res, 200));
        now = (await s.api.get(`/v1/tickets/${tk.body.id}`, t.as)).body;
      }
      expect(now.sla.breached).toBe(true);
      // Running the sweep again changes nothing: marked exactly once.
      expect(await sweepSlaBreaches(s.rt.deps)).toBe(0);
      const acts = (await s.api.get(`/v1/tickets/${tk.body.id}/activities`, t.as)).body.data.filter(
        (a: any) => a.type === 'sla_breached',
      );
      expect(acts.map((a: any) => a.data)).toEqual([{ kind: 'first_response' }]);
      expect(await slaNotices(s, agent.userId)).toEqual([{ ticket_id: tk.body.id, data: { kind: 'first_response' } }]);
    } finally {
      await first?.stop();
      await second?.stop();
      await db.drop();
    }
  }, 90_000);
});
