// The assistant's write tools, called as its loop calls them with a real member's context:
// prepare changes nothing and describes exactly what would happen (changes from → to as the API
// names fields, every target, external, body, total); it refuses a viewer, a ticket the person
// cannot see (a private team, another workspace), an unknown assignee or label. execute runs the
// approved plan once through the tickets service, re-checking the person's rights as they are
// then, and the ticket's activities carry actor type ai with the person in actor.user; a reply is
// the person's own message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkUpdateTickets } from '../../../src/modules/assistant/tools/bulk.js';
import { addNote, replyToTicket, updateTicketTool } from '../../../src/modules/assistant/tools/ticket-writes.js';
import { makeContact, makeTicket } from '../../support/builders.js';
import { addMember, type Member, newTenant, type Service, startService, type Tenant } from '../../support/helpers.js';
import { envOf, toolError } from './tools-setup.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

let t: Tenant;
let agent: Member;
let dana: Member;
let viewer: Member;
let vipTeam: string;
beforeAll(async () => {
  t = await newTenant(svc.api);
  agent = await addMember(svc, t, 'agent', 'Ann Agent');
  dana = await addMember(svc, t, 'agent', 'Dana Doer');
  viewer = await addMember(svc, t, 'viewer', 'Vic Viewer');
  const team = await svc.api.post('/v1/teams', { name: 'VIP', private: true }, t.as);
  vipTeam = team.body.id;
  for (const name of ['Refund', 'Billing']) expect((await svc.api.post('/v1/tags', { name }, t.as)).status).toBe(201);
});

/** The plan as the assistant stores it with the action, and reads it back on approval. */
const stored = <P>(plan: P): P => JSON.parse(JSON.stringify(plan)) as P;

const ticketOf = async (id: string) => (await svc.api.get(`/v1/tickets/${id}`, t.as)).body;
const activitiesOf = async (id: string) => (await svc.api.get(`/v1/tickets/${id}/activities`, t.as)).body.data as any[];
const messagesOf = async (id: string) => (await svc.api.get(`/v1/tickets/${id}/messages`, t.as)).body.data as any[];

describe('update_ticket', () => {
  it('previews the change from → to, then runs it once as actor ai with the person', async () => {
    const tk = await makeTicket(svc.api, t, { subject: 'Broken invoice', tags: ['Billing'] });
    const env = await envOf(svc, agent);
    const { preview, plan, refs } = await updateTicketTool.prepare(env, {
      ticket: tk.number,
      status: 'solved',
      priority: 'high',
      assignee_id: dana.userId,
      add_labels: ['refund'],
    });
    expect(preview).toEqual({
      title: `Update ticket #${tk.number}`,
      summary: `#${tk.number} “Broken invoice”: status to solved, priority to high, assign to Dana Doer, add “Refund”.`,
      changes: [
        { field: 'status', from: 'open', to: 'solved' },
        { field: 'priority', from: 'normal', to: 'high' },
        { field: 'assignee_id', from: null, to: dana.userId },
        { field: 'tags', from: ['Billing'], to: ['Billing', 'Refund'] },
      ],
      targets: [{ kind: 'ticket', id: tk.id, label: 'Broken invoice', number: tk.number }],
      external: false,
    });
    expect(refs).toEqual(preview.targets);
    // Nothing changed yet.
    expect(await ticketOf(tk.id)).toMatchObject({ status: 'open', priority: 'normal', assignee: null });

    const out = await updateTicketTool.execute(env, stored(plan));
    expect(out.summary).toBe(`#${tk.number} updated`);
    const after = await ticketOf(tk.id);
    expect(after).toMatchObject({ status: 'solved', priority: 'high', assignee: { id: dana.userId } });
    expect(after.tags.map((x: any) => x.name).sort()).toEqual(['Billing', 'Refund']);
    const acts = await activitiesOf(tk.id);
    const mine = acts.filter((a) => ['status_changed', 'priority_changed', 'assigned', 'tagged'].includes(a.type));
    expect(mine.map((a) => a.type).sort()).toEqual(['assigned', 'priority_changed', 'status_changed', 'tagged']);
    for (const a of mine) {
      expect(a.actor).toMatchObject({ type: 'ai', user: { id: agent.userId, name: 'Ann Agent' } });
    }
  });

  it('refuses what the person may not do or the API would refuse, before asking them', async () => {
    const tk = await makeTicket(svc.api, t, { subject: 'Refuse me' });
    const secret = await makeTicket(svc.api, t, { subject: 'VIP only', team_id: vipTeam });
    const elsewhere = await makeTicket(svc.api, (await newTenant(svc.api)).as, { subject: 'Not yours' });
    const env = await envOf(svc, agent);
    expect(
      await toolError(updateTicketTool.prepare(await envOf(svc, viewer), { ticket: tk.id, status: 'solved' })),
    ).toMatch(/viewer/);
    expect(await toolError(updateTicketTool.prepare(env, { ticket: secret.id, status: 'solved' }))).toBe(
      'Ticket not found.',
    );
    expect(await toolError(updateTicketTool.prepare(env, { ticket: elsewhere.id, status: 'solved' }))).toBe(
      'Ticket not found.',
    );
    expect(await toolError(updateTicketTool.prepare(env, { ticket: tk.id, assignee_id: elsewhere.id }))).toMatch(
      /No member/,
    );
    expect(await toolError(updateTicketTool.prepare(env, { ticket: tk.id, assignee_id: viewer.userId }))).toMatch(
      /viewer/,
    );
    expect(await toolError(updateTicketTool.prepare(env, { ticket: tk.id, add_labels: ['Nope'] }))).toMatch(
      /No label named “Nope”/,
    );
    expect(await toolError(updateTicketTool.prepare(env, { ticket: tk.id, status: 'open' }))).toMatch(
      /Nothing would change/,
    );
    expect(await toolError(updateTicketTool.prepare(env, { ticket: tk.id }))).toMatch(/at least one change/);
    expect(await toolError(updateTicketTool.prepare(env, { ticket: tk.id, fields: { nope: 1 } }))).toMatch(
      /fields\.nope/,
    );
    expect(await ticketOf(tk.id)).toMatchObject({ status: 'open', assignee: null, tags: [] });
  });

  it('previews custom fields and refuses a solve the required fields would refuse', async () => {
    const f = await svc.api.post(
      '/v1/custom-fields',
      { entity: 'ticket', key: 'order_ref', name: 'Order', type: 'text', required_on_solve: true },
      t.as,
    );
    expect(f.status, f.text).toBe(201);
    const tk = await makeTicket(svc.api, t, { subject: 'Needs an order' });
    const env = await envOf(svc, agent);
    expect(await toolError(updateTicketTool.prepare(env, { ticket: tk.id, status: 'solved' }))).toMatch(/order_ref/);
    const { preview, plan } = await updateTicketTool.prepare(env, {
      ticket: tk.id,
      status: 'solved',
      fields: { order_ref: 'A-1' },
    });
    expect(preview.changes).toEqual([
      { field: 'status', from: 'open', to: 'solved' },
      { field: 'fields.order_ref', from: null, to: 'A-1' },
    ]);
    await updateTicketTool.execute(env, stored(plan));
    expect(await ticketOf(tk.id)).toMatchObject({ status: 'solved', fields: { order_ref: 'A-1' } });
    await svc.api.delete(`/v1/custom-fields/${f.body.id}`, t.as);
  });

  it('re-checks the person’s rights when it runs: demoted to viewer or moved out of sight, nothing happens', async () => {
    const tk = await makeTicket(svc.api, t, { subject: 'Changes meanwhile' });
    const demoted = await addMember(svc, t, 'agent', 'Dee Demoted');
    const { plan } = await updateTicketTool.prepare(await envOf(svc, demoted), { ticket: tk.id, status: 'pending' });
    expect((await svc.api.patch(`/v1/members/${demoted.userId}`, { role: 'viewer' }, t.as)).status).toBe(200);
    expect(await toolError(updateTicketTool.execute(await envOf(svc, demoted), stored(plan)))).toMatch(/viewer/);

    const moved = await updateTicketTool.prepare(await envOf(svc, agent), { ticket: tk.id, status: 'pending' });
    expect((await svc.api.patch(`/v1/tickets/${tk.id}`, { team_id: vipTeam }, t.as)).status).toBe(200);
    expect(await toolError(updateTicketTool.execute(await envOf(svc, agent), stored(moved.plan)))).toBe(
      'Ticket not found.',
    );
    expect((await ticketOf(tk.id)).status).toBe('open');
  });
});

describe('reply_to_ticket and add_note', () => {
  it('previews a reply as external with its body, and sends it as the person’s reply', async () => {
    const c = await makeContact(svc.api, t, { name: 'Carla Customer' });
    const tk = await makeTicket(svc.api, t, { subject: 'Where is my refund?', contact_id: c.id });
    const env = await envOf(svc, agent);
    const { preview, plan } = await replyToTicket.prepare(env, {
      ticket: tk.id,
      body: 'Hi Carla,\n\nYour refund is on its way.\n\n- Five days\n- To your card',
      status: 'pending',
    });
    expect(preview).toEqual({
      title: `Reply to ticket #${tk.number}`,
      summary: `Send a reply to Carla Customer on #${tk.number} “Where is my refund?”, and set the status to pending.`,
      changes: [{ field: 'status', from: 'open', to: 'pending' }],
      targets: [{ kind: 'ticket', id: tk.id, label: 'Where is my refund?', number: tk.number }],
      external: true,
      body: preview.body,
    });
    expect(preview.body).toContain('Your refund is on its way.');
    expect(await messagesOf(tk.id)).toEqual([]);

    await replyToTicket.execute(env, stored(plan));
    const messages = await messagesOf(tk.id);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({
      kind: 'reply',
      direction: 'outbound',
      author: { type: 'user', user: { id: agent.userId } },
      from_name: 'Ann Agent',
    });
    expect(messages[0].body_html).toContain('<li>Five days</li>');
    expect(messages[0].body_text).toBe(preview.body);
    expect((await ticketOf(tk.id)).status).toBe('pending');
    const status = (await activitiesOf(tk.id)).filter((a) => a.type === 'status_changed');
    expect(status).toHaveLength(1);
    expect(status[0].actor).toMatchObject({ type: 'ai', user: { id: agent.userId } });
  });

  it('previews a note as internal and adds it once; a viewer cannot', async () => {
    const tk = await makeTicket(svc.api, t, { subject: 'Note me' });
    const env = await envOf(svc, agent);
    const { preview, plan } = await addNote.prepare(env, {
      ticket: tk.number,
      body: 'Customer called, <b>urgent</b>.',
    });
    expect(preview).toMatchObject({
      title: `Add a note to ticket #${tk.number}`,
      changes: [],
      external: false,
      body: 'Customer called, urgent.',
    });
    await addNote.execute(env, stored(plan));
    const messages = await messagesOf(tk.id);
    expect(messages.map((m) => [m.kind, m.body_text, m.author.user?.id])).toEqual([
      ['note', 'Customer called, urgent.', agent.userId],
    ]);
    expect(await toolError(addNote.prepare(await envOf(svc, viewer), { ticket: tk.id, body: 'x' }))).toMatch(/viewer/);
    expect(await toolError(addNote.prepare(env, { ticket: tk.id, body: '<script>x</script>' }))).toMatch(/empty/);
  });
});

describe('bulk_update_tickets', () => {
  it('previews every target and the total from filters, leaves out tickets already so, and runs them all', async () => {
    const label = `Outage ${Date.now()}`;
    expect((await svc.api.post('/v1/tags', { name: label }, t.as)).status).toBe(201);
    const a = await makeTicket(svc.api, t, { subject: 'Down 1', tags: [label] });
    const b = await makeTicket(svc.api, t, { subject: 'Down 2', tags: [label], status: 'pending' });
    const done = await makeTicket(svc.api, t, { subject: 'Down 3', tags: [label], status: 'solved' });
    const hidden = await makeTicket(svc.api, t, { subject: 'Down VIP', tags: [label], team_id: vipTeam });
    const env = await envOf(svc, agent);
    const { preview, plan } = await bulkUpdateTickets.prepare(env, {
      filters: { label, status: ['open', 'pending', 'solved'] },
      status: 'solved',
    });
    expect(preview.total).toBe(2);
    expect(preview.targets.map((x) => x.id).sort()).toEqual([a.id, b.id].sort());
    expect(preview.targets).toContainEqual({ kind: 'ticket', id: a.id, label: 'Down 1', number: a.number });
    expect(preview.changes).toEqual([
      { field: 'status', from: expect.arrayContaining(['open', 'pending']), to: 'solved' },
    ]);
    expect(preview.summary).toMatch(/1 other ticket already so/);
    expect(preview.external).toBe(false);

    const out = await bulkUpdateTickets.execute(env, stored(plan));
    expect(out.refs.map((r) => r.id).sort()).toEqual([a.id, b.id].sort());
    for (const id of [a.id, b.id]) {
      expect((await ticketOf(id)).status).toBe('solved');
      const acts = (await activitiesOf(id)).filter((x) => x.type === 'status_changed');
      expect(acts).toHaveLength(1);
      expect(acts[0].actor).toMatchObject({ type: 'ai', user: { id: agent.userId } });
    }
    expect((await ticketOf(hidden.id)).status).toBe('open');
    expect((await activitiesOf(done.id)).filter((x) => x.type === 'status_changed')).toEqual([]);
  });

  it('takes a list of tickets; one the person cannot see refuses the whole change', async () => {
    const a = await makeTicket(svc.api, t, { subject: 'Listed 1' });
    const b = await makeTicket(svc.api, t, { subject: 'Listed 2', priority: 'low' });
    const hidden = await makeTicket(svc.api, t, { subject: 'Listed VIP', team_id: vipTeam });
    const env = await envOf(svc, agent);
    expect(
      await toolError(bulkUpdateTickets.prepare(env, { tickets: [a.id, hidden.number], priority: 'urgent' })),
    ).toBe(`Ticket ${hidden.number} not found.`);
    const { preview, plan } = await bulkUpdateTickets.prepare(env, { tickets: [a.number, b.id], priority: 'urgent' });
    expect(preview).toMatchObject({
      title: 'Update 2 tickets',
      total: 2,
      changes: [{ field: 'priority', from: ['normal', 'low'], to: 'urgent' }],
    });
    await bulkUpdateTickets.execute(env, stored(plan));
    expect((await ticketOf(a.id)).priority).toBe('urgent');
    expect((await ticketOf(b.id)).priority).toBe('urgent');
    expect(await toolError(bulkUpdateTickets.prepare(env, { priority: 'low' }))).toMatch(
      /tickets \(a list\) or filters/,
    );
    expect(
      await toolError(bulkUpdateTickets.prepare(await envOf(svc, viewer), { tickets: [a.id], priority: 'low' })),
    ).toMatch(/viewer/);
  });
});
