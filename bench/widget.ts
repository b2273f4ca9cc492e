// npm run bench:widget: the chat widget (issue 24), on PostgreSQL (a fresh database, created here
// and dropped at the end; PG_URL, default postgres://postgres@127.0.0.1:5432).
//
//   BENCH_VISITORS=200 BENCH_SECONDS=60 BENCH_WARM_MS=10000 BENCH_PERIOD_MS=5000 npm run bench:widget
//
// (a) Chat both ways at BENCH_VISITORS concurrent visitors. Each visitor has a session, one
//     conversation and its widget socket (the official Phoenix client, as the widget uses, on
//     /socket/widget/websocket, joined to its contact topic); one agent socket is joined to the
//     workspace topic. Every visitor sends a message every BENCH_PERIOD_MS (random phase) through
//     POST /v1/widget/conversations/{id}/messages; when the agent's socket receives it
//     (message.created), the agent answers through POST /v1/tickets/{id}/messages, and the
//     visitor's socket receives the reply. Measured, from the moment the sender starts its HTTP
//     request to the moment the other side's socket has the message (what the people see): visitor
//     message → agent socket, and agent reply → visitor socket; p50, p99, max. The first
//     BENCH_WARM_MS (10 s) are not counted: a fresh process's first seconds (code not yet
//     optimized, pools filling) are a start-up cost, not the steady state; with 5 s the p99 was
//     several times higher. The p99 of each 10-second window is printed, to show the tail is steady. The clients run in this process (one event loop for
//     201 sockets and the HTTP calls: their delays are in the figures).
// (b) GET /widget.js against the same bytes with the same headers served from memory by Fastify
//     (bench/static-server.mjs), plain (identity, what autocannon asks) and gzipped (what
//     browsers ask): autocannon, BENCH_HTTP_CONNECTIONS (20) connections, BENCH_HTTP_SECONDS (10)
//     each after 3 s of warm-up, the two sides one after the other.
//
// The service is npm start's code from the sources (bench/lib.ts), so /widget.js is bundled in
// memory at its first request, from the same definition as the build (scripts/widget-bundle.mjs).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { Socket } from 'phoenix';
import WebSocket from 'ws';
import {
  call,
  cpuSeconds,
  envInt,
  expectStatus,
  freePort,
  HOST,
  percentile,
  ROOT,
  type ServiceProcess,
  sleep,
  startServiceProcess,
} from './lib.js';

const VISITORS = envInt('BENCH_VISITORS', 200, 1, 5000);
const SECONDS = envInt('BENCH_SECONDS', 60, 5, 3600);
const PERIOD_MS = envInt('BENCH_PERIOD_MS', 5000, 100, 600_000);
const WARM_MS = envInt('BENCH_WARM_MS', 10_000, 0, 600_000);
const HTTP_CONNECTIONS = envInt('BENCH_HTTP_CONNECTIONS', 20, 1, 1000);
const HTTP_SECONDS = envInt('BENCH_HTTP_SECONDS', 10, 1, 600);
const PG_URL = (process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const STAMP = new Date()
  .toISOString()
  .replace(/[-:]/g, '')
  .replace(/\.\d+Z$/, 'Z');
const DB_NAME = `svc_bench_widget_${STAMP.toLowerCase().replace(/[^a-z0-9]/g, '')}_${process.pid}`;
const RESULTS = join(ROOT, 'bench', 'results', `widget-${STAMP}.jsonl`);

let service: ServiceProcess | null = null;
let staticServer: ChildProcess | null = null;

const ms = (v: number) => Math.round(v * 10) / 10;
function summary(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  return { n: s.length, p50: ms(percentile(s, 50)), p99: ms(percentile(s, 99)), max: ms(s.at(-1) ?? Number.NaN) };
}

function byWindow(samples: Array<[number, number]>, width: number): number[] {
  if (samples.length === 0) return [];
  const start = samples[0]![0];
  const groups: number[][] = [];
  for (const [t, v] of samples) {
    const i = Math.floor((t - start) / width);
    groups[i] = [...(groups[i] ?? []), v];
  }
  return groups.map((g) =>
    ms(
      percentile(
        [...g].sort((a, b) => a - b),
        99,
      ),
    ),
  );
}

/** A Phoenix socket (the widget's client) over `ws`, joined to one topic; resolves once joined. */
async function joinedSocket(url: string, token: string, topic: string, onEvent: (e: any) => void) {
  const socket = new Socket(url, {
    transport: WebSocket as never,
    params: { token },
    reconnectAfterMs: () => 1000,
    heartbeatIntervalMs: 30_000,
  });
  socket.connect();
  const ch = socket.channel(topic, {});
  ch.on('event', onEvent);
  await new Promise<void>((resolve, reject) => {
    ch.join(10_000)
      .receive('ok', () => resolve())
      .receive('error', (r) => reject(new Error(`join ${topic}: ${JSON.stringify(r)}`)))
      .receive('timeout', () => reject(new Error(`join ${topic}: timeout`)));
  });
  return socket;
}

/** Runs `fn` over `items`, `n` at a time. */
async function pool<T>(items: T[], n: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

// ------------------------------------------------------------------------------- (a) chat

async function chat(base: string) {
  const reg = await call(base, 'POST', '/v1/auth/register', {
    email: `bench-widget-${process.pid}@example.com`,
    password: 'bench password 0123456789',
    name: 'Olivia Agent',
  });
  expectStatus(reg, 201, 'register');
  const auth = { authorization: `Bearer ${reg.body.access_token}` };
  const ws = await call(base, 'POST', '/v1/workspaces', { name: 'Bench widget' }, auth);
  expectStatus(ws, 201, 'workspace');
  const agentHeaders = { ...auth, 'svc-workspace': String(ws.body.id) };
  const workspace = await call(base, 'GET', '/v1/workspace', undefined, agentHeaders);
  const key = workspace.body.widget_key as string;
  const socketUrl = `${base.replace(/^http/, 'ws')}/socket`;

  // Visitors: a session, a conversation, a socket each.
  interface Visitor {
    token: string;
    conversation: string;
    socket: Socket | null;
  }
  const visitors: Visitor[] = Array.from({ length: VISITORS }, () => ({ token: '', conversation: '', socket: null }));
  /** Marker → when its HTTP request started; the receiving socket takes it out. */
  const sentToAgent = new Map<string, number>();
  const sentToVisitor = new Map<string, number>();
  const toAgent: number[] = [];
  const toVisitor: number[] = [];
  const visitorPost: number[] = [];
  const agentPost: number[] = [];
  let counting = false;
  let failures = 0;
  /** [when, visitor → agent latency]: the p99 of each 10-second window says whether the tail is steady. */
  const windows: Array<[number, number]> = [];

  const started = performance.now();
  await pool(visitors, 20, async (v, i) => {
    const s = await call(base, 'POST', '/v1/widget/session', { key, name: `Visitor ${i}` });
    expectStatus(s, 200, 'session');
    v.token = s.body.visitor_token;
    const c = await call(
      base,
      'POST',
      '/v1/widget/conversations',
      { body: `Hello from visitor ${i}` },
      { authorization: `Visitor ${v.token}` },
    );
    expectStatus(c, 201, 'conversation');
    v.conversation = c.body.id;
    v.socket = await joinedSocket(`${socketUrl}/widget`, s.body.ws_token, s.body.topic, (e) => {
      if (e.type !== 'message.created' || e.data.message.direction !== 'outbound') return;
      const marker = String(e.data.message.body_text).trim();
      const at = sentToVisitor.get(marker);
      if (at === undefined) return;
      sentToVisitor.delete(marker);
      if (counting) toVisitor.push(performance.now() - at);
    });
  });
  const rt = await call(base, 'POST', '/v1/realtime/token', undefined, agentHeaders);
  expectStatus(rt, 200, 'realtime token');
  const replyTo = async (conversation: string, marker: string) => {
    const reply = `r-${marker.slice(2)}`;
    const t0 = performance.now();
    sentToVisitor.set(reply, t0);
    const r = await call(
      base,
      'POST',
      `/v1/tickets/${conversation}/messages`,
      { kind: 'reply', body_html: `<p>${reply}</p>` },
      agentHeaders,
    );
    if (r.status !== 201) {
      failures++;
      sentToVisitor.delete(reply);
    } else if (counting) agentPost.push(performance.now() - t0);
  };
  const agent = await joinedSocket(socketUrl, rt.body.token, `workspace:${ws.body.id}`, (e) => {
    if (e.type !== 'message.created' || e.data.message.direction !== 'inbound') return;
    const marker = String(e.data.message.body_text).trim();
    const at = sentToAgent.get(marker);
    if (at === undefined) return;
    sentToAgent.delete(marker);
    if (counting) {
      toAgent.push(performance.now() - at);
      windows.push([performance.now(), performance.now() - at]);
    }
    void replyTo(e.data.ticket_id, marker);
  });
  const setupSeconds = (performance.now() - started) / 1000;
  console.log(`(a) ${VISITORS} visitors with a session, a conversation and a socket in ${setupSeconds.toFixed(1)} s`);

  // Every visitor sends every PERIOD_MS, each at its own phase.
  const cpu0 = cpuSeconds(service?.child.pid);
  const end = performance.now() + SECONDS * 1000;
  setTimeout(() => {
    counting = true;
  }, WARM_MS);
  let n = 0;
  await Promise.all(
    visitors.map(async (v, i) => {
      await sleep(Math.random() * PERIOD_MS);
      while (performance.now() < end) {
        const marker = `m-${i}-${n++}`;
        const t0 = performance.now();
        sentToAgent.set(marker, t0);
        const r = await call(
          base,
          'POST',
          `/v1/widget/conversations/${v.conversation}/messages`,
          { body: marker },
          { authorization: `Visitor ${v.token}` },
        );
        if (r.status !== 201) {
          failures++;
          sentToAgent.delete(marker);
        } else if (counting) visitorPost.push(performance.now() - t0);
        await sleep(Math.max(0, PERIOD_MS - (performance.now() - t0)));
      }
    }),
  );
  // The last replies arrive.
  for (let i = 0; i < 50 && (sentToAgent.size > 0 || sentToVisitor.size > 0); i++) await sleep(100);
  const cpu1 = cpuSeconds(service?.child.pid);
  for (const v of visitors) v.socket?.disconnect();
  agent.disconnect();
  return {
    visitors: VISITORS,
    seconds: SECONDS,
    period_ms: PERIOD_MS,
    messages_per_second: ms(VISITORS / (PERIOD_MS / 1000)),
    visitor_to_agent_ms: summary(toAgent),
    agent_to_visitor_ms: summary(toVisitor),
    visitor_post_ms: summary(visitorPost),
    agent_post_ms: summary(agentPost),
    visitor_to_agent_p99_by_10s: byWindow(windows, 10_000),
    undelivered: sentToAgent.size + sentToVisitor.size,
    failed_requests: failures,
    service_cpu_s: cpu0 !== null && cpu1 !== null ? ms(cpu1 - cpu0) : null,
  };
}

// ------------------------------------------------------------------------------- (b) widget.js

function cannon(url: string, headers: Record<string, string>, seconds: number) {
  return new Promise<autocannon.Result>((resolve, reject) => {
    autocannon({ url, connections: HTTP_CONNECTIONS, duration: seconds, headers }, (err, r) =>
      err ? reject(err) : resolve(r),
    );
  });
}

async function startStatic(body: Buffer, headers: Record<string, string>, dir: string): Promise<string> {
  const bodyFile = join(dir, 'widget.body');
  const headersFile = join(dir, 'widget.headers.json');
  writeFileSync(bodyFile, body);
  writeFileSync(headersFile, JSON.stringify(headers));
  const port = await freePort();
  staticServer = spawn(process.execPath, [join(ROOT, 'bench', 'static-server.mjs'), bodyFile, headersFile], {
    env: { ...process.env, PORT: String(port), HOST },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const base = `http://${HOST}:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return base;
    } catch {
      // not yet
    }
    await sleep(100);
  }
  throw new Error('the static server did not start');
}

async function stopStatic(): Promise<void> {
  const s = staticServer;
  staticServer = null;
  if (!s || s.exitCode !== null) return;
  s.kill('SIGTERM');
  await Promise.race([new Promise((r) => s.once('exit', r)), sleep(5000)]);
}

/** The response as the service sends it (node:http: no decompression), for the static side. */
async function capture(url: string, headers: Record<string, string>) {
  const { get } = await import('node:http');
  return new Promise<{ body: Buffer; headers: Record<string, string> }>((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h[k] = v;
        delete h['x-request-id'];
        resolve({ body: Buffer.concat(chunks), headers: h });
      });
    }).on('error', reject);
  });
}

async function script(base: string, dir: string) {
  const out: Record<string, unknown> = {};
  for (const [name, headers] of [
    ['identity', {}],
    ['gzip', { 'accept-encoding': 'gzip' }],
  ] as const) {
    const served = await capture(`${base}/widget.js`, headers);
    const staticBase = await startStatic(served.body, served.headers, dir);
    try {
      const sides: Record<string, autocannon.Result> = {};
      for (const [side, url] of [
        ['service', `${base}/widget.js`],
        ['static', `${staticBase}/widget.js`],
      ] as const) {
        await cannon(url, headers, 3);
        sides[side] = await cannon(url, headers, HTTP_SECONDS);
      }
      const row = (r: autocannon.Result) => ({
        requests_per_second: Math.round(r.requests.average),
        latency_p50_ms: r.latency.p50,
        latency_p99_ms: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors,
      });
      out[name] = {
        bytes: served.body.length,
        service: row(sides.service!),
        static: row(sides.static!),
        ratio_rps: ms(sides.service!.requests.average / sides.static!.requests.average),
      };
      console.log(`(b) ${name}: ${JSON.stringify(out[name])}`);
    } finally {
      await stopStatic();
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB_NAME}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-widget-'));
  let exitCode = 0;
  try {
    service = await startServiceProcess({
      DATABASE_URL: `${PG_URL}/${DB_NAME}`,
      DATA_DIR: dataDir,
      RATE_LIMIT_PER_MINUTE: '10000000',
      // Every bench visitor comes from this one address.
      WIDGET_SESSIONS_PER_IP: '1000000',
      LOG_LEVEL: 'warn',
      SECRET_KEY: randomBytes(32).toString('base64url'),
      INBOUND_SECRET: randomBytes(32).toString('base64url'),
    });
    const commit = await new Promise<string>((resolve) => {
      const g = spawn('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT });
      let s = '';
      g.stdout.on('data', (c) => {
        s += c;
      });
      g.on('close', () => resolve(s.trim()));
    });
    const a = await chat(service.base);
    console.log(`(a) ${JSON.stringify(a)}`);
    const b = await script(service.base, dataDir);
    const result = { date: new Date().toISOString(), commit, database: 'postgresql', chat: a, script: b };
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(RESULTS, `${JSON.stringify(result)}\n`);
    console.log(`\nresults: ${RESULTS}`);
    const warnings = service.lines.filter((l) => /"level":(40|50|60)/.test(l));
    if (warnings.length > 0) console.log(`service warnings (${warnings.length}):\n${warnings.slice(-10).join('\n')}`);
  } catch (err) {
    console.error(err);
    exitCode = 1;
  } finally {
    await stopStatic();
    await service?.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(exitCode);
}

process.on('SIGINT', () => {
  void (async () => {
    await stopStatic();
    await service?.stop();
    process.exit(130);
  })();
});

await main();
