// npm run bench:webhooks: outbound webhook deliveries on loopback.
//
// The service runs as a child process (npm start's code, WEBHOOK_ALLOW_PRIVATE=true, production
// delivery settings) on a fresh PostgreSQL database. This process runs ENDPOINTS receivers (one
// HTTP server each, answering 204 after verifying the signature) and creates ENDPOINTS webhook
// endpoints, then makes EVENTS events through the API in each of three phases:
//
//   burst    EVENTS contacts (contact.created, one event per request) as fast as the API takes
//            them (CONNS at a time): deliveries per second and the delay from commit (the
//            envelope's occurred_at) to the first attempt's arrival, while the API is as busy as
//            it gets (target: p99 under 1 s);
//   backlog  EVENTS ticket.updated events from bulk changes of 100 tickets per request (CONNS
//            requests at a time, each on its own tickets): events come faster than a burst of
//            single writes, so this shows how fast the delivery path drains a backlog
//            (deliveries per second) if it builds one;
//   paced    EVENTS contacts at RATE per second: the delay at a steady, moderate load.
//
// Every delivery is checked: signature valid, each (endpoint, event) exactly once, every
// delivery record succeeded at its first attempt. Results: a table on stdout and one JSON line
// per phase in bench/results/webhooks-<time>.jsonl. Exit code 1 when a delivery is missing,
// repeated or badly signed.
//
// Needs PostgreSQL at 127.0.0.1:5432 (user postgres, trust); the database is dropped at the end.
//
// Env (all optional):
//   EVENTS     events per phase (default 10000, 100..100000)
//   ENDPOINTS  endpoints and receivers (default 10, 1..50)
//   RATE       events per second in the paced phase (default 100, 1..5000)
//   CONNS      concurrent API requests making events (default 8, 1..100)
//   PHASES     comma-separated: burst, backlog, paced (default all three)
//   PG_URL     PostgreSQL server URL without a database (default postgres://postgres@127.0.0.1:5432)
//   KEEP_DB=1  keep the database (its name is printed)
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { verifyWebhook } from '../src/webhooks.js';
import {
  call,
  cpuSeconds,
  envInt,
  expectStatus,
  HOST,
  percentile,
  type ServiceProcess,
  sleep,
  startServiceProcess,
} from './lib.js';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));

const EVENTS = envInt('EVENTS', 10_000, 100, 100_000);
const ENDPOINTS = envInt('ENDPOINTS', 10, 1, 50);
const RATE = envInt('RATE', 100, 1, 5000);
const CONNS = envInt('CONNS', 8, 1, 100);
type Phase = 'burst' | 'backlog' | 'paced';
const PHASES = (process.env.PHASES ?? 'burst,backlog,paced')
  .split(',')
  .map((p) => p.trim())
  .filter((p): p is Phase => p === 'burst' || p === 'backlog' || p === 'paced');
const PG_URL = (process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const KEEP_DB = process.env.KEEP_DB === '1';
const STAMP = new Date()
  .toISOString()
  .replace(/[-:]/g, '')
  .replace(/\.\d+Z$/, 'Z');
const DB_NAME = `svc_bench_webhooks_${STAMP.toLowerCase().replace(/[^a-z0-9]/g, '')}_${process.pid}`;
const RESULTS = join(BENCH_DIR, 'results', `webhooks-${STAMP}.jsonl`);

// ---------------------------------------------------------------------------------------------
// Receivers

class Receiver {
  /** event id → delay from commit to arrival (ms), first arrival only. */
  readonly first = new Map<string, number>();
  repeats = 0;
  badSignatures = 0;
  lastArrival = 0;
  secret = '';
  #server!: Server;
  port = 0;

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const now = Date.now();
        const raw = Buffer.concat(chunks);
        if (!verifyWebhook(this.secret, req.headers['svc-signature'] as string | undefined, raw)) this.badSignatures++;
        const e = JSON.parse(raw.toString('utf8')) as { id: string; occurred_at: string };
        if (this.first.has(e.id)) this.repeats++;
        else this.first.set(e.id, now - Date.parse(e.occurred_at));
        this.lastArrival = now;
        res.writeHead(204).end();
      });
    });
    this.#server.keepAliveTimeout = 30_000;
    await new Promise<void>((r) => this.#server.listen(0, HOST, r));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  reset(): void {
    this.first.clear();
    this.repeats = 0;
    this.badSignatures = 0;
    this.lastArrival = 0;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((r) => this.#server.close(r));
  }
}

// ---------------------------------------------------------------------------------------------
// The service

let service: ServiceProcess | null = null;

// ---------------------------------------------------------------------------------------------
// A phase

interface PhaseResult {
  phase: string;
  events: number;
  endpoints: number;
  rate_target: number | null;
  make_seconds: number;
  events_per_s: number;
  deliveries: number;
  missing: number;
  repeats: number;
  bad_signatures: number;
  deliveries_per_s: number;
  delay_ms: { p50: number; p90: number; p99: number; max: number; mean: number };
  service_cpu_s: number | null;
  records: Record<string, number>;
  first_attempt_only: boolean;
}

interface Setup {
  base: string;
  key: string;
  /** Owner headers (token and workspace). */
  as: Record<string, string>;
  webhookIds: string[];
  ticketIds: string[];
}

async function subscribe(s: Setup, events: string[]): Promise<void> {
  for (const id of s.webhookIds)
    expectStatus(await call(s.base, 'PATCH', `/v1/webhooks/${id}`, { events }, s.as), 200, 'subscribe');
}

async function runPhase(phase: Phase, s: Setup, receivers: Receiver[], db: pg.Client): Promise<PhaseResult> {
  await subscribe(s, [phase === 'backlog' ? 'ticket.updated' : 'contact.created']);
  for (const r of receivers) r.reset();
  const since = new Date();
  const cpu0 = cpuSeconds(service?.child.pid);
  const rate = phase === 'paced' ? RATE : null;
  const started = Date.now();
  let next = 0;
  let failed = 0;
  const auth = { authorization: `Bearer ${s.key}` };
  if (phase === 'backlog') {
    // 100 ticket.updated events per request (priority flips on every ticket), CONNS requests at
    // a time, each connection on its own 100 tickets.
    const groups = Array.from({ length: CONNS }, (_, c) => s.ticketIds.slice(c * 100, c * 100 + 100));
    const requests = Math.ceil(EVENTS / 100);
    await Promise.all(
      groups.map(async (ids, c) => {
        for (let i = c; i < requests; i += CONNS) {
          const patch = { priority: Math.floor(i / CONNS) % 2 === 0 ? 'high' : 'low' };
          const r = await call(s.base, 'POST', '/v1/tickets/bulk', { ids, patch }, auth);
          if (r.status !== 200) failed++;
        }
      }),
    );
  } else {
    // One contact (contact.created) per request.
    await Promise.all(
      Array.from({ length: CONNS }, async () => {
        for (;;) {
          const i = next++;
          if (i >= EVENTS) return;
          if (rate) {
            const wait = started + (i * 1000) / rate - Date.now();
            if (wait > 0) await sleep(wait);
          }
          const r = await call(
            s.base,
            'POST',
            '/v1/contacts',
            { name: `Bench ${phase} ${i}`, email: `bench-${phase}-${i}-${process.pid}@example.com` },
            auth,
          );
          if (r.status !== 201) failed++;
        }
      }),
    );
  }
  const made = Date.now();
  if (failed > 0) throw new Error(`${phase}: ${failed} requests failed`);
  const makeSeconds = (made - started) / 1000;

  // Wait for every receiver to have every event, or for 60 s without progress.
  const want = EVENTS * receivers.length;
  let lastCount = -1;
  let lastChange = Date.now();
  for (;;) {
    const count = receivers.reduce((n, r) => n + r.first.size, 0);
    if (count >= want) break;
    if (count !== lastCount) {
      lastCount = count;
      lastChange = Date.now();
    }
    if (Date.now() - lastChange > 60_000) break;
    await sleep(100);
  }
  await sleep(1000); // late repeats would show here
  const cpu1 = cpuSeconds(service?.child.pid);

  const delays = receivers.flatMap((r) => [...r.first.values()]).sort((a, b) => a - b);
  const got = delays.length;
  const lastArrival = Math.max(...receivers.map((r) => r.lastArrival));
  const records = await db.query<{ status: string; attempts: number; n: string }>(
    `SELECT status, attempts, count(*) AS n FROM webhook_deliveries WHERE created_at >= $1
      GROUP BY status, attempts ORDER BY status, attempts`,
    [since],
  );
  const recordCounts: Record<string, number> = {};
  for (const r of records.rows) recordCounts[`${r.status}/${r.attempts}`] = Number(r.n);
  const mean = delays.reduce((a, b) => a + b, 0) / Math.max(1, got);
  return {
    phase,
    events: EVENTS,
    endpoints: receivers.length,
    rate_target: rate,
    make_seconds: Math.round(makeSeconds * 10) / 10,
    events_per_s: Math.round(EVENTS / makeSeconds),
    deliveries: got,
    missing: want - got,
    repeats: receivers.reduce((n, r) => n + r.repeats, 0),
    bad_signatures: receivers.reduce((n, r) => n + r.badSignatures, 0),
    deliveries_per_s: Math.round(got / ((lastArrival - started) / 1000)),
    delay_ms: {
      p50: Math.round(percentile(delays, 50)),
      p90: Math.round(percentile(delays, 90)),
      p99: Math.round(percentile(delays, 99)),
      max: Math.round(delays.at(-1) ?? Number.NaN),
      mean: Math.round(mean),
    },
    service_cpu_s: cpu0 !== null && cpu1 !== null ? Math.round((cpu1 - cpu0) * 10) / 10 : null,
    records: recordCounts,
    first_attempt_only: Object.keys(recordCounts).every((k) => k === 'succeeded/1'),
  };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB_NAME}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-webhooks-'));
  const receivers: Receiver[] = [];
  let db: pg.Client | null = null;
  let exitCode = 0;
  try {
    service = await startServiceProcess({
      DATABASE_URL: `${PG_URL}/${DB_NAME}`,
      DATA_DIR: dataDir,
      RATE_LIMIT_PER_MINUTE: '10000000',
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      SECRET_KEY: randomBytes(32).toString('base64url'),
      INBOUND_SECRET: randomBytes(32).toString('base64url'),
    });
    const base = service.base;

    const reg = await call(base, 'POST', '/v1/auth/register', {
      email: `bench-webhooks-${process.pid}@example.com`,
      password: 'bench password 0123456789',
      name: 'Bench Owner',
    });
    expectStatus(reg, 201, 'register');
    const auth = { authorization: `Bearer ${reg.body.access_token}` };
    const ws = await call(base, 'POST', '/v1/workspaces', { name: 'Bench webhooks' }, auth);
    expectStatus(ws, 201, 'workspace');
    const as = { ...auth, 'svc-workspace': String(ws.body.id) };
    const k = await call(
      base,
      'POST',
      '/v1/api-keys',
      { name: 'bench', scopes: ['contacts:write', 'tickets:write'] },
      as,
    );
    expectStatus(k, 201, 'api key');
    const ticketIds: string[] = [];
    for (let i = 0; i < CONNS * 100; i++) {
      const t = await call(base, 'POST', '/v1/tickets', { subject: `Bench ${i}`, body_html: '<p>hello</p>' }, as);
      expectStatus(t, 201, 'ticket');
      ticketIds.push(String(t.body.id));
    }
    const webhookIds: string[] = [];

    for (let i = 0; i < ENDPOINTS; i++) {
      const r = new Receiver();
      await r.start();
      const w = await call(
        base,
        'POST',
        '/v1/webhooks',
        { url: `http://${HOST}:${r.port}/hook`, events: ['contact.created'] },
        as,
      );
      expectStatus(w, 201, 'webhook');
      r.secret = String(w.body.secret);
      webhookIds.push(String(w.body.id));
      receivers.push(r);
    }
    db = new pg.Client({ connectionString: `${PG_URL}/${DB_NAME}` });
    await db.connect();

    const cpuModel = cpus()[0]?.model ?? 'unknown';
    console.log(
      `bench webhooks ${STAMP}: ${availableParallelism()} cores (${cpuModel}), node ${process.version}; ` +
        `${EVENTS} events per phase to ${ENDPOINTS} endpoints, ${CONNS} API connections; database ${DB_NAME}`,
    );
    mkdirSync(dirname(RESULTS), { recursive: true });
    const results: PhaseResult[] = [];
    const setup: Setup = { base, key: String(k.body.key), as, webhookIds, ticketIds };
    for (const phase of PHASES) {
      const r = await runPhase(phase, setup, receivers, db);
      results.push(r);
      appendFileSync(RESULTS, `${JSON.stringify({ stamp: STAMP, ...r })}\n`);
      if (r.missing > 0 || r.repeats > 0 || r.bad_signatures > 0) exitCode = 1;
    }

    console.log('');
    console.log(
      'phase   | events/s made | deliveries | missing | repeats | bad sig | deliveries/s | delay p50 / p90 / p99 / max (ms) | service CPU s | records',
    );
    for (const r of results) {
      console.log(
        [
          r.phase.padEnd(7),
          `${r.events_per_s}${r.rate_target ? ` (target ${r.rate_target})` : ''}`.padStart(13),
          String(r.deliveries).padStart(10),
          String(r.missing).padStart(7),
          String(r.repeats).padStart(7),
          String(r.bad_signatures).padStart(7),
          String(r.deliveries_per_s).padStart(12),
          `${r.delay_ms.p50} / ${r.delay_ms.p90} / ${r.delay_ms.p99} / ${r.delay_ms.max}`.padStart(32),
          String(r.service_cpu_s ?? '?').padStart(13),
          JSON.stringify(r.records),
        ].join(' | '),
      );
    }
    console.log(`\nresults: ${RESULTS}`);
    const warnings = service.lines.filter((l) => /"level":(40|50|60)/.test(l));
    if (warnings.length > 0) console.log(`service warnings (${warnings.length}):\n${warnings.slice(-10).join('\n')}`);
  } finally {
    await db?.end().catch(() => {});
    await service?.stop();
    for (const r of receivers) await r.stop().catch(() => {});
    if (KEEP_DB) console.log(`kept database ${DB_NAME}`);
    else await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(exitCode);
}

process.on('SIGINT', () => {
  service?.child.kill('SIGTERM');
  process.exit(130);
});

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  service?.child.kill('SIGTERM');
  process.exit(1);
});
