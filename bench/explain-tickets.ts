// The SQL the service runs for the measured ticket reads, as a psql script of
// EXPLAIN (ANALYZE, BUFFERS) statements with the parameters inlined. The queries are built by
// the service's own code (listTickets, getTicket) against a Kysely that records what it would
// send (without running it), so the script always shows the SQL of the working tree.
//
//   KEEP_DB=1 ONLY='tickets.list' npm run bench        # prints "kept database postgres://…/svc_bench_…"
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/svc_bench_… npx tsx bench/explain-tickets.ts > /tmp/explain.sql
//   psql postgres://postgres@127.0.0.1:5432/svc_bench_… -f /tmp/explain.sql
//
// Env: DATABASE_URL (required), WORKSPACE_ID (default: the workspace with the most tickets),
// NUMBER (ticket number for GET, default: the middle of the workspace's numbers).
//
// The field list (bench/tickets.ts LIST_FIELDS: a select filter and a number sort) needs the
// workspace's field definitions to build its SQL: statements that read custom_fields are run for
// real (and shown too), and so are q's parse and row estimate; every other statement is only recorded.
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { listTickets } from '../src/modules/tickets/list.js';
import { getTicket } from '../src/modules/tickets/service.js';
import type { DB } from '../src/platform/db/schema.js';
import type { RequestContext } from '../src/platform/http/context.js';
import { Pager } from '../src/platform/http/pagination.js';
import { LIST_FIELDS, LIST_FIELDS_PATH, Q_COMMON, Q_RARE } from './tickets.js';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('DATABASE_URL must name the kept bench database');
  process.exit(2);
}

// The service's queries are recorded, not run (some take minutes on the seeded data): every
// statement answers no rows, which is all the list needs; getTicket then answers 404, ignored.
// The field definitions are the exception: read for real, as the field list builds on them.
const recorded: Array<{ sql: string; parameters: readonly unknown[] }> = [];
const pool = new pg.Pool({ connectionString: url, max: 1 });
const recorder = {
  connect: async () => ({
    query: async (sql: string, parameters: readonly unknown[]) => {
      recorded.push({ sql, parameters });
      // Lookups the list's SQL depends on run for real: field definitions, and q's parse and estimate.
      if (
        /^select\b[\s\S]*\bfrom "custom_fields"/i.test(sql) ||
        /^\s*(SELECT s\.tsq\b|EXPLAIN \(FORMAT JSON\))/.test(sql)
      ) {
        const r = await pool.query(sql, [...parameters]);
        return { rows: r.rows, rowCount: r.rowCount, command: 'SELECT' };
      }
      return { rows: [], rowCount: 0, command: 'SELECT' };
    },
    release: () => {},
  }),
  end: async () => {},
};
const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: recorder as never }) });

const literal = (v: unknown): string => {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number' || typeof v === 'bigint') return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof Date) return `'${v.toISOString()}'`;
  if (Array.isArray(v)) return `ARRAY[${v.map(literal).join(', ')}]`;
  return `'${String(v).replaceAll("'", "''")}'`;
};
/** $n → the literal of parameter n (highest numbers first, so $1 does not eat $10). */
const inline = (text: string, params: readonly unknown[]) =>
  params.reduceRight<string>((s, v, i) => s.replaceAll(`$${i + 1}`, literal(v)), text);

try {
  const ws =
    process.env.WORKSPACE_ID ??
    (
      await pool.query<{ workspace_id: string }>(
        'SELECT workspace_id FROM tickets GROUP BY workspace_id ORDER BY count(*) DESC LIMIT 1',
      )
    ).rows[0]?.workspace_id;
  if (!ws) throw new Error('no tickets in this database');
  const number =
    process.env.NUMBER ??
    String(
      (await pool.query<{ n: number }>('SELECT (max(number) / 2)::int AS n FROM tickets WHERE workspace_id = $1', [ws]))
        .rows[0]!.n,
    );
  // The measured caller: an API key with tickets:read and tickets:write (not admin: its hidden
  // private teams are looked up first, as for every API key).
  const ctx: RequestContext = {
    workspaceId: ws,
    actor: { kind: 'api_key', apiKeyId: '00000000-0000-7000-8000-000000000000', createdBy: null },
    role: null,
    scopes: ['tickets:read', 'tickets:write'],
    teams: [],
    ip: '127.0.0.1',
  };
  const deps = {
    database: { db, search: db },
    pager: new Pager(randomBytes(32).toString('base64url')),
    config: { searchWalkAbove: Number(process.env.SEARCH_WALK_ABOVE ?? 5000) },
  } as never;
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['GET /v1/tickets?limit=50', () => listTickets(deps, ctx, { limit: 50 })],
    [`GET /v1/tickets?q=${Q_COMMON}&limit=50`, () => listTickets(deps, ctx, { q: Q_COMMON, limit: 50 })],
    [`GET /v1/tickets?q=${Q_RARE}&limit=50`, () => listTickets(deps, ctx, { q: Q_RARE, limit: 50 })],
    [`GET /v1/tickets/%23${number}`, () => getTicket(deps, ctx, `#${number}`)],
    [
      `GET ${LIST_FIELDS_PATH}`,
      () =>
        listTickets(deps, ctx, {
          limit: 50,
          sort: `field.${LIST_FIELDS.sort}`,
          [`field.${LIST_FIELDS.select}`]: LIST_FIELDS.option,
        } as never),
    ],
  ];
  for (const [name, run] of cases) {
    recorded.length = 0;
    let failed: unknown = null;
    await run().catch((err: unknown) => {
      failed = err;
    });
    console.log(`\\echo '=== ${name}: ${recorded.length} statements'`);
    // getTicket's 404 is expected (its statement answered no rows); anything else is shown.
    const status = (failed as { status?: number } | null)?.status;
    if (failed !== null && status !== 404) {
      console.log(
        `\\echo '    (the service stopped: ${String((failed as Error).message ?? failed).replaceAll("'", '')})'`,
      );
    }
    for (const q of recorded) {
      // q's row estimate is itself an EXPLAIN (no rows read): shown as the service runs it.
      const text = inline(q.sql, q.parameters);
      console.log(/^EXPLAIN /.test(text) ? `${text};\n` : `EXPLAIN (ANALYZE, BUFFERS)\n${text};\n`);
    }
  }
} finally {
  await db.destroy();
  await pool.end();
}
