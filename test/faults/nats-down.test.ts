// NATS down and back (issue 39 item 3): a private nats-server, two service processes (children)
// on one database and that NATS, an agent's socket on process B joined to the workspace topic.
// Tickets created through process A reach the socket on B; kill -9 NATS and creating tickets
// keeps working (201: events are committed with the change, the bus is not in the way); start
// NATS again and the socket on B receives every event of the outage too (the outbox's sweeper
// republishes what was not published, after its grace time of 10 s), in seq order, each once.
//
// PostgreSQL only (skipped without DATABASE_URL): CI runs it once, in the PostgreSQL run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildService, freePort, healthy, startProcess } from '../support/child-process.js';
import { type Client, collect, connect, join as joinChannel, realtimeToken } from '../support/gateway-client.js';
import { Api, newTenant, onPostgres, TEST_SECRET_KEY } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';
import { killHard, type PrivateNats, privateNats } from '../support/private-servers.js';

// Only on PostgreSQL: see the header.
describe.runIf(onPostgres)('NATS killed and started again', () => {
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

  it('keeps answering while NATS is down and delivers every event of the outage to the other process once it is back', async () => {
    dirs.push(mkdtempSync(join(tmpdir(), 'svc-fault-nats-')), mkdtempSync(join(tmpdir(), 'svc-fault-nats-')));
    const [natsPort, portA, portB, own] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      ownDatabase('faults_nats'),
    ]);
    db = own;
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
    for (let i = 0; i < 3; i++) await create(i);
    await expect.poll(() => got.filter((e) => e.type === 'ticket.created').length, { timeout: 15_000 }).toBe(3);

    // Down: writes keep working (once both processes know it is down: /readyz says so).
    await nats.kill();
    const ready = (port: number) => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status);
    for (const port of [portA, portB]) await expect.poll(() => ready(port), { timeout: 15_000 }).toBe(503);
    for (let i = 3; i < 9; i++) await create(i);

    // Back: every event reaches B's socket, in seq order, once.
    await nats.start();
    for (const port of [portA, portB]) await expect.poll(() => ready(port), { timeout: 15_000 }).toBe(200);
    const latest: number = (await apiA.get(`/v1/events?since=${start}&limit=1000`, t.as)).body.latest_seq;
    await expect.poll(() => got.at(-1)?.seq, { timeout: 45_000, interval: 100 }).toBe(latest);
    expect(got.map((e) => e.seq)).toEqual(Array.from({ length: latest - start }, (_, i) => start + 1 + i));
    expect(got.filter((e) => e.type === 'ticket.created')).toHaveLength(9);
    expect(a.child.exitCode).toBeNull();
    expect(b.child.exitCode).toBeNull();
  }, 120_000);
});
