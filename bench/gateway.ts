// npm run bench:gateway: the realtime gateway's fan-out against the raw `ws` limit
// (../shared/bench/limit-ws.mjs, Phoenix framing, encode once) in the same run.
//
//   npm run bench:gateway -- [--clients 1000,5000] [--rate 5] [--seconds 20] [--rounds 3]
//                            [--search 7500,10000,12500,15000,17500 | --no-search] [--no-limit] [--split]
//
// --rounds: each socket count is measured in this many rounds, each the service's run followed by
// the limit's; the table gives each side's median of its rounds, and every round is printed.
//
// --split: the deployment of docs/operations.md instead of one process: the API in one process
// and the gateway alone in another (`npm run gateway`'s code), events between them over NATS
// (NATS_URL, default nats://127.0.0.1:4222; needs DATABASE_URL). The sockets and the memory
// figures are the gateway process's; publish→delivery then includes the NATS hop.
//
// A service process (createRuntime: API + gateway on one port; PostgreSQL when DATABASE_URL is
// set, else the embedded database in memory) is forked; this process opens N raw WebSocket
// clients (the limit's client code path: `ws`, indexOf instead of JSON.parse), each joined to one
// workspace topic. A third process creates tickets through the HTTP API at a steady rate; every
// `ticket.created` envelope's occurred_at (read just before COMMIT) is compared with the
// client's receipt time: commit-to-delivery latency. Memory per socket is the service's RSS
// growth from connecting and joining N sockets, as the limit measures it.
// Everything binds to 127.0.0.1; socket counts are bounded (20,000 descriptors per process).
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const SELF = fileURLToPath(import.meta.url);
const ROOT = resolve(dirname(SELF), '..');
// SHARED_BENCH names the folder of the limit servers when the repository is not next to it (a git worktree).
const LIMIT_WS = resolve(process.env.SHARED_BENCH ?? resolve(ROOT, '../shared/bench'), 'limit-ws.mjs');
const MAX_SOCKETS = 18_000;
/** Events of the paced phase (limit-ws.mjs --broadcasts 30). */
const PACED = 30;
/** Tickets created before the steady phase, not measured. */
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 25);

// ------------------------------------------------------------------------------- the service

async function serverMain() {
  const { loadConfig } = await import('../src/config.js');
  const { createRuntime } = await import('../src/runtime.js');
  const config = loadConfig({
    ...process.env,
    DATABASE_IN_MEMORY: process.env.DATABASE_URL ? 'false' : 'true',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-bench-gw-')),
    PORT: '0',
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '10000000',
    LOG_LEVEL: 'warn',
  });
  const rt = await createRuntime(config, { jobs: false });
  const url = (await rt.listen()).replace('[::1]', '127.0.0.1');
  const send = (m: object) => process.send?.(m);
  // When each event went to the bus (right after its COMMIT): the start of the gateway's own part.
  const published = new Map<number, number>();
  // How long the in-process dispatch of each publish took (every bus handler, the gateway's
  // fan-out first): the in-memory bus runs them in one microtask, so a microtask queued after
  // the publish runs once they are done. Not measurable across NATS.
  const dispatched = new Map<number, number>();
  const bus = rt.deps.bus;
  const publish = bus.publish.bind(bus);
  bus.publish = (events) => {
    const t = mono();
    for (const e of events) if (!published.has(e.seq)) published.set(e.seq, t);
    const p = publish(events);
    if (bus.kind === 'memory')
      queueMicrotask(() => {
        const d = mono() - t;
        for (const e of events) if (!dispatched.has(e.seq)) dispatched.set(e.seq, d);
      });
    return p;
  };
  const pauses = gcPauses();
  process.on('message', async (m: any) => {
    if (m.cmd === 'mem') {
      // RSS as the limit reads it (no collection first), and the live heap after a full collection.
      const rss = process.memoryUsage().rss;
      (globalThis as { gc?: () => void }).gc?.();
      const mem = { ...process.memoryUsage(), rss };
      send({ cmd: 'mem', rss: mem.rss, heap: mem.heapUsed, total: mem.heapTotal, sockets: rt.gateway.stats().sockets });
    } else if (m.cmd === 'published') {
      send({ cmd: 'published', stamps: [...published], dispatched: [...dispatched], gc: pauses.splice(0) });
      published.clear();
      dispatched.clear();
    } else if (m.cmd === 'stop') {
      await rt.stop();
      process.exit(0);
    }
  });
  send({ cmd: 'ready', url });
}

/**
 * The API client that creates the tickets, in a process of its own: neither the service (whose
 * fan-out is measured) nor the receiving clients share their event loop with it, as no
 * deployment's API clients run inside the service.
 */
async function creatorMain() {
  const send = (m: object) => process.send?.(m);
  process.on('message', async (m: any) => {
    if (m.cmd === 'create') {
      // Steady rate: one ticket every 1000/rate ms (the next starts at once if one takes longer).
      const every = 1000 / m.rate;
      const t0 = performance.now();
      let failed = 0;
      for (let i = 0; i < m.count; i++) {
        const wait = t0 + i * every - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const r = await fetch(`${m.url}/v1/tickets`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${m.token}`, 'svc-workspace': m.wid },
          body: JSON.stringify({ subject: `Bench ticket ${i}`, priority: 'high' }),
        });
        if (r.status !== 201) failed++;
        await r.arrayBuffer();
      }
      send({ cmd: 'created', failed });
    } else if (m.cmd === 'stop') {
      process.exit(0);
    }
  });
  send({ cmd: 'ready' });
}

/** --split: the gateway alone (src/gateway-main.ts's wiring), in its own process. */
async function gatewayMain() {
  const { createServer } = await import('node:http');
  const pino = (await import('pino')).default;
  const { loadConfig } = await import('../src/config.js');
  const { Gateway, gatewayHttpHandler } = await import('../src/gateway/index.js');
  const { openBus } = await import('../src/platform/bus/index.js');
  const { TokenSigner } = await import('../src/platform/crypto/tokens.js');
  const { openDatabase } = await import('../src/platform/db/index.js');
  const config = loadConfig({ ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn' });
  const log = pino({ level: 'warn', base: { role: 'gateway' } });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, memory: false });
  const bus = await openBus(config.natsUrl);
  const gateway = new Gateway({ config, database, bus, tokens: new TokenSigner(config.secretKey), log });
  await gateway.start();
  const server = createServer(gatewayHttpHandler(gateway));
  gateway.attach(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  const send = (m: object) => process.send?.(m);
  process.on('message', async (m: any) => {
    if (m.cmd === 'mem') {
      const rss = process.memoryUsage().rss;
      (globalThis as { gc?: () => void }).gc?.();
      const { heapUsed, heapTotal } = process.memoryUsage();
      send({ cmd: 'mem', rss, heap: heapUsed, total: heapTotal, sockets: gateway.stats().sockets });
    } else if (m.cmd === 'stop') {
      await gateway.close();
      server.close();
      await bus.close();
      await database.close();
      process.exit(0);
    }
  });
  send({ cmd: 'ready', url: `http://127.0.0.1:${port}` });
}

// ------------------------------------------------------------------------------- the clients

interface Run {
  clients: number;
  joined: number;
  connect_per_s: number;
  server_kib_per_socket: number;
  /** Live JS heap per socket after a full collection (the limit does not report it). */
  heap_kib_per_socket: number;
  events: number;
  deliveries: number;
  missing: number;
  duplicates: number;
  out_of_order: number;
  /** From occurred_at (read just before the event's INSERT and COMMIT) to the client's receipt. */
  latency: {
    p50_ms: number;
    p99_ms: number;
    max_ms: number;
    fanout_complete_p50_ms: number;
    fanout_complete_p99_ms: number;
  };
  /** From the publish to the bus (just after COMMIT) to the client's receipt: the gateway's own part. */
  gateway_latency: { p50_ms: number; p99_ms: number; max_ms: number };
  /** publish→delivery with events paced as limit-ws.mjs paces its broadcasts (one at a time). */
  paced_latency: { p50_ms: number; p99_ms: number; max_ms: number };
  frame_bytes: number;
  error?: string;
}

function args() {
  const a: Record<string, string | boolean> = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i]!;
    if (!k.startsWith('--')) continue;
    const v = argv[i + 1];
    if (v !== undefined && !v.startsWith('--')) {
      a[k.slice(2)] = v;
      i++;
    } else a[k.slice(2)] = true;
  }
  const list = (v: unknown, d: string) =>
    String(v ?? d)
      .split(',')
      .filter(Boolean)
      .map((n) => Math.min(MAX_SOCKETS, Math.max(1, Number(n))));
  return {
    clients: list(a.clients, '1000,5000'),
    search: a['no-search'] === true ? [] : list(a.search, '7500,10000,12500,15000,17500'),
    rate: Math.min(100, Math.max(0.5, Number(a.rate ?? 5))),
    rounds: Math.min(9, Math.max(1, Math.round(Number(a.rounds ?? 3)))),
    seconds: Math.min(120, Math.max(2, Number(a.seconds ?? 20))),
    limit: a['no-limit'] !== true,
    split: a.split === true,
  };
}

const pct = (sorted: Float64Array, p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! : Number.NaN;
const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the service's V8 heap holds at most 16 MiB beyond its live objects (after the
 * start-up shrink: 106 → 75 MiB for 67 MiB live), then one more reading; at most 20 s.
 */
async function settled(gw: ChildProcess, waitOn: (p: ChildProcess, cmd: string) => Promise<any>): Promise<void> {
  const t0 = now();
  let slackReadings = 0;
  while (now() - t0 < 20_000) {
    gw.send({ cmd: 'mem' });
    const m = await waitOn(gw, 'mem');
    if (m.total - m.heap <= 16 * 1048576) {
      if (++slackReadings >= 2) return;
    } else slackReadings = 0;
    await sleep(500);
  }
}

/**
 * This process's garbage collection pauses as [start, duration] in mono() milliseconds, kept
 * until taken (splice): the tail of a fan-out is read against them.
 */
function gcPauses(): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  const offset = mono() - performance.now();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (out.length < 100_000) out.push([e.startTime + offset, e.duration]);
  }).observe({ entryTypes: ['gc'] });
  return out;
}

/** Total pause (ms) of `gc` overlapping [from, to]. */
const pausedIn = (gc: Array<[number, number]>, from: number, to: number) =>
  gc.reduce((sum, [start, d]) => sum + Math.max(0, Math.min(to, start + d) - Math.max(from, start)), 0);

/** Wall clock with sub-millisecond digits (occurred_at is wall clock, in milliseconds). */
const now = () => performance.timeOrigin + performance.now();
/** The system's monotonic clock in ms, the same in every process (as limit-ws.mjs measures). */
const mono = () => Number(process.hrtime.bigint()) / 1e6;
/** Wall clock = monotonic + this (one clock read per receipt). */
const wallMinusMono = now() - mono();

async function main() {
  const o = args();
  if (o.split) {
    if (!process.env.DATABASE_URL)
      throw new Error('--split needs DATABASE_URL (the API and the gateway share PostgreSQL)');
    process.env.NATS_URL ??= 'nats://127.0.0.1:4222';
    // The gateway checks the API's realtime tokens: both processes need the same key.
    process.env.SECRET_KEY ??= randomBytes(32).toString('base64url');
  }
  split = o.split;
  clientPauses = gcPauses();
  console.log(
    `bench:gateway — clients ${o.clients.join(', ')}, ${o.rate} tickets/s for ${o.seconds} s each, database ${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded (memory)'}`,
  );
  // Each socket count in `rounds` alternated rounds (the service, then the limit at the
  // service's frame size), so both sides meet the same machine; each side's figures are the
  // median of its rounds. One round's p99 is decided by the two or three slowest fan-outs, and the
  // limit's own p99 at 1,000 sockets swung 20–128 ms between runs minutes apart on this machine.
  const results: Run[] = [];
  const rounds: Array<{ clients: number; service: Run[]; limit: any[] }> = [];
  const limit: any[] | null = o.limit ? [] : null;
  for (const n of o.clients) {
    const round: { clients: number; service: Run[]; limit: any[] } = { clients: n, service: [], limit: [] };
    for (let r = 1; r <= o.rounds; r++) {
      if (o.rounds > 1) console.log(`\nround ${r} of ${o.rounds} at ${n} sockets`);
      const run = await runOne(n, o.rate, o.seconds);
      round.service.push(run);
      if (limit) {
        const l = (await runLimit([n], run.frame_bytes || 1024))?.[0];
        if (l) round.limit.push(l);
      }
    }
    rounds.push(round);
    results.push(medianRun(round.service));
    if (limit && round.limit.length > 0) limit.push(medianLimit(round.limit));
  }
  const search: Run[] = [];
  if (o.search.length > 0) {
    console.log('\nsearch: the socket count where delivery p99 passes 250 ms');
    for (const n of o.search) {
      const r = await runOne(n, o.rate, Math.min(o.seconds, 10));
      search.push(r);
      if (r.error || r.latency.p99_ms > 250) break;
    }
  }
  report(results, limit, search, rounds);
  console.log(`\nSUMMARY ${JSON.stringify({ gateway: results, limit, search, rounds })}`);
  process.exit(0);
}

let split = false;
/** The receiving clients' GC pauses (this process's), taken per phase; observed from main(). */
let clientPauses: Array<[number, number]> = [];

async function runOne(n: number, rate: number, seconds: number): Promise<Run> {
  // BENCH_CPU_PROF=<dir>: a V8 CPU profile of each service process, written there when it stops.
  // BENCH_NODE_FLAGS: more Node flags for the service process (e.g. --trace-gc).
  const prof = [
    ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ...(process.env.BENCH_NODE_FLAGS?.split(' ').filter(Boolean) ?? []),
  ];
  const child = fork(SELF, ['--server'], {
    execArgv: ['--import', 'tsx', '--expose-gc', ...prof],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // --split: the sockets go to a gateway process of their own; tickets are still created by the API.
  const gw = split
    ? fork(SELF, ['--gateway'], {
        execArgv: ['--import', 'tsx', '--expose-gc', ...prof],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      })
    : child;
  const waitOn = (proc: ChildProcess, cmd: string, ms = 120_000) =>
    new Promise<any>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timeout waiting for ${cmd}`)), ms);
      const h = (m: any) => {
        if (m.cmd !== cmd) return;
        clearTimeout(timer);
        proc.off('message', h);
        resolve(m);
      };
      proc.on('message', h);
    });
  const wait = (cmd: string, ms = 120_000) => waitOn(child, cmd, ms);
  const gwReady = gw === child ? null : waitOn(gw, 'ready');
  const creator = fork(SELF, ['--creator'], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const creatorReady = waitOn(creator, 'ready');
  const sockets: WebSocket[] = [];
  try {
    const { url } = await wait('ready');
    const socketUrl = gwReady ? (await gwReady).url : url;
    const setup = await tenant(url);
    await creatorReady;
    // The baseline is read once V8 has returned its start-up memory: about 5 s after the service
    // goes idle its memory reducer shrinks the heap (seen: heapTotal 100 → 69 MiB, RSS −30 MiB at
    // 5 s, on both databases, and again after the previous size's sockets closed). Read before
    // that, the 1,000-socket figure came out negative.
    await settled(gw, waitOn);
    gw.send({ cmd: 'mem' });
    const mem0 = await waitOn(gw, 'mem');

    // Receipts: per seq, how many clients got it, and latencies (ms) from occurred_at.
    const receipts = new Receipts(n * (Math.round(rate * seconds) + PACED + 10));
    const bySeq = new Map<number, { occurred: number; count: number; first: number; last: number }>();
    let frameBytes = 0;
    let complete = 0;
    let waiter: { expected: number; resolve: () => void } | null = null;
    const joinedCount = { v: Number.POSITIVE_INFINITY };
    let outOfOrder = 0;
    const onEvent = (s: string, lastSeq: { v: number }) => {
      const m = mono();
      const t = m + wallMinusMono;
      const j = s.indexOf('"seq":');
      const seq = Number.parseInt(s.slice(j + 6), 10);
      if (seq <= lastSeq.v) outOfOrder++;
      lastSeq.v = seq;
      let entry = bySeq.get(seq);
      if (!entry) {
        const i = s.indexOf('"occurred_at":"');
        entry = { occurred: Date.parse(s.slice(i + 15, s.indexOf('"', i + 15))), count: 0, first: t, last: 0 };
        bySeq.set(seq, entry);
        frameBytes = Buffer.byteLength(s);
      }
      entry.count++;
      entry.last = t;
      if (entry.count === joinedCount.v) {
        complete++;
        if (waiter && complete >= waiter.expected) {
          const w = waiter;
          waiter = null;
          w.resolve();
        }
      }
      receipts.add(seq, m, t - entry.occurred);
    };

    const topic = `workspace:${setup.wid}`;
    const wsUrl = `${socketUrl.replace('http', 'ws')}/socket/websocket?vsn=2.0.0&token=${setup.wsToken}`;
    const t0 = now();
    let joined = 0;
    let failed = 0;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`connect timeout: joined ${joined}/${n}`)), 120_000);
      let started = 0;
      let inflight = 0;
      const settle = () => {
        inflight--;
        if (joined + failed === n) {
          clearTimeout(timer);
          resolve();
        } else pump();
      };
      const pump = () => {
        while (inflight < 200 && started < n) {
          started++;
          inflight++;
          const ws = new WebSocket(wsUrl, { perMessageDeflate: false });
          sockets.push(ws);
          const last = { v: 0 };
          let isJoined = false;
          ws.on('open', () => ws.send(JSON.stringify(['1', '1', topic, 'phx_join', {}])));
          ws.on('message', (data) => {
            const s = data.toString();
            if (!isJoined) {
              isJoined = true;
              joined++;
              settle();
              return;
            }
            if (s.startsWith('[null,null,')) onEvent(s, last);
          });
          ws.on('error', () => {
            if (isJoined) return;
            isJoined = true;
            failed++;
            settle();
          });
        }
      };
      pump();
    });
    const connectMs = now() - t0;
    joinedCount.v = joined;
    await sleep(500);
    gw.send({ cmd: 'mem' });
    const mem1 = await waitOn(gw, 'mem');
    const kib = (mem1.rss - mem0.rss) / Math.max(1, joined) / 1024;
    const heapKib = (mem1.heap - mem0.heap) / Math.max(1, joined) / 1024;
    console.log(
      `\nN=${n}: joined ${joined} (failed ${failed}) in ${Math.round(connectMs)} ms (${Math.round(joined / (connectMs / 1000))}/s); service RSS +${round((mem1.rss - mem0.rss) / 1048576)} MiB = ${round(kib)} KiB/socket; live heap +${round(heapKib)} KiB/socket`,
    );

    // A heartbeat now and then, as clients do (the gateway closes sockets silent for 60 s).
    const beat = setInterval(() => {
      for (const ws of sockets) if (ws.readyState === WebSocket.OPEN) ws.send('[null,"hb","phoenix","heartbeat",{}]');
    }, 25_000);

    // Warm-up, then the steady phase.
    const create = async (count: number, r: number) => {
      creator.send({ cmd: 'create', url, count, rate: r, token: setup.token, wid: setup.wid });
      const done = await waitOn(creator, 'created', (count / r) * 1000 + 120_000);
      if (done.failed) throw new Error(`${done.failed} ticket creations failed`);
    };
    /** Resolves when `expected` events have reached every socket (or after `ms`). */
    const allIn = (ms: number, expected: number) =>
      new Promise<void>((resolve) => {
        if (complete >= expected) return resolve();
        const timer = setTimeout(() => {
          waiter = null;
          resolve();
        }, ms);
        waiter = {
          expected,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
      });
    await create(WARM_UP, 10);
    await allIn(30_000, WARM_UP);
    receipts.clear();
    bySeq.clear();
    complete = 0;
    child.send({ cmd: 'published' });
    await wait('published');
    clientPauses.splice(0);
    const count = Math.round(rate * seconds);
    await create(count, rate);
    await allIn(60_000, count);
    clearInterval(beat);
    child.send({ cmd: 'published' });
    const steadyStamps = await wait('published');
    const stamps = new Map<number, number>(steadyStamps.stamps);
    const own = receipts.since(stamps);
    const steady = {
      events: bySeq.size,
      counts: [...bySeq.values()].map((e) => e.count),
      lat: receipts.latencies(),
    };
    const completion = Float64Array.from([...bySeq.values()].map((e) => e.last - e.occurred)).sort();
    const tails = tailReport(bySeq, stamps, steadyStamps, clientPauses.splice(0));

    // Paced as limit-ws.mjs paces its latency phase: one event, wait until every socket has it,
    // 20 ms, the next. Same clock and end points as the publish→delivery figure.
    receipts.clear();
    bySeq.clear();
    complete = 0;
    for (let i = 0; i < PACED; i++) {
      await create(1, 1);
      await allIn(30_000, i + 1);
      await sleep(20);
    }
    child.send({ cmd: 'published' });
    const pacedStamps = new Map<number, number>((await wait('published')).stamps);
    const paced = receipts.since(pacedStamps);

    const sorted = steady.lat;
    const counts = steady.counts;
    const run: Run = {
      clients: n,
      joined,
      connect_per_s: Math.round(joined / (connectMs / 1000)),
      server_kib_per_socket: round(kib),
      heap_kib_per_socket: round(heapKib),
      events: steady.events,
      deliveries: sorted.length,
      missing: counts.reduce((s, c) => s + Math.max(0, joined - c), 0) + (count - steady.events) * joined,
      duplicates: counts.reduce((s, c) => s + Math.max(0, c - joined), 0),
      out_of_order: outOfOrder,
      latency: {
        p50_ms: round(pct(sorted, 0.5), 2),
        p99_ms: round(pct(sorted, 0.99), 2),
        max_ms: round(sorted[sorted.length - 1] ?? Number.NaN, 2),
        fanout_complete_p50_ms: round(pct(completion, 0.5), 2),
        fanout_complete_p99_ms: round(pct(completion, 0.99), 2),
      },
      gateway_latency: {
        p50_ms: round(pct(own, 0.5), 2),
        p99_ms: round(pct(own, 0.99), 2),
        max_ms: round(own[own.length - 1] ?? Number.NaN, 2),
      },
      paced_latency: {
        p50_ms: round(pct(paced, 0.5), 2),
        p99_ms: round(pct(paced, 0.99), 2),
        max_ms: round(paced[paced.length - 1] ?? Number.NaN, 2),
      },
      frame_bytes: frameBytes,
    };
    console.log(
      `  ${run.events} events x ${joined} sockets at ${rate}/s: commit→delivery p50 ${run.latency.p50_ms} ms, p99 ${run.latency.p99_ms} ms, max ${run.latency.max_ms} ms; last socket reached p50 ${run.latency.fanout_complete_p50_ms} ms, p99 ${run.latency.fanout_complete_p99_ms} ms; missing ${run.missing}, duplicates ${run.duplicates}, out of order ${run.out_of_order}; frame ${frameBytes} B`,
    );
    console.log(
      `  publish→delivery (the gateway's part): p50 ${run.gateway_latency.p50_ms} ms, p99 ${run.gateway_latency.p99_ms} ms, max ${run.gateway_latency.max_ms} ms`,
    );
    for (const line of tails) console.log(line);
    console.log(
      `  paced like limit-ws (${PACED} events one at a time): publish→delivery p50 ${run.paced_latency.p50_ms} ms, p99 ${run.paced_latency.p99_ms} ms, max ${run.paced_latency.max_ms} ms`,
    );
    return run;
  } catch (err) {
    console.error(`N=${n} failed: ${(err as Error).message}`);
    return {
      clients: n,
      joined: 0,
      connect_per_s: 0,
      server_kib_per_socket: 0,
      heap_kib_per_socket: 0,
      events: 0,
      deliveries: 0,
      missing: 0,
      duplicates: 0,
      out_of_order: 0,
      latency: { p50_ms: 0, p99_ms: 0, max_ms: 0, fanout_complete_p50_ms: 0, fanout_complete_p99_ms: 0 },
      gateway_latency: { p50_ms: 0, p99_ms: 0, max_ms: 0 },
      paced_latency: { p50_ms: 0, p99_ms: 0, max_ms: 0 },
      frame_bytes: 0,
      error: (err as Error).message,
    };
  } finally {
    for (const ws of sockets) ws.terminate();
    await stopChild(child);
    if (gw !== child) await stopChild(gw);
    await stopChild(creator);
  }
}

/**
 * Every receipt of a phase: its seq, when it came (mono()) and its latency from occurred_at, in
 * typed arrays sized for the phase up front. With three plain arrays growing to 100,000s of
 * numbers, this client ran a major collection about every 2 s of the steady phase (pauses and
 * marking steps up to 16 ms, `node --trace-gc`); they landed inside fan-outs and were counted as
 * the gateway's delivery latency. Sized up front: none in the phase, only scavenges of 1–4 ms, as
 * in limit-ws.mjs's client, whose latency phase keeps 30,000 receipts for about a second.
 */
class Receipts {
  #seq: Int32Array;
  #at: Float64Array;
  #lat: Float64Array;
  #n = 0;
  constructor(capacity: number) {
    this.#seq = new Int32Array(capacity);
    this.#at = new Float64Array(capacity);
    this.#lat = new Float64Array(capacity);
  }
  add(seq: number, at: number, latency: number): void {
    if (this.#n === this.#seq.length) this.#grow();
    this.#seq[this.#n] = seq;
    this.#at[this.#n] = at;
    this.#lat[this.#n] = latency;
    this.#n++;
  }
  clear(): void {
    this.#n = 0;
  }
  /** Latencies from occurred_at, sorted. */
  latencies(): Float64Array {
    return this.#lat.slice(0, this.#n).sort();
  }
  /** Receipt time minus each receipt's seq's stamp (those with one), sorted. */
  since(stamps: Map<number, number>): Float64Array {
    const out: number[] = [];
    for (let i = 0; i < this.#n; i++) {
      const s = stamps.get(this.#seq[i]!);
      if (s !== undefined) out.push(this.#at[i]! - s);
    }
    return Float64Array.from(out).sort();
  }
  #grow(): void {
    const size = this.#seq.length * 2 || 1024;
    const seq = new Int32Array(size);
    const at = new Float64Array(size);
    const lat = new Float64Array(size);
    seq.set(this.#seq);
    at.set(this.#at);
    lat.set(this.#lat);
    this.#seq = seq;
    this.#at = at;
    this.#lat = lat;
  }
}

/**
 * The steady phase's three slowest fan-outs (publish to the last socket's receipt), each
 * against what else took time meanwhile: the service's in-process dispatch of the event, and
 * garbage collection pauses in the service (from occurred_at) and in this client process.
 */
function tailReport(
  bySeq: Map<number, { occurred: number; first: number; last: number }>,
  stamps: Map<number, number>,
  service: { dispatched: Array<[number, number]>; gc: Array<[number, number]> },
  clientGc: Array<[number, number]>,
): string[] {
  const dispatched = new Map(service.dispatched);
  const events = [...bySeq].flatMap(([seq, e]) => {
    const p = stamps.get(seq);
    return p === undefined
      ? []
      : [
          {
            seq,
            p,
            occurred: e.occurred - wallMinusMono,
            first: e.first - wallMinusMono,
            last: e.last - wallMinusMono,
          },
        ];
  });
  if (events.length === 0) return [];
  const d = Float64Array.from(dispatched.values()).sort();
  const first = Float64Array.from(events.map((e) => e.first - e.p)).sort();
  const from = Math.min(...events.map((e) => e.occurred));
  const to = Math.max(...events.map((e) => e.last));
  const lines = [
    `  service dispatch per event p50 ${round(pct(d, 0.5), 2)} ms, max ${round(d[d.length - 1] ?? Number.NaN, 2)} ms; GC paused the service ${round(pausedIn(service.gc, from, to))} ms and this client ${round(pausedIn(clientGc, from, to))} ms in the phase; first socket's receipt p50 ${round(pct(first, 0.5), 2)} ms, max ${round(first[first.length - 1] ?? Number.NaN, 2)} ms after publish`,
  ];
  for (const e of events.sort((x, y) => y.last - y.p - (x.last - x.p)).slice(0, 3)) {
    lines.push(
      `  slow fan-out, seq ${e.seq}: last socket ${round(e.last - e.p)} ms after publish (publish ${round(e.p - e.occurred)} ms after occurred_at); dispatch ${round(dispatched.get(e.seq) ?? Number.NaN, 2)} ms; GC within: service ${round(pausedIn(service.gc, e.occurred, e.last))} ms, client ${round(pausedIn(clientGc, e.p, e.last))} ms`,
    );
  }
  return lines;
}

async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.send({ cmd: 'stop' });
  const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(t);
}

/** An owner, a workspace, and the owner's realtime token. */
async function tenant(url: string) {
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json: any = await r.json();
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${JSON.stringify(json)}`);
    return json;
  };
  const reg = await post('/v1/auth/register', {
    email: `bench-${Date.now()}@example.com`,
    password: 'correct horse battery',
    name: 'Bench Owner',
  });
  const token = reg.access_token as string;
  const ws = await post('/v1/workspaces', { name: 'Bench' }, { authorization: `Bearer ${token}` });
  const rt = await post('/v1/realtime/token', undefined, {
    authorization: `Bearer ${token}`,
    'svc-workspace': ws.id,
  });
  return { token, wid: ws.id as string, wsToken: rt.token as string };
}

/** ../shared/bench/limit-ws.mjs with the same socket counts and the gateway's frame size. */
function runLimit(clients: number[], payload: number): Promise<any[] | null> {
  console.log(
    `\nlimit: node ${LIMIT_WS} --clients ${clients.join(',')} --broadcasts 30 --burst 50 --payload ${payload}`,
  );
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [LIMIT_WS, '--clients', clients.join(','), '--broadcasts', '30', '--burst', '50', '--payload', String(payload)],
      { cwd: dirname(LIMIT_WS), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      process.stdout.write(d);
    });
    child.on('exit', () => {
      const line = out.split('\n').find((l) => l.startsWith('SUMMARY '));
      resolve(line ? JSON.parse(line.slice(8)) : null);
    });
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : round((s[m - 1]! + s[m]!) / 2, 2);
};

/** The service's rounds at one socket count: each figure the median of the rounds', counts summed. */
function medianRun(runs: Run[]): Run {
  const ok = runs.filter((r) => !r.error);
  const failed = runs.find((r) => r.error);
  if (ok.length === 0) return runs[0]!;
  const m = (f: (r: Run) => number) => median(ok.map(f));
  const sum = (f: (r: Run) => number) => runs.reduce((t, r) => t + f(r), 0);
  return {
    clients: ok[0]!.clients,
    joined: Math.min(...ok.map((r) => r.joined)),
    connect_per_s: m((r) => r.connect_per_s),
    server_kib_per_socket: m((r) => r.server_kib_per_socket),
    heap_kib_per_socket: m((r) => r.heap_kib_per_socket),
    events: sum((r) => r.events),
    deliveries: sum((r) => r.deliveries),
    missing: sum((r) => r.missing),
    duplicates: sum((r) => r.duplicates),
    out_of_order: sum((r) => r.out_of_order),
    latency: {
      p50_ms: m((r) => r.latency.p50_ms),
      p99_ms: m((r) => r.latency.p99_ms),
      max_ms: Math.max(...ok.map((r) => r.latency.max_ms)),
      fanout_complete_p50_ms: m((r) => r.latency.fanout_complete_p50_ms),
      fanout_complete_p99_ms: m((r) => r.latency.fanout_complete_p99_ms),
    },
    gateway_latency: {
      p50_ms: m((r) => r.gateway_latency.p50_ms),
      p99_ms: m((r) => r.gateway_latency.p99_ms),
      max_ms: Math.max(...ok.map((r) => r.gateway_latency.max_ms)),
    },
    paced_latency: {
      p50_ms: m((r) => r.paced_latency.p50_ms),
      p99_ms: m((r) => r.paced_latency.p99_ms),
      max_ms: Math.max(...ok.map((r) => r.paced_latency.max_ms)),
    },
    frame_bytes: ok[0]!.frame_bytes,
    ...(failed ? { error: `round failed: ${failed.error}` } : {}),
  };
}

/** limit-ws.mjs's rounds at one socket count: latency and memory, each the median of the rounds'. */
function medianLimit(runs: any[]): any {
  const ok = runs.filter((r) => r.latency);
  if (ok.length === 0) return runs[0];
  return {
    clients: ok[0].clients,
    server_kib_per_socket: median(ok.map((r) => r.server_kib_per_socket)),
    latency: { p50_ms: median(ok.map((r) => r.latency.p50_ms)), p99_ms: median(ok.map((r) => r.latency.p99_ms)) },
  };
}

function report(
  runs: Run[],
  limit: any[] | null,
  search: Run[],
  rounds: Array<{ clients: number; service: Run[]; limit: any[] }> = [],
) {
  const multi = rounds.some((r) => r.service.length > 1);
  if (multi) {
    console.log('\nrounds (service against the limit run right after it):');
    for (const r of rounds) {
      r.service.forEach((s, i) => {
        const l = r.limit[i]?.latency;
        const ratio = (v: number) => (l ? round(v / l.p99_ms, 2) : 'n/a');
        console.log(
          `  ${r.clients} sockets, round ${i + 1}: commit→delivery p99 ${s.latency.p99_ms} ms, publish→delivery p99 ${s.gateway_latency.p99_ms} ms, paced p99 ${s.paced_latency.p99_ms} ms; limit p99 ${l?.p99_ms ?? 'n/a'} ms; ratio publish / commit / paced ${ratio(s.gateway_latency.p99_ms)} / ${ratio(s.latency.p99_ms)} / ${ratio(s.paced_latency.p99_ms)}`,
        );
      });
    }
    console.log('\nmedians of the rounds:');
  }
  console.log(
    '\n| sockets | commit→delivery p50 / p99 (ms) | publish→delivery p50 / p99 (ms) | paced p50 / p99 (ms) | limit p50 / p99 (ms) | p99 ratio (publish / commit / paced) | KiB/socket | limit KiB/socket | memory ratio | exactly once, in order |',
  );
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const r of runs) {
    const l = limit?.find((x) => x.clients === r.clients);
    const ratio = (v: number) => (l?.latency ? round(v / l.latency.p99_ms, 2) : 'n/a');
    const mem = l ? round(r.server_kib_per_socket / l.server_kib_per_socket, 2) : 'n/a';
    const once = r.error
      ? `failed: ${r.error}`
      : r.missing === 0 && r.duplicates === 0 && r.out_of_order === 0
        ? 'yes'
        : `no (${r.missing} missing, ${r.duplicates} repeated, ${r.out_of_order} out of order)`;
    console.log(
      `| ${r.clients} | ${r.latency.p50_ms} / ${r.latency.p99_ms} | ${r.gateway_latency.p50_ms} / ${r.gateway_latency.p99_ms} | ${r.paced_latency.p50_ms} / ${r.paced_latency.p99_ms} | ${l?.latency ? `${l.latency.p50_ms} / ${l.latency.p99_ms}` : 'n/a'} | ${ratio(r.gateway_latency.p99_ms)} / ${ratio(r.latency.p99_ms)} / ${ratio(r.paced_latency.p99_ms)} | ${r.server_kib_per_socket} | ${l?.server_kib_per_socket ?? 'n/a'} | ${mem} | ${once} |`,
    );
  }
  if (search.length > 0) {
    const passed = search.find((r) => r.error || r.latency.p99_ms > 250);
    for (const r of search) {
      console.log(
        `search N=${r.clients}: commit→delivery p99 ${r.latency.p99_ms} ms, publish→delivery p99 ${r.gateway_latency.p99_ms} ms${r.error ? ` (${r.error})` : ''}`,
      );
    }
    console.log(
      passed
        ? `p99 passes 250 ms at ${passed.clients} sockets`
        : `p99 stayed under 250 ms up to ${search.at(-1)?.clients} sockets (the bound of this bench)`,
    );
  }
}

if (process.argv.includes('--server')) await serverMain();
else if (process.argv.includes('--gateway')) await gatewayMain();
else if (process.argv.includes('--creator')) await creatorMain();
else await main();
