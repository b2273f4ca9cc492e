import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notify } from '../../../src/modules/notifications/service.js';
import { makeTicket } from '../../support/builders.js';
import { spoolCustomerMail } from '../../support/customer-mail.js';
import {
  addMember,
  isErrorBody,
  latestSeqOf,
  type Member,
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

async function listOf(as: ReqOpts, q = '') {
  const r = await svc.api.get(`/v1/notifications${q}`, as);
  expect(r.status, r.text).toBe(200);
  return r.body as { data: any[]; next_cursor: string | null; unread_count: number };
}

/** Events after `since` as this person replays them. */
async function eventsAs(as: ReqOpts, since: number): Promise<any[]> {
  const r = await svc.api.get(`/v1/events?since=${since}&limit=1000`, as);
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

const newTicket = (as: ReqOpts, extra: Record<string, unknown> = {}) =>
  makeTicket(svc.api, as, { subject: unique('Printer on fire'), ...extra });

const ref = (p: Member | Tenant['owner'], name: string) => ({
  id: p.userId,
  name,
  email: p.email,
  avatar_url: null,
});

describe('assigned', () => {
  it('notifies the new assignee (with notification.created on their topic only), never oneself', async () => {
    const t = await newTenant(svc.api);
    const ann = await addMember(svc, t, 'agent', 'Ann Agent');
    const bob = await addMember(svc, t, 'agent', 'Bob Agent');
    const ticket = await newTicket(t.as);
    const seq = await latestSeqOf(svc, t);
    expect((await svc.api.patch(`/v1/tickets/${ticket.id}`, { assignee_id: ann.userId }, t.as)).status).toBe(200);

    const list = await listOf(ann.as);
    expect(list.unread_count).toBe(1);
    expect(list.next_cursor).toBeNull();
    expect(list.data).toEqual([
      {
        id: expect.any(String),
        type: 'assigned',
        ticket: { id: ticket.id, number: ticket.number, subject: ticket.subject },
        data: { by: ref(t.owner, 'Olivia Owner'), actor_type: 'user', from: null },
        read_at: null,
        created_at: expect.stringMatching(/Z$/),
      },
    ]);
    // The event reaches Ann's replay with the same object; others get a stand-in.
    const mine = (await eventsAs(ann.as, seq)).filter((e) => e.type === 'notification.created');
    expect(mine).toHaveLength(1);
    expect(mine[0].topics).toContain(`user:${ann.userId}`);
    expect(mine[0].data.notification).toEqual(list.data[0]);
    const theirs = await eventsAs(bob.as, seq);
    expect(theirs.find((e) => e.seq === mine[0].seq).type).toBe('event.hidden');
    expect((await listOf(bob.as)).data).toEqual([]);

    // Taking a ticket oneself: nobody is told. Handing it on: the new assignee is.
    expect((await svc.api.patch(`/v1/tickets/${ticket.id}`, { assignee_id: bob.userId }, bob.as)).status).toBe(200);
    expect((await listOf(bob.as)).data).toEqual([]);
    expect((await svc.api.patch(`/v1/tickets/${ticket.id}`, { assignee_id: ann.userId }, bob.as)).status).toBe(200);
    const again = await listOf(ann.as);
    expect(again.unread_count).toBe(2);
    expect(again.data[0].data).toEqual({ by: ref(bob, 'Bob Agent'), actor_type: 'user', from: bob.userId });
    // Unassigning tells nobody.
    await svc.api.patch(`/v1/tickets/${ticket.id}`, { assignee_id: null }, t.as);
    expect((await listOf(ann.as)).unread_count).toBe(2);

    // Created with an assignee, and by an API key.
    const key = await newApiKey(svc.api, t, ['tickets:write']);
    const created = await newTicket({ token: key.key }, { assignee_id: bob.userId });
    const b = await listOf(bob.as);
    expect(b.data).toHaveLength(1);
    expect(b.data[0]).toMatchObject({
      type: 'assigned',
      ticket: { id: created.id },
      data: { by: null, actor_type: 'api_key', from: null },
    });
  });

  it('notifies the agent auto-assignment picked', async () => {
    const t = await newTenant(svc.api);
    await svc.api.patch('/v1/members/me/availability', { availability: 'offline' }, t.as);
    const ann = await addMember(svc, t, 'agent', 'Ann Agent');
    expect((await svc.api.patch('/v1/assignment', { mode: 'round_robin' }, t.as)).status).toBe(200);
    const ticket = await newTicket(t.as);
    expect(ticket.assignee!.id).toBe(ann.userId);
    const list = await listOf(ann.as);
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({
      type: 'assigned',
      ticket: { id: ticket.id, number: ticket.number },
      data: { by: null, actor_type: 'system', from: null },
    });
  });
});

describe('mentioned', () => {
  it('notifies each member a note mentions (link, @name, @email) once, not the author', async () => {
    const t = await newTenant(svc.api);
    const ann = await addMember(svc, t, 'agent', 'Ann Author');
    const bob = await addMember(svc, t, 'agent', 'Bob Brown');
    const carol = await addMember(svc, t, 'viewer', 'Carol Chen');
    const dave = await addMember(svc, t, 'agent', 'Dave Doe');
    const eve = await addMember(svc, t, 'agent', 'Eve');
    const ticket = await newTicket(t.as);
    const html =
      `<p>Hi <a href="#mention-${bob.userId}">@Bob Brown</a>, can @carol chen look? ` +
      `Also @${dave.email}. Again @Bob Brown, and me: @Ann Author. Not @Evelyn, not eve@example.com.</p>`;
    const note = await svc.api.post(`/v1/tickets/${ticket.id}/messages`, { kind: 'note', body_html: html }, ann.as);
    expect(note.status, note.text).toBe(201);
    for (const p of [bob, carol, dave]) {
      const list = await listOf(p.as);
      expect(list.data, p.email).toHaveLength(1);
      expect(list.data[0]).toMatchObject({
        type: 'mentioned',
        ticket: { id: ticket.id, number: ticket.number, subject: ticket.subject },
        data: { message_id: note.body.id, by: ref(ann, 'Ann Author') },
      });
      expect(list.data[0].data.excerpt).toContain('can @carol chen look?');
    }
    expect((await listOf(ann.as)).data).toEqual([]);
    expect((await listOf(eve.as)).data).toEqual([]);
    expect((await listOf(t.as)).data).toEqual([]);

    // Replies do not mention (customers read them); only notes do.
    const reply = await svc.api.post(
      `/v1/tickets/${ticket.id}/messages`,
      { kind: 'reply', body_html: '<p>Thanks, @Eve will help.</p>' },
      ann.as,
    );
    expect(reply.status).toBe(201);
    expect((await listOf(eve.as)).data).toEqual([]);
  });

  it('tells only people who can see a private team’s ticket', async () => {
    const t = await newTenant(svc.api);
    const inside = await addMember(svc, t, 'agent', 'Ida Inside');
    const outside = await addMember(svc, t, 'agent', 'Otto Outside');
    const admin = await addMember(svc, t, 'admin', 'Ada Admin');
    const team = await svc.api.post('/v1/teams', { name: 'VIP', private: true, member_ids: [inside.userId] }, t.as);
    const ticket = await newTicket(t.as, { team_id: team.body.id });
    const note = await svc.api.post(
      `/v1/tickets/${ticket.id}/messages`,
      { kind: 'note', body_html: '<p>@Ida Inside @Otto Outside @Ada Admin</p>' },
      t.as,
    );
    expect(note.status).toBe(201);
    expect((await listOf(inside.as)).data).toHaveLength(1);
    expect((await listOf(admin.as)).data).toHaveLength(1);
    expect((await listOf(outside.as)).data).toEqual([]);
  });
});

describe('customer_replied', () => {
  it('notifies the assignee when the customer writes again', async () => {
    const t = await newTenant(svc.api);
    const ann = await addMember(svc, t, 'agent', 'Ann Agent');
    const mbox = await svc.api.post('/v1/mailboxes', { name: 'Support', email: `${unique('help')}@acme.test` }, t.as);
    expect(mbox.status).toBe(201);
    // Spooled and processed here, dated (test/support/customer-mail.ts).
    const deliver = (lines: string[], body: string) =>
      spoolCustomerMail(svc, t, mbox.body, ['Date: Tue, 9 Jan 2024 10:00:00 +0000', ...lines], body);
    const first = `<${unique('m')}@example.com>`;
    const created = await deliver([`Message-ID: ${first}`, 'Subject: My order'], 'Where is my order?');
    expect(created.result).toBe('created');
    const ticketId = created.ticketId!;
    // Unassigned: nobody to tell.
    await deliver(
      [`Message-ID: <${unique('m')}@example.com>`, `In-Reply-To: ${first}`, 'Subject: Re: My order'],
      'Hello?',
    );
    expect((await listOf(ann.as)).data).toEqual([]);

    await svc.api.patch(`/v1/tickets/${ticketId}`, { assignee_id: ann.userId }, t.as);
    const reply = await deliver(
      [`Message-ID: <${unique('m')}@example.com>`, `In-Reply-To: ${first}`, 'Subject: Re: My order'],
      'Any news   about it?',
    );
    expect(reply.ticketId).toBe(ticketId);
    const list = await listOf(ann.as);
    expect(list.data.map((n) => n.type)).toEqual(['customer_replied', 'assigned']);
    expect(list.data[0]).toMatchObject({
      ticket: { id: ticketId, subject: 'My order' },
      data: { message_id: reply.messageId, from_email: 'jane@example.com', excerpt: 'Any news about it?' },
    });
  });
});

describe('GET and PATCH /v1/notifications/settings', () => {
  it('a muted type is not notified, in that workspace only, until unmuted; others still are', async () => {
    const t = await newTenant(svc.api);
    const ann = await addMember(svc, t, 'agent', 'Ann Agent');
    const bob = await addMember(svc, t, 'agent', 'Bob Agent');
    expect((await svc.api.get('/v1/notifications/settings', ann.as)).body).toEqual({ muted: [] });
    const mute = await svc.api.patch('/v1/notifications/settings', { muted: ['assigned', 'mentioned'] }, ann.as);
    expect(mute.status, mute.text).toBe(200);
    expect(mute.body).toEqual({ muted: ['assigned', 'mentioned'] });
    expect((await svc.api.get('/v1/notifications/settings', ann.as)).body.muted).toEqual(['assigned', 'mentioned']);

    const since = await latestSeqOf(svc, t);
    const one = await newTicket(t.as);
    const two = await newTicket(t.as);
    expect((await svc.api.patch(`/v1/tickets/${one.id}`, { assignee_id: ann.userId }, t.as)).status).toBe(200);
    expect((await svc.api.patch(`/v1/tickets/${two.id}`, { assignee_id: bob.userId }, t.as)).status).toBe(200);
    expect((await listOf(ann.as)).data).toEqual([]);
    expect((await listOf(bob.as)).data.map((n) => n.type)).toEqual(['assigned']);
    // No notification.created reached Ann either.
    expect((await eventsAs(ann.as, since)).filter((e) => e.type === 'notification.created')).toEqual([]);

    // Her choice in another workspace is her own there.
    const other = await newTenant(svc.api, 'Other Co');
    const annThere = (await addMember(svc, other, 'agent', ann)).as;
    expect((await svc.api.get('/v1/notifications/settings', annThere)).body).toEqual({ muted: [] });
    const elsewhere = await makeTicket(svc.api, other.as, { subject: unique('Elsewhere') });
    expect((await svc.api.patch(`/v1/tickets/${elsewhere.id}`, { assignee_id: ann.userId }, other.as)).status).toBe(
      200,
    );
    expect((await listOf(annThere)).data.map((n) => n.type)).toEqual(['assigned']);

    const unmute = await svc.api.patch('/v1/notifications/settings', { muted: ['mentioned'] }, ann.as);
    expect(unmute.body).toEqual({ muted: ['mentioned'] });
    const three = await newTicket(t.as);
    expect((await svc.api.patch(`/v1/tickets/${three.id}`, { assignee_id: ann.userId }, t.as)).status).toBe(200);
    expect((await listOf(ann.as)).data.map((n) => n.ticket.id)).toEqual([three.id]);
  });

  it('refuses unknown types, repeats, other fields and API keys, and changes nothing then', async () => {
    const t = await newTenant(svc.api);
    const ann = await addMember(svc, t, 'agent', 'Ann Agent');
    expect((await svc.api.patch('/v1/notifications/settings', { muted: ['assigned'] }, ann.as)).status).toBe(200);
    for (const body of [
      { muted: ['assigned', 'nope'] },
      { muted: ['assigned', 'assigned'] },
      { muted: 'assigned' },
      { muted: [], other: true },
      {},
    ]) {
      const r = await svc.api.patch('/v1/notifications/settings', body, ann.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.code).toBe('validation_failed');
    }
    const key = await newApiKey(svc.api, t, ['tickets:read']);
    const byKey = { token: key.key, workspace: t.workspaceId };
    expect((await svc.api.get('/v1/notifications/settings', byKey)).status).toBe(403);
    expect((await svc.api.patch('/v1/notifications/settings', { muted: [] }, byKey)).status).toBe(403);
    expect((await svc.api.get('/v1/notifications/settings', ann.as)).body).toEqual({ muted: ['assigned'] });
  });
});

describe('GET /v1/notifications and POST /v1/notifications/read', () => {
  async function seed(t: Tenant, userId: string, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const v = await svc.rt.deps.writer.run(t.workspaceId, (u) =>
        notify(u, { userId, type: 'ai_balance_low', ticket: null, data: { remaining_usd: i } }),
      );
      ids.push(v!.id);
    }
    return ids.reverse(); // newest first
  }

  async function all(as: ReqOpts, q: string, limit: number): Promise<any[]> {
    const out: any[] = [];
    let cursor: string | null = null;
    for (let guard = 0; guard < 20; guard++) {
      const page = await listOf(as, `?limit=${limit}${q}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.data.length).toBeLessThanOrEqual(limit);
      out.push(...page.data);
      cursor = page.next_cursor;
      if (!cursor) return out;
    }
    throw new Error('too many pages');
  }

  it('lists newest first or unread first, in pages, with unread_count; marks read by ids or all', async () => {
    const t = await newTenant(svc.api);
    const ann = await addMember(svc, t, 'agent');
    const bob = await addMember(svc, t, 'agent');
    const ids = await seed(t, ann.userId, 5);
    const [bobsId] = await seed(t, bob.userId, 1);

    const newest = await all(ann.as, '', 2);
    expect(newest.map((n) => n.id)).toEqual(ids);
    expect(newest[0]).toEqual({
      id: ids[0],
      type: 'ai_balance_low',
      ticket: null,
      data: { remaining_usd: 4 },
      read_at: null,
      created_at: expect.stringMatching(/Z$/),
    });
    expect((await listOf(ann.as, '?limit=2')).unread_count).toBe(5);

    // Read the newest and the third; another person's id and an unknown one are ignored.
    const read = await svc.api.post(
      '/v1/notifications/read',
      { ids: [ids[0], ids[2], ids[2], bobsId, '0193c6a0-0000-7000-8000-00000000dead'] },
      ann.as,
    );
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ read: 2, unread_count: 3 });
    expect((await listOf(bob.as)).data[0].read_at).toBeNull();

    const byTime = await listOf(ann.as);
    expect(byTime.data.map((n) => n.id)).toEqual(ids);
    expect(byTime.data[0].read_at).toMatch(/Z$/);
    expect(byTime.unread_count).toBe(3);
    const unreadFirst = [ids[1], ids[3], ids[4], ids[0], ids[2]];
    for (const limit of [1, 2, 3, 50]) {
      expect(
        (await all(ann.as, '&sort=unread_first', limit)).map((n) => n.id),
        `limit ${limit}`,
      ).toEqual(unreadFirst);
    }
    expect((await all(ann.as, '&unread=true', 2)).map((n) => n.id)).toEqual([ids[1], ids[3], ids[4]]);

    // Reading again changes nothing; all marks the rest.
    expect((await svc.api.post('/v1/notifications/read', { ids: [ids[0]] }, ann.as)).body).toEqual({
      read: 0,
      unread_count: 3,
    });
    const everything = await svc.api.post('/v1/notifications/read', { all: true }, ann.as);
    expect(everything.body).toEqual({ read: 3, unread_count: 0 });
    expect((await listOf(ann.as, '?unread=true')).data).toEqual([]);
    expect((await listOf(bob.as)).unread_count).toBe(1);
  });

  it('refuses bad input and API keys; another workspace’s notifications are not there', async () => {
    const t = await newTenant(svc.api);
    const ann = await addMember(svc, t, 'agent');
    const [id] = await seed(t, ann.userId, 2);
    const bad: Array<[unknown, string]> = [
      [{}, 'body'],
      [{ ids: [id], all: true }, 'body'],
      [{ ids: [] }, 'body.ids'],
      [{ ids: ['nope'] }, 'body.ids.0'],
      [{ all: false }, 'body.all'],
      [{ all: true, mine: true }, 'body.mine'],
    ];
    for (const [body, location] of bad) {
      const r = await svc.api.post('/v1/notifications/read', body, ann.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors.map((e: any) => e.location)).toContain(location);
    }
    for (const q of ['?sort=oldest', '?limit=0', '?limit=101', '?cursor=abc.def', '?unread=maybe']) {
      const r = await svc.api.get(`/v1/notifications${q}`, ann.as);
      expect(r.status, q).toBe(422);
    }
    // A cursor of another list (another sort) is refused too.
    const page = await listOf(ann.as, '?limit=1');
    const other = await svc.api.get(`/v1/notifications?limit=1&sort=unread_first&cursor=${page.next_cursor}`, ann.as);
    expect(other.status).toBe(422);
    expect((await listOf(ann.as)).unread_count).toBe(2);

    const key = await newApiKey(svc.api, t, ['settings:read', 'settings:write', 'tickets:read', 'tickets:write']);
    expect((await svc.api.get('/v1/notifications', { token: key.key })).status).toBe(403);
    expect((await svc.api.post('/v1/notifications/read', { all: true }, { token: key.key })).status).toBe(403);

    // The same person in another workspace sees none of these, and cannot mark them read there.
    const other2 = await newTenant(svc.api);
    await addMember(svc, other2, 'agent', ann);
    const there = { token: ann.token, workspace: other2.workspaceId };
    expect(await listOf(there)).toEqual({ data: [], next_cursor: null, unread_count: 0 });
    expect((await svc.api.post('/v1/notifications/read', { ids: [id] }, there)).body).toEqual({
      read: 0,
      unread_count: 0,
    });
    expect((await svc.api.post('/v1/notifications/read', { all: true }, there)).body.read).toBe(0);
    expect((await listOf(ann.as)).unread_count).toBe(2);
  });
});
