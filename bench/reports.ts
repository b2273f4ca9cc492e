// Reports at 100,000 tickets: GET /v1/reports/overview timed over HTTP for ranges of 7, 30, 90 and
// 365 days, the plans of its statements (EXPLAIN ANALYZE), the same statements without the
// indexes of migration 0021 (dropped inside a rolled-back transaction), the auto-close candidate
// query and GET /v1/onboarding. Not part of npm run bench.
//
//   psql -h 127.0.0.1 -U postgres -c 'CREATE DATABASE reports_bench'
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/reports_bench npx tsx bench/reports.ts
//
// Env: SEED_TICKETS (default 100,000) for the measured workspace; a second workspace gets a fifth
// of that (another tenant's rows in the same table and indexes); RUNS (default 20) per range.
//
// The seed is set-based SQL (values from hashint4 of the row number, the same every run), tickets
// only (reports read no messages): created evenly over the last year; the last 4 % mostly open or
// pending, older ones 85 % solved or closed (solved more than 6 days ago: closed, as auto-close
// leaves them); first reply on 90 % (1 to 600 minutes), solve 1 minute to 7 days after creation,
// CSAT on a quarter of the solved, an SLA on half (10 % of those breached), a severity on 10 %,
// channels email 60 % / chat 20 % / api 10 % / portal 10 %, 70 % assigned to one of 8 agents,
// 1 % spam, 0.5 % deleted.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RawBuilder, sql } from 'kysely';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { overviewQueries } from '../src/modules/reports/service.js';
import { dueTickets } from '../src/modules/tickets/auto-close.js';
import { createRuntime } from '../src/runtime.js';
import { call, envInt, expectStatus, percentile } from './lib.js';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('DATABASE_URL must name a scratch PostgreSQL database');
  process.exit(2);
}
const N = envInt('SEED_TICKETS', 100_000, 100, 5_000_000);
const RUNS = envInt('RUNS', 20, 1, 1000);

const h = (expr: string, salt: number, n: number) => `((hashint4((${expr}) * 31 + ${salt})::int8 + 2147483648) % ${n})`;

const rt = await createRuntime(
  loadConfig({
    DATABASE_URL: url,
    DATA_DIR: mkdtempSync(join(tmpdir(), 'bench-reports-')),
    SECRET_KEY: 'bench-secret-key-0123456789-abcdefghijklmnop',
    INBOUND_SECRET: 'bench-inbound-secret-0123456789',
    PORT: '0',
    RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
  }),
  { jobs: false, logger: pino({ level: 'warn' }) },
);
const base = (await rt.listen()).replace('[::1]', '127.0.0.1');
const db = rt.deps.database.db;

async function tenant(name: string) {
  const email = `owner.${Date.now().toString(36)}.${Math.random().toString(36).slice(2)}@bench.example.com`;
  const reg = await call(base, 'POST', '/v1/auth/register', {
    email,
    password: 'correct horse battery',
    name: 'Owner',
  });
  expectStatus(reg, 201, 'register');
  const token = reg.body.access_token as string;
  const ws = await call(base, 'POST', '/v1/workspaces', { name }, { authorization: `Bearer ${token}` });
  expectStatus(ws, 201, 'workspace');
  return { id: ws.body.id as string, headers: { authorization: `Bearer ${token}`, 'svc-workspace': ws.body.id } };
}

async function seed(ws: string, n: number, tag: string) {
  const started = Date.now();
  await db.transaction().execute(async (trx) => {
    await sql
      .raw(`
      CREATE TEMP TABLE seed_agent ON COMMIT DROP AS
        SELECT i, gen_random_uuid() AS id FROM generate_series(1, 8) i;
      INSERT INTO users (id, email, name, password_hash)
        SELECT id, 'agent' || i || '.${tag}@bench.example.com', 'Agent ' || i, '!' FROM seed_agent;
      INSERT INTO members (workspace_id, user_id, role) SELECT '${ws}', id, 'agent' FROM seed_agent;

      CREATE TEMP TABLE seed_t ON COMMIT DROP AS
        SELECT g, x.created_at,
               CASE WHEN g > ${n} * 0.96 THEN (ARRAY['open','open','open','pending','pending','on_hold','solved'])[1 + ${h('g', 1, 7)}]
                    WHEN ${h('g', 2, 20)} < 17 THEN 'done'
                    ELSE (ARRAY['open','pending','on_hold'])[1 + ${h('g', 3, 3)}] END AS state,
               interval '1 minute' * (1 + ${h('g', 4, 600)}) AS fr_after,
               interval '1 minute' * (1 + ${h('g', 5, 10080)}) AS solve_after,
               ${h('g', 6, 10)} < 9 AS replied
          FROM generate_series(1, ${n}) g,
               LATERAL (SELECT now() - interval '365 days' + (interval '365 days' - interval '2 hours') * (g::float8 / ${n})
                          AS created_at) x;

      INSERT INTO tickets (workspace_id, id, number, subject, status, priority, severity, channel, assignee_id, sla,
                           first_responded_at, solved_at, last_message_at, last_customer_message_at, spam, csat,
                           deleted_at, created_at, updated_at)
        SELECT '${ws}', gen_random_uuid(), s.g, 'Bench ticket ' || s.g,
               CASE WHEN s.state <> 'done' THEN s.state
                    WHEN s.created_at + s.solve_after > now() - interval '6 days' THEN 'solved' ELSE 'closed' END,
               'normal',
               CASE WHEN ${h('s.g', 7, 10)} = 0 THEN 'sev' || (1 + ${h('s.g', 8, 4)}) END,
               (ARRAY['email','email','email','email','email','email','chat','chat','api','portal'])[1 + ${h('s.g', 9, 10)}],
               CASE WHEN ${h('s.g', 10, 10)} < 7 THEN (SELECT a.id FROM seed_agent a WHERE a.i = 1 + ${h('s.g', 11, 8)}) END,
               CASE WHEN ${h('s.g', 12, 2)} = 0 THEN
                 jsonb_build_object('policy_id', NULL, 'first_response_due_at', NULL, 'resolution_due_at', NULL,
                                    'breached', ${h('s.g', 13, 10)} = 0) END,
               CASE WHEN s.replied THEN least(s.created_at + s.fr_after, now()) END,
               CASE WHEN s.state IN ('done', 'solved') THEN least(s.created_at + s.solve_after, now()) END,
               s.created_at, s.created_at,
               ${h('s.g', 14, 100)} = 0,
               CASE WHEN s.state IN ('done', 'solved') AND ${h('s.g', 15, 4)} = 0
                    THEN jsonb_build_object('score', 1 + ${h('s.g', 16, 5)}) END,
               CASE WHEN ${h('s.g', 17, 200)} = 0 THEN s.created_at + interval '1 day' END,
               s.created_at, s.created_at
          FROM seed_t s;
      INSERT INTO workspace_counters (workspace_id, name, value) VALUES ('${ws}', 'ticket_number', ${n})
        ON CONFLICT (workspace_id, name) DO UPDATE SET value = excluded.value;`)
      .execute(trx);
  });
  return Date.now() - started;
}

async function timeGet(path: string, headers: Record<string, string>) {
  for (let i = 0; i < 3; i++) expectStatus(await call(base, 'GET', path, undefined, headers), 200, path);
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const r = await call(base, 'GET', path, undefined, headers);
    ms.push(performance.now() - t0);
    expectStatus(r, 200, path);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
}

/** EXPLAIN (ANALYZE, BUFFERS) of a statement: its execution time and the plan's scan lines. */
async function explain(q: RawBuilder<unknown>) {
  const c = q.compile(db);
  const r = await sql
    .raw(`EXPLAIN (ANALYZE, BUFFERS) ${c.sql.replace(/\$(\d+)/g, (_, i) => literal(c.parameters[Number(i) - 1]))}`)
    .execute(db);
  const lines = (r.rows as Array<{ 'QUERY PLAN': string }>).map((x) => x['QUERY PLAN']);
  const time = lines.find((l) => l.startsWith('Execution Time'))!;
  const scans = lines.filter((l) => /Scan|Sort Method|Buffers: shared/.test(l)).slice(0, 6);
  return { time, scans };
}

function literal(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') return String(v);
  if (v instanceof Date) return `'${v.toISOString()}'`;
  return `'${String(v).replaceAll("'", "''")}'`;
}

try {
  const main = await tenant('Reports bench');
  const other = await tenant('Another tenant');
  console.log(
    `seed: ${N} tickets in ${await seed(main.id, N, 'a')} ms; ${N / 5} in the other workspace in ${await seed(other.id, N / 5, 'b')} ms`,
  );
  await sql.raw('VACUUM (ANALYZE) tickets').execute(db);

  const counts = await sql<{ status: string; n: number }>`
    SELECT status, count(*)::int AS n FROM tickets WHERE workspace_id = ${main.id} GROUP BY status ORDER BY status`.execute(
    db,
  );
  console.log(`statuses: ${counts.rows.map((r) => `${r.status} ${r.n}`).join(', ')}`);

  console.log('\nGET /v1/reports/overview over HTTP (ms, one connection, after 3 warm-up calls):');
  console.log('| range | p50 | p95 | created | solved |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  const today = new Date();
  const daysAgo = (d: number) => new Date(today.getTime() - d * 86_400_000).toISOString().slice(0, 10);
  const tomorrow = new Date(today.getTime() + 86_400_000).toISOString().slice(0, 10);
  for (const days of [7, 30, 90, 365]) {
    const path = `/v1/reports/overview?from=${daysAgo(days - 1)}&to=${tomorrow}`;
    const t = await timeGet(path, main.headers);
    const body = (await call(base, 'GET', path, undefined, main.headers)).body;
    console.log(`| ${days} days | ${t.p50.toFixed(1)} | ${t.p95.toFixed(1)} | ${body.created} | ${body.solved} |`);
  }
  const onb = await timeGet('/v1/onboarding', main.headers);
  console.log(`\nGET /v1/onboarding: p50 ${onb.p50.toFixed(1)} ms, p95 ${onb.p95.toFixed(1)} ms`);

  const from30 = new Date(`${daysAgo(29)}T00:00:00Z`);
  const from365 = new Date(`${daysAgo(364)}T00:00:00Z`);
  const to = new Date(`${tomorrow}T00:00:00Z`);
  for (const [label, from] of [
    ['30 days', from30],
    ['365 days', from365],
  ] as const) {
    const q = overviewQueries(main.id, 'UTC', from, to, []);
    console.log(`\nPlans, ${label}:`);
    for (const [name, stmt] of Object.entries(q)) {
      const e = await explain(stmt);
      console.log(`- ${name}: ${e.time}`);
      for (const s of e.scans) console.log(`    ${s.trim()}`);
    }
  }

  console.log('\nWithout the indexes of 0021 (dropped in a rolled-back transaction), solved statement:');
  for (const [label, from] of [
    ['30 days', from30],
    ['365 days', from365],
  ] as const) {
    await db
      .transaction()
      .execute(async (trx) => {
        await sql.raw('DROP INDEX tickets_solved_idx').execute(trx);
        const c = overviewQueries(main.id, 'UTC', from, to, []).solved.compile(trx);
        const r = await sql
          .raw(
            `EXPLAIN (ANALYZE, BUFFERS) ${c.sql.replace(/\$(\d+)/g, (_, i) => literal(c.parameters[Number(i) - 1]))}`,
          )
          .execute(trx);
        const lines = (r.rows as Array<{ 'QUERY PLAN': string }>).map((x) => x['QUERY PLAN']);
        console.log(`- ${label}: ${lines.find((l) => l.startsWith('Execution Time'))}`);
        for (const s of lines.filter((l) => /Scan/.test(l)).slice(0, 3)) console.log(`    ${s.trim()}`);
        throw new Error('rollback');
      })
      .catch((e) => {
        if ((e as Error).message !== 'rollback') throw e;
      });
  }

  console.log('\nAuto-close candidates (every workspace, batch 500):');
  const due = await explain(dueTickets(new Date(), 500));
  console.log(`- ${due.time}`);
  for (const s of due.scans) console.log(`    ${s.trim()}`);
} finally {
  await rt.stop();
}
