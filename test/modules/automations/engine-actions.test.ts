// The automation engine, part 2 (part 1: engine.test.ts, setup in engine-setup.ts): each
// action's visible effect, and several automations acting on one event.
import { beforeAll, describe, expect, it } from 'vitest';
import { addMember, eventsAfterOf, latestSeqOf, newTenant, type Service } from '../../support/helpers.js';
import { type Body, engineSuite, tagNames } from './engine-setup.js';

const suite = engineSuite();
const { setTriageHandler, automation, ticket, getTicket, activities, messages, runCount, labels, mailbox } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

describe('actions', () => {
  it('set_status solves despite an empty required field; severity set and cleared; assignment; spam; note', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const team = await svc.api.post('/v1/teams', { name: 'Tier 2', private: false, member_ids: [] }, t.as);
    await svc.api.post(
      '/v1/custom-fields',
      { entity: 'ticket', type: 'text', name: 'Cause', key: 'cause', required_on_solve: true },
      t.as,
    );
    const a = await automation(t, {
      actions: [
        { type: 'set_status', value: 'solved' },
        { type: 'set_severity', value: 'sev1' },
        { type: 'assign_user', value: agent.userId },
        { type: 'assign_team', value: team.body.id },
        { type: 'mark_spam' },
        { type: 'add_note', value: '<p>Auto-closed: <b>spam</b></p>' },
        { type: 'ai_triage' },
      ],
    });
    const tk = await ticket(t);
    expect(tk).toMatchObject({
      status: 'solved',
      severity: 'sev1',
      assignee: { id: agent.userId },
      team_id: team.body.id,
      spam: true,
      fields: {},
    });
    expect(tk.solved_at).not.toBeNull();
    // A person still needs the field.
    const reopen = await svc.api.patch(`/v1/tickets/${tk.id}`, { status: 'open' }, t.as);
    expect(reopen.status).toBe(200);
    const solve = await svc.api.patch(`/v1/tickets/${tk.id}`, { status: 'solved' }, t.as);
    expect(solve.status).toBe(422);
    expect(solve.body.code).toBe('field_required');

    const notes = (await messages(t, tk.id)).filter((m: any) => m.kind === 'note');
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({
      body_html: '<p>Auto-closed: <b>spam</b></p>',
      author: { type: 'system', user: null, contact: null },
      delivery_status: 'none',
    });
    const types = (await activities(t, tk.id)).map((x: any) => [x.type, x.actor.automation_id]);
    expect(types).toEqual(
      expect.arrayContaining([
        ['status_changed', a.id],
        ['severity_changed', a.id],
        ['assigned', a.id],
        ['team_changed', a.id],
      ]),
    );

    // set_severity with an empty value clears it.
    const clear = await automation(t, { trigger: 'ticket_updated', actions: [{ type: 'set_severity', value: '' }] });
    const r = await svc.api.patch(`/v1/tickets/${tk.id}`, { priority: 'low' }, t.as);
    expect(r.body.severity).toBeNull();
    expect(await runCount(t, clear.id)).toBe(1);
  });

  it('ai_triage does nothing until the AI issue registers a handler, which then runs as the automation', async () => {
    const t = await newTenant(svc.api);
    const a = await automation(t, { actions: [{ type: 'ai_triage' }, { type: 'set_priority', value: 'low' }] });
    const plain = await ticket(t);
    expect(plain.priority).toBe('low');
    expect((await activities(t, plain.id)).map((x: any) => x.type)).toEqual(['priority_changed']);
    const seen: Array<[string, string, string]> = [];
    setTriageHandler(async (_deps, _u, req) => {
      seen.push([req.automation.id, req.ticket.id, req.ticket.priority]);
    });
    const tk = await ticket(t);
    expect(seen).toEqual([[a.id, tk.id, 'low']]);
    expect(await runCount(t, a.id)).toBe(2);
  });

  it('add_tag respects exclusive groups; remove_tag removes', async () => {
    const t = await newTenant(svc.api);
    const group = await svc.api.post('/v1/tag-groups', { name: 'Tier', exclusive: true }, t.as);
    expect(group.status, group.text).toBe(201);
    for (const name of ['Gold', 'Silver']) {
      expect((await svc.api.post('/v1/tags', { name, group_id: group.body.id }, t.as)).status).toBe(201);
    }
    await labels(t, 'New');
    await automation(t, {
      actions: [
        { type: 'add_tag', value: 'gold' },
        { type: 'remove_tag', value: 'New' },
      ],
    });
    const tk = await ticket(t, { tags: ['Silver', 'New', 'Other'] });
    expect(tagNames(tk)).toEqual(['Gold', 'Other']);
    const acts = (await activities(t, tk.id)).filter((x: any) => x.actor.type === 'automation');
    expect(acts.map((x: any) => [x.type, x.data.tag.name]).sort()).toEqual([
      ['tagged', 'Gold'],
      ['untagged', 'New'],
      ['untagged', 'Silver'],
    ]);
  });

  it('send_reply on an email ticket goes out through the outbound queue; not a first response', async () => {
    const t = await newTenant(svc.api);
    const mb = await mailbox(t);
    await automation(t, {
      conditions: [{ field: 'channel', op: 'equals', value: 'email' }],
      actions: [{ type: 'send_reply', value: '<p>We got your mail.</p>' }],
    });
    const seq = await latestSeqOf(svc, t);
    // The first message is a note: the ticket has no first response yet.
    const tk = await ticket(t, {
      channel: 'email',
      mailbox_id: mb.id,
      contact: { email: 'cust@example.com' },
      kind: 'note',
    });
    const list = await messages(t, tk.id);
    expect(list).toHaveLength(2);
    const reply = list[1];
    expect(reply).toMatchObject({
      kind: 'reply',
      direction: 'outbound',
      author: { type: 'system', user: null },
      body_html: '<p>We got your mail.</p>',
      to: ['cust@example.com'],
    });
    expect(['pending', 'sent']).toContain(reply.delivery_status);
    const row = await svc.rt.deps.database.db
      .selectFrom('messages')
      .select(['delivery_status', 'author_type'])
      .where('id', '=', reply.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ delivery_status: 'pending', author_type: 'system' });
    const after = await getTicket(t, tk.id);
    expect(after.message_count).toBe(2);
    expect(after.first_responded_at).toBeNull();
    const events = await eventsAfterOf(svc, t, seq);
    const created = events.filter((e) => e.type === 'message.created').map((e) => e.data.message.id);
    expect(created).toContain(reply.id);
    const updated = events.filter((e) => e.type === 'ticket.updated').pop();
    expect(updated.data.changes).toEqual(expect.arrayContaining(['message_count', 'last_message_preview']));

    // An API ticket gets the reply without mail; a spam ticket gets none.
    const api = await ticket(t, { channel: 'api' });
    expect((await messages(t, api.id)).length).toBe(1);
    await automation(t, { actions: [{ type: 'send_reply', value: 'Hello' }] });
    const plain = await ticket(t);
    expect((await messages(t, plain.id)).map((m: any) => m.delivery_status)).toEqual(['none', 'none']);
  });

  it('set_field writes typed values; an archived or deleted field is skipped', async () => {
    const t = await newTenant(svc.api);
    const mk = async (body: Body) => {
      const r = await svc.api.post('/v1/custom-fields', { entity: 'ticket', ...body }, t.as);
      expect(r.status, r.text).toBe(201);
      return r.body;
    };
    await mk({ type: 'number', name: 'Seats', key: 'seats' });
    await mk({ type: 'checkbox', name: 'VIP', key: 'vip' });
    await mk({ type: 'date', name: 'Due', key: 'due' });
    await mk({ type: 'multi_select', name: 'Parts', key: 'parts', options: [{ label: 'Screen' }, { label: 'Keys' }] });
    await mk({ type: 'text', name: 'Note', key: 'note' });
    const old = await mk({ type: 'text', name: 'Old', key: 'old' });
    const gone = await mk({ type: 'text', name: 'Gone', key: 'gone' });
    const a = await automation(t, {
      actions: [
        { type: 'set_field', field: 'seats', value: '12.5' },
        { type: 'set_field', field: 'vip', value: 'true' },
        { type: 'set_field', field: 'due', value: '2025-03-01' },
        { type: 'set_field', field: 'parts', value: 'screen, keys' },
        { type: 'set_field', field: 'note', value: '' },
        { type: 'set_field', field: 'old', value: 'changed' },
        { type: 'set_field', field: 'gone', value: 'x' },
        { type: 'set_priority', value: 'high' },
      ],
    });
    await svc.api.patch(`/v1/custom-fields/${old.id}`, { archived: true }, t.as);
    expect((await svc.api.delete(`/v1/custom-fields/${gone.id}`, t.as)).status).toBe(204);
    const tk = await ticket(t, { fields: { note: 'to be cleared' } });
    expect(tk.fields).toEqual({ seats: 12.5, vip: true, due: '2025-03-01', parts: ['screen', 'keys'] });
    expect(tk.priority).toBe('high');
    const changed = (await activities(t, tk.id)).filter((x: any) => x.type === 'field_changed');
    expect(changed.map((x: any) => [x.data.key, x.actor.automation_id]).sort()).toEqual([
      ['due', a.id],
      ['note', a.id],
      ['parts', a.id],
      ['seats', a.id],
      ['vip', a.id],
    ]);
  });

  it('actions that cannot apply are skipped; the rest apply and the change succeeds', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const team = await svc.api.post('/v1/teams', { name: 'Soon gone', private: false, member_ids: [] }, t.as);
    await labels(t, 'Doomed', 'Kept', 'Shelved');
    const select = await svc.api.post(
      '/v1/custom-fields',
      {
        entity: 'ticket',
        type: 'select',
        name: 'Area',
        key: 'area',
        options: [{ label: 'Billing' }, { label: 'Sales' }],
      },
      t.as,
    );
    const a = await automation(t, {
      actions: [
        { type: 'assign_user', value: agent.userId },
        { type: 'assign_team', value: team.body.id },
        { type: 'add_tag', value: 'Doomed' },
        { type: 'add_tag', value: 'Shelved' },
        { type: 'add_tag', value: 'Kept' },
        { type: 'set_field', field: 'area', value: 'sales' },
        { type: 'set_priority', value: 'high' },
      ],
    });
    expect((await svc.api.delete(`/v1/teams/${team.body.id}`, t.as)).status).toBe(204);
    expect((await svc.api.patch(`/v1/members/${agent.userId}`, { role: 'viewer' }, t.as)).status).toBe(200);
    const doomed = (await svc.api.get('/v1/tags?q=Doomed', t.as)).body.data[0];
    expect((await svc.api.delete(`/v1/tags/${doomed.id}`, t.as)).status).toBe(204);
    const shelved = (await svc.api.get('/v1/tags?q=Shelved', t.as)).body.data[0];
    expect((await svc.api.patch(`/v1/tags/${shelved.id}`, { archived: true }, t.as)).status).toBe(200);
    // The option the action names is removed.
    const opts = select.body.options.filter((o: any) => o.id !== 'sales');
    expect((await svc.api.patch(`/v1/custom-fields/${select.body.id}`, { options: opts }, t.as)).status).toBe(200);

    const tk = await ticket(t);
    expect(tk).toMatchObject({ assignee: null, team_id: null, priority: 'high', fields: {} });
    expect(tagNames(tk)).toEqual(['Kept']);
    expect(await runCount(t, a.id)).toBe(1);
  });
});

describe('several automations acting on one event', () => {
  it('apply together where none reads what another changed, each activity naming its own automation', async () => {
    const t = await newTenant(svc.api);
    await labels(t, 'routed');
    const a = await automation(t, { conditions: [], actions: [{ type: 'set_priority', value: 'high' }] });
    const b = await automation(t, { conditions: [], actions: [{ type: 'add_tag', value: 'routed' }] });
    // Reads the priority the first one sets: runs on the ticket as a and b left it.
    const c = await automation(t, {
      conditions: [{ field: 'priority', op: 'equals', value: 'high' }],
      actions: [{ type: 'set_severity', value: 'sev2' }],
    });
    // Would hold before the first one acted, not after.
    const d = await automation(t, {
      conditions: [{ field: 'priority', op: 'equals', value: 'normal' }],
      actions: [{ type: 'mark_spam', value: '' }],
    });
    const seq = await latestSeqOf(svc, t);
    const tk = await ticket(t);
    expect(tk).toMatchObject({ priority: 'high', severity: 'sev2', spam: false });
    expect(tagNames(tk)).toEqual(['routed']);
    const acts = await activities(t, tk.id);
    const by = (type: string) => acts.filter((x: any) => x.type === type).map((x: any) => x.actor);
    expect(by('priority_changed')).toEqual([expect.objectContaining({ type: 'automation', automation_id: a.id })]);
    expect(by('tagged')).toEqual([expect.objectContaining({ type: 'automation', automation_id: b.id })]);
    expect(by('severity_changed')).toEqual([expect.objectContaining({ type: 'automation', automation_id: c.id })]);
    expect(await runCount(t, d.id)).toBe(0);
    // a and b: one ticket.updated with both changes; c: its own.
    const updates = (await eventsAfterOf(svc, t, seq)).filter((e: any) => e.type === 'ticket.updated');
    expect(updates.map((e: any) => [...e.data.changes].sort())).toEqual([['priority', 'tags'], ['severity']]);
    await expect
      .poll(async () => [await runCount(t, a.id), await runCount(t, b.id), await runCount(t, c.id)])
      .toEqual([1, 1, 1]);
  });
});
