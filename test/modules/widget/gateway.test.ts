// The widget socket (/socket/widget/websocket) as a visitor's browser uses it, with the official
// Phoenix client and the ws_token of POST /v1/widget/session: its own contact topic only, the
// visitor's messages on the agents' sockets, agents' replies (never notes) on the visitor's,
// typing both ways, replay of missed messages by seq, and who of the workspace is online; a
// sign-out, a turned-off widget and a deleted contact close the visitor's sockets and refuse their
// earlier tokens; each of the two checks that keep notes off the socket is tested on its own.
import { createHmac, randomUUID } from 'node:crypto';
import { Presence } from 'phoenix';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  type Client,
  collect,
  connect,
  join,
  push,
  realtimeToken,
  sleep,
  wsBase,
} from '../../support/gateway-client.js';
import { addMember, newTenant, type ReqOpts, type Service, startService, type Tenant } from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

const clients: Client[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.disconnect();
});

const quiet = () => sleep(300);

interface Visitor {
  token: string;
  contactId: string;
  wsToken: string;
  gatewayUrl: string;
}

async function siteOf(t: Tenant): Promise<string> {
  return (await svc.api.get('/v1/workspace', t.as)).body.widget_key;
}

async function visitor(key: string, body: Record<string, unknown> = {}): Promise<Visitor> {
  const r = await svc.api.post('/v1/widget/session', { key, ...body });
  expect(r.status, r.text).toBe(200);
  return {
    token: r.body.visitor_token,
    contactId: r.body.contact.id,
    wsToken: r.body.ws_token,
    gatewayUrl: r.body.gateway_url,
  };
}

const as = (v: Visitor): ReqOpts => ({ headers: { authorization: `Visitor ${v.token}` } });

async function converse(v: Visitor, body = 'Hello there') {
  const r = await svc.api.post('/v1/widget/conversations', { body }, as(v));
  expect(r.status, r.text).toBe(201);
  return r.body.id as string;
}

/** The visitor's socket from its session (the gateway_url's path is where it connects), from a website. */
function widgetSocket(v: Visitor, reconnectMs?: number) {
  expect(new URL(v.gatewayUrl).pathname).toBe('/socket/widget/websocket');
  const c = connect(svc.url, v.wsToken, {
    widget: true,
    origin: 'https://any-shop.example',
    ...(reconnectMs !== undefined ? { reconnectMs } : {}),
  });
  clients.push(c);
  return c;
}

/** One connect with a widget realtime token: 101 when it opens, else the HTTP status of the refusal. */
function upgradeStatus(wsToken: string): Promise<number | null> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${wsBase(svc.url)}/socket/widget/websocket?vsn=2.0.0&token=${wsToken}`);
    ws.on('open', () => {
      ws.terminate();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? null);
    });
    ws.on('error', () => resolve(null));
  });
}

async function agentSocket(as: ReqOpts) {
  const c = connect(svc.url, await realtimeToken(svc.api, as));
  clients.push(c);
  return c;
}

describe('the widget socket', () => {
  it("joins its own contact topic only: another contact's topic is forbidden and delivers nothing", async () => {
    const t = await newTenant(svc.api);
    const key = await siteOf(t);
    const me = await visitor(key);
    const other = await visitor(key);
    const otherConv = await converse(other);
    const w = widgetSocket(me);
    const mine = w.socket.channel(`contact:${t.workspaceId}:${me.contactId}`);
    const mineGot = collect(mine);
    const joined = await join(mine);
    expect(joined.status).toBe('ok');
    expect(typeof joined.response.latest_seq).toBe('number');

    const theirs = w.socket.channel(`contact:${t.workspaceId}:${other.contactId}`);
    const theirsGot = collect(theirs);
    expect((await join(theirs)).response).toEqual({ reason: 'forbidden' });
    for (const topic of [`workspace:${t.workspaceId}`, `ticket:${t.workspaceId}:${otherConv}`]) {
      expect((await join(w.socket.channel(topic))).response, topic).toEqual({ reason: 'forbidden' });
    }
    // The other visitor's conversation gets messages both ways: nothing reaches this socket.
    await svc.api.post(`/v1/widget/conversations/${otherConv}/messages`, { body: 'not yours' }, as(other));
    await svc.api.post(`/v1/tickets/${otherConv}/messages`, { kind: 'reply', body_html: '<p>not yours</p>' }, t.as);
    await quiet();
    expect(theirsGot).toEqual([]);
    expect(mineGot).toEqual([]);
  });

  it("brings the visitor's message to the agents' sockets and the agent's reply (never a note) to the visitor", async () => {
    const t = await newTenant(svc.api);
    const key = await siteOf(t);
    const v = await visitor(key, { name: 'Vic Visitor' });
    const conv = await converse(v, 'First question');

    const agent = await agentSocket(t.as);
    const ws = agent.socket.channel(`workspace:${t.workspaceId}`);
    const agentGot = collect(ws);
    await join(ws);
    const w = widgetSocket(v);
    const topic = `contact:${t.workspaceId}:${v.contactId}`;
    const ch = w.socket.channel(topic);
    const got = collect(ch);
    await join(ch);

    const sent = await svc.api.post(
      `/v1/widget/conversations/${conv}/messages`,
      { body: '<b>Are you there?</b>' },
      as(v),
    );
    expect(sent.status, sent.text).toBe(201);
    await expect
      .poll(() => agentGot.filter((e) => e.type === 'message.created').map((e) => e.data.message.id))
      .toEqual([sent.body.id]);
    const forAgents = agentGot.find((e) => e.type === 'message.created');
    expect(forAgents.data.message).toMatchObject({
      kind: 'reply',
      direction: 'inbound',
      body_text: '<b>Are you there?</b>',
    });
    expect(forAgents.data.message.author.contact.id).toBe(v.contactId);
    // The visitor's own message comes back on its topic too (another tab sees it).
    await expect.poll(() => got.map((e) => e.data.message.id)).toEqual([sent.body.id]);

    const note = await svc.api.post(
      `/v1/tickets/${conv}/messages`,
      { kind: 'note', body_html: '<p>internal only</p>' },
      t.as,
    );
    expect(note.status).toBe(201);
    // Live (its speed is npm run bench:widget's figure; a test only waits for it).
    const reply = await svc.api.post(
      `/v1/tickets/${conv}/messages`,
      { kind: 'reply', body_html: '<p>Yes, here!</p>' },
      t.as,
    );
    expect(reply.status).toBe(201);
    await expect.poll(() => got.length).toBe(2);
    await quiet();
    expect(got).toHaveLength(2);
    const e = got[1];
    expect(e).toMatchObject({ type: 'message.created', visibility: 'public', topics: [topic] });
    expect(e.data.ticket_id).toBe(conv);
    expect(e.data.message).toEqual({
      id: reply.body.id,
      conversation_id: conv,
      direction: 'outbound',
      body_html: expect.stringContaining('Yes, here!'),
      body_text: 'Yes, here!',
      author: { type: 'agent', name: 'Olivia Owner', avatar_url: null },
      attachments: [],
      created_at: reply.body.created_at,
    });
    expect(JSON.stringify(got)).not.toContain('internal only');
    expect(JSON.stringify(got)).not.toContain(t.owner.email);
  });

  it('passes typing both ways: the visitor to the agents on the ticket, an agent to the visitor', async () => {
    const t = await newTenant(svc.api);
    const v = await visitor(await siteOf(t));
    const conv = await converse(v);
    const w = widgetSocket(v);
    const wch = w.socket.channel(`contact:${t.workspaceId}:${v.contactId}`);
    const typing = collect(wch, 'typing');
    await join(wch);
    const agent = await agentSocket(t.as);
    const tch = agent.socket.channel(`ticket:${t.workspaceId}:${conv}`);
    const customerTyping = collect(tch, 'customer_typing');
    await join(tch);

    expect((await push(wch, 'typing', { ticket_id: conv })).status).toBe('ok');
    await expect.poll(() => customerTyping).toEqual([{ ticket_id: conv, contact_id: v.contactId }]);
    expect((await push(tch, 'typing', { contact_id: v.contactId })).status).toBe('ok');
    await expect
      .poll(() => typing)
      .toEqual([{ ticket_id: conv, user: { id: t.owner.userId, name: 'Olivia Owner', avatar_url: null } }]);
  });

  it('replays the messages missed since a seq when it joins again, then the live ones', async () => {
    const t = await newTenant(svc.api);
    const v = await visitor(await siteOf(t));
    const conv = await converse(v);
    const first = widgetSocket(v);
    const topic = `contact:${t.workspaceId}:${v.contactId}`;
    const since = (await join(first.socket.channel(topic))).response.latest_seq as number;
    first.disconnect();

    // While the visitor is away: two replies, a note, and another contact's conversation.
    const r1 = await svc.api.post(`/v1/tickets/${conv}/messages`, { kind: 'reply', body_html: '<p>one</p>' }, t.as);
    await svc.api.post(`/v1/tickets/${conv}/messages`, { kind: 'note', body_html: '<p>note</p>' }, t.as);
    const r2 = await svc.api.post(`/v1/tickets/${conv}/messages`, { kind: 'reply', body_html: '<p>two</p>' }, t.as);
    await converse(await visitor(await siteOf(t)));

    const back = widgetSocket(await visitor(await siteOf(t), { visitor_token: v.token }));
    const ch = back.socket.channel(topic, { since });
    const got = collect(ch);
    const joined = await join(ch);
    expect(joined.status).toBe('ok');
    expect(joined.response.resync).toBeUndefined();
    await expect.poll(() => got.map((e) => e.data.message.id)).toEqual([r1.body.id, r2.body.id]);
    expect(got[0].seq).toBeLessThan(got[1].seq);
    expect(got[1].seq).toBeLessThanOrEqual(joined.response.latest_seq);
    const r3 = await svc.api.post(`/v1/tickets/${conv}/messages`, { kind: 'reply', body_html: '<p>three</p>' }, t.as);
    await expect.poll(() => got.map((e) => e.data.message.id)).toEqual([r1.body.id, r2.body.id, r3.body.id]);

    // A seq older than what is kept: resync (reload the conversations).
    await svc.rt.deps.database.db
      .deleteFrom('events')
      .where('workspace_id', '=', t.workspaceId)
      .where('seq', '<=', since + 1)
      .execute();
    const late = widgetSocket(await visitor(await siteOf(t), { visitor_token: v.token }));
    const lr = await join(late.socket.channel(topic, { since }));
    expect(lr.response.resync).toBe(true);
  });

  it('shows who of the workspace is online, with names and pictures only', async () => {
    const t = await newTenant(svc.api);
    const v = await visitor(await siteOf(t));
    const w = widgetSocket(v);
    const ch = w.socket.channel(`contact:${t.workspaceId}:${v.contactId}`);
    const presence = new Presence(ch);
    const diffs = collect(ch, 'presence_diff');
    await join(ch);
    const online = () => presence.list((id: string, { metas }: { metas: any[] }) => ({ id, ...metas[0] }));
    await quiet();
    expect(online()).toEqual([]);

    const agentPerson = await addMember(svc, t, 'agent', 'Ann Agent');
    const a = await agentSocket(agentPerson.as);
    await join(a.socket.channel(`workspace:${t.workspaceId}`));
    await expect.poll(() => online().map((p: any) => p.name)).toEqual(['Ann Agent']);
    const entry = online()[0];
    expect(entry).toMatchObject({ id: agentPerson.userId, name: 'Ann Agent', avatar: null });
    expect(Object.keys(entry).sort()).toEqual(['avatar', 'id', 'name', 'online_at', 'phx_ref'].sort());
    expect(JSON.stringify(diffs)).not.toContain(agentPerson.email);

    a.disconnect();
    await expect.poll(() => online()).toEqual([]);
  });
});

describe('revocation reaches the socket', () => {
  it("signing out closes that visitor's sockets and refuses its earlier tokens; another device stays", async () => {
    const t = await newTenant(svc.api);
    const key = await siteOf(t);
    const secret = (await svc.api.post('/v1/workspace/widget-secret/rotate', undefined, t.as)).body.widget_secret;
    const identity = { user_id: 'user-9', user_hash: createHmac('sha256', secret).update('user-9').digest('hex') };
    const laptop = await visitor(key, identity);
    const phone = await visitor(key, identity);
    expect(phone.contactId).toBe(laptop.contactId);
    const conv = await converse(laptop);
    const topic = `contact:${t.workspaceId}:${laptop.contactId}`;
    const onLaptop = widgetSocket(laptop, 50);
    const laptopGot = collect(onLaptop.socket.channel(topic));
    expect((await join(onLaptop.socket.channel(topic))).status).toBe('ok');
    const onPhone = widgetSocket(phone);
    const phoneCh = onPhone.socket.channel(topic);
    const phoneGot = collect(phoneCh);
    expect((await join(phoneCh)).status).toBe('ok');
    // A second realtime token of the laptop's visitor, minted before the sign-out (valid 5 minutes).
    const minted = await visitor(key, { visitor_token: laptop.token });

    expect((await svc.api.delete('/v1/widget/session', as(laptop))).status).toBe(204);
    await expect.poll(() => onLaptop.closes).toContainEqual({ code: 4001, reason: 'session_revoked' });
    expect(await upgradeStatus(laptop.wsToken)).toBe(401);
    expect(await upgradeStatus(minted.wsToken)).toBe(401);
    // The Phoenix client tried again with its token, and was refused.
    await expect.poll(() => onLaptop.errors).toBeGreaterThan(0);
    expect(onLaptop.opened).toBe(1);

    // The phone (another visitor token of the same person) is still connected and gets the reply.
    const reply = await svc.api.post(`/v1/tickets/${conv}/messages`, { kind: 'reply', body_html: '<p>Hi</p>' }, t.as);
    expect(reply.status).toBe(201);
    await expect.poll(() => phoneGot.map((e) => e.data.message.id)).toContain(reply.body.id);
    expect(laptopGot.map((e) => e.data.message.id)).not.toContain(reply.body.id);
    expect(onPhone.closes).toEqual([]);
    expect(await upgradeStatus(phone.wsToken)).toBe(101);
  });

  it("turning the widget off closes its visitors' sockets and refuses their tokens until it is on again", async () => {
    const t = await newTenant(svc.api);
    const key = await siteOf(t);
    const v = await visitor(key);
    const w = widgetSocket(v, 50);
    expect((await join(w.socket.channel(`contact:${t.workspaceId}:${v.contactId}`))).status).toBe('ok');
    expect((await svc.api.patch('/v1/widget/settings', { enabled: false }, t.as)).status).toBe(200);
    await expect.poll(() => w.closes).toContainEqual({ code: 4003, reason: 'widget_disabled' });
    expect(await upgradeStatus(v.wsToken)).toBe(401);
    await expect.poll(() => w.errors).toBeGreaterThan(0);
    expect(w.opened).toBe(1);
    expect((await svc.api.patch('/v1/widget/settings', { enabled: true }, t.as)).status).toBe(200);
    const back = await visitor(key, { visitor_token: v.token });
    expect(await upgradeStatus(back.wsToken)).toBe(101);
  });

  it("deleting the contact closes its visitors' sockets and refuses their tokens", async () => {
    const t = await newTenant(svc.api);
    const v = await visitor(await siteOf(t));
    await converse(v); // the first message made the contact
    const w = widgetSocket(v, 50);
    expect((await join(w.socket.channel(`contact:${t.workspaceId}:${v.contactId}`))).status).toBe('ok');
    expect((await svc.api.delete(`/v1/contacts/${v.contactId}`, t.as)).status).toBe(204);
    await expect.poll(() => w.closes).toContainEqual({ code: 4003, reason: 'contact_deleted' });
    expect(await upgradeStatus(v.wsToken)).toBe(401);
    await expect.poll(() => w.errors).toBeGreaterThan(0);
    expect(w.opened).toBe(1);
  });
});

/**
 * Two checks keep notes off a visitor's socket, each on its own: the gateway sends a contact topic
 * only events whose visibility is public (src/gateway/hub.ts, and the replay's query), and the
 * widget's form of an event drops anything but a reply (src/modules/widget/present.ts). No API
 * path writes an event that only one of them stops, so these write such events themselves; each
 * is followed by a real reply, delivered in seq order after it: once the reply is there, the
 * event before it would have been too.
 */
describe('notes never reach a visitor', () => {
  async function setUp() {
    const t = await newTenant(svc.api);
    const v = await visitor(await siteOf(t));
    const conv = await converse(v, 'A question');
    const topic = `contact:${t.workspaceId}:${v.contactId}`;
    const w = widgetSocket(v);
    const ch = w.socket.channel(topic);
    const got = collect(ch);
    const since = (await join(ch)).response.latest_seq as number;
    const mine = (await svc.api.get(`/v1/tickets/${conv}/messages`, t.as)).body.data[0];
    /** An event naming the visitor's topic, as the outbox would store and publish it. */
    const emit = (visibility: 'agents' | 'public', message: Record<string, unknown>) =>
      svc.rt.deps.writer.run(t.workspaceId, async (u) =>
        u.emit({ type: 'message.created', data: { ticket_id: conv, message }, visibility, topics: [topic] }),
      );
    /** A real reply: what arrives after the written event. */
    const reply = async () => {
      const r = await svc.api.post(`/v1/tickets/${conv}/messages`, { kind: 'reply', body_html: '<p>Real</p>' }, t.as);
      expect(r.status, r.text).toBe(201);
      return r.body.id as string;
    };
    /** What a socket joined with {since} gets replayed, once the reply is among it. */
    const replayed = async (replyId: string) => {
      const again = widgetSocket(await visitor(await siteOf(t), { visitor_token: v.token }));
      const rch = again.socket.channel(topic, { since });
      const rgot = collect(rch);
      expect((await join(rch)).status).toBe('ok');
      await expect.poll(() => rgot.map((e) => e.data.message.id)).toContain(replyId);
      return rgot;
    };
    return { mine, emit, reply, got, replayed };
  }

  it("the gateway holds back an event for agents only, even a reply on the visitor's topic, live and replayed", async () => {
    const { mine, emit, reply, got, replayed } = await setUp();
    const hidden = { ...mine, id: randomUUID(), body_html: '<p>agents only</p>', body_text: 'agents only' };
    await emit('agents', hidden);
    const real = await reply();
    await expect.poll(() => got.map((e) => e.data.message.id)).toContain(real);
    expect(got.map((e) => e.data.message.id)).toEqual([real]);
    expect((await replayed(real)).map((e) => e.data.message.id)).toEqual([real]);
  });

  it("the widget drops a note even on a public event of the visitor's topic, live and replayed", async () => {
    const { mine, emit, reply, got, replayed } = await setUp();
    const note = { ...mine, id: randomUUID(), kind: 'note', body_html: '<p>a note</p>', body_text: 'a note' };
    await emit('public', note);
    const real = await reply();
    await expect.poll(() => got.map((e) => e.data.message.id)).toContain(real);
    expect(got.map((e) => e.data.message.id)).toEqual([real]);
    expect(JSON.stringify(got)).not.toContain('a note');
    expect((await replayed(real)).map((e) => e.data.message.id)).toEqual([real]);
  });
});
