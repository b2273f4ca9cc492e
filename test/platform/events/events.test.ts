// The outbox (docs/api.md "Events"): seq gapless per workspace under concurrent writers,
// replay by GET /v1/events filtered by what the caller may see, publish after commit,
// the sweeper, retention.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope } from '../../../src/platform/events/envelope.js';
import { EventPublisher } from '../../../src/platform/events/publisher.js';
import { pruneEvents } from '../../../src/platform/events/retention.js';
import {
  addMember,
  isErrorBody,
  newApiKey,
  newTenant,
  onPostgres,
  type Service,
  startService,
} from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => svc?.stop());

const patchName = (s: Service, as: object, i: number) => s.api.patch('/v1/workspace', { name: `Acme ${i}` }, as);

async function allEvents(s: Service, as: object, since = 0): Promise<any[]> {
  // since=0 means "no history": start from seq 0 by asking for since=... the first page.
  const out: any[] = [];
  let cursor = since;
  for (;;) {
    const r = await s.api.get(`/v1/events?since=${cursor}&limit=1000`, as);
    expect(r.status).toBe(200);
    if (r.body.data.length === 0) return out;
    out.push(...r.body.data);
    cursor = r.body.data[r.body.data.length - 1].seq;
  }
}

describe('seq', () => {
  it('increases by exactly one per event under concurrent writers, with no gaps or duplicates', async () => {
    const t = await newTenant(svc.api);
    const N = 40;
    const results = await Promise.all(Array.from({ length: N }, (_, i) => patchName(svc, t.as, i)));
    expect(results.every((r) => r.status === 200)).toBe(true);

    // seq 1 is member.added from creating the workspace; replay from it.
    const first = await svc.api.get('/v1/events?since=0&limit=1', t.as);
    expect(first.body).toEqual({ data: [], latest_seq: N + 1, resync: false });
    const events = await allEvents(svc, t.as, 1);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: N }, (_, i) => i + 2));
    expect(new Set(events.map((e) => e.id)).size).toBe(N);
    expect(events.every((e) => e.type === 'workspace.updated' && e.workspace_id === t.workspaceId)).toBe(true);
    // UUID v7 ids
    expect(events.every((e) => /^[0-9a-f]{8}-[0-9a-f]{4}-7/.test(e.id))).toBe(true);
  });

  it.runIf(onPostgres)(
    'stays gapless with two server instances (separate connection pools) writing the same workspace',
    async () => {
      const other = await startService();
      try {
        const t = await newTenant(svc.api);
        const writes = Array.from({ length: 30 }, (_, i) => patchName(i % 2 ? svc : other, t.as, i));
        const results = await Promise.all(writes);
        expect(results.map((r) => r.status).every((s) => s === 200)).toBe(true);
        const events = await allEvents(svc, t.as, 1);
        expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 2));
      } finally {
        await other.stop();
      }
    },
  );

  it('keeps workspaces independent: each has its own seq starting at 1', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    await patchName(svc, a.as, 1);
    await patchName(svc, a.as, 2);
    const ra = await svc.api.get('/v1/events?since=0&limit=1', a.as);
    const rb = await svc.api.get('/v1/events?since=0&limit=1', b.as);
    expect(ra.body.latest_seq).toBe(3);
    expect(rb.body.latest_seq).toBe(1);
  });

  it('rolls back the events of a failed change with the change', async () => {
    const t = await newTenant(svc.api);
    const bad = await svc.api.patch('/v1/workspace', { settings: { timezone: 'Mars/Olympus_Mons' } }, t.as);
    expect(bad.status).toBe(422);
    const r = await svc.api.get('/v1/events?since=0&limit=1', t.as);
    expect(r.body.latest_seq).toBe(1);
  });
});

describe('GET /v1/events', () => {
  it('replays envelopes with the spec fields, limited, in seq order', async () => {
    const t = await newTenant(svc.api);
    for (let i = 0; i < 5; i++) await patchName(svc, t.as, i);
    const r = await svc.api.get('/v1/events?since=2&limit=2', t.as);
    expect(r.status).toBe(200);
    expect(r.body.latest_seq).toBe(6);
    expect(r.body.resync).toBe(false);
    expect(r.body.data.map((e: any) => e.seq)).toEqual([3, 4]);
    const e = r.body.data[0];
    expect(Object.keys(e).sort()).toEqual([
      'data',
      'id',
      'occurred_at',
      'seq',
      'topics',
      'type',
      'visibility',
      'workspace_id',
    ]);
    expect(e.topics).toEqual([`workspace:${t.workspaceId}`]);
    expect(e.visibility).toBe('agents');
    expect(e.data.workspace).toMatchObject({ id: t.workspaceId, name: 'Acme 1' });
    expect(new Date(e.occurred_at).toISOString()).toBe(e.occurred_at);
  });

  it('asks for a resync when since is older than retention or ahead of the newest event', async () => {
    const t = await newTenant(svc.api);
    for (let i = 0; i < 3; i++) await patchName(svc, t.as, i);
    expect((await svc.api.get('/v1/events?since=99', t.as)).body).toMatchObject({
      resync: true,
      data: [],
      latest_seq: 4,
    });
    // Prune everything: history before now is gone.
    await pruneEvents(svc.rt.deps.database, 1, { workspaceIds: [t.workspaceId] });
    await patchName(svc, t.as, 9);
    const old = await svc.api.get('/v1/events?since=1', t.as);
    expect(old.body).toMatchObject({ resync: true, data: [], latest_seq: 5 });
    const fresh = await svc.api.get('/v1/events?since=4', t.as);
    expect(fresh.body.resync).toBe(false);
    expect(fresh.body.data.map((e: any) => e.seq)).toEqual([5]);
  });

  it('needs since and refuses bad values', async () => {
    const t = await newTenant(svc.api);
    for (const q of ['', '?since=-1', '?since=abc', '?since=1&limit=0', '?since=1&limit=100000']) {
      const r = await svc.api.get(`/v1/events${q}`, t.as);
      expect(r.status, q).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
    }
  });

  it('never shows another workspace its events', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    await svc.api.patch('/v1/workspace', { name: 'Secret Project A' }, a.as);
    const keyB = await newApiKey(svc.api, b, ['realtime']);
    const asB = await allEvents(svc, { token: keyB.key }, 0);
    const fromB = await svc.api.get('/v1/events?since=0&limit=1', { token: keyB.key });
    expect(fromB.body.latest_seq).toBe(1);
    expect(JSON.stringify(asB)).not.toContain('Secret Project A');
    // The header cannot widen access for a key either.
    const widened = await svc.api.get('/v1/events?since=0', { token: keyB.key, workspace: a.workspaceId });
    expect(widened.body.latest_seq).toBe(1);
    // Nor for a person who is not a member.
    const r = await svc.api.get('/v1/events?since=0', { token: b.owner.token, workspace: a.workspaceId });
    expect(r.status).toBe(404);
  });

  it('returns stand-ins for events the caller may not see, keeping seq gapless', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent', 'Agent Private');
    const teamId = '0193c6a0-0000-7000-8000-00000000beef';
    await svc.rt.deps.writer.run(t.workspaceId, async (u) => {
      u.emit({
        type: 'ticket.updated',
        data: { ticket: { id: 'x', subject: 'Private matter' } },
        teamId,
        topics: [`team:${t.workspaceId}:${teamId}`],
      });
      u.emit({ type: 'notification.created', data: { notification: { id: 'n' } }, topics: [`user:${t.owner.userId}`] });
    });
    const asAgent = await svc.api.get('/v1/events?since=1', { token: agent.token, workspace: t.workspaceId });
    expect(asAgent.body.data.map((e: any) => [e.seq, e.type])).toEqual([
      [2, 'event.hidden'],
      [3, 'event.hidden'],
    ]);
    expect(asAgent.body.data[0].data).toEqual({});
    expect(JSON.stringify(asAgent.body)).not.toContain('Private matter');
    const asOwner = await svc.api.get('/v1/events?since=1', t.as);
    expect(asOwner.body.data.map((e: any) => e.type)).toEqual(['ticket.updated', 'notification.created']);
    // A key sees event types its scopes cover; the rest come back as stand-ins.
    const kb = await newApiKey(svc.api, t, ['kb:read']);
    await svc.api.patch('/v1/workspace', { name: 'Visible?' }, t.as);
    const asKb = await svc.api.get('/v1/events?since=3', { token: kb.key });
    expect(asKb.body.data.map((e: any) => e.type)).toEqual(['event.hidden']);
    const settings = await newApiKey(svc.api, t, ['settings:read']);
    const asSettings = await svc.api.get('/v1/events?since=3', { token: settings.key });
    expect(asSettings.body.data.map((e: any) => e.type)).toEqual(['workspace.updated']);
  });
});

describe('publishing', () => {
  it('puts each committed event on the bus after commit, and nothing for a rolled-back change', async () => {
    const t = await newTenant(svc.api);
    const seen: EventEnvelope[] = [];
    const off = svc.rt.deps.bus.subscribe((e) => {
      if (e.workspace_id === t.workspaceId) seen.push(e);
    });
    try {
      await svc.api.patch('/v1/workspace', { settings: { timezone: 'Nowhere/Else' } }, t.as);
      const ok = await svc.api.patch('/v1/workspace', { settings: { timezone: 'Europe/Berlin' } }, t.as);
      expect(ok.status).toBe(200);
      await expect.poll(() => seen.length).toBe(1);
      expect(seen[0]).toMatchObject({ seq: 2, type: 'workspace.updated' });
      expect((seen[0]!.data as any).workspace.settings.timezone).toBe('Europe/Berlin');
      // Marked published in the background (200 ms after the publish, then a write): longer than
      // expect.poll's default second can pass on a loaded machine.
      await expect
        .poll(
          async () => {
            const row = await svc.rt.deps.database.db
              .selectFrom('events')
              .select('published')
              .where('workspace_id', '=', t.workspaceId)
              .where('seq', '=', 2)
              .executeTakeFirstOrThrow();
            return row.published;
          },
          { timeout: 10_000 },
        )
        .toBe(true);
    } finally {
      off();
    }
  });

  it('republishes events committed but never published (a crash between COMMIT and publish)', async () => {
    // The event was committed two hours ago, before the window every running sweeper looks back
    // over (an hour at start-up): on the shared PostgreSQL, another test file's service starting
    // meanwhile would otherwise republish it first. This process's sweeper, restarted with a
    // three-hour look-back, is the one that finds it.
    const sweeper = new EventPublisher(svc.rt.deps.database, svc.rt.deps.bus, svc.rt.deps.log, {
      flushMs: 200,
      sweepMs: 5000,
      graceMs: 10_000,
      startupWindowMs: 3 * 3_600_000,
    });
    const t = await newTenant(svc.api);
    await svc.rt.deps.database.db
      .insertInto('events')
      .values({
        workspace_id: t.workspaceId,
        seq: 2,
        id: '0193c6a0-1111-7000-8000-000000000001',
        type: 'workspace.updated',
        visibility: 'agents',
        topics: [`workspace:${t.workspaceId}`],
        team_id: null,
        data: JSON.stringify({ workspace: { id: t.workspaceId } }),
        occurred_at: new Date(Date.now() - 2 * 3_600_000),
      })
      .execute();
    const seen: EventEnvelope[] = [];
    const off = svc.rt.deps.bus.subscribe((e) => {
      if (e.workspace_id === t.workspaceId) seen.push(e);
    });
    try {
      const n = await sweeper.sweep();
      expect(n).toBeGreaterThanOrEqual(1);
      await expect.poll(() => seen.map((e) => e.id)).toContain('0193c6a0-1111-7000-8000-000000000001');
      const again = await sweeper.sweep();
      expect(again).toBe(0);
    } finally {
      off();
    }
  });

  it.runIf(Boolean(process.env.TEST_NATS_URL))(
    'reaches the other server processes through NATS',
    async () => {
      const env = { NATS_URL: process.env.TEST_NATS_URL! };
      const a = await startService(env, { jobs: false });
      const b = await startService(env, { jobs: false });
      try {
        expect(a.rt.deps.bus.kind).toBe('nats');
        expect((await a.api.get('/readyz')).status).toBe(200);
        const t = await newTenant(a.api);
        const seenByB: EventEnvelope[] = [];
        const off = b.rt.deps.bus.subscribe((e) => {
          if (e.workspace_id === t.workspaceId) seenByB.push(e);
        });
        const r = await a.api.patch('/v1/workspace', { name: 'Across processes' }, t.as);
        expect(r.status).toBe(200);
        await expect.poll(() => seenByB.map((e) => e.type)).toContain('workspace.updated');
        expect((seenByB.find((e) => e.type === 'workspace.updated')!.data as any).workspace.name).toBe(
          'Across processes',
        );
        off();
      } finally {
        await a.stop();
        await b.stop();
      }
      // Two services started on the embedded database: 23 s on a slow day.
    },
    120_000,
  );
});
