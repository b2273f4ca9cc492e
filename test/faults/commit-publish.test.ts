// kill -9 between commit and publish (issue 39 item 3): events are committed with their change
// and published to the bus after COMMIT (src/platform/events/publisher.ts); a process that dies in
// between takes the publish with it, and every process's outbox sweeper republishes what is still
// unmarked after its grace time (10 s). The window is made wide and certain instead of raced: a
// private nats-server is killed, process A commits tickets whose publishes fail (events committed,
// not published), then A is killed with -9 and NATS started again. Process B, which never saw those
// events, must deliver every one of them to an agent's socket on it, in seq order, each once.
//
// PostgreSQL only (skipped without DATABASE_URL): CI runs it once, in the PostgreSQL run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildService, freePort, healthy, startProcess } from '../support/child-process.js';
import { type Client, collect, connect, join as joinChannel, realtimeToken } from '../support/gateway-client.js';
import { Api, newTenant, onPostgres, TEST_SECRET_KEY } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';
import { killHard, type PrivateNats, privateNats } from '../support/private-servers.js';

/** Events of the workspace committed and not yet marked published, read from the database. */
async function pendingOf(workspaceId: string): Promise<number> {
  const client = new pg.Client({ connectionString: dbUrl });
  await client.connect();
  try {
    const r = await client.query('SELECT count(*)::int AS n FROM events WHERE workspace_id = $1 AND NOT published', [
      workspaceId,
    ]);
    return r.rows[0].n;
  } finally {
    await client.end();
  }
}
let dbUrl = '';

// Only on PostgreSQL: see the header.
describe.runIf(onPostgres)('kill -9 between commit and publish', () => {
  let nats: PrivateNats | null = null;
  const children: ChildService[] = [];
  let db: OwnDatabase | null = null;
  let socket: Client | null = null;
  // Made in the test, not here: a skipped suite's afterAll does not run.
  const dirs: string[] = [];
  afterAll(async () => {
    socket?.disconnect();
    for (const c of children) await killHard(c);
    await nats?.kill();
    await db?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('delivers the events a process committed and died before publishing, through another process', async () => {
    dirs.push(mkdtempSync(join(tmpdir(), 'svc-fault-pub-')), mkdtempSync(join(tmpdir(), 'svc-fault-pub-')));
    const [natsPort, portA, portB, own] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      ownDatabase('faults_publish'),
    ]);
    db = own;
    dbUrl = own.env.DATABASE_URL ?? process.env.DATABASE_URL ?? '';
    nats = privateNats(natsPort);
    await nats.start();
    const env = (port: number, dir: string) => ({
      DATA_DIR: dir,
      PORT: String(port),
      DATABASE_URL: own.env.DATABASE_URL ?? process.env.DATABASE_URL ?? '',
      SECRET_KEY: TEST_SECRET_KEY,
      INBOUND_SECRET: 'fault-inbound-secret-0123456789',
      NATS_URL: nats!.url,
      REDIS_URL: '',
      RATE_LIMIT_PER_MINUTE: '100000',
    });
    const a = startProcess(env(portA, dirs[0]!));
    const b = startProcess(env(portB, dirs[1]!));
    children.push(a, b);
    await Promise.all([healthy(portA), healthy(portB)]);
    const apiA = new Api(`http://127.0.0.1:${portA}`);
    const t = await newTenant(apiA);
    socket = connect(`http://127.0.0.1:${portB}`, await realtimeToken(apiA, t.as));
    const ch = socket.socket.channel(`workspace:${t.workspaceId}`);
    const got = collect(ch);
    const joined = await joinChannel(ch);
    expect(joined.status).toBe('ok');
    const start: number = joined.response.latest_seq;
    const create = async (i: number) => {
      const r = await apiA.post('/v1/tickets', { subject: `Ticket ${i}`, contact: { email: 'c@example.com' } }, t.as);
      expect(r.status, r.text).toBe(201);
    };

    // Up: events cross from A to B.
    for (let i = 0; i < 2; i++) await create(i);
    await expect.poll(() => got.filter((e) => e.type === 'ticket.created').length, { timeout: 15_000 }).toBe(2);

    // The bus goes away; A commits tickets whose events it cannot publish, then dies with them.
    await nats.kill();
    const ready = (port: number) =>
      fetch(`http://127.0.0.1:${port}/readyz`)
        .then((r) => r.status)
        .catch(() => 0);
    await expect.poll(() => ready(portA), { timeout: 15_000 }).toBe(503);
    for (let i = 2; i < 7; i++) await create(i);
    const latest: number = (await apiA.get(`/v1/events?since=${start}&limit=1000`, t.as)).body.latest_seq;
    const unpublished = await pendingOf(t.workspaceId);
    expect(unpublished).toBeGreaterThanOrEqual(5);
    await killHard(a);

    // Back: B's sweeper publishes what A committed; the socket on B gets all of it, once, in order.
    await nats.start();
    await expect.poll(() => ready(portB), { timeout: 15_000 }).toBe(200);
    await expect.poll(() => got.at(-1)?.seq, { timeout: 45_000, interval: 100 }).toBe(latest);
    expect(got.map((e) => e.seq)).toEqual(Array.from({ length: latest - start }, (_, i) => start + 1 + i));
    expect(got.filter((e) => e.type === 'ticket.created')).toHaveLength(7);
    await expect.poll(() => pendingOf(t.workspaceId), { timeout: 15_000 }).toBe(0);
    expect(b.child.exitCode).toBeNull();
  }, 120_000);
});
