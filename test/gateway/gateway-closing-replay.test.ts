// The realtime gateway, part 2 (part 1: gateway.test.ts, setup in gateway-setup.ts): sockets
// closed by logout, password change and removal, replay after a forced disconnect, seq order.
import { beforeAll, describe, expect, it } from 'vitest';
import { appendEvents } from '../../src/platform/events/outbox.js';
import { type Client, join, realtimeToken, sleep, widgetToken } from '../support/gateway-client.js';
import { addMember, eventsAfterOf, latestSeqOf, newApiKey, newTenant, type Service } from '../support/helpers.js';
import { gatewaySuite, quiet } from './gateway-setup.js';

const suite = gatewaySuite();
const { open, joinedWorkspace, ticket, privateTeam } = suite;
let svc: Service;
beforeAll(() => {
  ({ svc } = suite);
});

describe('closing sockets', () => {
  /** A socket joined to the workspace topic, reconnecting quickly with the same token. */
  async function joined(m: { as: { token?: string; workspace?: string } }, wid: string) {
    const c = open(await realtimeToken(svc.api, m.as), { reconnectMs: 50 });
    await join(c.socket.channel(`workspace:${wid}`));
    return c;
  }

  async function closedWith(c: Client, code: number) {
    await expect.poll(() => c.closes.map((x) => x.code)).toContain(code);
    // The Phoenix client reconnects with the same token: the gateway refuses it.
    await sleep(400);
    expect(c.socket.isConnected()).toBe(false);
    expect(c.opened).toBe(1);
  }

  it('on logout (4001) and password change (the other sessions)', async () => {
    const t = await newTenant(svc.api);
    const pat = await addMember(svc, t, 'agent');
    const c = await joined(pat, t.workspaceId);
    expect((await svc.api.post('/v1/auth/logout', {}, { token: pat.token })).status).toBe(204);
    await closedWith(c, 4001);
    expect(c.closes[0]!.reason).toBe('session_revoked');

    const sam = await addMember(svc, t, 'agent');
    const login = await svc.api.post('/v1/auth/login', { email: sam.email, password: sam.password });
    expect(login.status, login.text).toBe(200);
    const second = { token: login.body.access_token, workspace: t.workspaceId };
    const kept = await joined(sam, t.workspaceId);
    const other = await joined({ as: second }, t.workspaceId);
    const r = await svc.api.post(
      '/v1/me/password',
      { current_password: sam.password, new_password: 'another long password' },
      { token: sam.token },
    );
    expect(r.status, r.text).toBeLessThan(300);
    await closedWith(other, 4001);
    expect(kept.socket.isConnected()).toBe(true);
    expect(kept.closes).toEqual([]);
  });

  it('on removal from the workspace (4003) and when a session is revoked', async () => {
    const t = await newTenant(svc.api);
    const pat = await addMember(svc, t, 'agent');
    const c = await joined(pat, t.workspaceId);
    expect((await svc.api.delete(`/v1/members/${pat.userId}`, t.as)).status).toBe(204);
    await closedWith(c, 4003);
    expect((await svc.api.post('/v1/realtime/token', undefined, pat.as)).status).toBe(404);

    const sam = await addMember(svc, t, 'agent');
    const s = await joined(sam, t.workspaceId);
    const sid = (
      await svc.rt.deps.database.db
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', sam.userId)
        .executeTakeFirstOrThrow()
    ).id;
    await svc.rt.deps.bus.publishControl({ type: 'sessions.revoked', user_id: sam.userId, session_ids: [sid] });
    await closedWith(s, 4001);
  });

  it('when private teams change (4009): the old token is refused, a fresh one carries the new teams', async () => {
    const t = await newTenant(svc.api);
    const pat = await addMember(svc, t, 'agent');
    const bystander = await addMember(svc, t, 'agent');
    const teamId = await privateTeam(t, [bystander.userId]);
    let token = await realtimeToken(svc.api, pat.as);
    const c = open(() => token, { reconnectMs: 50 });
    const wch = c.socket.channel(`workspace:${t.workspaceId}`);
    await join(wch);
    const b = await joined(bystander, t.workspaceId);
    expect((await join(c.socket.channel(`team:${t.workspaceId}:${teamId}`))).response).toEqual({ reason: 'forbidden' });

    const r = await svc.api.patch(`/v1/teams/${teamId}`, { member_ids: [bystander.userId, pat.userId] }, t.as);
    expect(r.status, r.text).toBe(200);
    await closedWith(c, 4009);
    expect(c.closes[0]!.reason).toBe('teams_changed');
    expect(b.closes).toEqual([]);

    token = await realtimeToken(svc.api, pat.as);
    await expect.poll(() => c.socket.isConnected(), { timeout: 5000 }).toBe(true);
    const team = c.socket.channel(`team:${t.workspaceId}:${teamId}`);
    expect((await join(team)).status).toBe('ok');
  });

  it('when its API key is deleted (4010): only the sockets of that key, and its tokens are refused after', async () => {
    const t = await newTenant(svc.api);
    const gone = await newApiKey(svc.api, t, ['realtime']);
    const kept = await newApiKey(svc.api, t, ['realtime']);
    const a = await joined({ as: { token: gone.key } }, t.workspaceId);
    const b = await joined({ as: { token: kept.key } }, t.workspaceId);
    const person = await joined(t, t.workspaceId);
    const token = await realtimeToken(svc.api, { token: gone.key });
    expect((await svc.api.delete(`/v1/api-keys/${gone.id}`, t.as)).status).toBe(204);
    await closedWith(a, 4010);
    expect(a.closes[0]!.reason).toBe('api_key_deleted');
    const late = open(token, { reconnectMs: 50 });
    await sleep(400);
    expect(late.socket.isConnected()).toBe(false);
    expect(b.socket.isConnected()).toBe(true);
    expect(b.closes).toEqual([]);
    expect(person.closes).toEqual([]);
  });

  it('when the workspace is deleted, agents and widgets alike', async () => {
    const t = await newTenant(svc.api);
    const tk = await ticket(t, { contact: { email: 'w@example.com' } });
    const a = await joined(t, t.workspaceId);
    const w = open(await widgetToken(svc, t.workspaceId, tk.contact!.id), { widget: true, reconnectMs: 50 });
    await join(w.socket.channel(`contact:${t.workspaceId}:${tk.contact!.id}`));
    await svc.rt.deps.bus.publishControl({ type: 'workspace.deleted', workspace_id: t.workspaceId });
    await closedWith(a, 4003);
    await closedWith(w, 4003);
  });
});

describe('replay after a forced disconnect', () => {
  it('fills the gap with GET /v1/events and ends with the same events and tickets as the API', async () => {
    const t = await newTenant(svc.api);
    let token = await realtimeToken(svc.api, t.as);
    const c = open(() => token, { reconnectMs: 100 });
    const ch = c.socket.channel(`workspace:${t.workspaceId}`);
    // The client: events by id, seq tracked; after every (re)join it replays from its last seq.
    const byId = new Map<string, any>();
    let lastSeq = 0;
    const apply = (e: any) => {
      if (byId.has(e.id)) return;
      byId.set(e.id, e);
      lastSeq = Math.max(lastSeq, e.seq);
    };
    let replays = 0;
    let replaying: Promise<void> = Promise.resolve();
    ch.on('event', apply);
    const first = await new Promise<any>((resolve) => {
      ch.join().receive('ok', (resp) => {
        if (replays++ === 0) {
          lastSeq = resp.latest_seq;
          resolve(resp);
          return;
        }
        replaying = (async () => {
          const r = await svc.api.get(`/v1/events?since=${lastSeq}&limit=1000`, t.as);
          for (const e of r.body.data) apply(e);
        })();
      });
    });
    const start = first.latest_seq as number;
    await ticket(t);
    await expect.poll(() => byId.size).toBe((await latestSeqOf(svc, t)) - start);

    // The network goes: the transport dies and reconnects fail until a fresh token is fetched.
    token = 'offline';
    (c.socket as any).conn.terminate();
    await expect.poll(() => c.socket.isConnected()).toBe(false);
    const made = [];
    for (let i = 0; i < 4; i++) made.push((await ticket(t, { contact: { email: `gap${i}@example.com` } })).id);
    expect(c.socket.isConnected()).toBe(false);
    token = await realtimeToken(svc.api, t.as);
    await expect.poll(() => replays, { timeout: 10_000 }).toBe(2);
    await replaying;
    made.push((await ticket(t)).id);

    const latest = await latestSeqOf(svc, t);
    await expect.poll(() => lastSeq).toBe(latest);
    const events = [...byId.values()].sort((a, b) => a.seq - b.seq);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: latest - start }, (_, i) => start + i + 1));
    expect(events).toEqual(await eventsAfterOf(svc, t, start));
    const ticketIds = events.filter((e) => e.type === 'ticket.created').map((e) => e.data.ticket.id);
    const listed = (await svc.api.get('/v1/tickets?limit=100', t.as)).body.data.map((x: any) => x.id);
    expect(new Set(ticketIds)).toEqual(new Set(listed));
    for (const id of made) expect(ticketIds).toContain(id);
  });
});

describe('seq order and exactly once', () => {
  it('delivers in seq order when the bus reorders or repeats events, and reads a missing one from the outbox', async () => {
    const t = await newTenant(svc.api);
    const { got, start } = await joinedWorkspace(t);
    const db = svc.rt.deps.database.db;
    // Three committed events that were never published (as if their process died after COMMIT).
    const events = await db.transaction().execute((trx) =>
      appendEvents(trx, t.workspaceId, [
        { type: 'tag.created', data: { tag: { id: 'a' } } },
        { type: 'tag.created', data: { tag: { id: 'b' } } },
        { type: 'tag.created', data: { tag: { id: 'c' } } },
      ]),
    );
    const [e1, e2, e3] = events;
    const bus = svc.rt.deps.bus;
    await bus.publish([e3!]);
    await bus.publish([e2!]);
    await sleep(20);
    expect(got).toEqual([]); // e1 is missing: nothing goes out of order
    await expect.poll(() => got.map((e) => e.seq)).toEqual([start + 1, start + 2, start + 3]);
    // Repeats (the outbox sweeper republishes) are dropped.
    await bus.publish([e1!, e2!, e3!]);
    await ticket(t);
    const latest = await latestSeqOf(svc, t);
    await expect.poll(() => got.at(-1)?.seq).toBe(latest);
    await quiet();
    expect(got.map((e) => e.seq)).toEqual(Array.from({ length: latest - start }, (_, i) => start + i + 1));
    expect(got.slice(0, 3).map((e) => e.data.tag.id)).toEqual(['a', 'b', 'c']);
  });
});
