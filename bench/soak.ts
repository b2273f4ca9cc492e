// npm run bench:soak: the service under a mixed load for SOAK_MINUTES (default 30), to see memory
// growth and latency drift over time (issue 39 item 5).
//
// The service is npm start's code (bench/lib.ts) on a fresh PostgreSQL database this bench creates
// and drops (PG_URL, default postgres://postgres@127.0.0.1:5432), with the AI stand-in
// (test/support/ai-standin) as its OpenAI provider. One workspace; SOCKETS raw WebSocket clients
// (default 1000) joined to its topic receive every event. The load, CONCURRENCY loops (default 4)
// each picking in turn: create a ticket, reply to one, list tickets, search (q=), AI summary.
//
// Every minute one line: requests by kind with p50/p99 (ms), the service child's RSS and heap
// (VmRSS and the V8 heap are read from /proc/<pid>/status: VmRSS; heap from the service is not
// exposed, so VmData stands in), sockets connected, events received. At the end: memory growth first
// minute vs last (MiB and %), p99 per minute min/max per kind, errors (non-2xx reported; any 5xx
// fails: exit code 1). Results: bench/results/soak-<time>.jsonl (one line a minute, one summary).
//
// Env: SOAK_MINUTES (1..1440), SOCKETS (0..18000), CONCURRENCY (1..64), PG_URL.
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import WebSocket from 'ws';
import { startOpenAiStandIn } from '../test/support/ai-standin/index.js';
import { call, envInt, expectStatus, percentile, type ServiceProcess, sleep, startServiceProcess } from './lib.js';

const MINUTES = envInt('SOAK_MINUTES', 30, 1, 1440);
const SOCKETS = envInt('SOCKETS', 1000, 0, 18_000);
const CONCURRENCY = envInt('CONCURRENCY', 4, 1, 64);
const PG_URL = (process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const STAMP = new Date()
  .toISOString()
  .replace(/[-:]/g, '')
  .replace(/\.\d+Z$/, 'Z');
const RESULTS = join(BENCH_DIR, 'results', `soak-${STAMP}.jsonl`);
const DB_NAME = `svc_bench_soak_${STAMP.toLowerCase().replace(/[^a-z0-9]/g, '')}_${process.pid}`;
const KINDS = ['create', 'reply', 'list', 'search', 'ai'] as const;
type Kind = (typeof KINDS)[number];

/** VmRSS and VmData of a process in bytes (Linux). */
function procMemory(pid: number | undefined): { rss: number; data: number } {
  if (!pid) return { rss: Number.NaN, data: Number.NaN };
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? Number.NaN) * 1024;
    return { rss: kb('VmRSS'), data: kb('VmData') };
  } catch {
    return { rss: Number.NaN, data: Number.NaN };
  }
}

const mib = (b: number) => Math.round((b / 1048576) * 10) / 10;
const r1 = (n: number) => Math.round(n * 10) / 10;

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB_NAME}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-soak-'));
  const ai = await startOpenAiStandIn({ keys: ['sk-bench'] });
  let svc: ServiceProcess | null = null;
  const sockets: WebSocket[] = [];
  let exitCode = 0;
  try {
    svc = await startServiceProcess({
      DATABASE_URL: `${PG_URL}/${DB_NAME}`,
      DATA_DIR: dataDir,
      RATE_LIMIT_PER_MINUTE: '10000000',
      LOG_LEVEL: 'warn',
      SECRET_KEY: randomBytes(32).toString('base64url'),
      AI_PROVIDER: 'openai',
      AI_BASE_URL: ai.url,
      AI_API_KEY: 'sk-bench',
      AI_MODEL: 'gpt-4.1-mini',
    });
    const base = svc.base;
    const reg = await call(base, 'POST', '/v1/auth/register', {
      email: `bench-soak-${process.pid}@example.com`,
      password: 'bench password 0123456789',
      name: 'Olivia Agent',
    });
    expectStatus(reg, 201, 'register');
    const auth = { authorization: `Bearer ${reg.body.access_token}` };
    const ws = await call(base, 'POST', '/v1/workspaces', { name: 'Bench soak' }, auth);
    expectStatus(ws, 201, 'workspace');
    const headers = { ...auth, 'svc-workspace': String(ws.body.id) };
    const rt = await call(base, 'POST', '/v1/realtime/token', undefined, headers);
    expectStatus(rt, 200, 'realtime token');

    // The sockets, 200 connecting at a time.
    let connected = 0;
    let events = 0;
    const topic = `workspace:${ws.body.id}`;
    const wsUrl = `${base.replace('http', 'ws')}/socket/websocket?vsn=2.0.0&token=${rt.body.token}`;
    await new Promise<void>((done) => {
      let started = 0;
      let settled = 0;
      if (SOCKETS === 0) return done();
      const pump = () => {
        while (started - settled < 200 && started < SOCKETS) {
          started++;
          const s = new WebSocket(wsUrl, { perMessageDeflate: false });
          sockets.push(s);
          let joined = false;
          const settle = () => {
            settled++;
            if (settled === SOCKETS) done();
            else pump();
          };
          s.on('open', () => s.send(JSON.stringify(['1', '1', topic, 'phx_join', {}])));
          s.on('message', (data) => {
            if (!joined) {
              joined = true;
              connected++;
              settle();
              return;
            }
            if (data.toString().startsWith('[null,null,')) events++;
          });
          s.on('close', () => {
            if (joined) connected--;
          });
          s.on('error', () => {
            if (joined) return;
            joined = true;
            settle();
          });
        }
      };
      pump();
    });
    console.log(
      `bench:soak — ${MINUTES} min, ${connected}/${SOCKETS} sockets joined, ${CONCURRENCY} request loops, PostgreSQL ${DB_NAME}`,
    );

    // A few tickets to reply to and search, with a customer each.
    const tickets: string[] = [];
    const newTicket = async (i: number) => {
      const r = await call(
        base,
        'POST',
        '/v1/tickets',
        {
          subject: `Refund for invoice ${i}`,
          contact: { email: `customer${i % 50}@example.com`, name: `Customer ${i % 50}` },
          body_html: `<p>I was charged twice for invoice ${i}. Can I get a refund?</p>`,
        },
        headers,
      );
      if (r.status === 201) tickets.push(String(r.body.id));
      return r.status;
    };
    for (let i = 0; i < 10; i++) expect201(await newTicket(i));

    const lat = new Map<Kind, number[]>(KINDS.map((k) => [k, []]));
    const statuses = new Map<string, number>();
    const ops: Record<Kind, (i: number) => Promise<number>> = {
      create: (i) => newTicket(i),
      reply: async (i) =>
        (
          await call(
            base,
            'POST',
            `/v1/tickets/${tickets[i % tickets.length]}/messages`,
            { kind: 'reply', body_html: `<p>We refunded it, reply ${i}.</p>` },
            headers,
          )
        ).status,
      list: async () => (await call(base, 'GET', '/v1/tickets?limit=25', undefined, headers)).status,
      search: async (i) =>
        (await call(base, 'GET', `/v1/tickets?q=${encodeURIComponent(`invoice ${i % 100}`)}`, undefined, headers))
          .status,
      ai: async (i) =>
        (await call(base, 'POST', `/v1/tickets/${tickets[i % tickets.length]}/ai/summary`, {}, headers)).status,
    };

    mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
    const minutes: any[] = [];
    const t0 = Date.now();
    const end = t0 + MINUTES * 60_000;
    let seq = 10;
    const loops = Array.from({ length: CONCURRENCY }, async (_, l) => {
      for (let n = l; Date.now() < end; n++) {
        const kind = KINDS[n % KINDS.length]!;
        const i = seq++;
        const s = performance.now();
        let status: number;
        try {
          status = await ops[kind](i);
        } catch {
          status = 0;
        }
        lat.get(kind)!.push(performance.now() - s);
        if (status < 200 || status > 299)
          statuses.set(`${kind} ${status}`, (statuses.get(`${kind} ${status}`) ?? 0) + 1);
      }
    });
    const reporter = (async () => {
      for (let m = 1; m <= MINUTES; m++) {
        while (Date.now() < t0 + m * 60_000) await sleep(Math.min(1000, t0 + m * 60_000 - Date.now()));
        const mem = procMemory(svc?.child.pid);
        const row: any = { minute: m, rss: mem.rss, vmData: mem.data, sockets: connected, events, kinds: {} };
        const parts: string[] = [];
        for (const k of KINDS) {
          const xs = lat
            .get(k)!
            .splice(0)
            .sort((a, b) => a - b);
          row.kinds[k] = { n: xs.length, p50: r1(percentile(xs, 50)), p99: r1(percentile(xs, 99)) };
          parts.push(`${k} ${xs.length} ${row.kinds[k].p50}/${row.kinds[k].p99}`);
        }
        minutes.push(row);
        appendFileSync(RESULTS, `${JSON.stringify({ bench: 'soak', ...row })}\n`);
        console.log(
          `min ${m}: ${parts.join(', ')} ms | RSS ${mib(mem.rss)} MiB, VmData ${mib(mem.data)} MiB | sockets ${connected}, events ${events}`,
        );
      }
    })();
    await Promise.all([...loops, reporter]);

    const first = minutes[0];
    const last = minutes[minutes.length - 1];
    const growth = last.rss - first.rss;
    const p99s: Record<string, { min: number; max: number }> = {};
    for (const k of KINDS) {
      const xs = minutes.map((m) => m.kinds[k].p99).filter((x: number) => Number.isFinite(x));
      p99s[k] = { min: Math.min(...xs), max: Math.max(...xs) };
    }
    const errors = Object.fromEntries(statuses);
    const fiveXX = [...statuses].filter(([k]) => / (5\d\d|0)$/.test(k)).reduce((a, [, n]) => a + n, 0);
    const summary = {
      bench: 'soak',
      summary: true,
      minutes: MINUTES,
      sockets: SOCKETS,
      joined: last.sockets,
      events,
      rssFirstMiB: mib(first.rss),
      rssLastMiB: mib(last.rss),
      growthMiB: mib(growth),
      growthPct: r1((growth / first.rss) * 100),
      p99PerMinute: p99s,
      errors,
    };
    appendFileSync(RESULTS, `${JSON.stringify(summary)}\n`);
    console.log(
      `\nmemory: RSS minute 1 ${summary.rssFirstMiB} MiB → minute ${MINUTES} ${summary.rssLastMiB} MiB (${summary.growthMiB >= 0 ? '+' : ''}${summary.growthMiB} MiB, ${summary.growthPct}%)`,
    );
    for (const k of KINDS) console.log(`p99 per minute, ${k}: ${p99s[k]!.min}..${p99s[k]!.max} ms`);
    console.log(`errors: ${Object.keys(errors).length ? JSON.stringify(errors) : 'none'}`);
    console.log(
      `\n| soak ${MINUTES} min, ${SOCKETS} sockets | RSS ${summary.rssFirstMiB} → ${summary.rssLastMiB} MiB (${summary.growthPct}%) | ${KINDS.map((k) => `${k} p99 ${p99s[k]!.min}–${p99s[k]!.max} ms`).join(', ')} | events ${events} | errors ${Object.keys(errors).length ? JSON.stringify(errors) : 'none'} |`,
    );
    console.log(`results appended to ${RESULTS}`);
    if (fiveXX > 0) {
      console.error(`FAIL: ${fiveXX} server errors (5xx or no answer)`);
      exitCode = 1;
    }
  } catch (e) {
    console.error((e as Error).message);
    if (svc) console.error(svc.lines.slice(-10).join('\n'));
    exitCode = 1;
  } finally {
    for (const s of sockets) s.terminate();
    await svc?.stop();
    await ai.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(exitCode);
}

function expect201(status: number): void {
  if (status !== 201) throw new Error(`ticket: ${status}`);
}

await main();
