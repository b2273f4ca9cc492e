// npm run bench: the service measured against the physical-limit baseline
// (../shared/bench/limit-server.mjs: Fastify 5 + pg doing the same kind of work, nothing else),
// in the same run, on the same machine, over loopback, alternating limit and service runs
// (ROUNDS times; even rounds run the service first). Report the service as a ratio of the limit
// (service / limit): absolute figures on a shared 2-core box move 10 to 20 % from run to run.
// The summary's headline is the median of the rounds' own ratios (as ../shared/bench/side-by-side.sh
// reduces its pairs); each side's best quiet round is printed beside it, and every round is recorded.
// Each run also records where the CPU went (server process, PostgreSQL backends, autocannon,
// everything else) so a run disturbed by other processes on the box can be told apart.
//
// Ticket pairs (tickets.*): one more workspace of the service, seeded directly in SQL with
// SEED_SERVICE_TICKETS tickets and 3 messages per ticket on average (bench/tickets.ts), measures
// list, list with q, GET by number, create and reply against the limit server's list of 50 and
// its create on one workspace. The seed is skipped when ONLY names no ticket pair. Before the seed,
// SEED_FIELDS ticket custom fields (bench/tickets.ts BENCH_FIELDS: 20 of every type) are defined
// through POST /v1/custom-fields as the workspace's owner, and the seed gives the tickets values;
// tickets.list_fields lists by a select field sorted by a number field, compared with the limit's
// list of 50 and (tickets.list_fields.plain) with the service's own plain list: a pair's limit side
// may name a service scenario, and its ratio is then service / service.
//
// Help-center pairs (hc.*, issue 23; bench/helpcenter.ts): a workspace with the help center on and
// one typical published article (about 5 KB of HTML) written through the API. Its page
// /hc/{slug}/articles/{slug} is captured once (body and headers) and served from memory by
// bench/static-server.mjs, a third child process: the reference of hc.article (the page, one
// browser user agent: after the first request every request is the same visitor, so the view
// mark is read and no view counted) and of hc.article.views (a fresh user agent per request: a
// new visitor each time, so every request inserts a view mark and adds 1 to the article's views,
// all on one article row, as a popular article would). hc.search and hc.search_rare measure
// /hc/{slug}/search?q= over SEARCH_ARTICLES published articles seeded in SQL in a workspace of their
// own (a common word in ~15 % of them, a rare one in 5); there is no limit-server equivalent, so
// their reference is the service's own article page (service / service) and the absolute p99 and
// req/s are what the targets are about. The limit server is started only when a pair needs it.
//
// Needs PostgreSQL at 127.0.0.1:5432 (user postgres, trust). Creates a fresh database
// svc_bench_<time>_<pid> for both servers (the limit server keeps to its schema limit_bench)
// and drops it at the end. Both servers are child processes, stopped by PID at the end, on
// error and on Ctrl-C. Results: a table on stdout and one JSON line per measurement in
// bench/results/<time>.jsonl. Exit code 1 if any measured request failed or was not 2xx, or a
// scenario could not be measured (its preflight request failed, took over PREFLIGHT_MAX_MS or 10 s).
//
// Env (all optional):
//   DURATION          measured seconds per run (default 10, 1..120)
//   WARMUP            unmeasured warm-up seconds before each run (default 2, 0..30)
//   CONNS             concurrent connections (default 10, 1..200)
//   ROUNDS            times the whole alternating list runs (default 2, 1..10; even rounds run service first)
//   QUIET_WAIT        before each run, wait up to this many seconds for the machine to be under 20 % busy
//                     (other processes on a shared box; default 10, 0 = don't wait)
//   ONLY              comma-separated pair ids to run (framework, read, read.ceiling, write, write.busy,
//                     write.spread, tickets.list, tickets.list_q, tickets.list_q_rare, tickets.get_number,
//                     tickets.get_number.ceiling, tickets.list_fields, tickets.list_fields.plain,
//                     tickets.create, tickets.reply, tickets.reply.hot, workflow.create, hc.article, hc.article.views,
//                     hc.search, hc.search_rare; default all); an id ending in * is a
//                     prefix, e.g. ONLY=write.busy ROUNDS=3 or ONLY='tickets.*' or ONLY='hc.*'
//   SEARCH_ARTICLES   published articles seeded in the help-center search workspace (default 5000, 10..100000)
//   QUIET_WORKSPACES  workspaces for the many-quiet-workspaces write (default 10, 2..50)
//   SEED_TICKETS      tickets the limit server seeds (default 20000; its own default is 100000)
//   SEED_SERVICE_TICKETS  tickets seeded in the service's ticket workspace (default 100000, 10..1000000;
//                     messages: 1 to 5 per ticket, 3 on average)
//   SEED_FIELDS       ticket custom fields defined in that workspace, the first of bench/tickets.ts's
//                     BENCH_FIELDS (default 20 = all, 0..20; tickets.list_fields needs the first 2)
//   SEED_SQL          SQL run on the bench database after the ticket seed, then ANALYZE: measures a
//                     proposed index end to end (e.g. SEED_SQL='CREATE INDEX … ON tickets …')
//   PG_URL            PostgreSQL server URL without a database (default postgres://postgres@127.0.0.1:5432)
//   SERVICE_PORT      default 3200; LIMIT_PORT default 3100; STATIC_PORT default 3300 (a busy port is
//                     replaced by a free one)
//   PREFLIGHT_MAX_MS  a route whose single preflight request takes longer is not loaded (default 2000;
//                     10 connections on a multi-second route only pin PostgreSQL for the next runs)
//   SERVICE_CPU_PROF  a folder: run the service with node --cpu-prof there (one .cpuprofile, written when
//                     it stops; summarise with npx tsx bench/profile-top.ts <file>)
//   KEEP_DB=1         keep the database instead of dropping it (its name is printed)
//   SHARED_BENCH      the limit-server folder (default ../shared/bench from the repository root)
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  ARTICLE_HTML,
  ARTICLE_TITLE,
  type HcSeedResult,
  Q_HC_COMMON,
  Q_HC_RARE,
  seedHelpCenterArticles,
} from './helpcenter.js';
import { type CpuUse, type Measurement, PAIRS, pad, printRow, type Side, summarize } from './report.js';
import {
  BENCH_FIELDS,
  bodyHtml,
  createBody,
  LIST_FIELDS,
  LIST_FIELDS_PATH,
  Q_COMMON,
  Q_RARE,
  type SeededField,
  type SeedResult,
  seedTickets,
} from './tickets.js';
import { setupWorkflow } from './workflow.js';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIR, '..');
const SHARED = resolve(process.env.SHARED_BENCH ?? resolve(ROOT, '../shared/bench'));
const HOST = '127.0.0.1';

function envInt(name: string, dflt: number, min: number, max: number): number {
  const v = process.env[name];
  if (v === undefined || v.trim() === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max}`);
  return n;
}

const DURATION = envInt('DURATION', 10, 1, 120);
const WARMUP = envInt('WARMUP', 2, 0, 30);
const CONNS = envInt('CONNS', 10, 1, 200);
const QUIET = envInt('QUIET_WORKSPACES', 10, 2, 50);
const ROUNDS = envInt('ROUNDS', 2, 1, 10);
const QUIET_WAIT = envInt('QUIET_WAIT', 10, 0, 120);
const ONLY = (process.env.ONLY ?? '')
  .split(',')
  .map((x) => x.trim())
  .filter(Boolean);
const SEED_TICKETS = envInt('SEED_TICKETS', 20_000, 0, 1_000_000);
const SEED_SERVICE_TICKETS = envInt('SEED_SERVICE_TICKETS', 100_000, 10, 1_000_000);
const SEED_FIELDS = envInt('SEED_FIELDS', BENCH_FIELDS.length, 0, BENCH_FIELDS.length);
const PREFLIGHT_MAX_MS = envInt('PREFLIGHT_MAX_MS', 2000, 100, 10_000);
const PG_URL = (process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const KEEP_DB = process.env.KEEP_DB === '1';
const SEED_SQL = process.env.SEED_SQL?.trim() || null;
const SEARCH_ARTICLES = envInt('SEARCH_ARTICLES', 5000, 10, 100_000);

const STAMP = new Date()
  .toISOString()
  .replace(/[-:]/g, '')
  .replace(/\.\d+Z$/, 'Z');
const DB_NAME = `svc_bench_${STAMP.toLowerCase().replace(/[^a-z0-9]/g, '')}_${process.pid}`;
const DB_URL = `${PG_URL}/${DB_NAME}`;
const RESULTS = join(BENCH_DIR, 'results', `${STAMP}.jsonl`);

// ---------------------------------------------------------------------------------------------
// Child processes

class Child {
  readonly proc: ChildProcess;
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    args: string[],
    opts: { cwd: string; env: NodeJS.ProcessEnv },
  ) {
    this.proc = spawn(process.execPath, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.exited = new Promise((res) => this.proc.once('exit', (code) => res(code)));
    for (const stream of [this.proc.stdout, this.proc.stderr]) {
      let rest = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) if (line.trim() !== '') this.lines.push(line);
        if (this.lines.length > 5000) this.lines.splice(0, this.lines.length - 5000);
      });
    }
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** SIGTERM by PID, SIGKILL after 15 s. */
  async stop(): Promise<void> {
    if (!this.running || this.proc.pid === undefined) return;
    this.proc.kill('SIGTERM');
    const killed = await Promise.race([this.exited.then(() => true), sleep(15_000).then(() => false)]);
    if (!killed && this.running) {
      this.proc.kill('SIGKILL');
      await this.exited;
    }
  }

  tail(n = 30): string {
    return this.lines.slice(-n).join('\n');
  }
}

const sleep = (ms: number) => new Promise<void>((res) => setTimeout(res, ms));

function freePort(preferred: number): Promise<number> {
  const tryListen = (port: number) =>
    new Promise<number>((res, rej) => {
      const srv = createServer();
      srv.once('error', rej);
      srv.listen(port, HOST, () => {
        const addr = srv.address();
        const got = typeof addr === 'object' && addr ? addr.port : port;
        srv.close(() => res(got));
      });
    });
  return tryListen(preferred).catch(() => tryListen(0));
}

async function waitHealthy(url: string, child: Child, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (!child.running) throw new Error(`${child.name} exited before it was healthy:\n${child.tail()}`);
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error(`${child.name} not healthy at ${url} after ${timeoutMs} ms:\n${child.tail()}`);
}

// ---------------------------------------------------------------------------------------------
// HTTP set-up calls

interface Call {
  status: number;
  body: any;
  text: string;
}

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const h: Record<string, string> = { ...headers };
  if (body !== undefined) h['content-type'] = 'application/json';
  const r = await fetch(base + path, {
    method,
    headers: h,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await r.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  return { status: r.status, body: parsed, text } as Call;
}

function expectStatus(r: Call, status: number, what: string): void {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${r.text.slice(0, 500)}`);
}

// ---------------------------------------------------------------------------------------------
// Measurements

interface Scenario {
  id: string;
  side: Side;
  label: string;
  method: string;
  path: string;
  /** A fresh autocannon request set per run (autocannon mutates the request objects). */
  requests: () => autocannon.Request[];
  /** One request sent with fetch before the run (to `path` when given): the route must answer 2xx. */
  preflight: () => { headers: Record<string, string>; body?: string; path?: string };
  /** A limit-side scenario served by bench/static-server.mjs instead of the limit server. */
  server?: 'static';
}

// ---------------------------------------------------------------------------------------------
// CPU accounting from /proc (Linux): ticks of the server, of the database's backends, of the box

const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;
const HAS_PROC = existsSync('/proc/self/stat');

function procTicks(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime
  } catch {
    return null;
  }
}

/** Ticks per PostgreSQL backend serving DB_NAME (the backend's title names the database). */
function pgBackendTicks(): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (!cmd.startsWith('postgres:') || !cmd.includes(DB_NAME)) continue;
      const t = procTicks(Number(entry));
      if (t !== null) out.set(Number(entry), t);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function machineTicks(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - (f[3] ?? 0) - (f[4] ?? 0), total };
}

/** Busy share of the whole machine over `ms`. */
async function machineBusy(ms: number): Promise<number> {
  const a = machineTicks();
  await sleep(ms);
  const b = machineTicks();
  return Math.round(((b.busy - a.busy) / Math.max(1, b.total - a.total)) * 100);
}

/** Between runs both servers idle, so a busy machine means someone else's work: wait for it (bounded). */
async function waitQuiet(): Promise<{ waitedS: number; busyPct: number | null }> {
  if (!HAS_PROC) return { waitedS: 0, busyPct: null };
  const start = performance.now();
  let busy = await machineBusy(1000);
  while (busy > 20 && performance.now() - start < QUIET_WAIT * 1000) busy = await machineBusy(1000);
  return { waitedS: Math.round((performance.now() - start) / 1000), busyPct: busy };
}

interface CpuSnapshot {
  at: number;
  server: number;
  pg: Map<number, number>;
  self: NodeJS.CpuUsage;
  machine: { busy: number; total: number };
}

function snapshot(pid: number): CpuSnapshot | null {
  if (!HAS_PROC) return null;
  return {
    at: performance.now(),
    server: procTicks(pid) ?? 0,
    pg: pgBackendTicks(),
    self: process.cpuUsage(),
    machine: machineTicks(),
  };
}

function cpuBetween(a: CpuSnapshot | null, pid: number, requests: number): CpuUse | null {
  if (!a) return null;
  const b = snapshot(pid)!;
  const wallMs = b.at - a.at;
  const ms = (ticks: number) => (ticks * 1000) / CLK_TCK;
  const serverMs = ms(b.server - a.server);
  let pgTicks = 0;
  for (const [p, t] of b.pg) pgTicks += t - (a.pg.get(p) ?? 0); // backends started meanwhile count from 0
  const pgMs = ms(pgTicks);
  const selfMs = (b.self.user + b.self.system - a.self.user - a.self.system) / 1000;
  const n = Math.max(1, requests);
  const round = (x: number, d = 2) => +x.toFixed(d);
  return {
    server_pct: round((serverMs / wallMs) * 100, 0),
    server_ms_per_req: round(serverMs / n, 3),
    pg_pct: round((pgMs / wallMs) * 100, 0),
    pg_ms_per_req: round(pgMs / n, 3),
    loadgen_pct: round((selfMs / wallMs) * 100, 0),
    machine_busy_pct: round(
      ((b.machine.busy - a.machine.busy) / Math.max(1, b.machine.total - a.machine.total)) * 100,
      0,
    ),
    other_pct: round(Math.max(0, (ms(b.machine.busy - a.machine.busy) - serverMs - pgMs - selfMs) / wallMs) * 100, 0),
  };
}

let current: autocannon.Instance | null = null;
/** Set on SIGINT/SIGTERM: the run in progress is dropped, nothing more is measured. */
let aborted = false;

function cannon(base: string, s: Scenario, seconds: number): Promise<autocannon.Result> {
  return new Promise((res, rej) => {
    current = autocannon(
      { url: base, connections: CONNS, pipelining: 1, duration: seconds, requests: s.requests() },
      (err, result) => {
        current = null;
        if (aborted) rej(new Error('interrupted'));
        else if (err) rej(err);
        else res(result);
      },
    );
  });
}

/** The preflight request failed or got no answer in 10 s: the scenario is left out of the run. */
class PreflightError extends Error {}

/**
 * PostgreSQL's autovacuum analyzes a table once a tenth of it changed, and the plans of prepared
 * statements are made again with the new statistics. Where it is off (as on the project's
 * machines), a table that grew from empty during the run keeps plans made for an empty table
 * (an index scan over every ticket of a workspace instead of the primary key, getting slower by
 * the round): so ANALYZE runs after each warm-up, untimed, as autovacuum would have by then.
 */
let autovacuumOff: boolean | null = null;
async function analyzeIfNoAutovacuum(): Promise<void> {
  const db = new pg.Client({ connectionString: DB_URL });
  await db.connect();
  try {
    autovacuumOff ??= (await db.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0]?.autovacuum === 'off';
    if (autovacuumOff) await db.query('ANALYZE');
  } finally {
    await db.end();
  }
}

async function measure(base: string, s: Scenario, serverPid: number, round: number): Promise<Measurement> {
  const pre = s.preflight();
  const path = pre.path ?? s.path;
  const started = performance.now();
  const check = await call(base, s.method, path, pre.body, pre.headers).catch((err: unknown) => {
    const ms = Math.round(performance.now() - started);
    throw new PreflightError(`${s.method} ${path}: no answer after ${ms} ms (${String(err)})`);
  });
  if (check.status < 200 || check.status > 299) {
    throw new PreflightError(`${s.method} ${path}: preflight answered ${check.status} ${check.text.slice(0, 500)}`);
  }
  const took = Math.round(performance.now() - started);
  if (took > PREFLIGHT_MAX_MS) {
    throw new PreflightError(`${s.method} ${path}: one request alone took ${took} ms (over ${PREFLIGHT_MAX_MS} ms)`);
  }
  const warm = WARMUP > 0 ? await cannon(base, s, WARMUP) : null;
  await analyzeIfNoAutovacuum();
  const before = snapshot(serverPid);
  const r = await cannon(base, s, DURATION);
  const cpu = cpuBetween(before, serverPid, r['2xx'] + r.non2xx);
  return {
    kind: 'measurement',
    run: STAMP,
    round,
    id: s.id,
    side: s.side,
    label: s.label,
    method: s.method,
    path: s.path,
    connections: CONNS,
    duration_s: DURATION,
    warmup_s: WARMUP,
    requests_per_s: Math.round(r.requests.average),
    bytes_per_req: r.requests.average > 0 ? Math.round(r.throughput.average / r.requests.average) : 0,
    total_2xx: r['2xx'],
    latency_ms: {
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      avg: r.latency.average,
      max: r.latency.max,
    },
    non_2xx: r.non2xx,
    status_codes: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, v.count])),
    errors: r.errors,
    timeouts: r.timeouts,
    warmup_2xx: warm ? warm['2xx'] : 0,
    warmup_non_2xx: warm ? warm.non2xx + warm.errors : 0,
    cpu,
    quiet_wait_s: 0,
    machine_busy_pct_before: null,
  };
}

function jsonBody(headers: Record<string, string>): Record<string, string> {
  return { ...headers, 'content-type': 'application/json' };
}

const COLORS = ['#112233', '#445566', '#778899', '#aabbcc', '#ddeeff', '#102030'];

/** PATCH /v1/workspace, each request with the next key (round robin) and the next brand colour. */
function patchRequests(keys: string[]): autocannon.Request[] {
  let n = 0;
  return [
    {
      method: 'PATCH',
      path: '/v1/workspace',
      headers: { 'content-type': 'application/json' },
      setupRequest: (req) => {
        const i = n++;
        return {
          ...req,
          headers: { ...req.headers, authorization: `Bearer ${keys[i % keys.length]}` },
          body: JSON.stringify({ settings: { brand_color: COLORS[i % COLORS.length] } }),
        };
      },
    },
  ];
}

/**
 * Waits (up to 15 s) until no statement runs in the bench database, then cancels what still
 * runs: a statement does not stop when its client goes away, so a request that timed out or
 * was left in flight at the end of a run would otherwise load the next runs.
 */
async function settle(): Promise<Array<{ pid: number; running_s: number; query: string }>> {
  const db = new pg.Client({ connectionString: DB_URL });
  await db.connect();
  try {
    const until = performance.now() + 15_000;
    let idlePolls = 0;
    while (idlePolls < 2 && performance.now() < until) {
      const a = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()`,
        [DB_NAME],
      );
      idlePolls = a.rows[0]!.n === 0 ? idlePolls + 1 : 0;
      if (idlePolls < 2) await sleep(100);
    }
    if (idlePolls >= 2) return [];
    // Candidates first (a materialized CTE), then the cancel in the select list: a function in
    // WHERE may run before the other conditions and must never reach another database's backends.
    const r = await db.query<{ pid: number; running_s: number; query: string }>(
      `WITH slow AS MATERIALIZED (
         SELECT pid, round(extract(epoch FROM now() - query_start))::int AS running_s,
                left(regexp_replace(query, '\\s+', ' ', 'g'), 120) AS query
           FROM pg_stat_activity
          WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid()
            AND query_start < now() - interval '1 second')
       SELECT pid, running_s, query, pg_cancel_backend(pid) AS cancelled FROM slow`,
      [DB_NAME],
    );
    return r.rows;
  } finally {
    await db.end();
  }
}

// ---------------------------------------------------------------------------------------------
// Ticket scenarios (the workspace seeded by bench/tickets.ts)

/** Counters that keep going across warm-up, runs and rounds: new contacts stay new, tickets vary. */
let ticketCreates = 0;
let ticketPicks = 0;

/** The i-th ticket number of a fixed pseudo-random walk over 1..n (a multiplicative hash of i). */
const spreadNumber = (i: number, n: number) => 1 + (((i * 2_654_435_761) % 4_294_967_296) % n);

function ticketScenariosOf(t: { key: string; seed: SeedResult; emails: string[] }): {
  reads: Scenario[];
  writes: Scenario[];
} {
  const auth = { authorization: `Bearer ${t.key}` };
  const n = t.seed.tickets;
  const hot = n; // the newest seeded ticket
  const list = (id: string, label: string, path: string): Scenario => ({
    id,
    side: 'service',
    label,
    method: 'GET',
    path,
    requests: () => [{ method: 'GET', path, headers: auth }],
    preflight: () => ({ headers: auth }),
  });
  // Numbers spread over the whole seed; every other one as %23 + number (#123).
  const getPath = (i: number) => `/v1/tickets/${i % 2 === 0 ? '' : '%23'}${spreadNumber(i, n)}`;
  const reply = (i: number) => JSON.stringify({ kind: 'reply', body_html: bodyHtml(i) });
  const runTag = STAMP.toLowerCase();
  return {
    reads: [
      list('service.tickets.list', 'GET /v1/tickets?limit=50 (newest first)', '/v1/tickets?limit=50'),
      list('service.tickets.list_q', `GET /v1/tickets?q=${Q_COMMON}&limit=50`, `/v1/tickets?q=${Q_COMMON}&limit=50`),
      list('service.tickets.list_q_rare', `GET /v1/tickets?q=${Q_RARE}&limit=50`, `/v1/tickets?q=${Q_RARE}&limit=50`),
      // Only when the seed defined the fields it names (SEED_FIELDS >= 2).
      ...(t.seed.list_fields_matches === null
        ? []
        : [
            list(
              'service.tickets.list_fields',
              `GET /v1/tickets?field.${LIST_FIELDS.select}=${LIST_FIELDS.option}&sort=field.${LIST_FIELDS.sort}`,
              LIST_FIELDS_PATH,
            ),
          ]),
      {
        id: 'service.tickets.get_number',
        side: 'service',
        label: `GET /v1/tickets/{number or %23number} of ${n.toLocaleString('en-US')}`,
        method: 'GET',
        path: '/v1/tickets/{number}',
        requests: () => [
          {
            method: 'GET',
            path: '/v1/tickets/1',
            headers: auth,
            setupRequest: (req) => ({ ...req, path: getPath(ticketPicks++) }),
          },
        ],
        preflight: () => ({ headers: auth, path: getPath(ticketPicks++) }),
      },
    ],
    writes: [
      {
        id: 'service.tickets.create',
        side: 'service',
        label: 'POST /v1/tickets (contact by email, body_html)',
        method: 'POST',
        path: '/v1/tickets',
        requests: () => [
          {
            method: 'POST',
            path: '/v1/tickets',
            headers: jsonBody(auth),
            setupRequest: (req) => ({ ...req, body: JSON.stringify(createBody(ticketCreates++, t.emails, runTag)) }),
          },
        ],
        preflight: () => ({
          headers: jsonBody(auth),
          body: JSON.stringify(createBody(ticketCreates++, t.emails, runTag)),
        }),
      },
      {
        id: 'service.tickets.reply',
        side: 'service',
        label: `POST /v1/tickets/{number}/messages, spread over ${n.toLocaleString('en-US')}`,
        method: 'POST',
        path: '/v1/tickets/{number}/messages',
        requests: () => [
          {
            method: 'POST',
            path: '/v1/tickets/1/messages',
            headers: jsonBody(auth),
            setupRequest: (req) => {
              const i = ticketPicks++;
              return { ...req, path: `/v1/tickets/${spreadNumber(i, n)}/messages`, body: reply(i) };
            },
          },
        ],
        preflight: () => ({
          headers: jsonBody(auth),
          body: reply(0),
          path: `/v1/tickets/${spreadNumber(ticketPicks++, n)}/messages`,
        }),
      },
      {
        id: 'service.tickets.reply.hot',
        side: 'service',
        label: `POST /v1/tickets/${hot}/messages (one ticket)`,
        method: 'POST',
        path: `/v1/tickets/${hot}/messages`,
        requests: () => [
          {
            method: 'POST',
            path: `/v1/tickets/${hot}/messages`,
            headers: jsonBody(auth),
            setupRequest: (req) => ({ ...req, body: reply(ticketPicks++) }),
          },
        ],
        preflight: () => ({ headers: jsonBody(auth), body: reply(0) }),
      },
    ],
  };
}

// ---------------------------------------------------------------------------------------------
// Output

/** POST /v1/tickets in the plain and in the workflow workspace, the same bodies in turn. */
function workflowScenarios(keys: { plain: string; workflow: string }): Scenario[] {
  const runTag = `${STAMP.toLowerCase()}-wf`;
  return (['plain', 'workflow'] as const).map((kind) => {
    const auth = jsonBody({ authorization: `Bearer ${keys[kind]}` });
    return {
      id: kind === 'plain' ? 'service.workflow.create.plain' : 'service.workflow.create',
      side: 'service',
      label:
        kind === 'plain'
          ? 'POST /v1/tickets, no automations'
          : 'POST /v1/tickets, 50 automations + SLA on business hours',
      method: 'POST',
      path: '/v1/tickets',
      requests: () => [
        {
          method: 'POST',
          path: '/v1/tickets',
          headers: auth,
          setupRequest: (req) => ({ ...req, body: JSON.stringify(createBody(ticketCreates++, [], runTag)) }),
        },
      ],
      preflight: () => ({ headers: auth, body: JSON.stringify(createBody(ticketCreates++, [], runTag)) }),
    } satisfies Scenario;
  });
}

/** Help-center scenarios (bench/helpcenter.ts): the article page, its static copy, the search page. */
let hcVisitors = 0;
const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0';

function helpCenterScenarios(hc: { articlePath: string; searchSlug: string; seed: HcSeedResult }): Scenario[] {
  const browser = { 'user-agent': BROWSER_UA };
  // A new visitor per request: the same browser, a user agent no request used before (the
  // counter keeps going across warm-up, runs and rounds), so every request counts a view.
  const visitor = () => ({ 'user-agent': `${BROWSER_UA} bench-visitor/${STAMP}-${hcVisitors++}` });
  const n = hc.seed.articles.toLocaleString('en-US');
  const search = (id: string, q: string): Scenario => {
    const path = `/hc/${hc.searchSlug}/search?q=${q}`;
    return {
      id,
      side: 'service',
      label: `GET /hc/{slug}/search?q=${q} (${(hc.seed.q_counts[q] ?? 0).toLocaleString('en-US')} of ${n})`,
      method: 'GET',
      path,
      requests: () => [{ method: 'GET', path, headers: browser }],
      preflight: () => ({ headers: browser }),
    };
  };
  return [
    {
      id: 'static.hc.article',
      side: 'limit',
      server: 'static',
      label: `GET the article page as a static file (${process.env.STATIC_MODE === 'raw' ? 'node:http' : 'Fastify'})`,
      method: 'GET',
      path: hc.articlePath,
      requests: () => [{ method: 'GET', path: hc.articlePath, headers: browser }],
      preflight: () => ({ headers: browser }),
    },
    {
      id: 'service.hc.article',
      side: 'service',
      label: 'GET /hc/{slug}/articles/{slug} (same visitor)',
      method: 'GET',
      path: hc.articlePath,
      requests: () => [{ method: 'GET', path: hc.articlePath, headers: browser }],
      preflight: () => ({ headers: browser }),
    },
    {
      id: 'service.hc.article.views',
      side: 'service',
      label: 'GET /hc/{slug}/articles/{slug} (new visitor each)',
      method: 'GET',
      path: hc.articlePath,
      requests: () => [
        {
          method: 'GET',
          path: hc.articlePath,
          headers: browser,
          setupRequest: (req) => ({ ...req, headers: { ...req.headers, ...visitor() } }),
        },
      ],
      preflight: () => ({ headers: visitor() }),
    },
    search('service.hc.search', Q_HC_COMMON),
    search('service.hc.search_rare', Q_HC_RARE),
  ];
}

function record(line: object): void {
  appendFileSync(RESULTS, JSON.stringify(line) + '\n');
}

// ---------------------------------------------------------------------------------------------
// Main

// Assigned inside main(); the casts keep TypeScript from narrowing them to null out here.
let service = null as Child | null;
let limit = null as Child | null;
let staticServer = null as Child | null;
let dataDir: string | null = null;
let dbCreated = false;
let cleaning: Promise<void> | null = null;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    current?.stop();
    await Promise.all([service?.stop(), limit?.stop(), staticServer?.stop()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (dbCreated && !KEEP_DB) {
      const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
      try {
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`);
      } catch (err) {
        console.error(`could not drop database ${DB_NAME}: ${String(err)}`);
      } finally {
        await admin.end().catch(() => {});
      }
    } else if (dbCreated) {
      console.log(`kept database ${DB_URL}`);
    }
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    aborted = true;
    console.error(`\n${signal}: stopping the servers and dropping the database`);
    void cleanup().finally(() => process.exit(130));
  });
}

async function main(): Promise<number> {
  // 1. The limit server's own dependencies (gitignored there).
  if (!existsSync(join(SHARED, 'limit-server.mjs'))) throw new Error(`no limit server at ${SHARED}`);
  if (!existsSync(join(SHARED, 'node_modules', 'fastify'))) {
    console.log(`npm ci in ${SHARED}`);
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: SHARED, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`npm ci in ${SHARED} failed`);
  }

  // Which pairs run (ONLY), so that the ticket seed is skipped when no ticket pair is wanted.
  const allPairs = PAIRS;
  const matches = (pattern: string, id: string) =>
    pattern.endsWith('*') ? id.startsWith(pattern.slice(0, -1)) : id === pattern;
  for (const pattern of ONLY) {
    if (!allPairs.some((p) => matches(pattern, p.id)))
      throw new Error(`ONLY: unknown pair ${pattern}; known: ${allPairs.map((p) => p.id).join(', ')}`);
  }
  const pairs = ONLY.length === 0 ? allPairs : allPairs.filter((p) => ONLY.some((pattern) => matches(pattern, p.id)));
  const wanted = new Set(pairs.flatMap((p) => [p.service, p.limit]));
  const ticketsWanted = [...wanted].some((id) => id.startsWith('service.tickets.'));
  if (wanted.has('service.tickets.list_fields') && SEED_FIELDS < 2) {
    throw new Error('tickets.list_fields needs SEED_FIELDS of at least 2 (the select and the number field it uses)');
  }

  // 2. A fresh database.
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  let pgVersion: string;
  try {
    pgVersion = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version;
    await admin.query(`CREATE DATABASE ${DB_NAME}`);
    dbCreated = true;
  } finally {
    await admin.end();
  }

  // Which code is measured: the working tree, so say whether src/ differs from the commit.
  const git = (...args: string[]) => spawnSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' });
  const head = git('rev-parse', '--short', 'HEAD');
  const commit = head.status === 0 ? head.stdout.trim() : null;
  const dirty = commit ? git('status', '--porcelain', '--', 'src', 'package.json').stdout.trim() !== '' : null;

  // How busy the machine is before anything starts: other processes share these cores.
  const busyBefore = HAS_PROC ? await machineBusy(2000) : null;

  mkdirSync(dirname(RESULTS), { recursive: true });
  const meta = {
    kind: 'meta',
    run: STAMP,
    date: new Date().toISOString(),
    cores: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memory_gib: +(totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
    postgres: pgVersion,
    connections: CONNS,
    duration_s: DURATION,
    warmup_s: WARMUP,
    seed_tickets: SEED_TICKETS,
    seed_service_tickets: ticketsWanted ? SEED_SERVICE_TICKETS : 0,
    seed_sql: ticketsWanted ? SEED_SQL : null,
    pairs: pairs.map((p) => p.id),
    quiet_workspaces: QUIET,
    rounds: ROUNDS,
    quiet_wait_s: QUIET_WAIT,
    machine_busy_pct_before: busyBefore,
    commit,
    src_modified: dirty,
  };
  record(meta);
  if (dirty) console.log(`note: src/ has uncommitted changes; measuring the working tree on top of ${commit}`);
  if (busyBefore !== null && busyBefore > 25) {
    console.log(
      `warning: the machine was already ${busyBefore}% busy before the bench started; figures will be disturbed`,
    );
  }
  console.log(
    `bench ${STAMP}: ${meta.cores} cores, ${meta.memory_gib} GiB, node ${meta.node}, PostgreSQL ${pgVersion}; ` +
      `${CONNS} connections, ${WARMUP} s warm-up + ${DURATION} s per run, ${ROUNDS} rounds; database ${DB_NAME}`,
  );

  // 3. The service.
  const servicePort = await freePort(envInt('SERVICE_PORT', 3200, 1, 65535));
  const svcUrl = `http://${HOST}:${servicePort}`;
  dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
  const svcEnv: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: DB_URL,
    PORT: String(servicePort),
    HOST,
    DATA_DIR: dataDir,
    RATE_LIMIT_PER_MINUTE: '10000000',
    LOG_LEVEL: 'warn',
    SECRET_KEY: randomBytes(32).toString('base64url'),
    INBOUND_SECRET: randomBytes(32).toString('base64url'),
  };
  // In-process bus and rate-limit counters: the bench measures one process, like the limit server.
  for (const k of ['NATS_URL', 'REDIS_URL', 'TRUST_PROXY', 'DATABASE_IN_MEMORY', 'PUBLIC_URL']) delete svcEnv[k];
  const prof = process.env.SERVICE_CPU_PROF;
  const profArgs = prof ? ['--cpu-prof', `--cpu-prof-dir=${resolve(prof)}`] : [];
  service = new Child('service', [...profArgs, '--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env: svcEnv });
  await waitHealthy(`${svcUrl}/healthz`, service);
  const startupLines = service.lines.length;

  // Owner, busy workspace + QUIET - 1 more, one API key each.
  const reg = await call(svcUrl, 'POST', '/v1/auth/register', {
    email: `bench-${process.pid}@example.com`,
    password: 'bench password 0123456789',
    name: 'Bench Owner',
  });
  expectStatus(reg, 201, 'POST /v1/auth/register');
  const token = String(reg.body.access_token);
  const keys: string[] = [];
  const workspaceIds: string[] = [];
  for (let i = 0; i < QUIET; i++) {
    const w = await call(
      svcUrl,
      'POST',
      '/v1/workspaces',
      { name: `Bench ${i + 1}` },
      { authorization: `Bearer ${token}` },
    );
    expectStatus(w, 201, 'POST /v1/workspaces');
    const k = await call(
      svcUrl,
      'POST',
      '/v1/api-keys',
      { name: `bench ${i + 1}`, scopes: ['settings:read', 'settings:write', 'tickets:read'] },
      { authorization: `Bearer ${token}`, 'svc-workspace': String(w.body.id) },
    );
    expectStatus(k, 201, 'POST /v1/api-keys');
    workspaceIds.push(String(w.body.id));
    keys.push(String(k.body.key));
  }
  const busyKey = keys[0]!;

  // The ticket workspace: created over HTTP like the others, then seeded in SQL (bench/tickets.ts).
  let tickets: {
    workspaceId: string;
    key: string;
    seed: SeedResult;
    /** A sample of the seeded contacts' emails: POST /v1/tickets names 3 of 4 of its contacts by them. */
    emails: string[];
  } | null = null;
  if (ticketsWanted) {
    const w = await call(
      svcUrl,
      'POST',
      '/v1/workspaces',
      { name: 'Bench tickets' },
      { authorization: `Bearer ${token}` },
    );
    expectStatus(w, 201, 'POST /v1/workspaces (tickets)');
    const k = await call(
      svcUrl,
      'POST',
      '/v1/api-keys',
      { name: 'bench tickets', scopes: ['tickets:read', 'tickets:write'] },
      { authorization: `Bearer ${token}`, 'svc-workspace': String(w.body.id) },
    );
    expectStatus(k, 201, 'POST /v1/api-keys (tickets)');
    const workspaceId = String(w.body.id);
    // The custom fields, through the service's own API as the workspace's owner (an admin).
    const fields: SeededField[] = [];
    for (const f of BENCH_FIELDS.slice(0, SEED_FIELDS)) {
      const r = await call(svcUrl, 'POST', '/v1/custom-fields', f.body, {
        authorization: `Bearer ${token}`,
        'svc-workspace': workspaceId,
      });
      expectStatus(r, 201, `POST /v1/custom-fields (${f.body.key})`);
      fields.push({ key: String(r.body.key), type: r.body.type, options: r.body.options });
    }
    console.log(
      `seeding ${SEED_SERVICE_TICKETS.toLocaleString('en-US')} tickets (about 3 messages each, ${fields.length} ` +
        `custom fields) in workspace ${workspaceId}`,
    );
    const db = new pg.Client({ connectionString: DB_URL });
    await db.connect();
    try {
      const seed = await seedTickets(db, workspaceId, SEED_SERVICE_TICKETS, fields);
      const emails = (
        await db.query<{ email: string }>('SELECT email FROM contacts WHERE workspace_id = $1 ORDER BY id LIMIT 2000', [
          workspaceId,
        ])
      ).rows.map((r) => r.email);
      tickets = { workspaceId, key: String(k.body.key), seed, emails };
      if (SEED_SQL) {
        const t0 = performance.now();
        await db.query(SEED_SQL);
        await db.query('ANALYZE');
        console.log(`SEED_SQL ran in ${Math.round(performance.now() - t0)} ms (with ANALYZE): ${SEED_SQL}`);
      }
    } finally {
      await db.end();
    }
    const sd = tickets.seed;
    record({ kind: 'seed', run: STAMP, workspace_id: workspaceId, ...sd });
    console.log(
      `seeded ${sd.tickets.toLocaleString('en-US')} tickets, ${sd.messages.toLocaleString('en-US')} messages, ` +
        `${sd.contacts.toLocaleString('en-US')} contacts, ${sd.agents} agents in ${(sd.ms / 1000).toFixed(1)} s ` +
        `(incl. VACUUM ANALYZE); tickets matching q: ${Object.entries(sd.q_counts)
          .map(([q, n]) => `${q} ${n.toLocaleString('en-US')}`)
          .join(', ')}`,
    );
    if (Object.keys(sd.field_counts).length > 0) {
      const filled = Object.entries(sd.field_counts).map(([key, n]) => `${key} ${n.toLocaleString('en-US')}`);
      const matches = sd.list_fields_matches?.toLocaleString('en-US') ?? 'n/a';
      console.log(
        `  tickets with a value per field: ${filled.join(', ')}; ` +
          `${LIST_FIELDS.select} = ${LIST_FIELDS.option}: ${matches}`,
      );
    }
  }

  // The workflow pair (bench/workflow.ts): two fresh workspaces, one with 50 automations and an SLA.
  const workflowKeys: { plain: string; workflow: string } | null = wanted.has('service.workflow.create')
    ? { plain: '', workflow: '' }
    : null;
  if (workflowKeys) {
    for (const kind of ['plain', 'workflow'] as const) {
      const w = await call(
        svcUrl,
        'POST',
        '/v1/workspaces',
        { name: `Bench ${kind}` },
        { authorization: `Bearer ${token}` },
      );
      expectStatus(w, 201, `POST /v1/workspaces (${kind})`);
      const owner = { authorization: `Bearer ${token}`, 'svc-workspace': String(w.body.id) };
      const k = await call(
        svcUrl,
        'POST',
        '/v1/api-keys',
        { name: `bench ${kind}`, scopes: ['tickets:read', 'tickets:write'] },
        owner,
      );
      expectStatus(k, 201, `POST /v1/api-keys (${kind})`);
      workflowKeys[kind] = String(k.body.key);
      if (kind === 'workflow') {
        const made = await setupWorkflow((method, path, body) => call(svcUrl, method, path, body, owner));
        console.log(`workflow workspace ${w.body.id}: ${made.automations} automations, an SLA policy, business hours`);
      }
    }
  }

  // The help-center workspaces (bench/helpcenter.ts): one with a typical article, one with the
  // search corpus; each with the help center on and one collection, through the service's API.
  const hcWanted = [...wanted].some((id) => id.startsWith('service.hc.') || id.startsWith('static.'));
  let hc: { articlePath: string; searchSlug: string; seed: HcSeedResult } | null = null;
  let staticUrl = '';
  if (hcWanted) {
    const helpCenter = async (name: string) => {
      const w = await call(svcUrl, 'POST', '/v1/workspaces', { name }, { authorization: `Bearer ${token}` });
      expectStatus(w, 201, `POST /v1/workspaces (${name})`);
      const owner = { authorization: `Bearer ${token}`, 'svc-workspace': String(w.body.id) };
      const on = await call(
        svcUrl,
        'PATCH',
        '/v1/workspace',
        { settings: { help_center_enabled: true, help_center_title: `${name} Help`, brand_color: '#0f766e' } },
        owner,
      );
      expectStatus(on, 200, `PATCH /v1/workspace help_center_enabled (${name})`);
      const c = await call(
        svcUrl,
        'POST',
        '/v1/kb/collections',
        { name: 'Billing', description: 'Invoices, payments and plans' },
        owner,
      );
      expectStatus(c, 201, `POST /v1/kb/collections (${name})`);
      return { id: String(w.body.id), slug: String(on.body.slug), owner, collectionId: String(c.body.id) };
    };
    const a = await helpCenter('Bench help center');
    const art = await call(
      svcUrl,
      'POST',
      '/v1/kb/articles',
      {
        title: ARTICLE_TITLE,
        body_html: ARTICLE_HTML,
        collection_id: a.collectionId,
        language: 'en',
        status: 'published',
      },
      a.owner,
    );
    expectStatus(art, 201, 'POST /v1/kb/articles');
    const articlePath = `/hc/${a.slug}/articles/${art.body.slug}`;
    const s = await helpCenter('Bench help search');
    console.log(`seeding ${SEARCH_ARTICLES.toLocaleString('en-US')} published articles in workspace ${s.id}`);
    const db = new pg.Client({ connectionString: DB_URL });
    await db.connect();
    let seed: HcSeedResult;
    try {
      seed = await seedHelpCenterArticles(db, s.id, s.collectionId, SEARCH_ARTICLES);
    } finally {
      await db.end();
    }
    record({ kind: 'seed', run: STAMP, what: 'help center search', workspace_id: s.id, ...seed });
    console.log(
      `seeded ${seed.articles.toLocaleString('en-US')} articles, ${seed.words_avg} words and ${seed.body_bytes_avg} ` +
        `bytes of HTML each on average, in ${(seed.ms / 1000).toFixed(1)} s (incl. VACUUM ANALYZE); articles ` +
        `matching q: ${Object.entries(seed.q_counts)
          .map(([q, n]) => `${q} ${n.toLocaleString('en-US')}`)
          .join(', ')}`,
    );
    hc = { articlePath, searchSlug: s.slug, seed };

    // The static side: the article page as the service serves it (a crawler's user agent, so that
    // the capture counts no view), its bytes and headers served from memory by a third process.
    const page = await fetch(svcUrl + articlePath, {
      headers: { 'user-agent': 'bench-capture-bot/1.0' },
      signal: AbortSignal.timeout(10_000),
    });
    if (page.status !== 200) throw new Error(`GET ${articlePath}: expected 200, got ${page.status}`);
    const bytes = Buffer.from(await page.arrayBuffer());
    const bodyFile = join(dataDir, 'hc-article.html');
    const headersFile = join(dataDir, 'hc-article.headers.json');
    writeFileSync(bodyFile, bytes);
    writeFileSync(headersFile, JSON.stringify(Object.fromEntries(page.headers.entries())));
    const staticPort = await freePort(envInt('STATIC_PORT', 3300, 1, 65535));
    staticUrl = `http://${HOST}:${staticPort}`;
    staticServer = new Child('static-server', [join(BENCH_DIR, 'static-server.mjs'), bodyFile, headersFile], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(staticPort), HOST },
    });
    await waitHealthy(`${staticUrl}/healthz`, staticServer);
    record({ kind: 'static', run: STAMP, path: articlePath, bytes: bytes.length });
    console.log(
      `help center article ${articlePath}: ${bytes.length.toLocaleString('en-US')} bytes of HTML, served as well ` +
        `by the static server ${staticUrl} (pid ${staticServer.proc.pid})`,
    );
  }

  // 4. The limit server (same database, schema limit_bench, freshly seeded), when a pair needs it.
  const limitPort = await freePort(envInt('LIMIT_PORT', 3100, 1, 65535));
  const limUrl = `http://${HOST}:${limitPort}`;
  if ([...wanted].some((id) => id.startsWith('limit.'))) {
    limit = new Child('limit-server', [join(SHARED, 'limit-server.mjs')], {
      cwd: SHARED,
      env: {
        ...process.env,
        DATABASE_URL: DB_URL,
        PORT: String(limitPort),
        RESEED: '1',
        SEED_TICKETS: String(SEED_TICKETS),
        MODE: '',
      },
    });
    await waitHealthy(`${limUrl}/healthz`, limit, 180_000);
  }
  console.log(
    `service ${svcUrl} (pid ${service.proc.pid}), ` +
      (limit ? `limit server ${limUrl} (pid ${limit.proc.pid})` : 'no limit server (no pair needs it)') +
      '\n',
  );

  // 5. Alternating runs.
  const get =
    (path: string, headers: Record<string, string> = {}): (() => autocannon.Request[]) =>
    () => [{ method: 'GET', path, headers }];
  const post =
    (path: string, body: string): (() => autocannon.Request[]) =>
    () => [{ method: 'POST', path, headers: { 'content-type': 'application/json' }, body }];
  const keyAuth = { authorization: `Bearer ${busyKey}` };
  const patchPre = (key: string) => () => ({
    headers: jsonBody({ authorization: `Bearer ${key}` }),
    body: JSON.stringify({ settings: { brand_color: '#112233' } }),
  });
  const randomTicket = JSON.stringify({ subject: 'x' });
  const ticketScenarios = tickets ? ticketScenariosOf(tickets) : { reads: [], writes: [] };
  const busyTicket = JSON.stringify({ subject: 'x', workspace_id: 1 });

  const scenarios: Scenario[] = [
    {
      id: 'limit.healthz',
      side: 'limit',
      label: 'GET /healthz (Fastify, no DB)',
      method: 'GET',
      path: '/healthz',
      requests: get('/healthz'),
      preflight: () => ({ headers: {} }),
    },
    {
      id: 'service.healthz',
      side: 'service',
      label: 'GET /healthz (full hook pipeline, no DB)',
      method: 'GET',
      path: '/healthz',
      requests: get('/healthz'),
      preflight: () => ({ headers: {} }),
    },
    {
      id: 'limit.list50',
      side: 'limit',
      label: 'GET /tickets?limit=50 (one indexed read)',
      method: 'GET',
      path: '/tickets?limit=50',
      requests: get('/tickets?limit=50'),
      preflight: () => ({ headers: {} }),
    },
    {
      id: 'service.me',
      side: 'service',
      label: 'GET /v1/me (API key)',
      method: 'GET',
      path: '/v1/me',
      requests: get('/v1/me', keyAuth),
      preflight: () => ({ headers: keyAuth }),
    },
    ...ticketScenarios.reads,
    {
      id: 'limit.create.busy',
      side: 'limit',
      label: 'POST /tickets workspace 1 (single workspace)',
      method: 'POST',
      path: '/tickets',
      requests: post('/tickets', busyTicket),
      preflight: () => ({ headers: jsonBody({}), body: busyTicket }),
    },
    {
      id: 'service.patch.busy',
      side: 'service',
      label: 'PATCH /v1/workspace, 1 workspace (API key)',
      method: 'PATCH',
      path: '/v1/workspace',
      requests: () => patchRequests([busyKey]),
      preflight: patchPre(busyKey),
    },
    ...ticketScenarios.writes,
    ...(workflowKeys ? workflowScenarios(workflowKeys) : []),
    ...(hc ? helpCenterScenarios(hc) : []),
    {
      id: 'limit.create.spread',
      side: 'limit',
      label: 'POST /tickets random of 10 workspaces',
      method: 'POST',
      path: '/tickets',
      requests: post('/tickets', randomTicket),
      preflight: () => ({ headers: jsonBody({}), body: randomTicket }),
    },
    {
      id: 'service.patch.spread',
      side: 'service',
      label: `PATCH /v1/workspace, ${QUIET} workspaces round robin`,
      method: 'PATCH',
      path: '/v1/workspace',
      requests: () => patchRequests(keys),
      preflight: patchPre(keys[1]!),
    },
  ];

  const chosen = scenarios.filter((s) => wanted.has(s.id));
  // Blocks: a limit run and the service runs compared with it, which follow it in the list
  // (limit.list50 with the authenticated read and the ticket reads, limit.create.busy with the
  // single-workspace PATCH and the ticket writes). Each scenario runs once per round even when
  // several pairs use it.
  const blocks: Scenario[][] = [];
  for (const s of chosen) {
    if (s.side === 'limit' || blocks.length === 0) blocks.push([s]);
    else blocks[blocks.length - 1]!.push(s);
  }

  // Round r runs the blocks in order, limit first; even rounds run each block backwards so that
  // neither side always runs first.
  const all: Measurement[] = [];
  /** Scenario id → why it could not be measured (its preflight failed or took over 10 s). */
  const skipped = new Map<string, string>();
  for (let round = 1; round <= ROUNDS; round++) {
    if (ROUNDS > 1) console.log(`round ${round} of ${ROUNDS}`);
    for (const block of blocks) {
      const pair = round % 2 === 0 ? [...block].reverse() : block;
      for (const s of pair) {
        if (skipped.has(s.id)) continue;
        const server = s.server === 'static' ? staticServer : s.side === 'service' ? service : limit;
        const url = s.server === 'static' ? staticUrl : s.side === 'service' ? svcUrl : limUrl;
        if (!server) throw new Error(`${s.id}: its server was not started`);
        const quiet = await waitQuiet();
        let m: Measurement;
        try {
          m = await measure(url, s, server.proc.pid!, round);
        } catch (err) {
          if (!(err instanceof PreflightError)) throw err;
          // Not measured in this round or the next ones; whatever the request left running in
          // PostgreSQL (a statement does not stop when its client goes away) is cancelled.
          const cancelled = await settle();
          skipped.set(s.id, err.message);
          record({
            kind: 'skipped',
            run: STAMP,
            round,
            id: s.id,
            side: s.side,
            label: s.label,
            reason: err.message,
            cancelled,
          });
          console.log(`  ${pad(s.side, 8)}${pad(s.label, 58)}  !! not measured: ${err.message}`);
          for (const c of cancelled)
            console.log(`            cancelled pid ${c.pid} after ${c.running_s} s: ${c.query}`);
          continue;
        }
        m.quiet_wait_s = quiet.waitedS;
        m.machine_busy_pct_before = quiet.busyPct;
        all.push(m);
        record(m);
        printRow(m);
        // autocannon leaves the requests in flight when a run ends; the next run starts when they are done.
        const left = await settle();
        for (const c of left) console.log(`            cancelled pid ${c.pid} after ${c.running_s} s: ${c.query}`);
        await sleep(500);
      }
    }
  }

  // 6. Ratios (bench/report.ts).
  for (const line of summarize(all, pairs)) record(line);
  for (const p of pairs) {
    const why = skipped.get(p.service) ?? skipped.get(p.limit);
    if (why) console.log(`  ${pad(p.what, 46)}not measured: ${why.slice(0, 160)}`);
  }

  // 7. Checks on what the service wrote: the event log must be gap-free and fully published,
  // and the service must have logged nothing at warn or above while under load.
  await sleep(1500); // the publisher marks events published every 200 ms
  const db = new pg.Client({ connectionString: DB_URL });
  await db.connect();
  let checks: Record<string, unknown>;
  try {
    const ev = await db.query<{
      workspaces: number;
      events: number;
      gaps: number;
      unpublished: number;
      updated: number;
    }>(
      `SELECT count(DISTINCT workspace_id)::int AS workspaces, count(*)::int AS events,
              (SELECT count(*)::int FROM (SELECT workspace_id FROM public.events GROUP BY workspace_id
                                           HAVING max(seq) <> count(*) OR min(seq) <> 1) g) AS gaps,
              count(*) FILTER (WHERE NOT published)::int AS unpublished,
              count(*) FILTER (WHERE type = 'workspace.updated')::int AS updated
         FROM public.events WHERE workspace_id = ANY($1::uuid[])`,
      [workspaceIds],
    );
    const counted = all
      .filter((m) => m.id === 'service.patch.busy' || m.id === 'service.patch.spread')
      .reduce((a, m) => a + m.total_2xx + m.warmup_2xx + 1, 0);
    // Row writes per table from pg_stat (cumulative statistics: may lag the last seconds of writes).
    const tables = await db.query<{ table: string; ins: number; upd: number; hot_upd: number; dead: number }>(
      `SELECT relname AS table, n_tup_ins::int AS ins, n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot_upd,
              n_dead_tup::int AS dead
         FROM pg_stat_user_tables WHERE schemaname = 'public' AND relname IN ('api_keys', 'contacts', 'events', 'messages', 'tickets', 'workspaces', 'workspace_counters')
        ORDER BY relname`,
    );
    const logLines = service.lines.slice(startupLines).filter((l) => l.startsWith('{'));
    // The ticket workspace: one ticket.created per create answered, one message.created per reply
    // and per create (each carries a first message); the seed wrote no events.
    let ticketChecks: Record<string, number> | null = null;
    if (tickets) {
      const answered = (ids: string[]) =>
        all.filter((m) => ids.includes(m.id)).reduce((a, m) => a + m.total_2xx + m.warmup_2xx + 1, 0);
      const te = await db.query<{ events: number; unpublished: number; created: number; messages: number }>(
        `SELECT count(*)::int AS events, count(*) FILTER (WHERE NOT published)::int AS unpublished,
                count(*) FILTER (WHERE type = 'ticket.created')::int AS created,
                count(*) FILTER (WHERE type = 'message.created')::int AS messages
           FROM public.events WHERE workspace_id = $1`,
        [tickets.workspaceId],
      );
      ticketChecks = {
        ...te.rows[0]!,
        create_2xx_counted: answered(['service.tickets.create']),
        message_2xx_counted: answered(['service.tickets.create', 'service.tickets.reply', 'service.tickets.reply.hot']),
      };
    }
    checks = {
      kind: 'check',
      run: STAMP,
      ...ev.rows[0]!,
      table_writes: tables.rows,
      patch_2xx_counted: counted,
      tickets: ticketChecks,
      service_log_lines_warn_or_above: logLines.length,
      service_log_sample: logLines.slice(0, 5),
    };
  } finally {
    await db.end();
  }
  record(checks);
  console.log(
    `\nchecks: ${checks.events} events in ${checks.workspaces} workspaces, ${checks.gaps} with seq gaps, ` +
      `${checks.unpublished} unpublished 1.5 s after the last write; ${checks.updated} workspace.updated events for ` +
      `${checks.patch_2xx_counted} PATCH answers counted (incl. warm-up; requests in flight when a run stops also commit); ` +
      `${checks.service_log_lines_warn_or_above} service log lines at warn or above`,
  );
  const tc = checks.tickets as Record<string, number> | null;
  if (tc) {
    console.log(
      `  ticket workspace: ${tc.events} events, ${tc.unpublished} unpublished; ${tc.created} ticket.created for ` +
        `${tc.create_2xx_counted} creates counted, ${tc.messages} message.created for ${tc.message_2xx_counted} ` +
        `creates and replies counted (incl. warm-up and preflight)`,
    );
  }
  for (const l of checks.service_log_sample as string[]) console.log(`  ${l.slice(0, 300)}`);
  for (const t of checks.table_writes as Array<Record<string, unknown>>) {
    console.log(
      `  pg_stat ${pad(String(t.table), 20)} inserted ${t.ins}, updated ${t.upd} (HOT ${t.hot_upd}), dead ${t.dead}`,
    );
  }

  const failed = all.filter((m) => m.non_2xx + m.errors + m.timeouts > 0 || m.total_2xx === 0);
  for (const [id, why] of skipped) console.log(`!! ${id} not measured: ${why}`);
  for (const m of failed) {
    console.log(
      `!! round ${m.round} ${m.side} ${m.label}: non-2xx ${m.non_2xx}, errors ${m.errors}, timeouts ${m.timeouts}`,
    );
  }
  console.log(`\nresults appended to ${RESULTS}`);
  return failed.length > 0 || skipped.size > 0 ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (err) {
  if (!aborted) {
    console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
    if (service?.lines.length) console.error(`--- service output (last lines)\n${service.tail()}`);
    if (limit?.lines.length) console.error(`--- limit server output (last lines)\n${limit.tail()}`);
  }
} finally {
  await cleanup();
}
process.exit(code);
