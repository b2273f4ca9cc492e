// /v1/saved-replies and /v1/saved-replies/{id}: the SavedReply shape, sanitized bodies,
// shortcuts unique per workspace ignoring case, q and newest-first pages, who may read and
// write (agents' tools: keys with tickets scopes), events, tenant isolation.
import { randomUUID } from 'node:crypto';
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
} from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('creating and reading saved replies', () => {
  it('creates a saved reply (201, Location) with saved_reply.created; any member reads it', async () => {
    const t = await newTenant(svc.api);
    const viewer = await addMember(svc, t, 'viewer');
    const seq = await latestSeqOf(svc, t);
    const r = await svc.api.post(
      '/v1/saved-replies',
      { title: '  Refund policy  ', shortcut: 'Refund', body_html: '<p>Hello, <b>refunds</b> take 5 days.</p>' },
      t.as,
    );
    expect(r.status).toBe(201);
    expect(r.headers.get('location')).toBe(`/v1/saved-replies/${r.body.id}`);
    expect(r.body).toEqual({
      id: expect.stringMatching(ID),
      title: 'Refund policy',
      shortcut: 'Refund',
      body_html: '<p>Hello, <b>refunds</b> take 5 days.</p>',
      created_at: expect.stringMatching(/Z$/),
      updated_at: r.body.created_at,
    });
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['saved_reply.created']);
    expect(events[0].data).toEqual({ saved_reply: r.body });

    const one = await svc.api.get(`/v1/saved-replies/${r.body.id}`, viewer.as);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(r.body);
    expect((await svc.api.get(`/v1/saved-replies/${r.body.id.toUpperCase()}`, viewer.as)).body).toEqual(r.body);
    expect((await svc.api.get('/v1/saved-replies', viewer.as)).body).toEqual({ data: [r.body], next_cursor: null });

    // The shortcut is optional.
    const bare = await svc.api.post('/v1/saved-replies', { title: 'Bare', body_html: 'Thanks!' }, t.as);
    expect(bare.status).toBe(201);
    expect(bare.body.shortcut).toBeNull();
  });

  it('sanitizes the body before storing it; a body empty once sanitized is a 422', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.post(
      '/v1/saved-replies',
      {
        title: 'Hostile',
        body_html: '<p onclick="steal()">Hi<script>alert(1)</script> <a href="javascript:alert(1)">there</a></p>',
      },
      t.as,
    );
    expect(r.status).toBe(201);
    expect(r.body.body_html).not.toMatch(/script|onclick|javascript:/i);
    expect(r.body.body_html).toContain('Hi');
    const row = await svc.rt.deps.database.db
      .selectFrom('saved_replies')
      .select('body_html')
      .where('id', '=', r.body.id)
      .executeTakeFirstOrThrow();
    expect(row.body_html).toBe(r.body.body_html);

    for (const html of ['<script>alert(1)</script>', '<p>   </p>', '<iframe src="x"></iframe>']) {
      const bad = await svc.api.post('/v1/saved-replies', { title: 'Empty', body_html: html }, t.as);
      expect(bad.status, html).toBe(422);
      expect(isErrorBody(bad.body, 422, 'validation_failed')).toBe(true);
      expect(bad.body.errors[0].location).toBe('body.body_html');
    }
    const patch = await svc.api.patch(`/v1/saved-replies/${r.body.id}`, { body_html: '<script>x</script>' }, t.as);
    expect(patch.status).toBe(422);
    expect(patch.body.errors[0].location).toBe('body.body_html');
    // An image alone is content.
    const img = await svc.api.post(
      '/v1/saved-replies',
      { title: 'Logo', body_html: '<img src="https://example.com/logo.png" alt="">' },
      t.as,
    );
    expect(img.status).toBe(201);
  });

  it('keeps shortcuts unique per workspace ignoring case (409 conflict)', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    expect(
      (await svc.api.post('/v1/saved-replies', { title: 'A', shortcut: 'thanks', body_html: 'x' }, t.as)).status,
    ).toBe(201);
    const dup = await svc.api.post('/v1/saved-replies', { title: 'B', shortcut: 'THANKS', body_html: 'y' }, t.as);
    expect(dup.status).toBe(409);
    expect(isErrorBody(dup.body, 409, 'conflict')).toBe(true);
    // Another workspace may use it; several replies may have none.
    expect(
      (await svc.api.post('/v1/saved-replies', { title: 'A', shortcut: 'Thanks', body_html: 'x' }, other.as)).status,
    ).toBe(201);
    const b = await svc.api.post('/v1/saved-replies', { title: 'B', body_html: 'y' }, t.as);
    expect((await svc.api.post('/v1/saved-replies', { title: 'C', shortcut: null, body_html: 'z' }, t.as)).status).toBe(
      201,
    );
    const taken = await svc.api.patch(`/v1/saved-replies/${b.body.id}`, { shortcut: 'tHaNkS' }, t.as);
    expect(taken.status).toBe(409);
    expect((await svc.api.get(`/v1/saved-replies/${b.body.id}`, t.as)).body.shortcut).toBeNull();
  });

  it('validates the body: every rule with its location', async () => {
    const t = await newTenant(svc.api);
    for (const [body, location] of [
      [{ body_html: 'x' }, 'body.title'],
      [{ title: '', body_html: 'x' }, 'body.title'],
      [{ title: '   ', body_html: 'x' }, 'body.title'],
      [{ title: 'x'.repeat(201), body_html: 'x' }, 'body.title'],
      [{ title: 'A' }, 'body.body_html'],
      [{ title: 'A', body_html: '' }, 'body.body_html'],
      [{ title: 'A', body_html: 'x'.repeat(100_001) }, 'body.body_html'],
      [{ title: 'A', body_html: 'x', shortcut: '' }, 'body.shortcut'],
      [{ title: 'A', body_html: 'x', shortcut: '/refund' }, 'body.shortcut'],
      [{ title: 'A', body_html: 'x', shortcut: 'two words' }, 'body.shortcut'],
      [{ title: 'A', body_html: 'x', shortcut: 'é' }, 'body.shortcut'],
      [{ title: 'A', body_html: 'x', shortcut: 'a'.repeat(51) }, 'body.shortcut'],
      [{ title: 'A', body_html: 'x', shortcut: 5 }, 'body.shortcut'],
      [{ title: 'A', body_html: 'x', tags: [] }, 'body.tags'],
    ] as Array<[object, string]>) {
      const r = await svc.api.post('/v1/saved-replies', body, t.as);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.errors[0].location).toBe(location);
    }
    const ok = await svc.api.post(
      '/v1/saved-replies',
      { title: 'x'.repeat(200), shortcut: `A-b_9${'z'.repeat(45)}`, body_html: 'x' },
      t.as,
    );
    expect(ok.status).toBe(201);
    expect((await svc.api.get('/v1/saved-replies', t.as)).body.data).toHaveLength(1);
  });
});

describe('changing and deleting saved replies', () => {
  it('patches title, shortcut (null removes it) and body with saved_reply.updated; a no-op emits nothing', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.post('/v1/saved-replies', { title: 'Hi', shortcut: 'hi', body_html: '<p>Hi</p>' }, t.as);
    const seq = await latestSeqOf(svc, t);
    const p = await svc.api.patch(
      `/v1/saved-replies/${r.body.id}`,
      { title: ' Hello ', shortcut: null, body_html: '<p>Hello <em>there</em></p>' },
      t.as,
    );
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({
      id: r.body.id,
      title: 'Hello',
      shortcut: null,
      body_html: '<p>Hello <em>there</em></p>',
    });
    expect(p.body.created_at).toBe(r.body.created_at);
    expect(Date.parse(p.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(r.body.updated_at));
    const same = await svc.api.patch(`/v1/saved-replies/${r.body.id}`, { title: 'Hello' }, t.as);
    expect(same.body).toEqual(p.body);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['saved_reply.updated']);
    expect(events[0].data).toEqual({ saved_reply: p.body });
    const blank = await svc.api.patch(`/v1/saved-replies/${r.body.id}`, { title: ' ' }, t.as);
    expect(blank.status).toBe(422);
    expect(blank.body.errors[0].location).toBe('body.title');
  });

  it('deletes with saved_reply.deleted; the id is then 404', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.post('/v1/saved-replies', { title: 'Bye', body_html: 'Bye' }, t.as);
    const seq = await latestSeqOf(svc, t);
    const d = await svc.api.delete(`/v1/saved-replies/${r.body.id}`, t.as);
    expect(d.status).toBe(204);
    const events = await eventsAfterOf(svc, t, seq);
    expect(events.map((e) => e.type)).toEqual(['saved_reply.deleted']);
    expect(events[0].data).toEqual({ saved_reply_id: r.body.id });
    for (const res of [
      await svc.api.get(`/v1/saved-replies/${r.body.id}`, t.as),
      await svc.api.patch(`/v1/saved-replies/${r.body.id}`, { title: 'X' }, t.as),
      await svc.api.delete(`/v1/saved-replies/${r.body.id}`, t.as),
      await svc.api.get('/v1/saved-replies/not-an-id', t.as),
    ]) {
      expect(res.status).toBe(404);
      expect(isErrorBody(res.body, 404, 'not_found')).toBe(true);
    }
  });
});

describe('listing saved replies', () => {
  it('pages newest first and finds by part of the title or shortcut (any case)', async () => {
    const t = await newTenant(svc.api);
    const ids: string[] = [];
    for (const [title, shortcut] of [
      ['Refund policy', 'refund'],
      ['Shipping times', 'ship'],
      ['Password reset', null],
      ['Refund denied', 'no-REFUND'],
      ['100% sure', 'sure_'],
    ] as Array<[string, string | null]>) {
      ids.push((await svc.api.post('/v1/saved-replies', { title, shortcut, body_html: title }, t.as)).body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const r = await svc.api.get(`/v1/saved-replies${q}`, t.as);
      expect(r.status).toBe(200);
      seen.push(...r.body.data.map((x: any) => x.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());

    const titles = async (q: string) =>
      (await svc.api.get(`/v1/saved-replies?q=${encodeURIComponent(q)}`, t.as)).body.data.map((x: any) => x.title);
    expect(await titles('REFUND')).toEqual(['Refund denied', 'Refund policy']);
    expect(await titles('ship')).toEqual(['Shipping times']);
    expect(await titles('no-ref')).toEqual(['Refund denied']);
    expect(await titles('%')).toEqual(['100% sure']);
    expect(await titles('_')).toEqual(['100% sure']);
    expect(await titles('nothing')).toEqual([]);

    // A cursor belongs to its list (its q).
    const first = await svc.api.get('/v1/saved-replies?limit=1', t.as);
    const moved = await svc.api.get(
      `/v1/saved-replies?limit=1&q=refund&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      t.as,
    );
    expect(moved.status).toBe(422);
    expect(moved.body.errors[0].location).toBe('query.cursor');
  });
});

describe('who may use saved replies', () => {
  it('lets every member read, agents and above write; keys read with tickets:read, write with tickets:write', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent');
    const viewer = await addMember(svc, t, 'viewer');
    const byAgent = await svc.api.post('/v1/saved-replies', { title: 'Agent', body_html: 'x' }, agent.as);
    expect(byAgent.status).toBe(201);
    expect((await svc.api.patch(`/v1/saved-replies/${byAgent.body.id}`, { title: 'A2' }, agent.as)).status).toBe(200);

    expect((await svc.api.get('/v1/saved-replies', viewer.as)).status).toBe(200);
    for (const res of [
      await svc.api.post('/v1/saved-replies', { title: 'V', body_html: 'x' }, viewer.as),
      await svc.api.patch(`/v1/saved-replies/${byAgent.body.id}`, { title: 'V' }, viewer.as),
      await svc.api.delete(`/v1/saved-replies/${byAgent.body.id}`, viewer.as),
    ]) {
      expect(res.status).toBe(403);
      expect(isErrorBody(res.body, 403, 'forbidden')).toBe(true);
    }

    const reader = await newApiKey(svc.api, t, ['tickets:read']);
    expect((await svc.api.get('/v1/saved-replies', { token: reader.key })).status).toBe(200);
    expect((await svc.api.get(`/v1/saved-replies/${byAgent.body.id}`, { token: reader.key })).status).toBe(200);
    expect(
      (await svc.api.post('/v1/saved-replies', { title: 'K', body_html: 'x' }, { token: reader.key })).status,
    ).toBe(403);
    const writer = await newApiKey(svc.api, t, ['tickets:write']);
    expect((await svc.api.get('/v1/saved-replies', { token: writer.key })).status).toBe(200);
    const byKey = await svc.api.post('/v1/saved-replies', { title: 'K', body_html: 'x' }, { token: writer.key });
    expect(byKey.status).toBe(201);
    expect((await svc.api.delete(`/v1/saved-replies/${byKey.body.id}`, { token: writer.key })).status).toBe(204);
    for (const scopes of [['settings:write'], ['contacts:write']]) {
      const other = await newApiKey(svc.api, t, scopes);
      expect((await svc.api.get('/v1/saved-replies', { token: other.key })).status).toBe(403);
    }
    // Deleting by an agent.
    expect((await svc.api.delete(`/v1/saved-replies/${byAgent.body.id}`, agent.as)).status).toBe(204);
  });

  it("answers another workspace's saved reply exactly like a missing one", async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const r = await svc.api.post('/v1/saved-replies', { title: 'Secret', shortcut: 'sec', body_html: 'x' }, a.as);
    const missing = randomUUID();
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { title: 'Mine' }],
      ['DELETE', undefined],
    ] as Array<[string, unknown]>) {
      const foreign = await svc.api.req(method, `/v1/saved-replies/${r.body.id}`, { ...b.as, body });
      const none = await svc.api.req(method, `/v1/saved-replies/${missing}`, { ...b.as, body });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual(none.body);
    }
    expect((await svc.api.get('/v1/saved-replies?q=Secret', b.as)).body.data).toEqual([]);
    expect((await svc.api.get(`/v1/saved-replies/${r.body.id}`, a.as)).body).toEqual(r.body);
  });
});
