// /v1/automations and /v1/automations/{id}: the Automation shape, run order, events, who may
// read and write (settings: admins, keys with settings:read / settings:write), the save-time
// checks of conditions and actions (each bad input a 422 naming the entry, nothing stored), and
// labels renamed or merged rewriting the automations that name them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
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

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const simple = (extra: Record<string, unknown> = {}) => ({
  name: 'Urgent refunds',
  trigger: 'ticket_created',
  conditions: [{ field: 'subject', op: 'contains', value: 'refund' }],
  actions: [{ type: 'set_priority', value: 'urgent' }],
  ...extra,
});

async function create(t: Tenant, body: Record<string, unknown>) {
  const r = await svc.api.post('/v1/automations', body, t.as);
  expect(r.status, r.text).toBe(201);
  return r.body;
}

async function field(t: Tenant, body: Record<string, unknown>) {
  const r = await svc.api.post('/v1/custom-fields', { entity: 'ticket', ...body }, t.as);
  expect(r.status, r.text).toBe(201);
  return r.body;
}

async function count(t: Tenant): Promise<number> {
  const r = await svc.api.get('/v1/automations?limit=100', t.as);
  expect(r.status).toBe(200);
  return r.body.data.length;
}

describe('creating, reading, changing and deleting automations', () => {
  it('creates one (201, Location, automation.created) and reads it back', async () => {
    const t = await newTenant(svc.api);
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post(
      '/v1/automations',
      simple({
        name: '  Urgent refunds  ',
        conditions: [
          { field: 'subject', op: 'contains', value: ' refund ' },
          { field: 'severity', op: 'equals', value: 'none' },
        ],
        actions: [
          { type: 'set_priority', value: 'urgent' },
          { type: 'add_note', value: '<p onclick="x()">Refund <b>request</b><script>alert(1)</script></p>' },
          { type: 'set_severity', value: '' },
          { type: 'mark_spam' },
        ],
      }),
      t.as,
    );
    expect(r.status, r.text).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/automations/${r.body.id}`);
    expect(r.body).toEqual({
      id: expect.stringMatching(ID),
      name: 'Urgent refunds',
      trigger: 'ticket_created',
      conditions: [
        { field: 'subject', op: 'contains', value: 'refund' },
        { field: 'severity', op: 'equals', value: 'none' },
      ],
      actions: [
        { type: 'set_priority', value: 'urgent' },
        { type: 'add_note', value: '<p>Refund <b>request</b></p>' },
        { type: 'set_severity', value: '' },
        { type: 'mark_spam', value: '' },
      ],
      enabled: true,
      position: 0,
      run_count: 0,
      created_at: expect.stringMatching(/Z$/),
      updated_at: r.body.created_at,
    });
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['automation.created']);
    expect(events[0].data).toEqual({ automation: r.body });

    expect((await svc.api.get(`/v1/automations/${r.body.id}`, t.as)).body).toEqual(r.body);
    expect((await svc.api.get(`/v1/automations/${r.body.id.toUpperCase()}`, t.as)).body).toEqual(r.body);
    expect((await svc.api.get('/v1/automations', t.as)).body).toEqual({ data: [r.body], next_cursor: null });
    const audit = await svc.api.get('/v1/audit-logs?action=automation.created', t.as);
    expect(audit.body.data.map((e: any) => e.entity_id)).toContain(r.body.id);
  });

  it('lists in run order (position, then id), in pages, filtered by trigger', async () => {
    const t = await newTenant(svc.api);
    const a = await create(t, simple({ name: 'A' }));
    const b = await create(t, simple({ name: 'B', trigger: 'ticket_updated' }));
    const c = await create(t, simple({ name: 'C', position: 0 }));
    expect([a.position, b.position, c.position]).toEqual([0, 1, 0]);
    const all = await svc.api.get('/v1/automations', t.as);
    const zero = [a.id, c.id].sort();
    expect(all.body.data.map((x: any) => x.id)).toEqual([...zero, b.id]);

    const p1 = await svc.api.get('/v1/automations?limit=2', t.as);
    expect(p1.body.data.map((x: any) => x.id)).toEqual(zero);
    const p2 = await svc.api.get(`/v1/automations?limit=2&cursor=${encodeURIComponent(p1.body.next_cursor)}`, t.as);
    expect(p2.body).toEqual({ data: [b], next_cursor: null });

    const updated = await svc.api.get('/v1/automations?trigger=ticket_updated', t.as);
    expect(updated.body.data.map((x: any) => x.id)).toEqual([b.id]);
    const bad = await svc.api.get('/v1/automations?cursor=nonsense', t.as);
    expect(bad.status).toBe(422);
  });

  it('changes one (automation.updated, only what was sent); an unchanged PATCH sends no event', async () => {
    const t = await newTenant(svc.api);
    const a = await create(t, simple());
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.patch(
      `/v1/automations/${a.id}`,
      { enabled: false, trigger: 'agent_replied', actions: [{ type: 'set_status', value: 'pending' }] },
      t.as,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({
      id: a.id,
      name: a.name,
      trigger: 'agent_replied',
      conditions: a.conditions,
      actions: [{ type: 'set_status', value: 'pending' }],
      enabled: false,
      position: 0,
      run_count: 0,
    });
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['automation.updated']);
    expect(events[0].data).toEqual({ automation: r.body });

    const seq2 = await latestSeqOf(svc, t);
    const same = await svc.api.patch(`/v1/automations/${a.id}`, { enabled: false, name: a.name }, t.as);
    expect(same.status).toBe(200);
    expect(same.body).toEqual(r.body);
    expect(await eventsAfterOf(svc, t, seq2)).toEqual([]);
  });

  it('deletes one (204, automation.deleted with automation_id); then it is 404', async () => {
    const t = await newTenant(svc.api);
    const a = await create(t, simple());
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.delete(`/v1/automations/${a.id}`, t.as);
    expect(r.status).toBe(204);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => [e.type, e.data])).toEqual([['automation.deleted', { automation_id: a.id }]]);
    for (const res of [
      await svc.api.get(`/v1/automations/${a.id}`, t.as),
      await svc.api.patch(`/v1/automations/${a.id}`, { name: 'x' }, t.as),
      await svc.api.delete(`/v1/automations/${a.id}`, t.as),
      await svc.api.get('/v1/automations/not-an-id', t.as),
    ]) {
      expect(res.status).toBe(404);
      expect(isErrorBody(res.body, 404, 'not_found')).toBe(true);
    }
  });

  it('another workspace’s automation is 404 and stays unchanged', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const auto = await create(a, simple());
    expect((await svc.api.get(`/v1/automations/${auto.id}`, b.as)).status).toBe(404);
    expect((await svc.api.patch(`/v1/automations/${auto.id}`, { name: 'Mine' }, b.as)).status).toBe(404);
    expect((await svc.api.delete(`/v1/automations/${auto.id}`, b.as)).status).toBe(404);
    expect((await svc.api.get('/v1/automations', b.as)).body.data).toEqual([]);
    expect((await svc.api.get(`/v1/automations/${auto.id}`, a.as)).body).toEqual(auto);
  });
});

describe('who may read and write automations', () => {
  it('admins and owners do; agents and viewers get 403', async () => {
    const t = await newTenant(svc.api);
    const admin = await addMember(svc, t, 'admin');
    const agent = await addMember(svc, t, 'agent');
    const viewer = await addMember(svc, t, 'viewer');
    const a = await create(t, simple());
    expect((await svc.api.post('/v1/automations', simple({ name: 'By admin' }), admin.as)).status).toBe(201);
    expect((await svc.api.get(`/v1/automations/${a.id}`, admin.as)).status).toBe(200);
    for (const who of [agent, viewer]) {
      for (const r of [
        await svc.api.get('/v1/automations', who.as),
        await svc.api.get(`/v1/automations/${a.id}`, who.as),
        await svc.api.post('/v1/automations', simple(), who.as),
        await svc.api.patch(`/v1/automations/${a.id}`, { name: 'x' }, who.as),
        await svc.api.delete(`/v1/automations/${a.id}`, who.as),
      ]) {
        expect(r.status).toBe(403);
        expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
      }
    }
    expect(await count(t)).toBe(2);
  });

  it('a key with settings:read reads but cannot write; settings:write writes; tickets scopes do neither', async () => {
    const t = await newTenant(svc.api);
    const a = await create(t, simple());
    const read = { token: (await newApiKey(svc.api, t, ['settings:read'])).key };
    const write = { token: (await newApiKey(svc.api, t, ['settings:write'])).key };
    const tickets = { token: (await newApiKey(svc.api, t, ['tickets:read', 'tickets:write'])).key };
    expect((await svc.api.get('/v1/automations', read)).status).toBe(200);
    expect((await svc.api.get(`/v1/automations/${a.id}`, read)).status).toBe(200);
    expect((await svc.api.post('/v1/automations', simple(), read)).status).toBe(403);
    expect((await svc.api.patch(`/v1/automations/${a.id}`, { name: 'x' }, read)).status).toBe(403);
    expect((await svc.api.delete(`/v1/automations/${a.id}`, read)).status).toBe(403);

    const made = await svc.api.post('/v1/automations', simple({ name: 'By key' }), write);
    expect(made.status).toBe(201);
    expect((await svc.api.get(`/v1/automations/${made.body.id}`, write)).status).toBe(200);
    expect((await svc.api.patch(`/v1/automations/${made.body.id}`, { enabled: false }, write)).status).toBe(200);
    expect((await svc.api.delete(`/v1/automations/${made.body.id}`, write)).status).toBe(204);

    expect((await svc.api.get('/v1/automations', tickets)).status).toBe(403);
    expect((await svc.api.post('/v1/automations', simple(), tickets)).status).toBe(403);
  });
});

describe('bad input: a 422 naming the entry, and nothing stored', () => {
  it('refuses every malformed condition and action', async () => {
    const t = await newTenant(svc.api);
    const viewer = await addMember(svc, t, 'viewer');
    await field(t, { type: 'number', name: 'Seats', key: 'seats' });
    await field(t, { type: 'checkbox', name: 'VIP', key: 'vip' });
    await field(t, { type: 'date', name: 'Due', key: 'due' });
    await field(t, { type: 'select', name: 'Area', key: 'area', options: [{ label: 'Billing' }] });
    await field(t, { type: 'multi_select', name: 'Parts', key: 'parts', options: [{ label: 'Screen' }] });
    await field(t, { type: 'user', name: 'Owner', key: 'owner' });
    const old = await field(t, { type: 'text', name: 'Old', key: 'old' });
    expect((await svc.api.patch(`/v1/custom-fields/${old.id}`, { archived: true }, t.as)).status).toBe(200);
    const archivedLabel = await svc.api.post('/v1/tags', { name: 'Retired' }, t.as);
    await svc.api.patch(`/v1/tags/${archivedLabel.body.id}`, { archived: true }, t.as);
    const contactsOnly = await svc.api.post('/v1/tags', { name: 'People', applies_to: ['contacts'] }, t.as);
    expect(contactsOnly.status).toBe(201);
    const ai = (question: string, value: unknown = 0.5, op = 'gt') => ({ field: 'ai_decide', op, value, question });
    const cond = (...conditions: unknown[]) => simple({ conditions });
    const act = (...actions: unknown[]) => simple({ actions });

    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['unknown condition field', cond({ field: 'planet', op: 'equals', value: 'x' }), 'body.conditions.0.field'],
      ['unknown op', cond({ field: 'subject', op: 'starts_with', value: 'x' }), 'body.conditions.0.op'],
      ['contains on an enum', cond({ field: 'priority', op: 'contains', value: 'high' }), 'body.conditions.0.op'],
      ['unknown priority', cond({ field: 'priority', op: 'equals', value: 'extreme' }), 'body.conditions.0.value'],
      ['severity sev5', cond({ field: 'severity', op: 'equals', value: 'sev5' }), 'body.conditions.0.value'],
      ['unknown status', cond({ field: 'status', op: 'equals', value: 'done' }), 'body.conditions.0.value'],
      ['unknown channel', cond({ field: 'channel', op: 'equals', value: 'fax' }), 'body.conditions.0.value'],
      ['unknown sentiment', cond({ field: 'sentiment', op: 'equals', value: 'angry' }), 'body.conditions.0.value'],
      ['blank text', cond({ field: 'body', op: 'contains', value: '   ' }), 'body.conditions.0.value'],
      ['number as text', cond({ field: 'subject', op: 'contains', value: 5 }), 'body.conditions.0.value'],
      [
        'unknown mailbox',
        cond({ field: 'mailbox_id', op: 'equals', value: crypto.randomUUID() }),
        'body.conditions.0.value',
      ],
      ['unknown label', cond({ field: 'tag', op: 'equals', value: 'Nope' }), 'body.conditions.0.value'],
      [
        'two labels for equals',
        cond({ field: 'tag', op: 'equals', value: 'Retired, People' }),
        'body.conditions.0.value',
      ],
      ['unknown ticket field', cond({ field: 'field.nope', op: 'equals', value: 'x' }), 'body.conditions.0.field'],
      ['unknown contact field', cond({ field: 'contact.field.seats', op: 'gt', value: 1 }), 'body.conditions.0.field'],
      ['text op on a number', cond({ field: 'field.seats', op: 'contains', value: '1' }), 'body.conditions.0.op'],
      ['word for a number', cond({ field: 'field.seats', op: 'gt', value: 'many' }), 'body.conditions.0.value'],
      ['checkbox maybe', cond({ field: 'field.vip', op: 'equals', value: 'maybe' }), 'body.conditions.0.value'],
      ['unknown option', cond({ field: 'field.area', op: 'any', value: 'sales' }), 'body.conditions.0.value'],
      ['me in a user field', cond({ field: 'field.owner', op: 'equals', value: 'me' }), 'body.conditions.0.value'],
      [
        'question off ai_decide',
        cond({ field: 'subject', op: 'contains', value: 'x', question: 'Why?' }),
        'body.conditions.0.question',
      ],
      ['ai_decide with equals', cond(ai('Is this urgent?', 0.5, 'equals')), 'body.conditions.0.op'],
      ['probability 1.5', cond(ai('Is this urgent?', 1.5)), 'body.conditions.0.value'],
      ['probability 0', cond(ai('Is this urgent?', 0)), 'body.conditions.0.value'],
      ['probability as text', cond(ai('Is this urgent?', '0.5')), 'body.conditions.0.value'],
      ['short question', cond(ai('ab')), 'body.conditions.0.question'],
      ['blank-padded short question', cond(ai('  ab  ')), 'body.conditions.0.question'],
      ['long question', cond(ai('x'.repeat(301))), 'body.conditions.0.question'],
      ['HTML question', cond(ai('Is <b>this</b> urgent?')), 'body.conditions.0.question'],
      ['no question', cond({ field: 'ai_decide', op: 'gt', value: 0.5 }), 'body.conditions.0.question'],
      ['4 ai_decide', cond(ai('One?'), ai('Two?'), ai('Three?'), ai('Four?')), 'body.conditions.3.field'],
      [
        'unknown property in a condition',
        cond({ field: 'subject', op: 'contains', value: 'x', weight: 2 }),
        'body.conditions.0.weight',
      ],
      ['unknown action type', act({ type: 'explode' }), 'body.actions.0.type'],
      ['unknown status', act({ type: 'set_status', value: 'done' }), 'body.actions.0.value'],
      ['status missing', act({ type: 'set_status' }), 'body.actions.0.value'],
      ['unknown priority', act({ type: 'set_priority', value: 'extreme' }), 'body.actions.0.value'],
      ['severity sev9', act({ type: 'set_severity', value: 'sev9' }), 'body.actions.0.value'],
      ['viewer assignee', act({ type: 'assign_user', value: viewer.userId }), 'body.actions.0.value'],
      ['stranger assignee', act({ type: 'assign_user', value: crypto.randomUUID() }), 'body.actions.0.value'],
      ['unknown team', act({ type: 'assign_team', value: crypto.randomUUID() }), 'body.actions.0.value'],
      ['unknown label', act({ type: 'add_tag', value: 'Nope' }), 'body.actions.0.value'],
      ['archived label', act({ type: 'add_tag', value: 'Retired' }), 'body.actions.0.value'],
      ['contacts-only label', act({ type: 'add_tag', value: 'People' }), 'body.actions.0.value'],
      ['empty reply', act({ type: 'send_reply', value: '<script>alert(1)</script>' }), 'body.actions.0.value'],
      ['note without body', act({ type: 'add_note' }), 'body.actions.0.value'],
      ['mark_spam with a value', act({ type: 'mark_spam', value: 'yes' }), 'body.actions.0.value'],
      ['field on another type', act({ type: 'set_priority', value: 'high', field: 'seats' }), 'body.actions.0.field'],
      ['set_field without field', act({ type: 'set_field', value: '3' }), 'body.actions.0.field'],
      ['set_field unknown key', act({ type: 'set_field', field: 'nope', value: '3' }), 'body.actions.0.field'],
      ['set_field archived', act({ type: 'set_field', field: 'old', value: 'x' }), 'body.actions.0.field'],
      ['number field, word', act({ type: 'set_field', field: 'seats', value: 'three' }), 'body.actions.0.value'],
      ['checkbox field, yes', act({ type: 'set_field', field: 'vip', value: 'yes' }), 'body.actions.0.value'],
      ['date field, 30 Feb', act({ type: 'set_field', field: 'due', value: '2024-02-30' }), 'body.actions.0.value'],
      ['select, unknown option', act({ type: 'set_field', field: 'area', value: 'sales' }), 'body.actions.0.value'],
      [
        'multi, unknown option',
        act({ type: 'set_field', field: 'parts', value: 'screen,keys' }),
        'body.actions.0.value',
      ],
      [
        'user, stranger',
        act({ type: 'set_field', field: 'owner', value: crypto.randomUUID() }),
        'body.actions.0.value',
      ],
      ['no actions', act(), 'body.actions'],
      ['unknown property in an action', act({ type: 'mark_spam', weight: 2 }), 'body.actions.0.weight'],
      ['unknown trigger', simple({ trigger: 'ticket_deleted' }), 'body.trigger'],
      ['unknown property', simple({ colour: 'red' }), 'body.colour'],
      ['blank name', simple({ name: '   ' }), 'body.name'],
    ];
    for (const [label, body, location] of cases) {
      const r = await svc.api.post('/v1/automations', body, t.as);
      expect(r.status, `${label}: ${r.text}`).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed'), label).toBe(true);
      expect(
        r.body.errors.map((e: any) => e.location),
        label,
      ).toContain(location);
    }
    expect(await count(t)).toBe(0);

    // A PATCH with a bad entry changes nothing either.
    const a = await create(t, simple());
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.patch(
      `/v1/automations/${a.id}`,
      { name: 'Renamed', actions: [{ type: 'set_field', field: 'seats', value: 'three' }] },
      t.as,
    );
    expect(r.status).toBe(422);
    expect(r.body.errors[0].location).toBe('body.actions.0.value');
    expect((await svc.api.get(`/v1/automations/${a.id}`, t.as)).body).toEqual(a);
    expect(await eventsAfterOf(svc, t, seq)).toEqual([]);
  });

  it('accepts the valid forms of each condition and action', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const team = await svc.api.post('/v1/teams', { name: 'Billing', private: false, member_ids: [] }, t.as);
    const mailbox = await svc.api.post('/v1/mailboxes', { name: 'Support', email: 'support@acme-auto.test' }, t.as);
    expect(mailbox.status).toBe(201);
    const label = await svc.api.post('/v1/tags', { name: 'VIP' }, t.as);
    await svc.api.post('/v1/tags', { name: 'Refund' }, t.as);
    await field(t, { type: 'number', name: 'Seats', key: 'seats' });
    await field(t, {
      type: 'multi_select',
      name: 'Parts',
      key: 'parts',
      options: [{ label: 'Screen' }, { label: 'Keys' }],
    });
    await field(t, { type: 'date', name: 'Due', key: 'due' });
    await svc.api.post('/v1/custom-fields', { entity: 'contact', type: 'text', name: 'Plan', key: 'plan' }, t.as);
    const r = await svc.api.post(
      '/v1/automations',
      {
        name: 'Everything',
        trigger: 'customer_replied',
        conditions: [
          { field: 'from_email', op: 'equals', value: 'Ann@Example.com' },
          { field: 'channel', op: 'not_equals', value: 'chat' },
          { field: 'mailbox_id', op: 'equals', value: mailbox.body.id.toUpperCase() },
          { field: 'tag', op: 'contains', value: ['vip', label.body.id] },
          { field: 'tag', op: 'not_equals', value: 'refund' },
          { field: 'sentiment', op: 'equals', value: 'frustrated' },
          { field: 'field.seats', op: 'gte', value: 10 },
          { field: 'field.seats', op: 'equals', value: '10' },
          { field: 'field.parts', op: 'all', value: 'screen,keys' },
          { field: 'field.due', op: 'not_set' },
          { field: 'contact.field.plan', op: 'contains', value: 'enterprise' },
          { field: 'ai_decide', op: 'lt', value: 0.01, question: '  Is the customer happy?  ' },
        ],
        actions: [
          { type: 'assign_user', value: agent.userId.toUpperCase() },
          { type: 'assign_team', value: team.body.id },
          { type: 'add_tag', value: 'vip' },
          { type: 'remove_tag', value: label.body.id },
          { type: 'set_field', field: 'seats', value: '12.5' },
          { type: 'set_field', field: 'parts', value: 'screen, keys' },
          { type: 'set_field', field: 'due', value: '' },
          { type: 'ai_triage' },
          { type: 'send_reply', value: 'Thanks, we are on it.' },
        ],
      },
      t.as,
    );
    expect(r.status, r.text).toBe(201);
    expect(r.body.conditions).toEqual([
      { field: 'from_email', op: 'equals', value: 'Ann@Example.com' },
      { field: 'channel', op: 'not_equals', value: 'chat' },
      { field: 'mailbox_id', op: 'equals', value: mailbox.body.id },
      { field: 'tag', op: 'contains', value: 'VIP' },
      { field: 'tag', op: 'not_equals', value: 'Refund' },
      { field: 'sentiment', op: 'equals', value: 'frustrated' },
      { field: 'field.seats', op: 'gte', value: 10 },
      { field: 'field.seats', op: 'equals', value: '10' },
      { field: 'field.parts', op: 'all', value: 'screen,keys' },
      { field: 'field.due', op: 'not_set' },
      { field: 'contact.field.plan', op: 'contains', value: 'enterprise' },
      { field: 'ai_decide', op: 'lt', value: 0.01, question: 'Is the customer happy?' },
    ]);
    expect(r.body.actions).toEqual([
      { type: 'assign_user', value: agent.userId },
      { type: 'assign_team', value: team.body.id },
      { type: 'add_tag', value: 'VIP' },
      { type: 'remove_tag', value: 'VIP' },
      { type: 'set_field', field: 'seats', value: '12.5' },
      { type: 'set_field', field: 'parts', value: 'screen, keys' },
      { type: 'set_field', field: 'due', value: '' },
      { type: 'ai_triage', value: '' },
      { type: 'send_reply', value: 'Thanks, we are on it.' },
    ]);
  });
});

describe('labels named by automations', () => {
  it('a rename updates them (automation.updated); a merge rewrites them to the label merged into', async () => {
    const t = await newTenant(svc.api);
    const vip = (await svc.api.post('/v1/tags', { name: 'vip' }, t.as)).body;
    const gold = (await svc.api.post('/v1/tags', { name: 'Gold' }, t.as)).body;
    const a = await create(
      t,
      simple({
        conditions: [
          { field: 'tag', op: 'equals', value: 'VIP' },
          { field: 'tag', op: 'not_contains', value: 'vip, gold' },
        ],
        actions: [
          { type: 'add_tag', value: 'vip' },
          { type: 'remove_tag', value: 'Gold' },
        ],
      }),
    );
    const other = await create(t, simple({ name: 'Unrelated' }));
    // One that has just run: its run_count is counted in this process and written within a
    // second; the rename's event must show it as a read does.
    const ran = await create(
      t,
      simple({
        name: 'Tag quartz',
        conditions: [{ field: 'subject', op: 'contains', value: 'quartz' }],
        actions: [{ type: 'add_tag', value: 'vip' }],
      }),
    );
    expect((await svc.api.post('/v1/tickets', { subject: 'A quartz order' }, t.as)).status).toBe(201);
    const seq = await latestSeqOf(svc, t);
    expect((await svc.api.patch(`/v1/tags/${vip.id}`, { name: 'Premium' }, t.as)).status).toBe(200);
    const renamed = (await svc.api.get(`/v1/automations/${a.id}`, t.as)).body;
    const ranNow = (await svc.api.get(`/v1/automations/${ran.id}`, t.as)).body;
    expect(ranNow.run_count).toBe(1);
    expect(ranNow.actions).toEqual([{ type: 'add_tag', value: 'Premium' }]);
    expect(renamed.conditions).toEqual([
      { field: 'tag', op: 'equals', value: 'Premium' },
      { field: 'tag', op: 'not_contains', value: 'Premium, Gold' },
    ]);
    expect(renamed.actions).toEqual([
      { type: 'add_tag', value: 'Premium' },
      { type: 'remove_tag', value: 'Gold' },
    ]);
    const events = await eventsAfterOf(svc, t, seq);
    const updated = events.filter((e) => e.type === 'automation.updated').map((e) => e.data.automation);
    expect(updated.sort((x, y) => x.name.localeCompare(y.name))).toEqual([ranNow, renamed]);
    expect((await svc.api.get(`/v1/automations/${other.id}`, t.as)).body).toEqual(other);

    expect((await svc.api.post(`/v1/tags/${gold.id}/merge`, { into: vip.id }, t.as)).status).toBe(200);
    const merged = (await svc.api.get(`/v1/automations/${a.id}`, t.as)).body;
    expect(merged.conditions).toEqual([
      { field: 'tag', op: 'equals', value: 'Premium' },
      { field: 'tag', op: 'not_contains', value: 'Premium' },
    ]);
    expect(merged.actions).toEqual([
      { type: 'add_tag', value: 'Premium' },
      { type: 'remove_tag', value: 'Premium' },
    ]);
  });
});
