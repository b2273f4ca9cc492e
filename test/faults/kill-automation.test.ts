// kill -9 during automation runs (issue 39 item 3): a workspace automation on ticket_created (add
// a tag, set the priority) runs in the creating transaction (src/modules/tickets/hooks.ts), so a
// create the process dies in commits with its automation's effect or not at all. Keyed creates
// (Idempotency-Key) from several clients; the service is killed with -9 once part of them were
// answered, started again, and every key is retried as a client would. Then: one ticket per key,
// each with the automation's tag exactly once and its priority, one ticket.created per ticket, and
// the workspace's seq gapless in replay. The automation's run count, a statistic kept in memory
// for up to a second, may lose the killed process's last second, and only that.
//
// PostgreSQL only (skipped without DATABASE_URL): a child process on a database of its own.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildService, freePort, healthy, startProcess } from '../support/child-process.js';
import { Api, newTenant, onPostgres, TEST_SECRET_KEY, unique } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';
import { killHard } from '../support/private-servers.js';

interface Keyed {
  key: string;
  subject: string;
  /** The first answer: a status, 0 when the connection died, -1 when not sent before the kill. */
  first: number;
}

describe.runIf(onPostgres)('kill -9 during automation runs', () => {
  const children: ChildService[] = [];
  let db: OwnDatabase | null = null;
  let dir = '';
  afterAll(async () => {
    for (const c of children) await killHard(c);
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("leaves every acknowledged or retried create with its automation's effect exactly once", async () => {
    db = await ownDatabase('faults_automation');
    dir = mkdtempSync(join(tmpdir(), 'svc-fault-auto-'));
    const port = await freePort();
    const env = {
      DATA_DIR: dir,
      PORT: String(port),
      DATABASE_URL: db.env.DATABASE_URL ?? process.env.DATABASE_URL ?? '',
      SECRET_KEY: TEST_SECRET_KEY,
      RATE_LIMIT_PER_MINUTE: '10000000',
      // A key held by the killed process is free again after this (409 until then).
      IDEMPOTENCY_LEASE: '2s',
    };
    const first = startProcess(env);
    children.push(first);
    await healthy(port);
    const api = new Api(`http://127.0.0.1:${port}`);
    const t = await newTenant(api);
    expect((await api.post('/v1/tags', { name: 'auto-tagged' }, t.as)).status).toBe(201);
    const auto = await api.post(
      '/v1/automations',
      {
        name: 'Tag and raise',
        trigger: 'ticket_created',
        conditions: [],
        actions: [
          { type: 'add_tag', value: 'auto-tagged' },
          { type: 'set_priority', value: 'urgent' },
        ],
      },
      t.as,
    );
    expect(auto.status, auto.text).toBe(201);
    const since: number = (await api.get('/v1/events?since=0', t.as)).body.latest_seq;

    const run = unique('auto');
    const keyed: Keyed[] = Array.from({ length: 60 }, (_, i) => ({
      key: `${run}-key-${i}`,
      subject: `${run} ticket ${i}`,
      first: -1,
    }));
    const create = (k: Keyed) =>
      api.post(
        '/v1/tickets',
        { subject: k.subject, contact: { email: 'c@example.com' }, body_html: `<p>${k.subject}</p>` },
        { ...t.as, headers: { 'idempotency-key': k.key } },
      );

    // Twelve clients; the kill comes once twenty creates were answered.
    let answered = 0;
    let killed = false;
    const queue = [...keyed];
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        for (let k = queue.shift(); k && !killed; k = queue.shift()) {
          await create(k).then(
            (r) => {
              k.first = r.status;
              if (++answered >= 20 && !killed) {
                killed = true;
                first.child.kill('SIGKILL');
              }
            },
            () => {
              k.first = 0;
            },
          );
        }
      }),
    );
    expect(killed).toBe(true);
    await first.exited;
    expect(keyed.filter((k) => k.first === 201).length).toBeGreaterThanOrEqual(20);

    const restarted = new Date();
    const second = startProcess(env);
    children.push(second);
    await healthy(port);

    // Every key again, as a client retries: 409 while a dead request's lease runs, then the answer.
    const ids = new Map<string, string>();
    for (const k of keyed) {
      let r = await create(k);
      const until = Date.now() + 15_000;
      while (r.status === 409 && Date.now() < until) {
        await new Promise((res) => setTimeout(res, 250));
        r = await create(k);
      }
      expect(r.status, `${k.key}: ${r.text}`).toBe(201);
      ids.set(k.key, r.body.id);
    }

    // One ticket per key, each with the automation's effect once.
    const all: Array<{
      id: string;
      subject: string;
      priority: string;
      created_at: string;
      tags: Array<string | { name: string }>;
    }> = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; text: string; body: any } = await api.get(
        `/v1/tickets?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        t.as,
      );
      expect(page.status, page.text).toBe(200);
      all.push(...page.body.data);
      cursor = page.body.next_cursor ?? null;
    } while (cursor);
    const ours = all.filter((x) => x.subject.startsWith(run));
    expect(ours).toHaveLength(keyed.length);
    expect(new Set(ours.map((x) => x.id))).toEqual(new Set(ids.values()));
    for (const x of ours) {
      expect(x.priority, x.subject).toBe('urgent');
      expect(x.tags.map((g) => (typeof g === 'string' ? g : g.name))).toEqual(['auto-tagged']);
    }
    // run_count is a statistic counted in memory and written about every second
    // (src/modules/automations/run-counts.ts): the killed process may lose its last second of
    // counts, never more than the runs, never fewer than the new process's own.
    const runsAfter = ours.filter((x) => new Date(x.created_at) >= restarted).length;
    const runCount: number = (await api.get(`/v1/automations/${auto.body.id}`, t.as)).body.run_count;
    expect(runCount).toBeLessThanOrEqual(keyed.length);
    expect(runCount).toBeGreaterThanOrEqual(runsAfter);

    // Every event in replay, seq without a gap; one ticket.created per ticket.
    const events = await api.get(`/v1/events?since=${since}&limit=1000`, t.as);
    expect(events.status, events.text).toBe(200);
    const seqs = events.body.data.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => since + 1 + i));
    expect(seqs.at(-1)).toBe(events.body.latest_seq);
    const created = events.body.data.filter((e: { type: string }) => e.type === 'ticket.created');
    expect(created).toHaveLength(keyed.length);
    expect(second.child.exitCode).toBeNull();
  }, 120_000);
});
