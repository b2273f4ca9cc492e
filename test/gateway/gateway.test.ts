// The realtime gateway with the official Phoenix client: joins per the topic table, fan-out of
// committed events (stand-ins, team, user and contact topics), presence and typing, the widget,
// sockets closed by logout / password change / removal / team changes, replay after a forced
// disconnect, and seq order exactly once when the bus repeats or reorders events.
import { Presence } from 'phoenix';
import { beforeAll, describe, expect, it } from 'vitest';
import { collect, join, opened, push, widgetToken } from '../support/gateway-client.js';
import {
  addMember,
  eventsAfterOf,
  latestSeqOf,
  newApiKey,
  newTenant,
  type Service,
  type Tenant,
} from '../support/helpers.js';
import { gatewaySuite, heartbeat, quiet } from './gateway-setup.js';

const suite = gatewaySuite();
const { open, agentSocket, joinedWorkspace, ticket, privateTeam } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

describe('the agent socket', () => {
  it('speaks Phoenix Channels v2: join replies server_time and latest_seq, heartbeats are answered', async () => {
    const t = await newTenant(svc.api);
    const c = await agentSocket(t.as);
    const ch = c.socket.channel(`workspace:${t.workspaceId}`);
    const r = await join(ch);
    expect(r.status).toBe('ok');
    expect(new Date(r.response.server_time).toISOString()).toBe(r.response.server_time);
    expect(Math.abs(Date.parse(r.response.server_time) - Date.now())).toBeLessThan(5000);
    expect(r.response.latest_seq).toBe(await latestSeqOf(svc, t));
    await heartbeat(c.socket);
    // Leaving answers ok; the topic then receives nothing.
    const got = collect(ch);
    await new Promise<void>((resolve) => ch.leave().receive('ok', () => resolve()));
    await ticket(t);
    await quiet();
    expect(got).toEqual([]);
  });

  it('pushes every committed event to the workspace topic in seq order, exactly once, as replay has it', async () => {
    const t = await newTenant(svc.api);
    const c = await agentSocket(t.as);
    const ch = c.socket.channel(`workspace:${t.workspaceId}`);
    const got = collect(ch);
    const r = await join(ch);
    const start = r.response.latest_seq as number;
    for (let i = 0; i < 3; i++) await ticket(t, { contact: { email: `c${i}@example.com` } });
    await Promise.all(Array.from({ length: 6 }, () => ticket(t)));
    const latest = await latestSeqOf(svc, t);
    await expect.poll(() => got.length).toBe(latest - start);
    await quiet();
    expect(got.map((e) => e.seq)).toEqual(Array.from({ length: latest - start }, (_, i) => start + i + 1));
    expect(new Set(got.map((e) => e.id)).size).toBe(got.length);
    expect(got).toEqual(await eventsAfterOf(svc, t, start));
    expect(got.filter((e) => e.type === 'ticket.created')).toHaveLength(9);
  });

  it('frames broadcasts of both long lengths (16-bit and 64-bit) so the client reads them whole, in order', async () => {
    // Broadcasts are framed once and written as they are (Conn.sendWire): both long length
    // forms, between replies framed by ws (join, ping), must reach the official client intact.
    const t = await newTenant(svc.api);
    const { c, got, start } = await joinedWorkspace(t);
    const long = 'Ünïcode ✓ '.repeat(9000); // about 110 KB in UTF-8: a frame over 65,535 bytes
    await ticket(t, { body_html: `<p>${long}</p>` });
    await ticket(t, { body_html: '<p>short</p>' });
    await heartbeat(c.socket); // a reply framed by ws between the two broadcasts
    const latest = await latestSeqOf(svc, t);
    await expect.poll(() => got.length).toBe(latest - start);
    expect(got).toEqual(await eventsAfterOf(svc, t, start));
    const bodies = got.filter((e) => e.type === 'message.created').map((e) => e.data.message.body_text);
    expect(bodies).toEqual([long.trim(), 'short']);
  });

  it('gives private-team events as stand-ins on the workspace topic and in full on the team topic, to those allowed', async () => {
    const t = await newTenant(svc.api);
    const member = await addMember(svc, t, 'agent', 'Mia Member');
    const outsider = await addMember(svc, t, 'agent', 'Otto Outsider');
    const teamId = await privateTeam(t, [member.userId]);
    const key = await newApiKey(svc.api, t, ['realtime']);

    const sockets = {
      member: await agentSocket(member.as),
      outsider: await agentSocket(outsider.as),
      owner: await agentSocket(t.as),
      key: await agentSocket({ token: key.key }),
    };
    const wsTopic = `workspace:${t.workspaceId}`;
    const teamTopic = `team:${t.workspaceId}:${teamId}`;
    const all: Record<string, any[]> = {};
    const team: Record<string, any[]> = {};
    for (const [name, c] of Object.entries(sockets)) {
      const ch = c.socket.channel(wsTopic);
      all[name] = collect(ch);
      expect((await join(ch)).status).toBe('ok');
      const tch = c.socket.channel(teamTopic);
      team[name] = collect(tch);
      const r = await join(tch);
      if (name === 'member' || name === 'owner') expect(r).toMatchObject({ status: 'ok' });
      else expect(r).toEqual({ status: 'error', response: { reason: 'forbidden' } });
    }

    const seq = await latestSeqOf(svc, t);
    const created = await ticket(t, { team_id: teamId });
    const full = (await eventsAfterOf(svc, t, seq)).find((e) => e.type === 'ticket.created');
    expect(full.data.ticket.id).toBe(created.id);

    await expect.poll(() => team.member!.length).toBe(1);
    await expect.poll(() => team.owner!.length).toBe(1);
    for (const name of Object.keys(sockets)) await expect.poll(() => all[name]!.length).toBe(1);
    await quiet();
    for (const name of ['member', 'owner']) expect(team[name]).toEqual([full]);
    for (const name of ['outsider', 'key']) expect(team[name]).toEqual([]);
    const standIn = {
      id: full.id,
      seq: full.seq,
      workspace_id: t.workspaceId,
      type: 'event.hidden',
      visibility: 'agents',
      topics: [wsTopic],
      data: {},
      occurred_at: full.occurred_at,
    };
    for (const name of Object.keys(sockets)) expect(all[name]).toEqual([standIn]);
    // Replay gives the outsider the same stand-in.
    expect(await eventsAfterOf(svc, { ...t, as: outsider.as }, seq)).toEqual([standIn]);
  });

  it('lets a person join their own user topic only and pushes events addressed to them there', async () => {
    const t = await newTenant(svc.api);
    const ann = await addMember(svc, t, 'agent', 'Ann Agent');
    const bob = await addMember(svc, t, 'agent', 'Bob Agent');
    const key = await newApiKey(svc.api, t, ['realtime']);
    const annSocket = await agentSocket(ann.as);
    const bobSocket = await agentSocket(bob.as);
    const keySocket = await agentSocket({ token: key.key });
    const annCh = annSocket.socket.channel(`user:${ann.userId}`);
    const annGot = collect(annCh);
    expect((await join(annCh)).status).toBe('ok');
    const bobCh = bobSocket.socket.channel(`user:${bob.userId}`);
    const bobGot = collect(bobCh);
    expect((await join(bobCh)).status).toBe('ok');
    expect(await join(bobSocket.socket.channel(`user:${ann.userId}`))).toEqual({
      status: 'error',
      response: { reason: 'forbidden' },
    });
    expect((await join(keySocket.socket.channel(`user:${ann.userId}`))).response).toEqual({ reason: 'forbidden' });

    const tk = await ticket(t);
    const r = await svc.api.patch(`/v1/tickets/${tk.id}`, { assignee_id: ann.userId }, t.as);
    expect(r.status, r.text).toBe(200);
    // The change itself, and Ann's `assigned` notification (notification.created is hers alone).
    await expect.poll(() => annGot.length).toBe(2);
    expect(annGot[0]).toMatchObject({ type: 'ticket.updated', topics: expect.arrayContaining([`user:${ann.userId}`]) });
    expect(annGot[1]).toMatchObject({
      type: 'notification.created',
      topics: expect.arrayContaining([`user:${ann.userId}`]),
      data: { notification: { type: 'assigned', ticket: { id: tk.id } } },
    });
    await quiet();
    expect(bobGot).toEqual([]);
  });

  it('refuses topics of other workspaces, unknown topics and topics that are not for agents with reason forbidden', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const otherTicket = await ticket(other, { contact: { email: 'x@example.com' } });
    const c = await agentSocket(t.as);
    const contact = (await ticket(t, { contact: { email: 'y@example.com' } })).contact!.id;
    for (const topic of [
      `workspace:${other.workspaceId}`,
      `team:${other.workspaceId}:${crypto.randomUUID()}`,
      `ticket:${other.workspaceId}:${otherTicket.id}`,
      `ticket:${t.workspaceId}:${otherTicket.id}`,
      `ticket:${t.workspaceId}:${crypto.randomUUID()}`,
      `contact:${t.workspaceId}:${contact}`,
      `contact:${other.workspaceId}:${otherTicket.contact!.id}`,
      `user:${other.owner.userId}`,
      `workspace:${t.workspaceId.toUpperCase()}`,
      'rooms:lobby',
      `workspace:${t.workspaceId}:extra`,
    ]) {
      expect(await join(c.socket.channel(topic)), topic).toEqual({
        status: 'error',
        response: { reason: 'forbidden' },
      });
    }
  });
});

describe('ticket topics: presence and typing', () => {
  it('shows who is on a ticket in Phoenix Presence form, with state changes, rate limits and typing', async () => {
    const t = await newTenant(svc.api);
    const ann = await addMember(svc, t, 'agent', 'Ann Agent');
    const bob = await addMember(svc, t, 'agent', 'Bob Agent');
    const tk = await ticket(t);
    const topic = `ticket:${t.workspaceId}:${tk.id}`;
    const annCh = (await agentSocket(ann.as)).socket.channel(topic);
    const annPresence = new Presence(annCh);
    const annTyping = collect(annCh, 'typing');
    expect((await join(annCh)).status).toBe('ok');
    const bobCh = (await agentSocket(bob.as)).socket.channel(topic);
    const bobPresence = new Presence(bobCh);
    const bobTyping = collect(bobCh, 'typing');
    expect((await join(bobCh)).status).toBe('ok');

    const seen = (p: Presence) =>
      Object.fromEntries(p.list((id, { metas }) => [id, metas.map((m: any) => [m.name, m.state])]));
    await expect
      .poll(() => seen(annPresence))
      .toEqual({
        [ann.userId]: [['Ann Agent', 'viewing']],
        [bob.userId]: [['Bob Agent', 'viewing']],
      });
    await expect.poll(() => seen(bobPresence)).toEqual(seen(annPresence));
    const meta = bobPresence.list((_id, { metas }) => metas[0]).find((m: any) => m.user_id === ann.userId);
    expect(meta).toEqual({
      phx_ref: expect.any(String),
      user_id: ann.userId,
      name: 'Ann Agent',
      avatar: null,
      state: 'viewing',
      online_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });

    expect(await push(bobCh, 'presence', { state: 'replying' })).toEqual({ status: 'ok', response: {} });
    await expect.poll(() => seen(annPresence)[bob.userId]).toEqual([['Bob Agent', 'replying']]);
    expect((await push(bobCh, 'presence', { state: 'asleep' })).response).toMatchObject({ reason: 'invalid_payload' });

    // 10 updates per 10 s per socket: this is the 2nd to 11th; the 11th is refused and dropped.
    const replies = [];
    for (let i = 0; i < 10; i++) replies.push(await push(bobCh, 'presence', { state: i % 2 ? 'idle' : 'viewing' }));
    expect(replies.slice(0, 9).every((r) => r.status === 'ok')).toBe(true);
    expect(replies[9]).toEqual({ status: 'error', response: { reason: 'rate_limited' } });
    await expect.poll(() => seen(annPresence)[bob.userId]).toEqual([['Bob Agent', 'viewing']]);

    expect((await push(annCh, 'typing', {})).status).toBe('ok');
    await expect.poll(() => bobTyping.length).toBe(1);
    expect(bobTyping[0]).toEqual({ ticket_id: tk.id, user_id: ann.userId, name: 'Ann Agent' });
    await quiet();
    expect(annTyping).toEqual([]);

    // An unknown event on a joined topic, and any push to a topic not joined, are refused.
    expect((await push(annCh, 'shout', {})).response).toEqual({ reason: 'unknown_event' });

    await new Promise<void>((resolve) => bobCh.leave().receive('ok', () => resolve()));
    await expect.poll(() => Object.keys(seen(annPresence))).toEqual([ann.userId]);
  });

  it('lets a private team ticket be joined with its team_id by those who may see the team', async () => {
    const t = await newTenant(svc.api);
    const member = await addMember(svc, t, 'agent', 'Mia Member');
    const outsider = await addMember(svc, t, 'agent', 'Otto Outsider');
    const teamId = await privateTeam(t, [member.userId]);
    const tk = await ticket(t, { team_id: teamId });
    const topic = `ticket:${t.workspaceId}:${tk.id}`;
    const memberSocket = await agentSocket(member.as);
    expect((await join(memberSocket.socket.channel(topic))).response).toEqual({ reason: 'forbidden' });
    expect((await join(memberSocket.socket.channel(topic, { team_id: teamId }))).status).toBe('ok');
    const outsiderSocket = await agentSocket(outsider.as);
    expect((await join(outsiderSocket.socket.channel(topic, { team_id: teamId }))).response).toEqual({
      reason: 'forbidden',
    });
    const ownerSocket = await agentSocket(t.as);
    expect((await join(ownerSocket.socket.channel(topic, { team_id: teamId }))).status).toBe('ok');
    // API keys are not people: no presence on tickets.
    const key = await newApiKey(svc.api, t, ['realtime']);
    const keySocket = await agentSocket({ token: key.key });
    expect((await join(keySocket.socket.channel(`ticket:${t.workspaceId}:${(await ticket(t)).id}`))).response).toEqual({
      reason: 'forbidden',
    });
  });
});

describe('the widget socket', () => {
  async function chatTicket(t: Tenant) {
    const tk = await ticket(t, { contact: { email: `visitor-${Math.random()}@example.com`, name: 'Vic Visitor' } });
    await svc.rt.deps.database.db
      .updateTable('tickets')
      .set({ channel: 'chat' })
      .where('workspace_id', '=', t.workspaceId)
      .where('id', '=', tk.id)
      .execute();
    return { id: tk.id, contactId: tk.contact!.id };
  }

  it('gets public replies of its conversations without agents-only fields, never notes or other events', async () => {
    const t = await newTenant(svc.api);
    const chat = await chatTicket(t);
    const other = await chatTicket(t);
    const w = open(await widgetToken(svc, t.workspaceId, chat.contactId), { widget: true });
    const topic = `contact:${t.workspaceId}:${chat.contactId}`;
    const ch = w.socket.channel(topic);
    const got = collect(ch);
    expect((await join(ch)).status).toBe('ok');
    for (const forbidden of [
      `contact:${t.workspaceId}:${other.contactId}`,
      `workspace:${t.workspaceId}`,
      `ticket:${t.workspaceId}:${chat.id}`,
      `user:${chat.contactId}`,
    ]) {
      expect((await join(w.socket.channel(forbidden))).response, forbidden).toEqual({ reason: 'forbidden' });
    }

    const agent = await agentSocket(t.as);
    const agentCh = agent.socket.channel(`workspace:${t.workspaceId}`);
    const agentGot = collect(agentCh);
    await join(agentCh);

    const note = await svc.api.post(
      `/v1/tickets/${chat.id}/messages`,
      { kind: 'note', body_html: '<p>internal</p>' },
      t.as,
    );
    expect(note.status, note.text).toBe(201);
    await svc.api.patch(`/v1/tickets/${chat.id}`, { priority: 'high' }, t.as);
    const otherReply = await svc.api.post(
      `/v1/tickets/${other.id}/messages`,
      { kind: 'reply', body_html: '<p>not yours</p>' },
      t.as,
    );
    expect(otherReply.status).toBe(201);
    const replied = await svc.api.post(
      `/v1/tickets/${chat.id}/messages`,
      { kind: 'reply', body_html: '<p>Hello Vic</p>' },
      t.as,
    );
    expect(replied.status, replied.text).toBe(201);
    await expect.poll(() => got.length).toBe(1);
    await expect.poll(() => agentGot.filter((e) => e.type === 'message.created').length).toBe(3);
    await quiet();
    expect(got).toHaveLength(1);
    const e = got[0];
    expect(e).toMatchObject({ type: 'message.created', visibility: 'public', topics: [topic] });
    expect(e.data.ticket_id).toBe(chat.id);
    expect(e.data.message.id).toBe(replied.body.id);
    expect(e.data.message.body_text).toContain('Hello Vic');
    for (const k of ['reply_to', 'auth_failed', 'form_sender', 'bcc']) expect(e.data.message).not.toHaveProperty(k);
  });

  it('passes typing both ways: widget → customer_typing for agents, agent → typing for the widget', async () => {
    const t = await newTenant(svc.api);
    const chat = await chatTicket(t);
    const other = await chatTicket(t);
    const w = open(await widgetToken(svc, t.workspaceId, chat.contactId), { widget: true });
    const wch = w.socket.channel(`contact:${t.workspaceId}:${chat.contactId}`);
    const widgetTyping = collect(wch, 'typing');
    await join(wch);
    const agent = await agentSocket(t.as);
    const tch = agent.socket.channel(`ticket:${t.workspaceId}:${chat.id}`);
    const customerTyping = collect(tch, 'customer_typing');
    await join(tch);

    expect(await push(wch, 'typing', { ticket_id: chat.id })).toEqual({ status: 'ok', response: {} });
    await expect.poll(() => customerTyping).toEqual([{ ticket_id: chat.id, contact_id: chat.contactId }]);
    expect((await push(wch, 'typing', { ticket_id: other.id })).response).toEqual({ reason: 'forbidden' });
    expect((await push(wch, 'typing', { ticket_id: 'nope' })).response).toMatchObject({ reason: 'invalid_payload' });
    expect((await push(wch, 'presence', { state: 'viewing' })).response).toEqual({ reason: 'unknown_event' });

    expect((await push(tch, 'typing', { contact_id: chat.contactId })).status).toBe('ok');
    await expect.poll(() => widgetTyping.length).toBe(1);
    expect(widgetTyping[0]).toEqual({
      ticket_id: chat.id,
      user: { id: t.owner.userId, name: 'Olivia Owner', avatar_url: null },
    });
    await quiet();
    expect(customerTyping).toHaveLength(1);
    // Typing is never stored: no event, no seq.
    const seq = await latestSeqOf(svc, t);
    await push(tch, 'typing', { contact_id: chat.contactId });
    await push(wch, 'typing', { ticket_id: chat.id });
    await quiet();
    expect(await latestSeqOf(svc, t)).toBe(seq);
  });
});

describe('GET /health', () => {
  it('answers on the API port with the number of open sockets', async () => {
    const t = await newTenant(svc.api);
    await opened(await agentSocket(t.as));
    const r = await svc.api.get('/health');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok', sockets: expect.any(Number) });
    expect(r.body.sockets).toBeGreaterThan(0);
  });
});
