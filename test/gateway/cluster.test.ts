// Several processes behave as one (issue 6, item 7): two API processes (`npm start`, each with
// its embedded gateway) and one gateway process (`npm run gateway`) on one PostgreSQL and one
// NATS, started as real child processes. Tickets created through both API processes reach
// sockets on the other API process and on the gateway process in seq order, exactly once;
// presence, typing and socket closing cross processes too. Needs DATABASE_URL and TEST_NATS_URL
// (bash .ci/run sets both for its PostgreSQL run).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Presence } from 'phoenix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Client,
  collect,
  connect,
  join as joinChannel,
  push,
  realtimeToken,
  sleep,
} from '../support/gateway-client.js';
import { Api, newTenant, onPostgres, TEST_SECRET_KEY } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';

const NATS = process.env.TEST_NATS_URL;
const enabled = onPostgres && Boolean(NATS);

interface Proc {
  child: ChildProcess;
  url: string;
  out: () => string;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

async function start(entry: string, healthPath: string, databaseUrl: string): Promise<Proc> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      NATS_URL: NATS,
      REDIS_URL: '',
      SECRET_KEY: TEST_SECRET_KEY,
      INBOUND_SECRET: 'test-inbound-secret-0123456789',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-cluster-')),
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '100000',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry} exited (${child.exitCode}): ${out}`);
    if (Date.now() > until) throw new Error(`${entry} did not answer ${healthPath}: ${out}`);
    const status = await fetch(url + healthPath).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    await sleep(250);
  }
  return { child, url, out: () => out };
}

const procs: Proc[] = [];
let a: Proc;
let b: Proc;
let g: Proc;
let own: OwnDatabase | null = null;
const clients: Client[] = [];

beforeAll(async () => {
  if (!enabled) return;
  // One PostgreSQL for the three processes, of their own: `npm start` runs every background
  // worker with the default settings (IMAP pollers that may not reach loopback servers, four
  // send workers with retries minutes apart, inbound mail with no trusted authserv-id), and on the
  // database the other test files share it would take their mailboxes, replies and mail.
  own = await ownDatabase('gateway_cluster');
  const databaseUrl = own.env.DATABASE_URL ?? process.env.DATABASE_URL!;
  [a, b, g] = await Promise.all([
    start('src/main.ts', '/healthz', databaseUrl),
    start('src/main.ts', '/healthz', databaseUrl),
    start('src/gateway-main.ts', '/health', databaseUrl),
  ]);
  procs.push(a, b, g);
}, 120_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(
    procs.map(
      (p) =>
        new Promise<void>((resolve) => {
          if (p.child.exitCode !== null) return resolve();
          p.child.once('exit', () => resolve());
          p.child.kill('SIGTERM');
          setTimeout(() => p.child.kill('SIGKILL'), 10_000).unref();
        }),
    ),
  );
  await own?.drop();
});

function open(p: Proc, token: string | (() => string), reconnectMs?: number): Client {
  const c = connect(p.url, token, reconnectMs !== undefined ? { reconnectMs } : {});
  clients.push(c);
  return c;
}

describe.runIf(enabled)('two API processes and one gateway process', () => {
  it('push tickets created through either API process to sockets on the other processes, in seq order, exactly once', async () => {
    const apiA = new Api(a.url);
    const apiB = new Api(b.url);
    const t = await newTenant(apiA);
    const topic = `workspace:${t.workspaceId}`;
    const onB = open(b, await realtimeToken(apiA, t.as));
    const onG = open(g, await realtimeToken(apiB, t.as));
    const got: Record<string, any[]> = {};
    let start = 0;
    for (const [name, c] of [
      ['b', onB],
      ['g', onG],
    ] as const) {
      const ch = c.socket.channel(topic);
      got[name] = collect(ch);
      const r = await joinChannel(ch);
      expect(r.status, name).toBe('ok');
      start = r.response.latest_seq;
    }
    // Both API processes write to the workspace at once: seq is handed out across processes,
    // and their publishes reach the gateways in whatever order NATS delivers them.
    const create = (api: Api, i: number) =>
      api.post('/v1/tickets', { subject: `Ticket ${i}`, contact: { email: `c${i % 5}@example.com` } }, t.as);
    const writers = [apiA, apiB].map(async (api, w) => {
      for (let round = 0; round < 6; round++) {
        const rs = await Promise.all([0, 1, 2].map((k) => create(api, w * 100 + round * 3 + k)));
        for (const r of rs) expect(r.status, r.text).toBe(201);
      }
    });
    await Promise.all(writers);
    const replay = await apiA.get(`/v1/events?since=${start}&limit=1000`, t.as);
    const latest = replay.body.latest_seq as number;
    expect(latest - start).toBeGreaterThanOrEqual(36);
    for (const name of ['b', 'g']) {
      await expect.poll(() => got[name]!.length, { timeout: 15_000 }).toBe(latest - start);
    }
    await sleep(500);
    for (const name of ['b', 'g']) {
      const events = got[name]!;
      expect(
        events.map((e) => e.seq),
        name,
      ).toEqual(Array.from({ length: latest - start }, (_, i) => start + i + 1));
      expect(new Set(events.map((e) => e.id)).size, name).toBe(events.length);
      expect(events, name).toEqual(replay.body.data);
    }
    expect(got.b!.filter((e) => e.type === 'ticket.created')).toHaveLength(36);
  });

  it('share presence and typing between the gateways, and close sockets on every process on logout', async () => {
    const apiA = new Api(a.url);
    const t = await newTenant(apiA);
    // A second member, through the API (the processes' databases are not reachable from here).
    const inv = await apiA.post('/v1/invitations', { email: `ann-${Date.now()}@example.com`, role: 'agent' }, t.as);
    expect(inv.status, inv.text).toBe(201);
    const reg = await apiA.post('/v1/auth/register', {
      email: inv.body.email,
      password: 'correct horse battery',
      name: 'Ann Agent',
    });
    expect(reg.status, reg.text).toBe(201);
    const accepted = await apiA.post(
      '/v1/invitations/accept',
      { token: inv.body.token },
      { token: reg.body.access_token },
    );
    expect(accepted.status, accepted.text).toBeLessThan(300);
    const annAs = { token: reg.body.access_token as string, workspace: t.workspaceId };

    const tk = await apiA.post('/v1/tickets', { subject: 'Shared' }, t.as);
    const topic = `ticket:${t.workspaceId}:${tk.body.id}`;
    const owner = open(b, await realtimeToken(apiA, t.as));
    const ownerCh = owner.socket.channel(topic);
    const ownerPresence = new Presence(ownerCh);
    const ownerTyping = collect(ownerCh, 'typing');
    expect((await joinChannel(ownerCh)).status).toBe('ok');
    const annSocket = open(g, await realtimeToken(apiA, annAs), 50);
    const annCh = annSocket.socket.channel(topic);
    const annPresence = new Presence(annCh);
    expect((await joinChannel(annCh)).status).toBe('ok');

    const names = (p: Presence) =>
      p
        .list((_id, { metas }) => metas.map((m: any) => `${m.name}:${m.state}`))
        .flat()
        .sort();
    await expect
      .poll(() => names(ownerPresence), { timeout: 10_000 })
      .toEqual(['Ann Agent:viewing', 'Olivia Owner:viewing']);
    await expect
      .poll(() => names(annPresence), { timeout: 10_000 })
      .toEqual(['Ann Agent:viewing', 'Olivia Owner:viewing']);
    expect((await push(annCh, 'presence', { state: 'replying' })).status).toBe('ok');
    await expect.poll(() => names(ownerPresence)).toEqual(['Ann Agent:replying', 'Olivia Owner:viewing']);
    expect((await push(annCh, 'typing', {})).status).toBe('ok');
    await expect.poll(() => ownerTyping.length).toBe(1);
    expect(ownerTyping[0]).toMatchObject({ ticket_id: tk.body.id, name: 'Ann Agent' });

    // Logout through API process A closes Ann's socket on the gateway process, and her presence goes.
    expect((await apiA.post('/v1/auth/logout', {}, { token: annAs.token })).status).toBe(204);
    await expect.poll(() => annSocket.closes.map((c) => c.code), { timeout: 10_000 }).toContain(4001);
    await expect.poll(() => names(ownerPresence), { timeout: 10_000 }).toEqual(['Olivia Owner:viewing']);
    await sleep(500);
    expect(annSocket.opened).toBe(1);
  });

  it("close a chat visitor's socket on the gateway process when they sign out through an API process", async () => {
    const apiA = new Api(a.url);
    const apiB = new Api(b.url);
    const t = await newTenant(apiA);
    const key = (await apiA.get('/v1/workspace', t.as)).body.widget_key;
    const s = await apiA.post('/v1/widget/session', { key });
    expect(s.status, s.text).toBe(200);
    const w = connect(g.url, s.body.ws_token, { widget: true, reconnectMs: 50 });
    clients.push(w);
    expect((await joinChannel(w.socket.channel(s.body.topic))).status).toBe('ok');
    const out = await apiB.delete('/v1/widget/session', {
      headers: { authorization: `Visitor ${s.body.visitor_token}` },
    });
    expect(out.status).toBe(204);
    await expect.poll(() => w.closes.map((c) => c.code), { timeout: 10_000 }).toContain(4001);
    // Its client tries again with the token minted before: the gateway process refuses it.
    await expect.poll(() => w.errors, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(w.opened).toBe(1);
  });

  it('answers /health on the gateway process and nothing else', async () => {
    expect(await (await fetch(`${g.url}/health`)).json()).toEqual({ status: 'ok', sockets: expect.any(Number) });
    const other = await fetch(`${g.url}/v1/tickets`);
    expect(other.status).toBe(404);
    expect(await other.json()).toMatchObject({ status: 404, code: 'not_found' });
  });
});
