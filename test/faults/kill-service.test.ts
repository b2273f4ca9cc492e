// kill -9 of the service while inbound mail is processed and webhook deliveries are in flight
// (issue 39 item 3). One service child on a throwaway database, a loopback webhook receiver
// subscribed to every event; mails are posted to the inbound route by several clients, and the
// service is killed once part of them were acknowledged. After a restart, as an MTA would, the
// clients post again what got no answer (and a few acknowledged mails a second time). Then:
// - every acknowledged mail (202) becomes exactly one ticket, one per Message-ID (docs/api.md
//   "Inbound email": 202 means committed to the spool, the same Message-ID again is a duplicate);
// - the workspace's event seq is gapless in replay (GET /v1/events);
// - every event reaches the receiver: webhooks are at-least-once (interface.md "Webhooks
//   (outbound)": deliveries may repeat, receivers deduplicate on SVC-Event-Id), so the test
//   asserts the set of event ids received is exactly the set of events, repeats allowed.
// A mail whose job died with the process stays `received` until the inbound sweep queues it again
// (two minutes after it arrived, docs/api.md); the test runs that sweep itself, with the clock
// two minutes on, instead of waiting for the schedule.
//
// PostgreSQL only (skipped without DATABASE_URL): a child process on a database of its own, and
// the test reads the job queue's table.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import type { Deps } from '../../src/deps.js';
import { INBOUND_JOB, INBOUND_SWEEP_AFTER_MS, sweepInbound } from '../../src/modules/email/ingest.js';
import { type Database, openDatabase } from '../../src/platform/db/index.js';
import { Jobs } from '../../src/platform/jobs/index.js';
import { mail } from '../modules/email/inbound-setup.js';
import { FAST, Receiver } from '../modules/webhooks/delivery-setup.js';
import { type ChildService, freePort, healthy } from '../support/child-process.js';
import { Api, newTenant, onPostgres, TEST_SECRET_KEY, unique } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';
import { killHard, startFaultService } from '../support/private-servers.js';

const SECRET = 'fault-inbound-secret-0123456789';

interface Sent {
  subject: string;
  messageId: string;
  raw: Buffer;
  /** The first answer: a status, 0 when the connection died, -1 when not sent before the kill. */
  first: number;
  id?: string;
}

// Only on PostgreSQL: see the header.
describe.runIf(onPostgres)('kill -9 of the service during inbound mail and webhook deliveries', () => {
  const children: ChildService[] = [];
  const rx = new Receiver();
  let db: OwnDatabase | null = null;
  let database: Database | null = null;
  let jobs: Jobs | null = null;
  // Made in the test, not here: a skipped suite's afterAll does not run.
  let dir = '';
  afterAll(async () => {
    for (const c of children) await killHard(c);
    await jobs?.stop().catch(() => {});
    await database?.close().catch(() => {});
    await rx.stop().catch(() => {});
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('acknowledged mail becomes one ticket each, seq stays gapless, every event reaches the receiver', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-fault-kill-'));
    const [own, port] = await Promise.all([ownDatabase('faults_kill'), freePort(), rx.start()]);
    db = own;
    const env = {
      DATA_DIR: dir,
      PORT: String(port),
      DATABASE_URL: own.env.DATABASE_URL ?? process.env.DATABASE_URL ?? '',
      SECRET_KEY: TEST_SECRET_KEY,
      INBOUND_SECRET: SECRET,
      INBOUND_DOMAIN: 'in.faults.test',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      RATE_LIMIT_PER_MINUTE: '10000000',
    };
    const runtime = { webhooks: FAST };
    const first = startFaultService(env, runtime);
    children.push(first);
    await healthy(port);
    const api = new Api(`http://127.0.0.1:${port}`);
    const t = await newTenant(api);
    const mb = await api.post('/v1/mailboxes', { name: 'Support', email: 'support@faults.test' }, t.as);
    expect(mb.status, mb.text).toBe(201);
    const hook = await api.post('/v1/webhooks', { url: rx.url('/all'), events: ['*'] }, t.as);
    expect(hook.status, hook.text).toBe(201);
    const seq0: number = (await api.get('/v1/events?since=0', t.as)).body.latest_seq;

    const run = unique('fault');
    const mails: Sent[] = Array.from({ length: 60 }, (_, i) => {
      const subject = `${run}-mail-${i}`;
      const messageId = `${run}-${i}@customer.test`;
      return { subject, messageId, raw: mail({ subject, messageId, from: `c${i}@customer.test` }), first: -1 };
    });
    const post = (m: Sent) =>
      api.req('POST', `/v1/inbound/email?to=${encodeURIComponent(mb.body.forwarding_address)}`, {
        raw: m.raw,
        headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': SECRET },
      });

    // Eight clients post one mail after another; the kill comes once 20 were acknowledged, while
    // earlier mails are being turned into tickets and their events delivered.
    let answered = 0;
    let killed = false;
    const queue = [...mails];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let m = queue.shift(); m && !killed; m = queue.shift()) {
          await post(m).then(
            (r) => {
              m.first = r.status;
              m.id = r.body?.id;
              if (r.status === 202 && ++answered >= 20 && !killed) {
                killed = true;
                first.child.kill('SIGKILL');
              }
            },
            () => {
              m.first = 0;
            },
          );
        }
      }),
    );
    await first.exited;
    const acked = mails.filter((m) => m.first === 202);
    expect(acked.length).toBeGreaterThanOrEqual(20);
    expect(mails.every((m) => [202, 0, -1].includes(m.first))).toBe(true);

    const second = startFaultService(env, runtime);
    children.push(second);
    await healthy(port);

    // The MTA again: what got no 202 is posted again, and five acknowledged mails a second time.
    for (const m of [...mails.filter((x) => x.first !== 202), ...acked.slice(0, 5)]) {
      const r = await post(m);
      expect(r.status, r.text).toBe(202);
      m.id ??= r.body.id;
    }

    // Mail whose job died with the first process: the sweep's work, two minutes early, once the
    // jobs queued for the second process are taken (so the sweep queues only the orphans).
    database = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: dir, memory: false });
    const d = database.db;
    await expect
      .poll(
        async () =>
          Number(
            (
              await sql<{ n: string }>`SELECT count(*) AS n FROM pgboss.job
                WHERE name = ${INBOUND_JOB} AND state IN ('created', 'retry')`.execute(d)
            ).rows[0]!.n,
          ),
        { timeout: 30_000, interval: 100 },
      )
      .toBe(0);
    const log = pino({ level: 'silent' });
    jobs = new Jobs(database, log, { stopTimeoutMs: 1000 });
    await jobs.start();
    await sweepInbound(
      { database, jobs, log } as unknown as Deps,
      new Date(Date.now() + INBOUND_SWEEP_AFTER_MS + 1000),
    );

    // Every spool row of an acknowledged mail is processed.
    const ids = [...new Set(mails.map((m) => m.id!))];
    await expect
      .poll(
        async () =>
          (
            await d
              .selectFrom('inbound_emails')
              .select(['id', 'status'])
              .where('id', 'in', ids)
              .where('status', '=', 'received')
              .execute()
          ).length,
        { timeout: 45_000, interval: 200 },
      )
      .toBe(0);

    // Exactly one ticket per Message-ID, each with its one message.
    const tickets = await d
      .selectFrom('tickets')
      .select(['id', 'subject'])
      .where('workspace_id', '=', t.workspaceId)
      .where('subject', 'like', `${run}-mail-%`)
      .execute();
    const perSubject = new Map<string, number>();
    for (const x of tickets) perSubject.set(x.subject, (perSubject.get(x.subject) ?? 0) + 1);
    for (const m of mails) expect(perSubject.get(m.subject), m.subject).toBe(1);
    const msgs = await d
      .selectFrom('messages')
      .select(['ticket_id', sql<number>`count(*)::int`.as('n')])
      .where(
        'ticket_id',
        'in',
        tickets.map((x) => x.id),
      )
      .groupBy('ticket_id')
      .execute();
    expect(msgs.length).toBe(tickets.length);
    for (const x of msgs) expect(x.n).toBe(1);

    // The workspace's events: seq gapless in replay, one ticket.created per mail.
    const events: { id: string; seq: number; type: string }[] = [];
    for (let since = seq0; ; ) {
      const r = await api.get(`/v1/events?since=${since}&limit=1000`, t.as);
      expect(r.status, r.text).toBe(200);
      events.push(...r.body.data);
      if (r.body.data.length === 0 || since === r.body.latest_seq) break;
      since = r.body.data.at(-1).seq;
      if (since >= r.body.latest_seq) break;
    }
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => seq0 + 1 + i));
    expect(events.filter((e) => e.type === 'ticket.created').length).toBe(mails.length);

    // Every event reaches the receiver (repeats allowed: receivers deduplicate on SVC-Event-Id).
    const want = new Set(events.filter((e) => !e.type.startsWith('notification.')).map((e) => e.id));
    // (The endpoint's own webhook.created, at seq0 or before, may arrive too: not counted.)
    const got = () =>
      new Set(
        rx
          .at('/all')
          .filter((r) => r.body?.seq > seq0)
          .map((r) => String(r.headers['svc-event-id'])),
      );
    await expect
      .poll(() => [...want].filter((id) => !got().has(id)).length, { timeout: 45_000, interval: 200 })
      .toBe(0);
    const unknown = [...got()].filter((id) => !want.has(id));
    expect(unknown, 'ids received that are not events of the workspace').toEqual([]);

    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 150_000);
});
