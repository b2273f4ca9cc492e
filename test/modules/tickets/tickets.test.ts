// /v1/tickets: the Ticket shape, numbers, addressing by id/number/#number, create with a
// contact found or created by email, PATCH with activities and events (changes, the
// assignee's user topic), status rules, soft delete, bulk, merge, counts, who may do what,
// private teams, and the bad input of the issue.
import { randomUUID } from 'node:crypto';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ticket } from '../../../src/modules/tickets/schemas.js';
import { makeMessage, makeTicket } from '../../support/builders.js';
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

const api = () => svc.api;
const ticket = <B extends Record<string, unknown>>(t: Tenant | ReqOpts, body?: B) => makeTicket(api(), t, body);
const email = () => `${unique('c')}@example.com`;

describe('creating and reading tickets', () => {
  it('creates a ticket with a new contact and a first reply; reads it by id, number and #number', async () => {
    const t = await newTenant(api());
    const seq = await latestSeqOf(svc, t);
    const addr = email();
    const r = await api().post(
      '/v1/tickets',
      {
        subject: '  Printer on fire ',
        contact: { email: addr, name: 'Jane Doe' },
        body_html: '<p>Hello <b>Jane</b>, we are on it.</p>',
        priority: 'high',
        severity: 'sev2',
      },
      t.as,
    );
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/tickets/${r.body.id}`);
    const tk = r.body;
    expect(tk).toMatchObject({
      number: 1,
      subject: 'Printer on fire',
      status: 'open',
      priority: 'high',
      severity: 'sev2',
      channel: 'api',
      mailbox_id: null,
      assignee: null,
      team_id: null,
      tags: [],
      sla: null,
      solved_at: null,
      snoozed_until: null,
      last_customer_message_at: null,
      last_message_preview: 'Hello Jane, we are on it.',
      message_count: 1,
      spam: false,
      csat: null,
      custom: {},
      fields: {},
    });
    expect(tk.contact).toMatchObject({ name: 'Jane Doe', email: addr, avatar_url: null });
    expect(tk.first_responded_at).not.toBeNull();
    for (const ref of [tk.id, '1', '%231']) {
      const g = await api().get(`/v1/tickets/${ref}`, t.as);
      expect(g.status, ref).toBe(200);
      expect(g.body).toEqual(tk);
    }
    // The contact was created once and is found again by email, whatever its case.
    const again = await ticket(t, { contact: { email: addr.toUpperCase() } });
    expect(again.contact.id).toBe(tk.contact.id);
    expect(again.number).toBe(2);

    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual([
      'contact.created',
      'ticket.created',
      'message.created',
      'ticket.created',
    ]);
    expect(events[1].data.ticket).toEqual(tk);
    expect(events[2].visibility).toBe('agents');
    expect(events[2].data.message.body_html).toContain('<b>Jane</b>');
  });

  it('every read is exactly the Ticket schema: no field more or less, RFC 3339 UTC timestamps', async () => {
    const t = await newTenant(api());
    const agent = await addMember(svc, t, 'agent', 'Ann Agent');
    const team = await api().post('/v1/teams', { name: unique('Team') }, t.as);
    expect(team.status, team.text).toBe(201);
    const f = await api().post('/v1/custom-fields', { entity: 'ticket', name: 'Plan', type: 'text' }, t.as);
    expect(f.status, f.text).toBe(201);
    const tk = await ticket(t, {
      contact: { email: email(), name: 'Zoë "Quotes" <O\'Brien>' },
      body_html: '<p>Line one</p><p>Ünïcode ✓ and "quotes" \\ back\\slash</p>',
      assignee_id: agent.userId,
      team_id: team.body.id,
      tags: ['vip', 'Billing'],
      fields: { [f.body.key]: 'pro "plus"' },
      severity: 'sev1',
    });
    await api().patch(`/v1/tickets/${tk.id}`, { custom: { nested: { a: [1, 'x'] } }, snoozed_until: null }, t.as);
    const strict = (schema: any): any => {
      if (Array.isArray(schema)) return schema.map(strict);
      if (schema === null || typeof schema !== 'object') return schema;
      const out: any = {};
      for (const k of Reflect.ownKeys(schema)) out[k] = strict(schema[k]);
      if (schema.type === 'object' && schema.properties && !schema.patternProperties) out.additionalProperties = false;
      return out;
    };
    const ajv = new Ajv({ allErrors: true, strict: false });
    (addFormats as unknown as { default: (a: Ajv) => void }).default(ajv);
    const check = ajv.compile(strict(Ticket));
    const got = await api().get(`/v1/tickets/${tk.number}`, t.as);
    const listed = await api().get('/v1/tickets?limit=5', t.as);
    expect(listed.status).toBe(200);
    expect(Object.keys(listed.body).sort()).toEqual(['data', 'next_cursor']);
    for (const x of [got.body, listed.body.data[0]]) {
      expect(check(x) ? [] : check.errors).toEqual([]);
      expect(Object.keys(x).sort()).toEqual(Object.keys(Ticket.properties).sort());
      for (const k of ['created_at', 'updated_at', 'last_message_at', 'first_responded_at']) {
        expect(x[k], k).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      }
      expect(x.contact.name).toBe('Zoë "Quotes" <O\'Brien>');
      expect(x.assignee).toEqual({ id: agent.userId, name: 'Ann Agent', email: expect.any(String), avatar_url: null });
      expect(x.tags.map((g: any) => g.name)).toEqual(['Billing', 'vip']);
      expect(x.fields).toEqual({ [f.body.key]: 'pro "plus"' });
      expect(x.custom).toEqual({ nested: { a: [1, 'x'] } });
      expect(x.last_message_preview).toContain('Ünïcode ✓ and "quotes"');
    }
    expect(listed.body.data[0]).toEqual(got.body);
    expect(got.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('numbers are gapless under concurrent creates and never reused after a delete', async () => {
    const t = await newTenant(api());
    const made = await Promise.all(Array.from({ length: 12 }, () => ticket(t)));
    expect(made.map((m) => m.number).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    const last = made.find((m) => m.number === 12)!;
    expect((await api().delete(`/v1/tickets/${last.id}`, t.as)).status).toBe(204);
    expect((await ticket(t)).number).toBe(13);
  });

  it('links an existing contact by id; other workspaces number on their own', async () => {
    const a = await newTenant(api());
    const b = await newTenant(api());
    const c = await api().post('/v1/contacts', { email: email(), name: 'Carl' }, a.as);
    const tk = await ticket(a, { contact_id: c.body.id });
    expect(tk.contact.id).toBe(c.body.id);
    expect((await ticket(b)).number).toBe(1);
    // Another workspace's contact is unknown here.
    const r = await api().post('/v1/tickets', { subject: 'x', contact_id: c.body.id }, b.as);
    expect(r.status).toBe(422);
    expect(r.body.errors[0].location).toBe('body.contact_id');
  });

  it('refuses bad input with located 422s and changes nothing', async () => {
    const t = await newTenant(api());
    const viewer = await addMember(svc, t, 'viewer');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ subject: 'x'.repeat(1_000_000) }, 'body.subject'],
      [{ subject: '   ' }, 'body.subject'],
      [{ subject: 'x', contact_id: randomUUID() }, 'body.contact_id'],
      [{ subject: 'x', assignee_id: randomUUID() }, 'body.assignee_id'],
      [{ subject: 'x', assignee_id: viewer.userId }, 'body.assignee_id'],
      [{ subject: 'x', team_id: randomUUID() }, 'body.team_id'],
      [{ subject: 'x', priority: 'asap' }, 'body.priority'],
      [{ subject: 'x', severity: 'sev5' }, 'body.severity'],
      [{ subject: 'x', status: 'done' }, 'body.status'],
      [{ subject: 'x', channel: 'chat' }, 'body.channel'],
      [{ subject: 'x', body_html: '<script>alert(1)</script>' }, 'body.body_html'],
      [{ subject: 'x', contact: { email: 'not an email' } }, 'body.contact.email'],
      [{ subject: 'x', mailbox_id: randomUUID() }, 'body.mailbox_id'],
    ];
    for (const [body, location] of cases) {
      const r = await api().post('/v1/tickets', body, t.as);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors[0].location).toBe(location);
    }
    const list = await api().get('/v1/tickets', t.as);
    expect(list.body.data).toEqual([]);
    // Nothing was numbered either: the next ticket is number 1.
    expect((await ticket(t)).number).toBe(1);
  });
});

describe('changing tickets', () => {
  it('PATCH changes fields, writes activities and ticket.updated with changes and the assignee topic', async () => {
    const t = await newTenant(api());
    const agent = await addMember(svc, t, 'agent', 'Ann Agent');
    const team = await api().post('/v1/teams', { name: unique('Billing'), private: false, member_ids: [] }, t.as);
    const tk = await ticket(t, { severity: 'sev3' });
    const seq = await latestSeqOf(svc, t);
    const snooze = new Date(Date.now() + 3_600_000).toISOString();
    const r = await api().patch(
      `/v1/tickets/${tk.number}`,
      {
        status: 'pending',
        priority: 'urgent',
        severity: null,
        assignee_id: agent.userId,
        team_id: team.body.id,
        snoozed_until: snooze,
        custom: { order: 'A-1', drop: null },
        subject: 'Printer still on fire',
      },
      t.as,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      status: 'pending',
      priority: 'urgent',
      severity: null,
      team_id: team.body.id,
      snoozed_until: snooze,
      custom: { order: 'A-1' },
      subject: 'Printer still on fire',
    });
    expect(r.body.assignee).toEqual({ id: agent.userId, name: 'Ann Agent', email: agent.email, avatar_url: null });
    expect(new Date(r.body.updated_at).getTime()).toBeGreaterThan(new Date(tk.updated_at).getTime());

    const acts = await api().get(`/v1/tickets/${tk.id}/activities`, t.as);
    expect(acts.status).toBe(200);
    expect(acts.body.data.map((a: any) => [a.type, a.data])).toEqual([
      ['status_changed', { from: 'open', to: 'pending' }],
      ['priority_changed', { from: 'normal', to: 'urgent' }],
      ['severity_changed', { from: 'sev3', to: null }],
      ['assigned', { from: null, to: agent.userId }],
      ['team_changed', { from: null, to: team.body.id }],
    ]);
    expect(acts.body.data[0].actor).toEqual({
      type: 'user',
      user: { id: t.owner.userId, name: 'Olivia Owner', email: t.owner.email, avatar_url: null },
      api_key_id: null,
      automation_id: null,
    });

    const events = await eventsAfterOf(svc, t, seq);
    const updated = events.filter((e) => e.type === 'ticket.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].data.ticket).toEqual(r.body);
    expect(new Set(updated[0].data.changes)).toEqual(
      new Set(['subject', 'status', 'priority', 'severity', 'assignee_id', 'team_id', 'snoozed_until', 'custom']),
    );
    expect(updated[0].topics).toContain(`user:${agent.userId}`);
    expect(events.filter((e) => e.type === 'activity.created')).toHaveLength(5);

    // The same PATCH again changes nothing and publishes nothing.
    const seq2 = await latestSeqOf(svc, t);
    const same = await api().patch(`/v1/tickets/${tk.id}`, { status: 'pending', priority: 'urgent' }, t.as);
    expect(same.status).toBe(200);
    expect(await latestSeqOf(svc, t)).toBe(seq2);
  });

  it('solving sets solved_at and clears a snooze; reopening clears solved_at; an API key acts as itself', async () => {
    const t = await newTenant(api());
    const key = await newApiKey(api(), t, ['tickets:write']);
    const tk = await ticket(t);
    await api().patch(`/v1/tickets/${tk.id}`, { snoozed_until: new Date(Date.now() + 60_000).toISOString() }, t.as);
    const solved = await api().patch(`/v1/tickets/${tk.id}`, { status: 'solved' }, { token: key.key });
    expect(solved.status, solved.text).toBe(200);
    expect(solved.body.solved_at).not.toBeNull();
    expect(solved.body.snoozed_until).toBeNull();
    const reopened = await api().patch(`/v1/tickets/${tk.id}`, { status: 'open' }, { token: key.key });
    expect(reopened.body.solved_at).toBeNull();
    const acts = (await api().get(`/v1/tickets/${tk.id}/activities`, t.as)).body.data;
    expect(acts.at(-1).actor).toEqual({ type: 'api_key', user: null, api_key_id: key.id, automation_id: null });
  });

  it('refuses bad changes: unknown or viewer assignee, unknown team, past snooze, blank subject', async () => {
    const t = await newTenant(api());
    const viewer = await addMember(svc, t, 'viewer');
    const other = await newTenant(api());
    const tk = await ticket(t);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ assignee_id: randomUUID() }, 'body.assignee_id'],
      [{ assignee_id: viewer.userId }, 'body.assignee_id'],
      [{ assignee_id: other.owner.userId }, 'body.assignee_id'],
      [{ team_id: randomUUID() }, 'body.team_id'],
      [{ snoozed_until: '2001-01-01T00:00:00Z' }, 'body.snoozed_until'],
      [{ subject: ' ' }, 'body.subject'],
      [{ spam: 'yes' }, 'body.spam'],
      [{ number: 5 }, 'body.number'],
    ];
    for (const [body, location] of cases) {
      const r = await api().patch(`/v1/tickets/${tk.id}`, body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.errors[0].location).toBe(location);
    }
    expect((await api().get(`/v1/tickets/${tk.id}`, t.as)).body).toEqual(tk);
  });

  it('soft delete: gone from GET, lists, PATCH and counts; audited; ticket.deleted', async () => {
    const t = await newTenant(api());
    const tk = await ticket(t);
    const seq = await latestSeqOf(svc, t);
    expect((await api().delete(`/v1/tickets/${tk.id}`, t.as)).status).toBe(204);
    expect((await api().get(`/v1/tickets/${tk.id}`, t.as)).status).toBe(404);
    expect((await api().get(`/v1/tickets/${tk.number}`, t.as)).status).toBe(404);
    expect((await api().patch(`/v1/tickets/${tk.id}`, { status: 'solved' }, t.as)).status).toBe(404);
    expect((await api().delete(`/v1/tickets/${tk.id}`, t.as)).status).toBe(404);
    expect((await api().get('/v1/tickets', t.as)).body.data).toEqual([]);
    expect((await api().get('/v1/tickets/counts', t.as)).body.open).toBe(0);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => [e.type, e.data])).toEqual([['ticket.deleted', { ticket_id: tk.id }]]);
    const audit = await api().get('/v1/audit-logs?action=ticket.deleted', t.as);
    expect(audit.body.data[0]).toMatchObject({ entity_id: tk.id, data: { number: tk.number } });
  });
});

describe('bulk', () => {
  it('patches up to 100 tickets with an event and activity each', async () => {
    const t = await newTenant(api());
    const made = await Promise.all(Array.from({ length: 5 }, () => ticket(t)));
    const seq = await latestSeqOf(svc, t);
    const r = await api().post(
      '/v1/tickets/bulk',
      {
        ids: [...made.slice(0, 4).map((m) => m.id), `#${made[4]!.number}`],
        patch: { status: 'solved', priority: 'low' },
      },
      t.as,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.data).toHaveLength(5);
    expect(r.body.data.every((x: any) => x.status === 'solved' && x.priority === 'low')).toBe(true);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.filter((e) => e.type === 'ticket.updated')).toHaveLength(5);
    expect(events.filter((e) => e.type === 'activity.created')).toHaveLength(10);
  });

  it('deletes; refuses 101 ids, an unknown id (nothing changes), and patch with delete', async () => {
    const t = await newTenant(api());
    const made = await Promise.all(Array.from({ length: 3 }, () => ticket(t)));
    const tooMany = await api().post(
      '/v1/tickets/bulk',
      { ids: Array.from({ length: 101 }, () => randomUUID()), delete: true },
      t.as,
    );
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.errors[0].location).toBe('body.ids');
    const unknown = await api().post(
      '/v1/tickets/bulk',
      { ids: [made[0]!.id, randomUUID()], patch: { status: 'solved' } },
      t.as,
    );
    expect(unknown.status).toBe(404);
    expect((await api().get(`/v1/tickets/${made[0]!.id}`, t.as)).body.status).toBe('open');
    const both = await api().post('/v1/tickets/bulk', { ids: [made[0]!.id], patch: {}, delete: true }, t.as);
    expect(both.status).toBe(422);
    const del = await api().post('/v1/tickets/bulk', { ids: made.map((m) => m.id), delete: true }, t.as);
    expect(del.status).toBe(200);
    expect(new Set(del.body.deleted_ids)).toEqual(new Set(made.map((m) => m.id)));
    expect((await api().get('/v1/tickets', t.as)).body.data).toEqual([]);
  });
});

describe('merge', () => {
  it('moves messages to the target, closes the source with a merged activity', async () => {
    const t = await newTenant(api());
    const source = await ticket(t, { body_html: '<p>first</p>' });
    await makeMessage(api(), t, source.id, { kind: 'note', body_html: '<p>second</p>' });
    const into = await ticket(t, { body_html: '<p>target</p>' });
    const r = await api().post(`/v1/tickets/${source.id}/merge`, { into_id: String(into.number) }, t.as);
    expect(r.status, r.text).toBe(200);
    expect(r.body.id).toBe(into.id);
    expect(r.body.message_count).toBe(3);
    const msgs = await api().get(`/v1/tickets/${into.id}/messages`, t.as);
    expect(msgs.body.data.map((m: any) => m.body_text)).toEqual(['first', 'second', 'target']);
    const src = await api().get(`/v1/tickets/${source.id}`, t.as);
    expect(src.status).toBe(200);
    expect(src.body).toMatchObject({
      status: 'closed',
      message_count: 0,
      custom: { merged_into: { id: into.id, number: into.number } },
    });
    const acts = (await api().get(`/v1/tickets/${source.id}/activities`, t.as)).body.data;
    expect(acts.map((a: any) => [a.type, a.data])).toEqual([
      ['status_changed', { from: 'open', to: 'closed' }],
      ['merged', { into: into.id }],
    ]);
    // Merging it again, into itself, into a deleted ticket, or into an unknown one: 422.
    const other = await ticket(t);
    const gone = await ticket(t);
    await api().delete(`/v1/tickets/${gone.id}`, t.as);
    for (const [from, to] of [
      [source.id, into.id],
      [other.id, other.id],
      [other.id, gone.id],
      [other.id, randomUUID()],
      [other.id, source.id],
    ]) {
      const bad = await api().post(`/v1/tickets/${from}/merge`, { into_id: to }, t.as);
      expect(bad.status, `${from} → ${to}`).toBe(422);
      expect(bad.body.errors[0].location).toBe('body.into_id');
    }
  });
});
