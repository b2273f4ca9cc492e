// The automation engine: each trigger runs the enabled automations of that trigger, in position
// order, inside the ticket's transaction; conditions hold or fail per field type; each action
// has its visible effect (ticket fields, labels with exclusive groups, notes, replies through
// the outbound queue, spam, custom fields, a status without required-field checks); actions
// that cannot apply are skipped; run_count; activities with the automation as actor; one pass
// per event (no loops); ai_decide holds only when a decision engine says so.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { RunCounts } from '../../../src/modules/automations/run-counts.js';
import type { CustomerMessage } from '../../../src/modules/tickets/customer-message.js';
import { appendToTicket, lockTicketById } from '../../../src/modules/tickets/inbound.js';
import { makeMessage } from '../../support/builders.js';
import { eventsAfterOf, latestSeqOf, newTenant, type Service, type Tenant } from '../../support/helpers.js';
import { type Body, engineSuite, tagNames } from './engine-setup.js';

const suite = engineSuite();
const { setDecisionEngine, automation, ticket, getTicket, activities, runCount, labels, mailbox } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

/** A customer's mail on the ticket, through the code path of inbound email. */
async function customerReply(t: Tenant, ticketId: string, text: string, from = 'ann@example.com') {
  const deps = svc.rt.deps;
  await deps.writer.run(t.workspaceId, async (u) => {
    const row = (await lockTicketById(u, ticketId))!;
    const m: CustomerMessage = {
      workspaceId: t.workspaceId,
      contactId: row.contact_id,
      subject: `Re: ${row.subject}`,
      from: { email: from, name: 'Ann' },
      body: { html: `<p>${text}</p>`, text },
      files: [],
      uploads: [],
      channel: {
        kind: 'email',
        mailboxId: row.mailbox_id ?? randomUUID(),
        rawInboundId: randomUUID(),
        to: ['support@acme.test'],
        cc: [],
        original: null,
        replyTo: null,
        formSender: null,
        authFailed: false,
        autoSubmitted: null,
        messageId: `sha256:${randomUUID()}`,
        messageIdSent: null,
        inReplyTo: null,
        references: [],
      },
    };
    await appendToTicket(deps, u, row, m, 'customer');
  });
}

describe('run_count', () => {
  const stored = async (t: Tenant, id: string) =>
    Number(
      (
        await svc.rt.deps.database.db
          .selectFrom('automation_run_counts')
          .select('run_count')
          .where('workspace_id', '=', t.workspaceId)
          .where('automation_id', '=', id)
          .executeTakeFirstOrThrow()
      ).run_count,
    );

  it('counts at once for this process and reaches the table within seconds (what other processes read)', async () => {
    const t = await newTenant(svc.api);
    const a = await automation(t, { conditions: [], actions: [{ type: 'set_priority', value: 'high' }] });
    for (let i = 0; i < 3; i++) await ticket(t);
    expect(await runCount(t, a.id)).toBe(3);
    expect((await svc.api.get('/v1/automations', t.as)).body.data[0].run_count).toBe(3);
    const deadline = Date.now() + 10_000;
    while ((await stored(t, a.id)) < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await stored(t, a.id)).toBe(3);
    expect(await runCount(t, a.id)).toBe(3); // not counted twice once written
  });

  it('a stopping counter writes what it holds', async () => {
    const t = await newTenant(svc.api);
    const a = await automation(t, { conditions: [], actions: [{ type: 'set_priority', value: 'high' }] });
    const counts = new RunCounts(svc.rt.deps.database, { warn: () => {} }, 3_600_000);
    counts.add(t.workspaceId, [a.id, a.id]);
    expect(counts.unwritten(t.workspaceId, a.id)).toBe(2);
    expect(await stored(t, a.id)).toBe(0);
    await counts.stop();
    expect(counts.unwritten(t.workspaceId, a.id)).toBe(0);
    expect(await stored(t, a.id)).toBe(2);
  });
});

describe('triggers', () => {
  it('ticket_created: when all conditions hold the actions apply, with the automation as actor', async () => {
    const t = await newTenant(svc.api);
    await labels(t, 'Billing');
    const a = await automation(t, {
      conditions: [
        { field: 'subject', op: 'contains', value: 'REFUND' },
        { field: 'priority', op: 'equals', value: 'normal' },
      ],
      actions: [
        { type: 'set_priority', value: 'urgent' },
        { type: 'add_tag', value: 'billing' },
      ],
    });
    const seq = await latestSeqOf(svc, t);
    const hit = await ticket(t, { subject: 'Refund please' });
    // The answer is the ticket after the automations.
    expect(hit.priority).toBe('urgent');
    expect(tagNames(hit)).toEqual(['Billing']);
    expect(await getTicket(t, hit.id)).toMatchObject({ priority: 'urgent' });
    const acts = await activities(t, hit.id);
    expect(acts.map((x: any) => [x.type, x.actor.type, x.actor.automation_id, x.actor.user])).toEqual([
      ['priority_changed', 'automation', a.id, null],
      ['tagged', 'automation', a.id, null],
    ]);
    expect(acts[0].data).toEqual({ from: 'normal', to: 'urgent' });
    expect(await runCount(t, a.id)).toBe(1);

    // ticket.created first, then the automation's ticket.updated with what it changed.
    const events = (await eventsAfterOf(svc, t, seq)).filter((e) => e.type.startsWith('ticket.'));
    expect(events.map((e) => e.type)).toEqual(['ticket.created', 'ticket.updated']);
    expect(events[0].data.ticket.priority).toBe('normal');
    expect(events[1].data.changes.sort()).toEqual(['priority', 'tags']);
    expect(events[1].data.ticket.priority).toBe('urgent');

    // Conditions that do not all hold: nothing happens, nothing is counted.
    const miss = await ticket(t, { subject: 'Refund please', priority: 'low' });
    expect(miss.priority).toBe('low');
    expect(miss.tags).toEqual([]);
    expect(await activities(t, miss.id)).toEqual([]);
    expect(await runCount(t, a.id)).toBe(1);
  });

  it('agent_replied runs on an agent reply (body is the reply), not on a note', async () => {
    const t = await newTenant(svc.api);
    const a = await automation(t, {
      trigger: 'agent_replied',
      conditions: [{ field: 'body', op: 'contains', value: 'escalat' }],
      actions: [{ type: 'set_priority', value: 'high' }],
    });
    const tk = await ticket(t, { body_html: '<p>please escalate</p>' });
    expect(tk.priority).toBe('normal'); // ticket_created is another trigger
    await makeMessage(svc.api, t, tk.id, { kind: 'note', body_html: 'Escalate this' });
    expect((await getTicket(t, tk.id)).priority).toBe('normal');
    await makeMessage(svc.api, t, tk.id, { kind: 'reply', body_html: 'We are on it' });
    expect((await getTicket(t, tk.id)).priority).toBe('normal');
    const r = await svc.api.post(
      `/v1/tickets/${tk.id}/messages`,
      { kind: 'reply', body_html: 'I am ESCALATING' },
      t.as,
    );
    expect(r.status).toBe(201);
    expect((await getTicket(t, tk.id)).priority).toBe('high');
    expect(await runCount(t, a.id)).toBe(1);
  });

  it('customer_replied runs on a customer message; from_email is its sender', async () => {
    const t = await newTenant(svc.api);
    const mb = await mailbox(t);
    const a = await automation(t, {
      trigger: 'customer_replied',
      conditions: [
        { field: 'from_email', op: 'equals', value: 'ANN@example.com' },
        { field: 'body', op: 'not_contains', value: 'thanks' },
      ],
      actions: [{ type: 'set_priority', value: 'high' }],
    });
    const tk = await ticket(t, { channel: 'email', mailbox_id: mb.id, contact: { email: 'ann@example.com' } });
    await svc.api.patch(`/v1/tickets/${tk.id}`, { status: 'pending' }, t.as);
    await customerReply(t, tk.id, 'Thanks, all good', 'ann@example.com');
    expect((await getTicket(t, tk.id)).priority).toBe('normal');
    await customerReply(t, tk.id, 'Still broken', 'bob@example.com');
    expect((await getTicket(t, tk.id)).priority).toBe('normal');
    await customerReply(t, tk.id, 'Still broken', 'ann@example.com');
    const after = await getTicket(t, tk.id);
    expect(after.priority).toBe('high');
    expect(after.status).toBe('open'); // the customer message reopened it, as always
    expect(await runCount(t, a.id)).toBe(1);
  });

  it('ticket_updated runs on a change; a change an automation makes runs no automation (one pass)', async () => {
    const t = await newTenant(svc.api);
    const team = await svc.api.post('/v1/teams', { name: 'Escalations', private: false, member_ids: [] }, t.as);
    const onCreate = await automation(t, {
      conditions: [{ field: 'subject', op: 'contains', value: 'outage' }],
      actions: [{ type: 'set_priority', value: 'urgent' }],
    });
    const onUpdate = await automation(t, {
      trigger: 'ticket_updated',
      conditions: [{ field: 'priority', op: 'equals', value: 'urgent' }],
      actions: [{ type: 'assign_team', value: team.body.id }],
    });
    const tk = await ticket(t, { subject: 'Total outage' });
    expect(tk.priority).toBe('urgent');
    expect(tk.team_id).toBeNull(); // the automation's own change did not run ticket_updated automations
    expect(await runCount(t, onCreate.id)).toBe(1);
    expect(await runCount(t, onUpdate.id)).toBe(0);

    const other = await ticket(t, { subject: 'Question' });
    const r = await svc.api.patch(`/v1/tickets/${other.id}`, { priority: 'urgent' }, t.as);
    expect(r.status).toBe(200);
    expect(r.body.team_id).toBe(team.body.id);
    expect(await runCount(t, onUpdate.id)).toBe(1);
  });

  it('two automations that would flip each other run once each per event', async () => {
    const t = await newTenant(svc.api);
    const toLow = await automation(t, {
      trigger: 'ticket_updated',
      conditions: [{ field: 'priority', op: 'equals', value: 'high' }],
      actions: [{ type: 'set_priority', value: 'low' }],
    });
    const toHigh = await automation(t, {
      trigger: 'ticket_updated',
      conditions: [{ field: 'priority', op: 'equals', value: 'low' }],
      actions: [{ type: 'set_priority', value: 'high' }],
    });
    const tk = await ticket(t);
    const r = await svc.api.patch(`/v1/tickets/${tk.id}`, { priority: 'high' }, t.as);
    expect(r.status).toBe(200);
    // The second sees the ticket as the first left it (low) and sets it back.
    expect(r.body.priority).toBe('high');
    expect(await runCount(t, toLow.id)).toBe(1);
    expect(await runCount(t, toHigh.id)).toBe(1);
    const changes = (await activities(t, tk.id)).map((x: any) => [x.data.to, x.actor.type]);
    expect(changes).toEqual([
      ['high', 'user'],
      ['low', 'automation'],
      ['high', 'automation'],
    ]);
  });

  it('a disabled automation does nothing; enabling it makes it run', async () => {
    const t = await newTenant(svc.api);
    const a = await automation(t, { enabled: false, actions: [{ type: 'set_priority', value: 'high' }] });
    expect((await ticket(t)).priority).toBe('normal');
    expect(await runCount(t, a.id)).toBe(0);
    await svc.api.patch(`/v1/automations/${a.id}`, { enabled: true }, t.as);
    expect((await ticket(t)).priority).toBe('high');
    expect(await runCount(t, a.id)).toBe(1);
  });

  it('runs in position order, each on the ticket as the one before left it', async () => {
    const t = await newTenant(svc.api);
    const second = await automation(t, {
      position: 5,
      conditions: [{ field: 'priority', op: 'equals', value: 'high' }],
      actions: [{ type: 'set_severity', value: 'sev2' }],
    });
    const first = await automation(t, { position: 1, actions: [{ type: 'set_priority', value: 'high' }] });
    const tk = await ticket(t);
    expect([tk.priority, tk.severity]).toEqual(['high', 'sev2']);
    expect(await runCount(t, first.id)).toBe(1);
    expect(await runCount(t, second.id)).toBe(1);
  });
});

describe('conditions', () => {
  it('hold or fail as their field type says', async () => {
    const t = await newTenant(svc.api);
    const mb = await mailbox(t);
    await labels(t, 'VIP', 'Gold', 'Spam-ish');
    await svc.api.post('/v1/custom-fields', { entity: 'ticket', type: 'number', name: 'Seats', key: 'seats' }, t.as);
    await svc.api.post(
      '/v1/custom-fields',
      {
        entity: 'ticket',
        type: 'multi_select',
        name: 'Parts',
        key: 'parts',
        options: [{ label: 'Screen' }, { label: 'Keys' }],
      },
      t.as,
    );
    await svc.api.post('/v1/custom-fields', { entity: 'contact', type: 'text', name: 'Plan', key: 'plan' }, t.as);
    const contact = await svc.api.post(
      '/v1/contacts',
      { email: 'Ann@Example.com', name: 'Ann', fields: { plan: 'Enterprise yearly' } },
      t.as,
    );
    expect(contact.status, contact.text).toBe(201);

    // Each case adds its own marker label when it holds.
    const cases: Array<[string, Body, boolean]> = [
      ['subject contains (any case)', { field: 'subject', op: 'contains', value: 'printer' }, true],
      ['subject not_contains', { field: 'subject', op: 'not_contains', value: 'printer' }, false],
      ['subject equals is the whole subject', { field: 'subject', op: 'equals', value: 'printer' }, false],
      ['subject equals (any case)', { field: 'subject', op: 'equals', value: 'my PRINTER is on fire' }, true],
      ['subject not_equals', { field: 'subject', op: 'not_equals', value: 'other' }, true],
      ['body contains', { field: 'body', op: 'contains', value: 'smoke' }, true],
      ['from_email (the contact)', { field: 'from_email', op: 'equals', value: 'ann@example.com' }, true],
      ['from_email contains', { field: 'from_email', op: 'contains', value: '@example.org' }, false],
      ['channel', { field: 'channel', op: 'equals', value: 'email' }, true],
      ['channel not_equals', { field: 'channel', op: 'not_equals', value: 'email' }, false],
      ['mailbox', { field: 'mailbox_id', op: 'equals', value: mb.id }, true],
      ['priority', { field: 'priority', op: 'equals', value: 'high' }, true],
      ['status', { field: 'status', op: 'equals', value: 'pending' }, false],
      ['severity none', { field: 'severity', op: 'equals', value: 'none' }, true],
      ['severity sev1', { field: 'severity', op: 'equals', value: 'sev1' }, false],
      ['tag equals', { field: 'tag', op: 'equals', value: 'vip' }, true],
      ['tag not_equals', { field: 'tag', op: 'not_equals', value: 'VIP' }, false],
      ['tag contains one of', { field: 'tag', op: 'contains', value: 'Gold, VIP' }, true],
      ['tag not_contains any of', { field: 'tag', op: 'not_contains', value: 'Gold, Spam-ish' }, true],
      ['sentiment unknown is none', { field: 'sentiment', op: 'equals', value: 'none' }, true],
      ['sentiment', { field: 'sentiment', op: 'equals', value: 'negative' }, false],
      ['number gt', { field: 'field.seats', op: 'gt', value: 10 }, true],
      ['number equals', { field: 'field.seats', op: 'equals', value: '12' }, true],
      ['number lt', { field: 'field.seats', op: 'lt', value: 12 }, false],
      ['multi all', { field: 'field.parts', op: 'all', value: 'screen,keys' }, false],
      ['multi any', { field: 'field.parts', op: 'any', value: 'keys,screen' }, true],
      ['field not_set', { field: 'field.seats', op: 'not_set' }, false],
      ['contact field contains', { field: 'contact.field.plan', op: 'contains', value: 'ENTERPRISE' }, true],
      ['contact field equals', { field: 'contact.field.plan', op: 'equals', value: 'enterprise' }, false],
    ];
    const markers = cases.map((_, i) => `Hit ${i}`);
    await labels(t, ...markers);
    for (const [i, [, condition]] of cases.entries()) {
      await automation(t, { conditions: [condition], actions: [{ type: 'add_tag', value: markers[i] }] });
    }
    const tk = await ticket(t, {
      subject: 'My Printer is on fire',
      body_html: '<p>There is SMOKE everywhere</p>',
      channel: 'email',
      mailbox_id: mb.id,
      contact_id: contact.body.id,
      priority: 'high',
      tags: ['VIP'],
      fields: { seats: 12, parts: ['screen'] },
    });
    const held = new Set(tagNames(tk));
    for (const [i, [label, , expected]] of cases.entries()) {
      expect(held.has(markers[i]!), label).toBe(expected);
    }
  });

  it('sentiment reads custom.ai_sentiment; body on ticket_updated is the latest reply', async () => {
    const t = await newTenant(svc.api);
    await labels(t, 'Unhappy', 'Smoke');
    await automation(t, {
      trigger: 'ticket_updated',
      conditions: [{ field: 'sentiment', op: 'equals', value: 'frustrated' }],
      actions: [{ type: 'add_tag', value: 'Unhappy' }],
    });
    await automation(t, {
      trigger: 'ticket_updated',
      conditions: [{ field: 'body', op: 'contains', value: 'smoke' }],
      actions: [{ type: 'add_tag', value: 'Smoke' }],
    });
    const tk = await ticket(t, { body_html: '<p>All fine</p>' });
    await makeMessage(svc.api, t, tk.id, { kind: 'reply', body_html: 'Is there smoke?' });
    await makeMessage(svc.api, t, tk.id, { kind: 'note', body_html: 'no smoke here' });
    const r = await svc.api.patch(`/v1/tickets/${tk.id}`, { custom: { ai_sentiment: 'frustrated' } }, t.as);
    expect(r.status, r.text).toBe(200);
    expect(tagNames(r.body)).toEqual(['Smoke', 'Unhappy']);

    const calm = await ticket(t, { body_html: '<p>smoke</p>' });
    await makeMessage(svc.api, t, calm.id, { kind: 'reply', body_html: 'Solved it' });
    const r2 = await svc.api.patch(`/v1/tickets/${calm.id}`, { custom: { ai_sentiment: 'positive' } }, t.as);
    expect(r2.body.tags).toEqual([]);
  });

  it('ai_decide does not hold without a decision engine; with one, all questions go in one call', async () => {
    const t = await newTenant(svc.api);
    const a = await automation(t, {
      conditions: [
        { field: 'subject', op: 'contains', value: 'help' },
        { field: 'ai_decide', op: 'gt', value: 0.7, question: 'Is the customer angry?' },
        { field: 'ai_decide', op: 'lt', value: 0.3, question: 'Is this a sales lead?' },
      ],
      actions: [{ type: 'set_priority', value: 'urgent' }],
    });
    expect((await ticket(t, { subject: 'help!' })).priority).toBe('normal');
    expect(await runCount(t, a.id)).toBe(0);

    const calls: string[][] = [];
    let answers: Array<number | null> | null = [0.9, 0.1];
    setDecisionEngine(async (_deps, _u, req) => {
      calls.push(req.questions);
      expect(req.automation.id).toBe(a.id);
      return answers;
    });
    expect((await ticket(t, { subject: 'help!' })).priority).toBe('urgent');
    expect(calls).toEqual([['Is the customer angry?', 'Is this a sales lead?']]);
    // Other conditions first: no call when they fail.
    expect((await ticket(t, { subject: 'hello' })).priority).toBe('normal');
    expect(calls).toHaveLength(1);
    answers = [0.9, 0.5];
    expect((await ticket(t, { subject: 'help!' })).priority).toBe('normal');
    answers = null; // no answer
    expect((await ticket(t, { subject: 'help!' })).priority).toBe('normal');
    setDecisionEngine(async () => {
      throw new Error('engine down');
    });
    expect((await ticket(t, { subject: 'help!' })).priority).toBe('normal');
    expect(await runCount(t, a.id)).toBe(1);
  });
});
