// PostgreSQL restarted under load (issue 39 item 3): a private PostgreSQL server of the test's own
// (initdb + pg_ctl into a temp dir, its own port), the service (a child process) on it, clients
// creating tickets with their first message and reading them while the server restarts
// (pg_ctl restart -m fast: connections are cut, statements in flight fail). Then:
// - every answer during the restart is a success or 503 `unavailable` with the spec's error body
//   (docs/api.md "Errors"): never a 500, never a stack, SQL or connection string;
// - nothing half-written: every ticket the workspace has holds its first message, and every
//   ticket answered 201 is there;
// - the service reconnects: requests succeed again afterwards, with no restart of the service;
// - the workspace's event seq stays gapless.
//
// PostgreSQL only (skipped without DATABASE_URL): CI runs it once, in the PostgreSQL run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildService, freePort, healthy } from '../support/child-process.js';
import { Api, isErrorBody, newTenant, onPostgres, TEST_SECRET_KEY, unique } from '../support/helpers.js';
import {
  createDatabase,
  killHard,
  type PrivatePostgres,
  privatePostgres,
  startFaultService,
} from '../support/private-servers.js';

interface Answer {
  status: number;
  body: any;
  text: string;
}

// Only on PostgreSQL: see the header.
describe.runIf(onPostgres)('PostgreSQL restarted under load', () => {
  let server: PrivatePostgres | null = null;
  let svc: ChildService | null = null;
  // Made in the test, not here: a skipped suite's afterAll does not run.
  let dir = '';
  afterAll(async () => {
    await killHard(svc);
    server?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 unavailable while it is down, writes nothing half, and works again after', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-fault-pg-'));
    const [pgPort, port] = await Promise.all([freePort(), freePort()]);
    server = privatePostgres(pgPort);
    await server.start();
    await createDatabase(server.url(), 'helpdesk');
    svc = startFaultService(
      {
        DATA_DIR: dir,
        PORT: String(port),
        DATABASE_URL: server.url('helpdesk'),
        SECRET_KEY: TEST_SECRET_KEY,
        RATE_LIMIT_PER_MINUTE: '10000000',
      },
      { embeddingBackfill: false },
    );
    await healthy(port);
    const api = new Api(`http://127.0.0.1:${port}`);
    const t = await newTenant(api);
    const seq0: number = (await api.get('/v1/events?since=0', t.as)).body.latest_seq;
    const run = unique('pgfault');

    const answers: Answer[] = [];
    const created: string[] = [];
    let n = 0;
    let restarted = false;
    const client = async () => {
      while (!restarted) {
        const subject = `${run}-${n++}`;
        const r = await api
          .post('/v1/tickets', { subject, contact: { email: 'c@example.com' }, body_html: `<p>${subject}</p>` }, t.as)
          .catch((e: Error) => ({ status: 0, body: null, text: e.message }));
        answers.push(r);
        if (r.status === 201) created.push(r.body.id);
        const l = await api
          .get('/v1/tickets?limit=5', t.as)
          .catch((e: Error) => ({ status: 0, body: null, text: e.message }));
        answers.push(l);
      }
    };
    // Four clients run until the server is back; it stops once some tickets exist, and starts
    // again once a client was answered 503 (the service saw it down).
    const clients = Array.from({ length: 4 }, client);
    await expect.poll(() => created.length, { timeout: 30_000, interval: 20 }).toBeGreaterThanOrEqual(8);
    await server.stop();
    const from = answers.length;
    await expect
      .poll(() => answers.slice(from).some((a) => a.status === 503), {
        timeout: 30_000,
        interval: 20,
        message: `no 503 while the database is down: ${JSON.stringify(answers.slice(from, from + 5).map((a) => [a.status, a.text.slice(0, 150)]))} ${svc?.err().slice(-4000)}`,
      })
      .toBe(true);
    await server.start();
    const back = answers.length;
    await expect
      .poll(() => answers.slice(back).some((a) => a.status === 201), { timeout: 30_000, interval: 20 })
      .toBe(true);
    restarted = true;
    await Promise.all(clients);

    // Every answer: a success, or 503 with the spec's error body and nothing of the inside.
    const bad = answers.filter((a) => ![200, 201, 503].includes(a.status));
    expect(bad.map((a) => `${a.status} ${a.text.slice(0, 200)}`)).toEqual([]);
    const unavailable = answers.filter((a) => a.status === 503);
    for (const a of unavailable) {
      expect(isErrorBody(a.body, 503, 'unavailable'), a.text).toBe(true);
      expect(a.text).not.toMatch(/ at |postgres:|select |insert |ECONN|terminat/i);
    }

    // The service reconnected: requests succeed again, without a restart of the service.
    await expect
      .poll(
        async () =>
          (
            await api.post(
              '/v1/tickets',
              { subject: `${run}-after`, contact: { email: 'c@example.com' }, body_html: '<p>after</p>' },
              t.as,
            )
          ).status,
        {
          timeout: 30_000,
          interval: 100,
        },
      )
      .toBe(201);
    expect(svc.child.exitCode).toBeNull();

    // Nothing half-written: each ticket of the run holds its first message; every 201 is there.
    const c = new pg.Client({ connectionString: server.url('helpdesk') });
    await c.connect();
    try {
      const rows = (
        await c.query<{ id: string; n: number }>(
          `SELECT t.id::text, (SELECT count(*)::int FROM messages m WHERE m.ticket_id = t.id) AS n
             FROM tickets t WHERE t.workspace_id = $1 AND t.subject LIKE $2`,
          [t.workspaceId, `${run}-%`],
        )
      ).rows;
      expect(rows.filter((r) => r.n !== 1)).toEqual([]);
      const ids = new Set(rows.map((r) => r.id));
      expect(created.filter((id) => !ids.has(id))).toEqual([]);
    } finally {
      await c.end();
    }

    // Events: seq gapless in replay.
    const ev = await api.get(`/v1/events?since=${seq0}&limit=1000`, t.as);
    expect(ev.status).toBe(200);
    const seqs = ev.body.data.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual(seqs.map((_: number, i: number) => seq0 + 1 + i));
    expect(svc.err()).not.toMatch(/postgres:\/\/| {4}at /);

    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
  }, 120_000);
});
