// The setup of the fault tests that cross NATS (nats-down.test.ts, commit-publish.test.ts): a
// private nats-server, two service processes (children) A and B on a database of their own and
// that NATS, a workspace made through A, and an agent's socket on B joined to its topic, collecting
// what B delivers. `stop()` ends all of it; the tests call it in afterAll, even on failure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type ChildService, freePort, healthy, startProcess } from '../support/child-process.js';
import { type Client, collect, connect, join as joinChannel, realtimeToken } from '../support/gateway-client.js';
import { Api, newTenant, TEST_SECRET_KEY, type Tenant } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';
import { killHard, type PrivateNats, privateNats } from '../support/private-servers.js';

export interface NatsPair {
  nats: PrivateNats;
  a: ChildService;
  b: ChildService;
  portA: number;
  portB: number;
  apiA: Api;
  t: Tenant;
  /** What the socket on B received, in order. */
  got: Array<{ seq: number; type: string }>;
  /** The workspace's latest seq when the socket joined. */
  start: number;
  databaseUrl: string;
  /** A ticket made through A (201 expected). */
  create(i: number): Promise<void>;
  /** A process's /readyz status (0 when it does not answer). */
  ready(port: number): Promise<number>;
  stop(): Promise<void>;
}

/** Starts the pair; `holder.stop` ends what started, also after a failure half-way. */
export async function startNatsPair(tag: string, holder: { stop?: () => Promise<void> }): Promise<NatsPair> {
  const dirs = [mkdtempSync(join(tmpdir(), `svc-${tag}-`)), mkdtempSync(join(tmpdir(), `svc-${tag}-`))];
  const children: ChildService[] = [];
  let nats: PrivateNats | null = null;
  let db: OwnDatabase | null = null;
  let socket: Client | null = null;
  holder.stop = async () => {
    socket?.disconnect();
    for (const c of children) await killHard(c);
    await nats?.kill();
    await db?.drop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  };
  const [natsPort, portA, portB, own] = await Promise.all([freePort(), freePort(), freePort(), ownDatabase(tag)]);
  db = own;
  const databaseUrl = own.env.DATABASE_URL ?? process.env.DATABASE_URL ?? '';
  nats = privateNats(natsPort);
  await nats.start();
  const env = (port: number, dir: string) => ({
    DATA_DIR: dir,
    PORT: String(port),
    DATABASE_URL: databaseUrl,
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
  return {
    nats,
    a,
    b,
    portA,
    portB,
    apiA,
    t,
    got,
    start: joined.response.latest_seq,
    databaseUrl,
    create: async (i) => {
      const r = await apiA.post('/v1/tickets', { subject: `Ticket ${i}`, contact: { email: 'c@example.com' } }, t.as);
      expect(r.status, r.text).toBe(201);
    },
    ready: (port) =>
      fetch(`http://127.0.0.1:${port}/readyz`)
        .then((r) => r.status)
        .catch(() => 0),
    stop: () => holder.stop!(),
  };
}
