// npm run bench:rls: what the row-level security wall costs (issue 39 item 2; docs/decisions.md
// "Row-level security"). Two service processes on one PostgreSQL database, one with the wall
// (the default) and one with ROW_LEVEL_SECURITY=false, loaded in turn with the same requests
// (ROUNDS times, alternating which goes first); the median round of each side is compared.
// Scenarios: the newest-50 list of one workspace, the same list alternating between two
// workspaces on every request (connections switch their role and setting each time), GET by
// number, and ticket create. Each side idles while the other is measured.
//
// Env: ROUNDS (default 5), DURATION seconds per run (default 5), CONNS (default 10), TICKETS per
// workspace made through the API (default 1000), PG_URL (default postgres://postgres@127.0.0.1:5432).
import autocannon from 'autocannon';
import pg from 'pg';
import { call, envInt, expectStatus, startServiceProcess } from './lib.js';

const ROUNDS = envInt('ROUNDS', 5, 1, 20);
const DURATION = envInt('DURATION', 5, 1, 60);
const CONNS = envInt('CONNS', 10, 1, 200);
const TICKETS = envInt('TICKETS', 1000, 10, 100_000);
const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
const DB = `svc_bench_rls_${Date.now()}`;

interface Run {
  rps: number;
  p99: number;
  errors: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
};

function cannon(base: string, requests: autocannon.Request[], seconds: number): Promise<autocannon.Result> {
  return new Promise((res, rej) =>
    autocannon({ url: base, connections: CONNS, pipelining: 1, duration: seconds, requests }, (err, result) =>
      err ? rej(err) : res(result),
    ),
  );
}

async function load(base: string, requests: autocannon.Request[]): Promise<Run> {
  const r = await cannon(base, requests, DURATION);
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.errors + r.non2xx };
}

async function main() {
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB}`);
  const env = { DATABASE_URL: `${PG_URL}/${DB}`, RATE_LIMIT_PER_MINUTE: '10000000', LOG_LEVEL: 'warn' };
  const on = await startServiceProcess({ ...env });
  const off = await startServiceProcess({ ...env, ROW_LEVEL_SECURITY: 'false' });
  try {
    // Two workspaces, an API key each, TICKETS tickets each made through the API.
    const reg = await call(on.base, 'POST', '/v1/auth/register', {
      email: 'rls-bench@example.com',
      password: 'a long bench password',
      name: 'Bench',
    });
    expectStatus(reg, 201, 'register');
    const token = reg.body.access_token as string;
    const keys: string[] = [];
    for (const name of ['Wall one', 'Wall two']) {
      const ws = await call(on.base, 'POST', '/v1/workspaces', { name }, { authorization: `Bearer ${token}` });
      expectStatus(ws, 201, 'workspace');
      const key = await call(
        on.base,
        'POST',
        '/v1/api-keys',
        { name: 'bench', scopes: ['tickets:read', 'tickets:write'] },
        { authorization: `Bearer ${token}`, 'svc-workspace': ws.body.id },
      );
      expectStatus(key, 201, 'api key');
      keys.push(key.body.key as string);
    }
    const made = Date.now();
    for (const key of keys) {
      let next = 0;
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          while (next < TICKETS) {
            const i = next++;
            const r = await call(
              on.base,
              'POST',
              '/v1/tickets',
              {
                subject: `Bench ticket ${i}`,
                contact: { email: `c${i % 200}@example.com` },
                body_html: '<p>Hello</p>',
              },
              { authorization: `Bearer ${key}` },
            );
            expectStatus(r, 201, 'seed ticket');
          }
        }),
      );
    }
    const seeded = new pg.Client({ connectionString: `${PG_URL}/${DB}` });
    await seeded.connect();
    await seeded.query('VACUUM ANALYZE');
    await seeded.end();
    console.log(
      `${DB}: 2 workspaces × ${TICKETS} tickets made through the API in ${((Date.now() - made) / 1000).toFixed(1)} s`,
    );

    const json = { 'content-type': 'application/json' };
    const scenarios: Array<{ name: string; requests: autocannon.Request[] }> = [
      {
        name: 'list 50 newest, one workspace',
        requests: [{ method: 'GET', path: '/v1/tickets?limit=50', headers: { authorization: `Bearer ${keys[0]}` } }],
      },
      {
        name: 'list 50 newest, two workspaces in turn',
        requests: keys.map((k) => ({
          method: 'GET',
          path: '/v1/tickets?limit=50',
          headers: { authorization: `Bearer ${k}` },
        })),
      },
      {
        name: 'GET by number',
        requests: [
          {
            method: 'GET',
            path: `/v1/tickets/${Math.ceil(TICKETS / 2)}`,
            headers: { authorization: `Bearer ${keys[0]}` },
          },
        ],
      },
      {
        name: 'create',
        requests: [
          {
            method: 'POST',
            path: '/v1/tickets',
            headers: { authorization: `Bearer ${keys[0]}`, ...json },
            body: JSON.stringify({
              subject: 'Bench create',
              contact: { email: 'bench@example.com' },
              body_html: '<p>Hi</p>',
            }),
          },
        ],
      },
    ];
    console.log(
      'scenario                                   wall req/s  off req/s  ratio   wall p99  off p99   rounds (wall/off req/s)',
    );
    for (const s of scenarios) {
      const wall: Run[] = [];
      const bare: Run[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? ([on, off] as const) : ([off, on] as const);
        for (const p of order) {
          // A second's warm-up, then the run.
          await cannon(p.base, s.requests, 1);
          const r = await load(p.base, s.requests);
          (p === on ? wall : bare).push(r);
        }
      }
      const errors = [...wall, ...bare].reduce((n, r) => n + r.errors, 0);
      const w = median(wall.map((r) => r.rps));
      const b = median(bare.map((r) => r.rps));
      console.log(
        `${s.name.padEnd(42)} ${w.toFixed(0).padStart(10)} ${b.toFixed(0).padStart(10)}  ${(w / b).toFixed(3)}  ${median(
          wall.map((r) => r.p99),
        )
          .toFixed(1)
          .padStart(8)} ${median(bare.map((r) => r.p99))
          .toFixed(1)
          .padStart(
            8,
          )}   ${wall.map((r, i) => `${r.rps.toFixed(0)}/${bare[i]!.rps.toFixed(0)}`).join(' ')}${errors ? `  !! ${errors} errors` : ''}`,
      );
    }
  } finally {
    await on.stop();
    await off.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((err) => {
  console.error(`bench failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
