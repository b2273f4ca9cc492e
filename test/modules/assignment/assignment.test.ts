// Assignment: GET/PATCH /v1/assignment (mode = settings.auto_assign, rules, auto-away), member
// availability and caps (PATCH /v1/members/{user_id}/availability), heartbeat and auto-away in
// `presence`, and auto-assignment of new tickets: round robin (fair over creates, restarts and
// concurrent creates), load balanced, caps, offline and away agents, team and mailbox rules.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTicket } from '../../support/builders.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  type Member,
  newApiKey,
  newTenant,
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

const db = () => svc.rt.deps.database.db;

async function auditOf(t: Tenant, action: string) {
  return db()
    .selectFrom('audit_logs')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .where('action', '=', action)
    .orderBy('created_at')
    .execute();
}

async function memberOf(s: Service, t: Tenant, userId: string) {
  const r = await s.api.get('/v1/members?limit=100', t.as);
  expect(r.status).toBe(200);
  return r.body.data.find((m: any) => m.user.id === userId);
}

/** A workspace whose owner is offline, with `n` online agents in user id order (turn order). */
async function team(n: number, s: Service = svc): Promise<{ t: Tenant; agents: Member[] }> {
  const t = await newTenant(s.api);
  expect((await s.api.patch('/v1/members/me/availability', { availability: 'offline' }, t.as)).status).toBe(200);
  const agents: Member[] = [];
  for (let i = 0; i < n; i++) agents.push(await addMember(s, t, 'agent', `Agent ${i}`));
  agents.sort((a, b) => (a.userId < b.userId ? -1 : 1));
  return { t, agents };
}

async function setMode(t: Tenant, body: Record<string, unknown>, s: Service = svc) {
  const r = await s.api.patch('/v1/assignment', body, t.as);
  expect(r.status, r.text).toBe(200);
  return r.body;
}

const newTicket = (t: Tenant, extra: Record<string, unknown> = {}, s: Service = svc) =>
  makeTicket(s.api, t, { subject: unique('Help'), ...extra });

const assigneeOf = (ticket: any): string | null => ticket.assignee?.id ?? null;

describe('GET and PATCH /v1/assignment', () => {
  it('reads the defaults for any member and settings keys; only admins and settings:write keys change it', async () => {
    const t = await newTenant(svc.api);
    const viewer = await addMember(svc, t, 'viewer');
    const agent = await addMember(svc, t, 'agent');
    const read = await newApiKey(svc.api, t, ['settings:read']);
    const write = await newApiKey(svc.api, t, ['settings:write']);
    const tickets = await newApiKey(svc.api, t, ['tickets:read', 'tickets:write']);
    const defaults = { mode: 'none', rules: [], auto_away_minutes: 0 };
    for (const as of [t.as, viewer.as, agent.as, { token: read.key }, { token: write.key }]) {
      const r = await svc.api.get('/v1/assignment', as);
      expect(r.status).toBe(200);
      expect(r.body).toEqual(defaults);
    }
    expect((await svc.api.get('/v1/assignment', { token: tickets.key })).status).toBe(403);
    for (const as of [viewer.as, agent.as, { token: read.key }, { token: tickets.key }]) {
      const r = await svc.api.patch('/v1/assignment', { mode: 'round_robin' }, as);
      expect(r.status).toBe(403);
      expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
    }
    expect((await svc.api.get('/v1/assignment', t.as)).body).toEqual(defaults);
    const byKey = await svc.api.patch('/v1/assignment', { auto_away_minutes: 30 }, { token: write.key });
    expect(byKey.status).toBe(200);
    expect(byKey.body).toEqual({ ...defaults, auto_away_minutes: 30 });
  });

  it('stores mode, rules and auto-away, audits assignment.updated and mirrors mode into settings.auto_assign', async () => {
    const t = await newTenant(svc.api);
    const teamR = await svc.api.post('/v1/teams', { name: 'Billing', private: false, member_ids: [] }, t.as);
    const mbox = await svc.api.post('/v1/mailboxes', { name: 'Support', email: `${unique('mb')}@acme.test` }, t.as);
    expect(mbox.status).toBe(201);
    const seq = await latestSeqOf(svc, t);
    const body = {
      mode: 'round_robin',
      auto_away_minutes: 15,
      rules: [
        { target_type: 'mailbox', target_id: mbox.body.id, mode: 'none' },
        { target_type: 'team', target_id: teamR.body.id.toUpperCase(), mode: 'load_balanced' },
      ],
    };
    const r = await svc.api.patch('/v1/assignment', body, t.as);
    expect(r.status).toBe(200);
    const expected = {
      mode: 'round_robin',
      auto_away_minutes: 15,
      rules: [
        { target_type: 'mailbox', target_id: mbox.body.id, mode: 'none' },
        { target_type: 'team', target_id: teamR.body.id, mode: 'load_balanced' },
      ],
    };
    expect(r.body).toEqual(expected);
    expect((await svc.api.get('/v1/assignment', t.as)).body).toEqual(expected);

    const audit = await auditOf(t, 'assignment.updated');
    expect(audit).toHaveLength(1);
    expect(audit[0]!.actor_user_id).toBe(t.owner.userId);
    expect(audit[0]!.data).toEqual({
      changes: ['mode', 'auto_away_minutes', 'rules'],
      from: { mode: 'none', auto_away_minutes: 0, rules: [] },
      to: expected,
    });
    // One value: the workspace setting follows, with workspace.updated.
    expect((await svc.api.get('/v1/workspace', t.as)).body.settings.auto_assign).toBe('round_robin');
    const events = await eventsAfterOf(svc, t, seq);
    const ws = events.filter((e) => e.type === 'workspace.updated');
    expect(ws).toHaveLength(1);
    expect(ws[0].data.workspace.settings.auto_assign).toBe('round_robin');

    // And the other way round.
    const w = await svc.api.patch('/v1/workspace', { settings: { auto_assign: 'load_balanced' } }, t.as);
    expect(w.status).toBe(200);
    expect((await svc.api.get('/v1/assignment', t.as)).body.mode).toBe('load_balanced');

    // The same values again change nothing (no audit entry); rules replace the whole list.
    await setMode(t, { mode: 'load_balanced', auto_away_minutes: 15 });
    expect(await auditOf(t, 'assignment.updated')).toHaveLength(1);
    const replaced = await setMode(t, { rules: [{ target_type: 'team', target_id: teamR.body.id, mode: 'none' }] });
    expect(replaced.rules).toEqual([{ target_type: 'team', target_id: teamR.body.id, mode: 'none' }]);
    expect((await auditOf(t, 'assignment.updated')).at(-1)!.data).toMatchObject({ changes: ['rules'] });
    // A rule goes with its team.
    expect((await svc.api.delete(`/v1/teams/${teamR.body.id}`, t.as)).status).toBe(204);
    expect((await svc.api.get('/v1/assignment', t.as)).body.rules).toEqual([]);
    expect((await setMode(t, { auto_away_minutes: 0, rules: [] })).auto_away_minutes).toBe(0);
  });

  it('refuses bad input with 422 at its location and changes nothing', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const foreignTeam = await svc.api.post('/v1/teams', { name: 'Theirs', private: false, member_ids: [] }, other.as);
    const ownTeam = await svc.api.post('/v1/teams', { name: 'Ours', private: false, member_ids: [] }, t.as);
    await setMode(t, { mode: 'round_robin', auto_away_minutes: 20 });
    const before = (await svc.api.get('/v1/assignment', t.as)).body;
    const audits = (await auditOf(t, 'assignment.updated')).length;
    const cases: Array<[unknown, string]> = [
      [{ auto_away_minutes: 5 }, 'body.auto_away_minutes'],
      [{ auto_away_minutes: 9 }, 'body.auto_away_minutes'],
      [{ auto_away_minutes: 1441 }, 'body.auto_away_minutes'],
      [{ auto_away_minutes: -1 }, 'body.auto_away_minutes'],
      [{ auto_away_minutes: 12.5 }, 'body.auto_away_minutes'],
      [{ mode: 'random' }, 'body.mode'],
      [{ mode: 'none', colour: 'red' }, 'body.colour'],
      [
        { rules: [{ target_type: 'team', target_id: foreignTeam.body.id, mode: 'round_robin' }] },
        'body.rules.0.target_id',
      ],
      [
        {
          rules: [
            { target_type: 'team', target_id: ownTeam.body.id, mode: 'none' },
            { target_type: 'mailbox', target_id: '0193c6a0-0000-7000-8000-00000000dead', mode: 'none' },
          ],
        },
        'body.rules.1.target_id',
      ],
      [
        {
          rules: [
            { target_type: 'team', target_id: ownTeam.body.id, mode: 'none' },
            { target_type: 'team', target_id: ownTeam.body.id, mode: 'round_robin' },
          ],
        },
        'body.rules.1.target_id',
      ],
      [{ rules: [{ target_type: 'contact', target_id: ownTeam.body.id, mode: 'none' }] }, 'body.rules.0.target_type'],
      [{ rules: [{ target_type: 'team', target_id: 'nope', mode: 'none' }] }, 'body.rules.0.target_id'],
      [{ rules: [{ target_type: 'team', target_id: ownTeam.body.id, mode: 'fastest' }] }, 'body.rules.0.mode'],
    ];
    for (const [body, location] of cases) {
      const r = await svc.api.patch('/v1/assignment', body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(
        r.body.errors.map((e: any) => e.location),
        JSON.stringify(body),
      ).toContain(location);
    }
    // A valid change together with a bad one: nothing applies.
    const mixed = await svc.api.patch('/v1/assignment', { mode: 'load_balanced', auto_away_minutes: 5 }, t.as);
    expect(mixed.status).toBe(422);
    expect((await svc.api.get('/v1/assignment', t.as)).body).toEqual(before);
    expect((await svc.api.get('/v1/workspace', t.as)).body.settings.auto_assign).toBe('round_robin');
    expect(await auditOf(t, 'assignment.updated')).toHaveLength(audits);
  });
});

describe('PATCH /v1/members/{user_id}/availability', () => {
  it('lets a member set their own availability (member.updated) but not another member’s', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent', 'Ann Agent');
    const viewer = await addMember(svc, t, 'viewer', 'Vic Viewer');
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.patch('/v1/members/me/availability', { availability: 'away' }, agent.as);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      user: { id: agent.userId, name: 'Ann Agent' },
      role: 'agent',
      availability: 'away',
      presence: 'away',
      max_open_tickets: null,
      open_tickets: 0,
    });
    expect(r.body.last_seen_at).toMatch(/Z$/); // setting one's own availability is a sign of life
    expect(await memberOf(svc, t, agent.userId)).toEqual(r.body);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['member.updated']);
    expect(events[0].topics).toContain(`user:${agent.userId}`);
    expect(events[0].data.member).toEqual(r.body);

    // A viewer sets their own too (by id).
    const v = await svc.api.patch(`/v1/members/${viewer.userId}/availability`, { availability: 'offline' }, viewer.as);
    expect(v.status).toBe(200);
    expect(v.body.presence).toBe('offline');

    // Not someone else's, and not one's own cap.
    const other = await svc.api.patch(
      `/v1/members/${viewer.userId}/availability`,
      { availability: 'online' },
      agent.as,
    );
    expect(other.status).toBe(403);
    const cap = await svc.api.patch('/v1/members/me/availability', { max_open_tickets: 3 }, agent.as);
    expect(cap.status).toBe(403);
    expect((await memberOf(svc, t, viewer.userId)).availability).toBe('offline');
    expect((await memberOf(svc, t, agent.userId)).max_open_tickets).toBeNull();
  });

  it('lets admins and settings:write keys set availability and caps (member.assignment_cap_changed)', async () => {
    const t = await newTenant(svc.api);
    const admin = await addMember(svc, t, 'admin');
    const agent = await addMember(svc, t, 'agent');
    const write = await newApiKey(svc.api, t, ['settings:write']);
    const read = await newApiKey(svc.api, t, ['settings:read']);
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.patch(
      `/v1/members/${agent.userId}/availability`,
      { availability: 'offline', max_open_tickets: 5 },
      admin.as,
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ availability: 'offline', presence: 'offline', max_open_tickets: 5 });
    expect(r.body.last_seen_at).toBeNull(); // an admin's change is not the agent's sign of life
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['member.updated']);
    let audit = await auditOf(t, 'member.assignment_cap_changed');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ entity_type: 'member', entity_id: agent.userId, actor_user_id: admin.userId });
    expect(audit[0]!.data).toEqual({ from: null, to: 5 });

    const byKey = await svc.api.patch(
      `/v1/members/${agent.userId}/availability`,
      { max_open_tickets: null },
      {
        token: write.key,
      },
    );
    expect(byKey.status).toBe(200);
    expect(byKey.body.max_open_tickets).toBeNull();
    audit = await auditOf(t, 'member.assignment_cap_changed');
    expect(audit.map((a) => a.data)).toEqual([
      { from: null, to: 5 },
      { from: 5, to: null },
    ]);
    expect(audit[1]!.actor_api_key_id).toBe(write.id);
    // Availability alone is not audited; the same values again emit nothing.
    const seq2 = await latestSeqOf(svc, t);
    expect(
      (await svc.api.patch(`/v1/members/${agent.userId}/availability`, { availability: 'offline' }, t.as)).status,
    ).toBe(200);
    expect(await eventsAfterOf(svc, t, seq2)).toEqual([]);
    const denied = await svc.api.patch(
      `/v1/members/${agent.userId}/availability`,
      { availability: 'online' },
      {
        token: read.key,
      },
    );
    expect(denied.status).toBe(403);
    // `me` names a person; a key is not one.
    expect(
      (await svc.api.patch('/v1/members/me/availability', { availability: 'online' }, { token: write.key })).status,
    ).toBe(404);
  });

  it('refuses bad input (cap 0 or 1001, a viewer’s cap, unknown values) with 422 and changes nothing', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const viewer = await addMember(svc, t, 'viewer');
    const cases: Array<[string, unknown, string]> = [
      [agent.userId, { max_open_tickets: 0 }, 'body.max_open_tickets'],
      [agent.userId, { max_open_tickets: 1001 }, 'body.max_open_tickets'],
      [agent.userId, { max_open_tickets: 2.5 }, 'body.max_open_tickets'],
      [agent.userId, { availability: 'busy' }, 'body.availability'],
      [agent.userId, { availability: 'away', role: 'admin' }, 'body.role'],
      [viewer.userId, { max_open_tickets: 10 }, 'body.max_open_tickets'],
      [viewer.userId, { availability: 'away', max_open_tickets: 10 }, 'body.max_open_tickets'],
    ];
    const seq = await latestSeqOf(svc, t);
    for (const [id, body, location] of cases) {
      const r = await svc.api.patch(`/v1/members/${id}/availability`, body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors.map((e: any) => e.location)).toContain(location);
    }
    const empty = await svc.api.patch(`/v1/members/${agent.userId}/availability`, {}, t.as);
    expect(empty.status).toBe(422);
    expect(await eventsAfterOf(svc, t, seq)).toEqual([]);
    expect(await auditOf(t, 'member.assignment_cap_changed')).toEqual([]);
    for (const id of [agent.userId, viewer.userId]) {
      expect(await memberOf(svc, t, id)).toMatchObject({ availability: 'online', max_open_tickets: null });
    }
    // A viewer's cap can still be cleared (null), and unknown members are 404.
    expect(
      (await svc.api.patch(`/v1/members/${viewer.userId}/availability`, { max_open_tickets: null }, t.as)).status,
    ).toBe(200);
    const missing = await svc.api.patch(
      '/v1/members/0193c6a0-0000-7000-8000-00000000dead/availability',
      { availability: 'away' },
      t.as,
    );
    expect(missing.status).toBe(404);
  });
});

describe('POST /v1/me/heartbeat and auto-away', () => {
  it('shows a member away when auto-away applies, and online again after a heartbeat', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const viewer = await addMember(svc, t, 'viewer');
    // Off: presence is what the member set.
    expect(await memberOf(svc, t, agent.userId)).toMatchObject({
      availability: 'online',
      presence: 'online',
      last_seen_at: null,
    });

    await setMode(t, { auto_away_minutes: 10 });
    // Never seen: away, while availability stays what they set.
    expect(await memberOf(svc, t, agent.userId)).toMatchObject({ availability: 'online', presence: 'away' });

    const seq = await latestSeqOf(svc, t);
    const hb = await svc.api.post('/v1/me/heartbeat', undefined, agent.as);
    expect(hb.status).toBe(204);
    expect(hb.text).toBe('');
    const seen = await memberOf(svc, t, agent.userId);
    expect(seen).toMatchObject({ availability: 'online', presence: 'online' });
    expect(Date.now() - Date.parse(seen.last_seen_at)).toBeLessThan(60_000);
    // Back from auto-away: the others learn it.
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['member.updated']);
    expect(events[0].data.member).toMatchObject({ user: { id: agent.userId }, presence: 'online' });

    // A heartbeat within 30 seconds writes nothing and emits nothing.
    const seq2 = await latestSeqOf(svc, t);
    expect((await svc.api.post('/v1/me/heartbeat', undefined, agent.as)).status).toBe(204);
    expect((await memberOf(svc, t, agent.userId)).last_seen_at).toBe(seen.last_seen_at);
    expect(await eventsAfterOf(svc, t, seq2)).toEqual([]);

    // Eleven minutes without a heartbeat: away.
    await db()
      .updateTable('members')
      .set({ last_seen_at: new Date(Date.now() - 11 * 60_000) })
      .where('workspace_id', '=', t.workspaceId)
      .where('user_id', '=', agent.userId)
      .execute();
    expect((await memberOf(svc, t, agent.userId)).presence).toBe('away');
    // A member who set away or offline stays that, seen or not.
    await svc.api.patch('/v1/members/me/availability', { availability: 'offline' }, viewer.as);
    expect((await svc.api.post('/v1/me/heartbeat', undefined, viewer.as)).status).toBe(204);
    expect((await memberOf(svc, t, viewer.userId)).presence).toBe('offline');
    // Auto-away off: what they set.
    await setMode(t, { auto_away_minutes: 0 });
    expect((await memberOf(svc, t, agent.userId)).presence).toBe('online');

    // People only.
    const key = await newApiKey(svc.api, t, ['settings:write']);
    expect((await svc.api.post('/v1/me/heartbeat', undefined, { token: key.key })).status).toBe(403);
  });
});

describe('auto-assignment of new tickets', () => {
  it('round robin: online agents in turn; the assignment is the usual activity and ticket.updated', async () => {
    const { t, agents } = await team(3);
    const viewer = await addMember(svc, t, 'viewer');
    await setMode(t, { mode: 'round_robin' });
    const seq = await latestSeqOf(svc, t);
    const picked: string[] = [];
    for (let i = 0; i < 7; i++) picked.push(assigneeOf(await newTicket(t))!);
    const ids = agents.map((a) => a.userId);
    expect(picked).toEqual([ids[0], ids[1], ids[2], ids[0], ids[1], ids[2], ids[0]]);
    expect(picked).not.toContain(viewer.userId);
    expect(picked).not.toContain(t.owner.userId);

    const events = await eventsAfterOf(svc, t, seq);
    const firstUpdate = events.find((e) => e.type === 'ticket.updated');
    expect(firstUpdate.data.changes).toEqual(['assignee_id']);
    expect(firstUpdate.topics).toContain(`user:${ids[0]}`);
    const ticketId = firstUpdate.data.ticket.id;
    const acts = await svc.api.get(`/v1/tickets/${ticketId}/activities`, t.as);
    const assigned = acts.body.data.find((a: any) => a.type === 'assigned');
    expect(assigned).toMatchObject({ data: { from: null, to: ids[0] }, actor: { type: 'system', user: null } });
    expect((await memberOf(svc, t, ids[0]!)).open_tickets).toBe(3);
  });

  it('keeps the turn across a restart of the service on the same database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-assign-restart-'));
    const env = { DATA_DIR: dir, DATABASE_IN_MEMORY: 'false' };
    let first: Service | null = await startService(env, { jobs: false });
    let second: Service | null = null;
    try {
      const { t, agents } = await team(3, first);
      await setMode(t, { mode: 'round_robin' }, first);
      const ids = agents.map((a) => a.userId);
      expect(assigneeOf(await newTicket(t, {}, first))).toBe(ids[0]);
      expect(assigneeOf(await newTicket(t, {}, first))).toBe(ids[1]);
      await first.stop();
      first = null;
      second = await startService(env, { jobs: false });
      expect(assigneeOf(await newTicket(t, {}, second))).toBe(ids[2]);
      expect(assigneeOf(await newTicket(t, {}, second))).toBe(ids[0]);
    } finally {
      await first?.stop();
      await second?.stop();
    }
  });

  it('spreads concurrent creates evenly', async () => {
    const { t, agents } = await team(5);
    await setMode(t, { mode: 'round_robin' });
    const created = await Promise.all(Array.from({ length: 10 }, () => newTicket(t)));
    const counts = new Map<string, number>();
    for (const c of created) counts.set(assigneeOf(c)!, (counts.get(assigneeOf(c)!) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(agents.map((a) => a.userId));
    expect([...counts.values()]).toEqual([2, 2, 2, 2, 2]);
  });

  it('load balanced: the fewest open tickets first, ties in turn', async () => {
    const { t, agents } = await team(3);
    const [a, b, c] = agents.map((x) => x.userId);
    // a: 3 open, b: 0, c: 1 (a solved one does not count).
    for (let i = 0; i < 3; i++) await newTicket(t, { assignee_id: a });
    await newTicket(t, { assignee_id: c });
    await newTicket(t, { assignee_id: b, status: 'solved' });
    await setMode(t, { mode: 'load_balanced' });
    expect(assigneeOf(await newTicket(t))).toBe(b); // b: 0
    // b and c tie at 1, then at 2: each round gives one to each of them, never to a (3).
    for (let round = 0; round < 2; round++) {
      const next = [assigneeOf(await newTicket(t)), assigneeOf(await newTicket(t))];
      expect(next.sort()).toEqual([b, c].sort());
    }
    const counts = await Promise.all([a, b, c].map(async (id) => (await memberOf(svc, t, id!)).open_tickets));
    expect(counts).toEqual([3, 3, 3]);
    expect(assigneeOf(await newTicket(t))).toBeTruthy();
  });

  it('skips agents at their cap, offline or away ones, and those auto-away applies to', async () => {
    const { t, agents } = await team(4);
    const [a, b, c, d] = agents;
    await setMode(t, { mode: 'round_robin' });
    await svc.api.patch(`/v1/members/${a!.userId}/availability`, { max_open_tickets: 1 }, t.as);
    await svc.api.patch('/v1/members/me/availability', { availability: 'offline' }, c!.as);
    await svc.api.patch('/v1/members/me/availability', { availability: 'away' }, d!.as);
    const picked: string[] = [];
    for (let i = 0; i < 4; i++) picked.push(assigneeOf(await newTicket(t))!);
    // a takes one (its cap), then b takes the rest.
    expect(picked).toEqual([a!.userId, b!.userId, b!.userId, b!.userId]);

    // Auto-away on: b has never sent a heartbeat, d (away) and c (offline) stay out; a is full.
    await setMode(t, { auto_away_minutes: 10 });
    expect(assigneeOf(await newTicket(t))).toBeNull();
    expect((await svc.api.post('/v1/me/heartbeat', undefined, b!.as)).status).toBe(204);
    expect(assigneeOf(await newTicket(t))).toBe(b!.userId);

    // Everyone full: unassigned.
    expect((await memberOf(svc, t, b!.userId)).open_tickets).toBe(4);
    await svc.api.patch(`/v1/members/${b!.userId}/availability`, { max_open_tickets: 4 }, t.as);
    expect(assigneeOf(await newTicket(t))).toBeNull();
  });

  it('leaves tickets alone when the mode is none, the ticket has an assignee, or it is not open', async () => {
    const { t, agents } = await team(2);
    expect(assigneeOf(await newTicket(t))).toBeNull();
    await setMode(t, { mode: 'round_robin' });
    expect(assigneeOf(await newTicket(t, { assignee_id: agents[1]!.userId }))).toBe(agents[1]!.userId);
    expect(assigneeOf(await newTicket(t, { status: 'solved' }))).toBeNull();
    // The explicit assignment did not take a turn.
    expect(assigneeOf(await newTicket(t))).toBe(agents[0]!.userId);
  });

  it('team rules pick among the team’s members; mailbox rules can turn assignment off', async () => {
    const { t, agents } = await team(4);
    const [a, b, c] = agents.map((x) => x.userId);
    const billing = await svc.api.post('/v1/teams', { name: 'Billing', private: false, member_ids: [b, c] }, t.as);
    const vip = await svc.api.post('/v1/teams', { name: 'VIP', private: true, member_ids: [a] }, t.as);
    const mbox = await svc.api.post('/v1/mailboxes', { name: 'Sales', email: `${unique('sales')}@acme.test` }, t.as);
    await setMode(t, {
      mode: 'none',
      rules: [
        { target_type: 'mailbox', target_id: mbox.body.id, mode: 'none' },
        { target_type: 'team', target_id: billing.body.id, mode: 'round_robin' },
        { target_type: 'team', target_id: vip.body.id, mode: 'load_balanced' },
      ],
    });
    // No rule matches: the workspace mode (none).
    expect(assigneeOf(await newTicket(t))).toBeNull();
    const picked: string[] = [];
    for (let i = 0; i < 4; i++) picked.push(assigneeOf(await newTicket(t, { team_id: billing.body.id }))!);
    expect(picked).toEqual([b, c, b, c]);
    // The private team's ticket goes to its member.
    expect(assigneeOf(await newTicket(t, { team_id: vip.body.id }))).toBe(a);
    // The mailbox rule comes first and says none, even for a Billing ticket.
    expect(assigneeOf(await newTicket(t, { mailbox_id: mbox.body.id, team_id: billing.body.id }))).toBeNull();

    // Workspace mode on: tickets outside the rules go to anyone online.
    await setMode(t, { mode: 'round_robin' });
    expect(assigneeOf(await newTicket(t))).toBeTruthy();
    // A team whose members are all offline: unassigned (nobody outside the team).
    for (const id of [b, c]) await svc.api.patch(`/v1/members/${id}/availability`, { availability: 'offline' }, t.as);
    expect(assigneeOf(await newTicket(t, { team_id: billing.body.id }))).toBeNull();
  });
});
