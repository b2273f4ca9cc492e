import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOpenMinutes, compileCalendar } from '../../../src/modules/business-hours/calendar.js';
import { sweepSlaBreaches } from '../../../src/modules/sla/breaches.js';
import { makeMessage } from '../../support/builders.js';
import { spoolCustomerMail } from '../../support/customer-mail.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newTenant,
  type ReqOpts,
  type Service,
  startService,
  type Tenant,
  unique,
} from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';
import { makeSlaPolicy, plus, QUARTER_HOUR_A_WEEK } from '../../support/sla.js';

let svc: Service;
let own: OwnDatabase;
beforeAll(async () => {
  // Its own database on PostgreSQL: another file's job workers must not sweep these tickets.
  own = await ownDatabase('sla_next');
  svc = await startService(own.env, { jobs: false });
});
afterAll(async () => {
  await svc?.stop();
  await own?.drop();
});

const MIN = 60_000;
/** A sweep `minutes` from now (a due date that close is past then, the others are not). */
const sweepIn = (minutes: number) => sweepSlaBreaches(svc.rt.deps, new Date(Date.now() + minutes * MIN));

const policy = (t: Tenant, body: Record<string, unknown>) => makeSlaPolicy(svc.api, t, body);

const getTicket = async (t: Tenant, id: string) => {
  const r = await svc.api.get(`/v1/tickets/${id}`, t.as);
  if (r.status !== 200) throw new Error(`ticket: ${r.status} ${r.text}`);
  return r.body;
};

const reply = (t: Tenant | { as: ReqOpts }, id: string, html = '<p>Looking into it.</p>') =>
  makeMessage(svc.api, t, id, { kind: 'reply', body_html: html });
const note = (t: Tenant, id: string) => makeMessage(svc.api, t, id, { kind: 'note', body_html: '<p>Hmm</p>' });

/** A visitor of the workspace's chat widget, who starts conversations and writes in them. */
async function visitor(t: Tenant) {
  const key = (await svc.api.get('/v1/workspace', t.as)).body.widget_key as string;
  const s = await svc.api.post('/v1/widget/session', { key, name: 'Vic', email: `${unique('vic')}@example.com` });
  expect(s.status, s.text).toBe(200);
  const as: ReqOpts = { headers: { authorization: `Visitor ${s.body.visitor_token}` } };
  return {
    /** A new chat ticket with the visitor's first message. */
    async start(body = 'My order is late'): Promise<string> {
      const r = await svc.api.post('/v1/widget/conversations', { body }, as);
      expect(r.status, r.text).toBe(201);
      return r.body.id;
    },
    /** The visitor's message on the conversation; returns the ticket as agents see it then. */
    async write(t2: Tenant, id: string, body = 'Any news?') {
      const r = await svc.api.post(`/v1/widget/conversations/${id}/messages`, { body }, as);
      expect(r.status, r.text).toBe(201);
      return getTicket(t2, id);
    },
  };
}

/** An answered chat ticket: the visitor's first message and an agent's reply. */
async function answered(t: Tenant) {
  const v = await visitor(t);
  const id = await v.start();
  await reply(t, id);
  return { v, id };
}

async function breachActivities(t: Tenant, id: string) {
  const r = await svc.api.get(`/v1/tickets/${id}/activities`, t.as);
  expect(r.status, r.text).toBe(200);
  return (r.body.data as any[]).filter((a) => a.type === 'sla_breached').map((a) => a.data.kind);
}

// ---------------------------------------------------------------------------------------------

describe('next_response_minutes on SLA policies', () => {
  it('is optional (null: no next-response clock), set on create, changed and cleared by PATCH, with events', async () => {
    const t = await newTenant(svc.api);
    const seq = await latestSeqOf(svc, t);
    const none = await policy(t, { first_response_minutes: 60, resolution_minutes: 480 });
    expect(none.next_response_minutes).toBeNull();
    const p = await policy(t, { first_response_minutes: 60, next_response_minutes: 120, resolution_minutes: 480 });
    expect(p.next_response_minutes).toBe(120);
    expect((await svc.api.get(`/v1/sla-policies/${p.id}`, t.as)).body).toEqual(p);
    expect((await svc.api.get('/v1/sla-policies', t.as)).body.data.map((x: any) => x.next_response_minutes)).toEqual([
      null,
      120,
    ]);

    const changed = await svc.api.patch(`/v1/sla-policies/${p.id}`, { next_response_minutes: 45 }, t.as);
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ ...p, next_response_minutes: 45, updated_at: expect.stringMatching(/Z$/) });
    const cleared = await svc.api.patch(`/v1/sla-policies/${p.id}`, { next_response_minutes: null }, t.as);
    expect(cleared.body.next_response_minutes).toBeNull();
    // Null again: no change, no event.
    expect((await svc.api.patch(`/v1/sla-policies/${p.id}`, { next_response_minutes: null }, t.as)).body).toEqual(
      cleared.body,
    );
    // Another field changed leaves it as it is.
    const renamed = await svc.api.patch(`/v1/sla-policies/${none.id}`, { name: 'Renamed' }, t.as);
    expect(renamed.body.next_response_minutes).toBeNull();

    const events = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type.startsWith('sla_policy.'));
    expect(events.map((e) => [e.type, e.data.sla_policy.next_response_minutes])).toEqual([
      ['sla_policy.created', null],
      ['sla_policy.created', 120],
      ['sla_policy.updated', 45],
      ['sla_policy.updated', null],
      ['sla_policy.updated', null],
    ]);
  });

  it('takes 1 to 525,600 whole minutes or null, else 422 at body.next_response_minutes, saving nothing', async () => {
    const t = await newTenant(svc.api);
    const ok = { name: 'P', first_response_minutes: 60, resolution_minutes: 480 };
    for (const bad of [0, -5, 525_601, 1.5, '60', true, {}]) {
      const r = await svc.api.post('/v1/sla-policies', { ...ok, next_response_minutes: bad }, t.as);
      expect(r.status, JSON.stringify(bad)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors.map((e: any) => e.location)).toContain('body.next_response_minutes');
      expect(r.text).not.toMatch(/at .*\.(ts|js):\d+/);
    }
    expect((await svc.api.get('/v1/sla-policies', t.as)).body.data).toEqual([]);
    const edge = await policy(t, { ...ok, next_response_minutes: 525_600 });
    expect(edge.next_response_minutes).toBe(525_600);
    expect((await policy(t, { ...ok, next_response_minutes: 1 })).next_response_minutes).toBe(1);

    for (const bad of [0, 525_601, 'soon']) {
      const r = await svc.api.patch(`/v1/sla-policies/${edge.id}`, { next_response_minutes: bad }, t.as);
      expect(r.status).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors[0].location).toBe('body.next_response_minutes');
    }
    expect((await svc.api.get(`/v1/sla-policies/${edge.id}`, t.as)).body).toEqual(edge);
  });

  it("stays in its workspace: another workspace's policy cannot be read or changed, and its clocks do not apply", async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const theirs = await policy(other, {
      first_response_minutes: 60,
      next_response_minutes: 5,
      resolution_minutes: 480,
    });
    const r = await svc.api.patch(`/v1/sla-policies/${theirs.id}`, { next_response_minutes: 600 }, t.as);
    expect(r.status).toBe(404);
    expect(isErrorBody(r.body, 404, 'not_found')).toBe(true);
    expect((await svc.api.get(`/v1/sla-policies/${theirs.id}`, other.as)).body).toEqual(theirs);

    // This workspace has no policy: its tickets get no clock from the other's.
    const { v, id } = await answered(t);
    const after = await v.write(t, id);
    expect(after.sla).toBeNull();
    // The other workspace's ticket gets its own policy's clock, and is not this workspace's.
    const there = await answered(other);
    const theirTicket = await there.v.write(other, there.id);
    expect(theirTicket.sla.next_response_due_at).toBe(plus(theirTicket.last_customer_message_at, 5));
    expect((await svc.api.get(`/v1/tickets/${there.id}`, t.as)).status).toBe(404);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the next-response clock', () => {
  it('starts at a customer message after the first agent reply, keeps the oldest unanswered one, stops at the next agent reply', async () => {
    const t = await newTenant(svc.api);
    await policy(t, { first_response_minutes: 60, next_response_minutes: 30, resolution_minutes: 2880 });
    const v = await visitor(t);
    const id = await v.start();
    const created = await getTicket(t, id);
    expect(created.sla.next_response_due_at).toBeNull();
    // Before the first agent reply the first-response clock covers the customer's messages.
    const early = await v.write(t, id, 'Hello?');
    expect(early.sla).toEqual(created.sla);

    await reply(t, id);
    const first = await getTicket(t, id);
    expect(first.sla.first_response_due_at).toBeNull();
    expect(first.sla.next_response_due_at).toBeNull();

    const seq = await latestSeqOf(svc, t);
    const waiting = await v.write(t, id, 'It still has not arrived');
    expect(waiting.sla.next_response_due_at).toBe(plus(waiting.last_customer_message_at, 30));
    expect(waiting.sla.resolution_due_at).toBe(first.sla.resolution_due_at);
    const slaEvents = (await eventsAfterOf(svc, t, seq)).filter(
      (e) => e.type === 'ticket.updated' && e.data.changes.includes('sla'),
    );
    expect(slaEvents.map((e) => e.data.ticket.sla)).toEqual([waiting.sla]);

    // A second message before an answer: the clock still runs from the first unanswered one.
    const again = await v.write(t, id, 'Hello??');
    expect(again.last_customer_message_at).not.toBe(waiting.last_customer_message_at);
    expect(again.sla).toEqual(waiting.sla);
    // A note is no answer.
    await note(t, id);
    expect((await getTicket(t, id)).sla).toEqual(waiting.sla);

    // The agent's reply (an API key's counts as one too) stops it.
    await reply(t, id, '<p>It ships today.</p>');
    const done = await getTicket(t, id);
    expect(done.sla).toEqual({ ...waiting.sla, next_response_due_at: null });
    expect(done.sla.breached).toBe(false);
  });

  it("is not stopped by an automation's reply", async () => {
    const t = await newTenant(svc.api);
    await policy(t, { first_response_minutes: 60, next_response_minutes: 30, resolution_minutes: 2880 });
    const auto = await svc.api.post(
      '/v1/automations',
      {
        name: 'Acknowledge',
        trigger: 'customer_replied',
        actions: [{ type: 'send_reply', value: '<p>We got your message.</p>' }],
      },
      t.as,
    );
    expect(auto.status, auto.text).toBe(201);
    const { v, id } = await answered(t);
    const waiting = await v.write(t, id);
    expect(waiting.message_count).toBe(4); // the automation did reply
    expect(waiting.sla.next_response_due_at).toBe(plus(waiting.last_customer_message_at, 30));
  });

  it('stops when the ticket is solved; the customer writing again starts a new cycle from that message', async () => {
    const t = await newTenant(svc.api);
    await policy(t, { first_response_minutes: 60, next_response_minutes: 30, resolution_minutes: 2880 });
    const { v, id } = await answered(t);
    const waiting = await v.write(t, id);
    expect(waiting.sla.next_response_due_at).not.toBeNull();
    const solved = await svc.api.patch(`/v1/tickets/${id}`, { status: 'solved' }, t.as);
    expect(solved.status).toBe(200);
    expect(solved.body.sla.next_response_due_at).toBeNull();
    expect(solved.body.sla.resolution_due_at).toBeNull();
    // Reopened by an agent: no customer message is waiting, so no clock.
    const reopened = await svc.api.patch(`/v1/tickets/${id}`, { status: 'open' }, t.as);
    expect(reopened.body.sla.next_response_due_at).toBeNull();
    await svc.api.patch(`/v1/tickets/${id}`, { status: 'solved' }, t.as);

    // The customer writes on the solved ticket: it opens again, with a fresh clock from the message.
    const back = await v.write(t, id, 'Actually, one more thing');
    expect(back.status).toBe('open');
    expect(back.sla.next_response_due_at).toBe(plus(back.last_customer_message_at, 30));
    expect(back.sla.resolution_due_at).not.toBeNull();
  });

  it('starts on an email reply too', async () => {
    const t = await newTenant(svc.api);
    await policy(t, { first_response_minutes: 60, next_response_minutes: 240, resolution_minutes: 2880 });
    const mbox = await svc.api.post('/v1/mailboxes', { name: 'Support', email: `${unique('help')}@acme.test` }, t.as);
    expect(mbox.status, mbox.text).toBe(201);
    // Spooled without queueing its job, and processed here (test/support/customer-mail.ts).
    const deliver = (lines: string[], body: string) => spoolCustomerMail(svc, t, mbox.body, lines, body);
    const first = `<${unique('m')}@example.com>`;
    const created = await deliver([`Message-ID: ${first}`, 'Subject: My order'], 'Where is my order?');
    expect(created.result).toBe('created');
    const id = created.ticketId!;
    await reply(t, id);
    const r = await deliver(
      [`Message-ID: <${unique('m')}@example.com>`, `In-Reply-To: ${first}`, 'Subject: Re: My order'],
      'It is still not here.',
    );
    expect(r.ticketId).toBe(id);
    const tk = await getTicket(t, id);
    expect(tk.sla.next_response_due_at).toBe(plus(tk.last_customer_message_at, 240));
  });

  it('needs a next-response target: a policy without one shows no clock', async () => {
    const t = await newTenant(svc.api);
    await policy(t, { first_response_minutes: 60, resolution_minutes: 2880 });
    const { v, id } = await answered(t);
    const before = await getTicket(t, id);
    const seq = await latestSeqOf(svc, t);
    const after = await v.write(t, id);
    expect(after.sla).toEqual(before.sla);
    expect(after.sla.next_response_due_at).toBeNull();
    const slaEvents = (await eventsAfterOf(svc, t, seq)).filter(
      (e) => e.type === 'ticket.updated' && e.data.changes.includes('sla'),
    );
    expect(slaEvents).toEqual([]);
  });

  it('follows a priority change from its start (the waiting message), and stops under a policy without a target', async () => {
    const t = await newTenant(svc.api);
    const normal = await policy(t, {
      priority: 'normal',
      first_response_minutes: 60,
      next_response_minutes: 120,
      resolution_minutes: 2880,
    });
    const urgent = await policy(t, {
      priority: 'urgent',
      first_response_minutes: 15,
      next_response_minutes: 10,
      resolution_minutes: 240,
    });
    await policy(t, { priority: 'low', first_response_minutes: 600, resolution_minutes: 9000 });
    const { v, id } = await answered(t);
    const waiting = await v.write(t, id);
    const from = waiting.last_customer_message_at;
    expect(waiting.sla).toMatchObject({ policy_id: normal.id, next_response_due_at: plus(from, 120) });

    const up = await svc.api.patch(`/v1/tickets/${id}`, { priority: 'urgent' }, t.as);
    expect(up.body.sla).toMatchObject({ policy_id: urgent.id, next_response_due_at: plus(from, 10) });
    const low = await svc.api.patch(`/v1/tickets/${id}`, { priority: 'low' }, t.as);
    expect(low.body.sla.next_response_due_at).toBeNull();
    // Still unanswered: back under a policy with a target, the clock runs from the same message.
    const back = await svc.api.patch(`/v1/tickets/${id}`, { priority: 'urgent' }, t.as);
    expect(back.body.sla.next_response_due_at).toBe(plus(from, 10));
  });

  it('counts open minutes for a business-hours policy', async () => {
    const t = await newTenant(svc.api);
    const hours = QUARTER_HOUR_A_WEEK;
    expect((await svc.api.req('PUT', '/v1/business-hours', { ...t.as, body: hours })).status).toBe(200);
    await policy(t, {
      first_response_minutes: 60,
      next_response_minutes: 10,
      resolution_minutes: 120,
      business_hours: true,
    });
    const { v, id } = await answered(t);
    const waiting = await v.write(t, id);
    const from = new Date(waiting.last_customer_message_at);
    const expected = addOpenMinutes(compileCalendar(hours), from, 10)!.toISOString();
    expect(waiting.sla.next_response_due_at).toBe(expected);
    // Open a quarter of an hour a week: ten open minutes are more than ten minutes away.
    expect(new Date(expected).getTime() - from.getTime()).toBeGreaterThan(10 * MIN);
  });
});

// ---------------------------------------------------------------------------------------------

describe('next-response breaches', () => {
  it('are marked by the sweep once per cycle: activity, notification and event with kind next_response', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent', 'Ada Agent');
    await policy(t, { first_response_minutes: 600, next_response_minutes: 1, resolution_minutes: 2880 });
    const v = await visitor(t);
    const id = await v.start();
    await svc.api.patch(`/v1/tickets/${id}`, { assignee_id: agent.userId }, t.as);
    await reply(agent, id);
    const waiting = await v.write(t, id);
    expect(waiting.sla.next_response_due_at).toBe(plus(waiting.last_customer_message_at, 1));
    const seq = await latestSeqOf(svc, t);

    expect(await sweepIn(2)).toBe(1);
    const breached = await getTicket(t, id);
    expect(breached.sla).toEqual({ ...waiting.sla, breached: true });
    expect(await breachActivities(t, id)).toEqual(['next_response']);
    const events = await svc.api.get(`/v1/events?since=${seq}&limit=100`, agent.as);
    expect(events.body.data.map((e: any) => e.type)).toEqual([
      'activity.created',
      'notification.created',
      'ticket.updated',
    ]);
    expect(events.body.data[0].data.activity).toMatchObject({ type: 'sla_breached', data: { kind: 'next_response' } });
    expect(events.body.data[1].data.notification).toMatchObject({
      type: 'sla_breached',
      ticket: { id },
      data: { kind: 'next_response' },
    });
    expect(events.body.data[2].data).toMatchObject({ changes: ['sla'], ticket: { sla: breached.sla } });
    // Once: a second sweep finds nothing.
    expect(await sweepIn(2)).toBe(0);
    expect(await breachActivities(t, id)).toEqual(['next_response']);

    // The agent answers (late): the clock stops, breached stays.
    await reply(agent, id);
    const answeredLate = await getTicket(t, id);
    expect(answeredLate.sla).toMatchObject({ next_response_due_at: null, breached: true });
    expect(await sweepIn(2)).toBe(0);

    // A new customer message starts a new cycle, which may breach again.
    const second = await v.write(t, id, 'And now?');
    expect(second.sla.next_response_due_at).toBe(plus(second.last_customer_message_at, 1));
    expect(await sweepIn(2)).toBe(1);
    expect(await breachActivities(t, id)).toEqual(['next_response', 'next_response']);
    const notices = await svc.api.get('/v1/notifications', agent.as);
    expect(
      notices.body.data.filter((n: any) => n.type === 'sla_breached').map((n: any) => [n.ticket.id, n.data.kind]),
    ).toEqual([
      [id, 'next_response'],
      [id, 'next_response'],
    ]);
  });

  it('do not happen for an answered or solved ticket whose clock has stopped', async () => {
    const t = await newTenant(svc.api);
    await policy(t, { first_response_minutes: 600, next_response_minutes: 1, resolution_minutes: 2880 });
    const a = await answered(t);
    await a.v.write(t, a.id);
    await reply(t, a.id);
    const s = await answered(t);
    await s.v.write(t, s.id);
    await svc.api.patch(`/v1/tickets/${s.id}`, { status: 'solved' }, t.as);
    expect(await sweepIn(2)).toBe(0);
    expect(await breachActivities(t, a.id)).toEqual([]);
    expect(await breachActivities(t, s.id)).toEqual([]);
    expect((await getTicket(t, a.id)).sla.breached).toBe(false);
  });
});
