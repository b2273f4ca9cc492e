// Hostile and broken clients of the realtime gateway: refused connects (token purpose, expiry,
// Origin, endpoint), malformed frames (a raw `ws` client, since the Phoenix client cannot send
// them), protocol errors, a client that stops reading, a client that stops sending. Each gets a
// protocol error reply or a close, never data and never a crash.
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_LIMITS } from '../../src/gateway/index.js';
import { appendEvents } from '../../src/platform/events/outbox.js';
import { makeTicket } from '../support/builders.js';
import {
  type Client,
  collect,
  connect,
  join,
  realtimeToken,
  sleep,
  widgetToken,
  wsBase,
} from '../support/gateway-client.js';
import { latestSeqOf, newTenant, type Service, startService, type Tenant } from '../support/helpers.js';

const ALLOWED = 'https://help.example.com';
let svc: Service;
let t: Tenant;
let contactId: string;
beforeAll(async () => {
  svc = await startService({ CHECK_ORIGINS: `${ALLOWED}, https://agents.example.com` }, { jobs: false });
  t = await newTenant(svc.api);
  contactId = (await makeTicket(svc.api, t, { subject: 'Hi', contact: { email: 'v@example.com' } })).contact.id;
});
afterAll(async () => svc?.stop());

const clients: Client[] = [];
const raws: WebSocket[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.disconnect();
  for (const w of raws.splice(0)) w.terminate();
  Object.assign(svc.rt.gateway.limits, DEFAULT_LIMITS);
});

interface Attempt {
  opened: boolean;
  status: number | null;
  body: any;
}

/** One connect attempt: did the upgrade succeed, or what did the server answer instead? */
function attempt(path: string, headers: Record<string, string> = {}): Promise<Attempt> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${wsBase(svc.url)}${path}`, { headers });
    ws.on('open', () => {
      ws.terminate();
      resolve({ opened: true, status: 101, body: null });
    });
    ws.on('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () =>
        resolve({ opened: false, status: res.statusCode ?? null, body: text ? JSON.parse(text) : null }),
      );
    });
    ws.on('error', () => resolve({ opened: false, status: null, body: null }));
  });
}

interface Raw {
  ws: WebSocket;
  frames: any[];
  closed: Promise<{ code: number; reason: string }>;
  send(frame: unknown): void;
}

/** A raw socket on the agent endpoint, joined to the workspace topic. */
async function rawJoined(): Promise<Raw> {
  const token = await realtimeToken(svc.api, t.as);
  const ws = new WebSocket(`${wsBase(svc.url)}/socket/websocket?vsn=2.0.0&token=${token}`);
  raws.push(ws);
  const frames: any[] = [];
  ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const raw: Raw = { ws, frames, closed, send: (f) => ws.send(typeof f === 'string' ? f : JSON.stringify(f)) };
  raw.send(['1', '1', `workspace:${t.workspaceId}`, 'phx_join', {}]);
  await expect.poll(() => frames.length).toBe(1);
  expect(frames[0]).toEqual([
    '1',
    '1',
    `workspace:${t.workspaceId}`,
    'phx_reply',
    expect.objectContaining({ status: 'ok' }),
  ]);
  return raw;
}

/** The service still works: a new Phoenix client joins and receives a new event. */
async function stillServing() {
  expect((await svc.api.get('/health')).status).toBe(200);
  const c = connect(svc.url, await realtimeToken(svc.api, t.as));
  clients.push(c);
  const ch = c.socket.channel(`workspace:${t.workspaceId}`);
  const got = collect(ch);
  expect((await join(ch)).status).toBe('ok');
  await makeTicket(svc.api, t, { subject: 'Still here' });
  await expect.poll(() => got.length).toBeGreaterThan(0);
}

describe('connects', () => {
  it('are refused without a valid token of the endpoint’s purpose, or from an Origin not in CHECK_ORIGINS', async () => {
    const ws = await realtimeToken(svc.api, t.as);
    const widget = await widgetToken(svc, t.workspaceId, contactId);
    const expired = (await svc.rt.deps.tokens.sign({ purpose: 'ws', sub: t.owner.userId, wid: t.workspaceId }, -10))
      .token;
    const expiredWidget = await widgetToken(svc, t.workspaceId, contactId, -10);
    const access = t.owner.token;
    const refused: Array<[string, string, Record<string, string>, number]> = [
      ['no token', '/socket/websocket?vsn=2.0.0', {}, 401],
      ['garbage token', '/socket/websocket?token=abc.def.ghi', {}, 401],
      ['an access token', `/socket/websocket?token=${access}`, {}, 401],
      ['a widget token on the agent endpoint', `/socket/websocket?token=${widget}`, {}, 401],
      ['a ws token on the widget endpoint', `/socket/widget/websocket?token=${ws}`, {}, 401],
      ['an expired ws token', `/socket/websocket?token=${expired}`, {}, 401],
      ['an expired widget token', `/socket/widget/websocket?token=${expiredWidget}`, {}, 401],
      ['a 5000-character token', `/socket/websocket?token=${'x'.repeat(5000)}`, {}, 401],
      ['a wrong Origin', `/socket/websocket?token=${ws}`, { origin: 'https://evil.example.com' }, 403],
      ['an Origin with another port', `/socket/websocket?token=${ws}`, { origin: `${ALLOWED}:8443` }, 403],
      ['another serializer version', `/socket/websocket?vsn=1.0.0&token=${ws}`, {}, 400],
      ['an unknown endpoint', `/socket/other/websocket?token=${ws}`, {}, 404],
      ['the long-poll transport', `/socket/longpoll?token=${ws}`, {}, 404],
    ];
    for (const [label, path, headers, status] of refused) {
      const a = await attempt(path, headers);
      expect(a.opened, label).toBe(false);
      expect(a.status, label).toBe(status);
      expect(a.body, label).toMatchObject({ status, code: expect.any(String), detail: expect.any(String) });
    }
    // Accepted: no Origin (a server or native client), an allowed Origin, any Origin on the widget endpoint.
    expect((await attempt(`/socket/websocket?vsn=2.0.0&token=${ws}`)).opened).toBe(true);
    expect((await attempt(`/socket/websocket?token=${ws}`, { origin: ALLOWED })).opened).toBe(true);
    expect((await attempt(`/socket/widget/websocket?token=${widget}`, { origin: 'https://shop.example' })).opened).toBe(
      true,
    );
  });

  it('never open with the Phoenix client either (it keeps retrying, and never joins)', async () => {
    const ws = await realtimeToken(svc.api, t.as);
    const widget = await widgetToken(svc, t.workspaceId, contactId);
    const wrong = [
      connect(svc.url, ws, { widget: true, reconnectMs: 50 }),
      connect(svc.url, widget, { reconnectMs: 50 }),
      connect(svc.url, ws, { origin: 'https://evil.example.com', reconnectMs: 50 }),
    ];
    clients.push(...wrong);
    const good = connect(svc.url, ws, { origin: ALLOWED });
    clients.push(good);
    await expect.poll(() => good.opened).toBe(1);
    await expect.poll(() => wrong.every((c) => c.errors >= 2)).toBe(true);
    expect(wrong.map((c) => c.opened)).toEqual([0, 0, 0]);
  });

  it('takes the token from the Phoenix client’s authToken option (Sec-WebSocket-Protocol) too', async () => {
    const token = await realtimeToken(svc.api, t.as);
    const proto = `base64url.bearer.phx.${Buffer.from(token).toString('base64url')}`;
    const ws = new WebSocket(`${wsBase(svc.url)}/socket/websocket?vsn=2.0.0`, ['phoenix', proto]);
    raws.push(ws);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    expect(ws.protocol).toBe('phoenix');
  });
});

describe('frames', () => {
  it('that are not v2 messages close the socket (1007), binary frames too (1003), and frames over 64 KB (1009)', async () => {
    const cases: Array<[string, unknown, number]> = [
      ['not JSON', 'hello there', 1007],
      ['JSON, not an array', '{"topic":"phoenix","event":"heartbeat"}', 1007],
      ['an array of 3', '["1","1","phoenix"]', 1007],
      ['an array of 6', '["1","1","phoenix","heartbeat",{},"extra"]', 1007],
      ['a numeric topic', '["1","1",42,"heartbeat",{}]', 1007],
      ['an empty event', '["1","1","phoenix","",{}]', 1007],
      ['a payload that is not an object', '["1","1","phoenix","heartbeat","x"]', 1007],
      ['a null payload on join', `["1","1","workspace:${randomUUID()}","phx_join",null]`, 1007],
      ['an object ref', '[{},"1","phoenix","heartbeat",{}]', 1007],
      ['a 1000-character topic', `["1","1","${'t'.repeat(1000)}","phx_join",{}]`, 1007],
      ['deeply nested JSON', `${'['.repeat(5000)}${']'.repeat(5000)}`, 1007],
      ['a 70 KB payload', JSON.stringify(['1', '1', 'phoenix', 'heartbeat', { pad: 'x'.repeat(70_000) }]), 1009],
    ];
    for (const [label, frame, code] of cases) {
      const raw = await rawJoined();
      raw.send(frame);
      const closed = await raw.closed;
      expect(closed.code, label).toBe(code);
      expect(
        raw.frames.filter((f) => f[3] === 'event'),
        label,
      ).toEqual([]);
    }
    const raw = await rawJoined();
    raw.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    expect((await raw.closed).code).toBe(1003);
    await stillServing();
  });

  it('with unknown events, unjoined topics or too many topics get an error reply and the socket stays', async () => {
    const raw = await rawJoined();
    const replyTo = async (frame: unknown[]) => {
      const before = raw.frames.length;
      raw.send(frame);
      await expect.poll(() => raw.frames.length).toBeGreaterThan(before);
      return raw.frames[before];
    };
    expect(await replyTo([null, '2', 'phoenix', 'heartbeat', {}])).toEqual([
      null,
      '2',
      'phoenix',
      'phx_reply',
      { status: 'ok', response: {} },
    ]);
    expect(await replyTo([null, '3', 'phoenix', 'shutdown', {}])).toEqual([
      null,
      '3',
      'phoenix',
      'phx_reply',
      { status: 'error', response: { reason: 'unknown_event' } },
    ]);
    expect((await replyTo(['1', '4', `workspace:${t.workspaceId}`, 'new_ticket', {}]))[4]).toEqual({
      status: 'error',
      response: { reason: 'unknown_event' },
    });
    expect((await replyTo(['9', '5', `ticket:${t.workspaceId}:${randomUUID()}`, 'typing', {}]))[4]).toEqual({
      status: 'error',
      response: { reason: 'unmatched_topic' },
    });
    expect((await replyTo(['9', '6', `workspace:${randomUUID()}`, 'phx_join', {}]))[4]).toEqual({
      status: 'error',
      response: { reason: 'forbidden' },
    });
    // An owner may join any team topic of the workspace: 100 topics per socket at most.
    for (let i = 0; i < 99; i++) raw.send([`j${i}`, `r${i}`, `team:${t.workspaceId}:${randomUUID()}`, 'phx_join', {}]);
    await expect.poll(() => raw.frames.filter((f) => String(f[1]).startsWith('r')).length).toBe(99);
    expect(raw.frames.filter((f) => String(f[1]).startsWith('r')).every((f) => f[4].status === 'ok')).toBe(true);
    expect((await replyTo(['x', '7', `team:${t.workspaceId}:${randomUUID()}`, 'phx_join', {}]))[4]).toEqual({
      status: 'error',
      response: { reason: 'too_many_topics' },
    });
    // Joining a joined topic again replaces the join: phx_close for the old join_ref, then ok.
    const closeAndReply = raw.frames.length;
    raw.send(['1b', '8', `workspace:${t.workspaceId}`, 'phx_join', {}]);
    await expect.poll(() => raw.frames.length).toBe(closeAndReply + 2);
    expect(raw.frames.slice(closeAndReply).map((f) => [f[0], f[3]])).toEqual([
      ['1', 'phx_close'],
      ['1b', 'phx_reply'],
    ]);
    expect(raw.ws.readyState).toBe(WebSocket.OPEN);
    // And events still arrive, once.
    const seq = await latestSeqOf(svc, t);
    await makeTicket(svc.api, t, { subject: 'After the noise' });
    await expect.poll(() => raw.frames.filter((f) => f[3] === 'event' && f[4].seq > seq).length).toBe(1);
  });
});

describe('clients that stop reading or sending', () => {
  it('drops a socket whose unsent data passes the bound instead of growing memory', async () => {
    svc.rt.gateway.limits.maxBufferedBytes = 256 * 1024;
    const slow = await rawJoined();
    const reader = await rawJoined();
    // The slow client's socket stops reading (its kernel buffers fill, then the server's).
    (slow.ws as any)._socket.pause();
    const before = svc.rt.gateway.stats().sockets;
    // Large events, committed but published by the test (1 MB of data each).
    const big = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 30 && svc.rt.gateway.stats().sockets === before; i++) {
      const events = await svc.rt.deps.database.db
        .transaction()
        .execute((trx) =>
          appendEvents(trx, t.workspaceId, [{ type: 'tag.created', data: { tag: { id: `t${i}` }, big } }]),
        );
      await svc.rt.deps.bus.publish(events);
      await sleep(20);
    }
    await expect.poll(() => svc.rt.gateway.stats().sockets).toBe(before - 1);
    expect(svc.logs.some((l) => l.includes('gateway dropped a socket that stopped reading'))).toBe(true);
    // The reader got everything.
    await expect.poll(() => reader.frames.filter((f) => f[3] === 'event').length).toBeGreaterThan(0);
    expect(reader.ws.readyState).toBe(WebSocket.OPEN);
  });

  it('closes a socket that sent nothing, not even a heartbeat, for the heartbeat timeout (4008)', async () => {
    svc.rt.gateway.limits.heartbeatTimeoutMs = 1000;
    const quiet = await rawJoined();
    const talking = await rawJoined();
    const beat = setInterval(() => talking.send([null, 'hb', 'phoenix', 'heartbeat', {}]), 200);
    try {
      const closed = await quiet.closed;
      expect(closed).toEqual({ code: 4008, reason: 'heartbeat_timeout' });
      expect(talking.ws.readyState).toBe(WebSocket.OPEN);
    } finally {
      clearInterval(beat);
    }
  }, 20_000);
});
