// npm run bench:startup: how long `npm start` takes to answer /readyz on the embedded database,
// on a fresh DATA_DIR and on an existing one, and where the time goes.
//
// Each round runs, one after the other:
//   pglite fresh     a bare Node process that imports PGlite (with the service's extensions) and
//                    creates a database in an empty directory: the embedded database's own start,
//                    the reference the service's figures are compared with;
//   service fresh    `npm start`'s entry (ENTRY, default dist/main.js, what `npm start` runs) on
//                    an empty DATA_DIR: from spawn to the first 200 from /readyz;
//   pglite existing  the bare process again on the directory it created;
//   service existing the entry again on the DATA_DIR it created (migrations already applied).
// Alternating them keeps a busy machine from favouring one; with several entries (ENTRY=a,b:
// before and after a change), each service step runs every entry in turn. Every service run logs
// its start-up steps at debug level ('started', startup_ms: module loading, database, migrations,
// bus, app, gateway, jobs, listen, then workers; src/main.ts); "other" is what the steps before
// /readyz leave out of the spawn-to-/readyz time (the configuration, the first /readyz, the poll's
// granularity). "workers" (job workers, schedules, mailbox pollers) start once the server listens:
// not part of the time to /readyz; each run is stopped (SIGTERM) only after they have started.
//
// Results: a table of medians (min to max in brackets) on stdout and one JSON line per run in
// bench/results/startup-<time>.jsonl. Exit code 1 when a run did not become ready within 120 s.
//
// Env (all optional):
//   RUNS   rounds (default 3, 1..50)
//   ENTRY  the service's entry, or several separated by commas (default dist/main.js; a .ts
//          entry runs through tsx, as before the build: ENTRY=src/main.ts; 'npm start' runs npm
//          start itself: npm's own start and the build's staleness check included). The code
//          before a change, outside the repository (Biome and tsx would find its configuration):
//          mkdir /tmp/before && git archive <commit> | tar -x -C /tmp/before, then
//          ln -s "$PWD/node_modules" /tmp/before/ and ENTRY=dist/main.js,/tmp/before/src/main.ts
import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { envInt, freePort, HOST, ROOT, sleep } from './lib.js';

const RUNS = envInt('RUNS', 3, 1, 50);
const ENTRIES = (process.env.ENTRY?.trim() || 'dist/main.js')
  .split(',')
  .map((e) => e.trim())
  .filter(Boolean);
const READY_TIMEOUT_MS = 120_000;
const PHASES = ['modules', 'database', 'migrations', 'bus', 'app', 'gateway', 'jobs', 'listen'] as const;
/** After /readyz. */
const AFTER = ['workers'] as const;

// The embedded database's own start, as src/platform/db/index.ts does it.
const PGLITE_ALONE = `
const t0 = performance.now();
const { PGlite } = await import('@electric-sql/pglite');
const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
const { btree_gin } = await import('@electric-sql/pglite/contrib/btree_gin');
const t1 = performance.now();
const db = await PGlite.create({ dataDir: process.argv[1], extensions: { pg_trgm, btree_gin } });
await db.query('select 1');
// PGlite goes on working for a moment after its first answer (150 to 300 ms here): wait until the
// event loop is free, as the service's next step has to.
await new Promise((r) => setImmediate(r));
const t2 = performance.now();
await db.close();
process.stdout.write(JSON.stringify({ node: t0, import: t1 - t0, create: t2 - t1 }) + '\\n');
`;

interface Run {
  what: 'pglite' | 'service';
  /** The service's entry ('' for PGlite alone). */
  entry: string;
  data: 'fresh' | 'existing';
  /** From spawn to ready (the bare process: to its first answer; the service: to /readyz 200). */
  ready_ms: number;
  phases: Record<string, number>;
}

const runs: Run[] = [];
const children = new Set<ChildProcess>();

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of Object.keys(env))
    if (/^(DATABASE_URL|DATABASE_IN_MEMORY|NATS_URL|REDIS_URL|PUBLIC_URL|S3_.*)$/.test(k)) delete env[k];
  return env;
}

function collect(child: ChildProcess): string[] {
  const lines: string[] = [];
  let rest = '';
  for (const s of [child.stdout, child.stderr]) {
    s?.setEncoding('utf8');
    s?.on('data', (c: string) => {
      const parts = (rest + c).split('\n');
      rest = parts.pop() ?? '';
      lines.push(...parts);
    });
  }
  return lines;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((r) => child.once('exit', () => r()));

async function pgliteAlone(dir: string, data: Run['data']): Promise<void> {
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--input-type=module', '-e', PGLITE_ALONE, dir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const lines = collect(child);
  let ready_ms = 0;
  child.stdout?.once('data', () => {
    ready_ms = performance.now() - t0;
  });
  await exited(child);
  children.delete(child);
  const out = lines.find((l) => l.startsWith('{'));
  if (child.exitCode !== 0 || !out) throw new Error(`PGlite alone failed:\n${lines.slice(-20).join('\n')}`);
  const r = JSON.parse(out) as { node: number; import: number; create: number };
  runs.push({
    what: 'pglite',
    entry: '',
    data,
    ready_ms,
    phases: { node: r.node, import: r.import, create: r.create },
  });
}

async function service(entry: string, dataDir: string, data: Run['data']): Promise<void> {
  const NPM = entry === 'npm start';
  const port = await freePort();
  const env = cleanEnv({ PORT: String(port), HOST, DATA_DIR: dataDir, LOG_LEVEL: 'debug' });
  const t0 = performance.now();
  // npm start in a process group of its own, so that the service under npm's shell gets the signal.
  const child = NPM
    ? spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    : spawn(process.execPath, [...(entry.endsWith('.ts') ? ['--import', 'tsx'] : []), entry], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
  const kill = (signal: NodeJS.Signals) => (NPM && child.pid ? process.kill(-child.pid, signal) : child.kill(signal));
  children.add(child);
  const lines = collect(child);
  let ready_ms = 0;
  // /readyz is asked from the moment the service says it listens (Fastify's log line): polling a
  // port nobody listens on yet would take CPU from the start being measured.
  let seen = 0;
  let listening = false;
  while (ready_ms === 0) {
    if (child.exitCode !== null) throw new Error(`the service exited:\n${lines.slice(-20).join('\n')}`);
    if (performance.now() - t0 > READY_TIMEOUT_MS) {
      kill('SIGKILL');
      throw new Error(`the service did not answer /readyz within ${READY_TIMEOUT_MS / 1000} s`);
    }
    for (; !listening && seen < lines.length; seen++) listening = /listening/i.test(lines[seen]!);
    if (!listening) {
      await sleep(5);
      continue;
    }
    try {
      const r = await fetch(`http://${HOST}:${port}/readyz`);
      await r.arrayBuffer();
      if (r.status === 200) ready_ms = performance.now() - t0;
    } catch {
      // not listening yet
    }
    if (ready_ms === 0) await sleep(5);
  }
  // The whole start: until the service logs its steps (after the workers), at most 60 s more.
  for (let i = 0; i < 6000 && child.exitCode === null && !lines.some((l) => l.includes('"startup_ms"')); i++) {
    await sleep(10);
  }
  kill('SIGTERM');
  const stopped = await Promise.race([exited(child).then(() => true), sleep(30_000).then(() => false)]);
  if (!stopped) kill('SIGKILL');
  await exited(child);
  // npm may exit before the service under it has closed its database.
  for (let i = 0; NPM && child.pid && groupAlive(child.pid); i++) {
    if (i === 3000) kill('SIGKILL');
    await sleep(10);
  }
  children.delete(child);
  let phases: Record<string, number> = {};
  for (const l of lines) {
    if (!l.includes('"startup_ms"')) continue;
    try {
      phases = (JSON.parse(l) as { startup_ms: Record<string, number> }).startup_ms;
    } catch {
      // not a log line
    }
  }
  if (Object.keys(phases).length === 0) process.stdout.write('  (no start-up steps in the log: an older entry?)\n');
  runs.push({ what: 'service', entry, data, ready_ms, phases });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? Number.NaN : n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
};
const fmt = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(2) : '-');
const cell = (xs: number[]) =>
  xs.length === 0 ? '-' : `${fmt(median(xs))} (${fmt(Math.min(...xs))} to ${fmt(Math.max(...xs))})`;

async function main(): Promise<void> {
  for (const e of ENTRIES) {
    if (e !== 'npm start' && !existsSync(resolve(ROOT, e)))
      throw new Error(`${e} does not exist: run npm run build first`);
  }
  const started = new Date();
  const base = mkdtempSync(join(tmpdir(), 'bench-startup-'));
  process.on('exit', () => {
    for (const c of children) c.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
  });
  process.stdout.write(
    `bench:startup: ${RUNS} rounds, ${ENTRIES.join(' and ')}, Node ${process.version}, ${cpus().length} cores ` +
      `(${cpus()[0]?.model ?? '?'}), load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}\n`,
  );
  for (let i = 1; i <= RUNS; i++) {
    const pgDir = join(base, `pglite-${i}`);
    const dataDir = (e: number) => join(base, `data-${i}-${e}`);
    const before = runs.length;
    await pgliteAlone(pgDir, 'fresh');
    for (const [e, entry] of ENTRIES.entries()) await service(entry, dataDir(e), 'fresh');
    await pgliteAlone(pgDir, 'existing');
    for (const [e, entry] of ENTRIES.entries()) await service(entry, dataDir(e), 'existing');
    const round = runs.slice(before);
    process.stdout.write(
      `  round ${i}: ${round.map((r) => `${r.what === 'pglite' ? 'PGlite' : r.entry} ${r.data} ${fmt(r.ready_ms)} s`).join(', ')}\n`,
    );
    rmSync(pgDir, { recursive: true, force: true });
    for (const e of ENTRIES.keys()) rmSync(dataDir(e), { recursive: true, force: true });
  }

  const of = (what: Run['what'], data: Run['data'], entry = '') =>
    runs.filter((r) => r.what === what && r.data === data && r.entry === entry);
  process.stdout.write(`\nmedians in seconds (min to max), ${RUNS} runs each\n\n`);
  process.stdout.write(
    '| data dir | entry | PGlite alone: process to ready (create) | service: spawn to /readyz 200 | difference |\n' +
      '| --- | --- | ---: | ---: | ---: |\n',
  );
  for (const data of ['fresh', 'existing'] as const) {
    const p = of('pglite', data);
    for (const entry of ENTRIES) {
      const s = of('service', data, entry);
      process.stdout.write(
        `| ${data} | ${entry} | ${cell(p.map((r) => r.ready_ms))} (${fmt(median(p.map((r) => r.phases.create!)))}) | ` +
          `${cell(s.map((r) => r.ready_ms))} | ${fmt(median(s.map((r) => r.ready_ms)) - median(p.map((r) => r.ready_ms)))} |\n`,
      );
    }
  }
  process.stdout.write(`\nthe service's start-up steps, medians in seconds\n\n`);
  process.stdout.write(
    `| data dir | entry | ${[...PHASES, 'other'].join(' | ')} | then: ${AFTER.join(' | ')} |\n` +
      `|${' --- |'.repeat(PHASES.length + 4 + AFTER.length - 1)}\n`,
  );
  for (const data of ['fresh', 'existing'] as const) {
    for (const entry of ENTRIES) {
      const s = of('service', data, entry);
      const other = s.map((r) => r.ready_ms - PHASES.reduce((n, k) => n + (r.phases[k] ?? 0), 0));
      const m = (k: string) => fmt(median(s.map((r) => r.phases[k] ?? Number.NaN)));
      process.stdout.write(
        `| ${data} | ${entry} | ${PHASES.map(m).join(' | ')} | ${fmt(median(other))} | ${AFTER.map(m).join(' | ')} |\n`,
      );
    }
  }

  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `startup-${started.toISOString().replace(/[:.]/g, '-')}.jsonl`);
  for (const r of runs) appendFileSync(file, `${JSON.stringify({ at: started.toISOString(), ...r })}\n`);
  process.stdout.write(`\n${file}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench:startup: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
