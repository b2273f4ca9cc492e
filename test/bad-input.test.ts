import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteEntry } from '../src/app.js';
import { newTenant, type Service, startService, type Tenant } from './support/helpers.js';
import { paramNames, probesFor as probesAs, problemsOf, send } from './support/hostile-input/probes.js';
import { type OwnDatabase, ownDatabase } from './support/own-database.js';

let svc: Service;
let own: OwnDatabase;
let tenant: Tenant;
/** A chat widget visitor of the tenant, for the visitor routes (src/modules/widget). */
let visitorToken: string;
beforeAll(async () => {
  // No job worker: the hourly maintenance job prunes old rows and would move the fingerprint.
  // Row counts of every table must not move: other test files share PostgreSQL, so this one
  // runs on a database of its own.
  own = await ownDatabase('badinput');
  svc = await startService(own.env, { jobs: false });
  tenant = await newTenant(svc.api, 'Hostile Input Inc');
  const key = (await svc.api.get('/v1/workspace', tenant.as)).body.widget_key;
  visitorToken = (await svc.api.post('/v1/widget/session', { key })).body.visitor_token;
});
afterAll(async () => {
  await svc?.stop();
  await own?.drop();
});

// ---------------------------------------------------------------------------------------------
// The database fingerprint: row counts of every table, the last event seq, the last update.

/** The probes of a route, as the tenant's owner and its widget's visitor. */
const probesFor = (route: RouteEntry) => probesAs(route, { tenant, visitorToken });

async function fingerprint(): Promise<Record<string, unknown>> {
  const db = svc.rt.deps.database.db;
  const tables = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like 'kysely_migration%'
    order by table_name`.execute(db);
  const out: Record<string, unknown> = {};
  for (const { name } of tables.rows) {
    const r = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(name)}`.execute(db);
    out[`rows:${name}`] = r.rows[0]!.n;
  }
  const seq = await sql<{ s: string | null }>`select max(seq)::text as s from events`.execute(db);
  out['events:max_seq'] = seq.rows[0]!.s;
  const updated = await sql<{ name: string }>`
    select table_name as name from information_schema.columns
    where table_schema = 'public' and column_name = 'updated_at' order by table_name`.execute(db);
  for (const { name } of updated.rows) {
    const r = await sql<{ t: string | null }>`select max(updated_at)::text as t from ${sql.table(name)}`.execute(db);
    out[`updated:${name}`] = r.rows[0]!.t;
  }
  return out;
}

async function inPool<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

describe('hostile input on every route', () => {
  it('answers every malformed or hostile request with a 4xx error body and changes nothing', async () => {
    const routes = svc.rt.app.routeTable;
    const probes = routes.flatMap(probesFor);
    // The walk really covers the table: each kind of input is exercised, and every route that
    // takes any input or a credential gets hostile requests.
    expect(routes.some((r) => r.schema.body)).toBe(true);
    expect(routes.some((r) => r.schema.querystring)).toBe(true);
    expect(routes.some((r) => paramNames(r.url).length > 0)).toBe(true);
    for (const r of routes) {
      const takesInput =
        r.schema.body || r.schema.querystring || paramNames(r.url).length > 0 || r.access.kind !== 'public';
      if (takesInput)
        expect(
          probes.some((p) => p.route === r),
          `${r.method} ${r.url}`,
        ).toBe(true);
    }
    // A bound against a runaway generator, not a target.
    expect(probes.length).toBeLessThan(20_000);

    const before = await fingerprint();
    const workspaceBefore = await svc.api.get('/v1/workspace', tenant.as);
    const meBefore = await svc.api.get('/v1/me', { token: tenant.owner.token });

    const problems: string[] = [];
    await inPool(probes, 8, async (p) => {
      try {
        problems.push(...problemsOf(p, await send(svc.url, p)));
      } catch (err) {
        problems.push(`${p.method} ${p.route.url} [${p.label}]: no answer (${(err as Error).message})`);
      }
    });
    // Soft, so that a wrong answer and a changed database both show in one run.
    expect.soft(problems).toEqual([]);

    // Nothing changed: same rows, same last event, same last update, same answers.
    expect(await fingerprint()).toEqual(before);
    expect((await svc.api.get('/v1/workspace', tenant.as)).body).toEqual(workspaceBefore.body);
    expect((await svc.api.get('/v1/me', { token: tenant.owner.token })).body).toEqual(meBefore.body);
    // And the service is still up.
    const health = await svc.api.get('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok', role: 'all' });
    // Thousands of requests and two whole-database fingerprints: 58-68 s on a slow day of this
    // 2-core machine, past the suite's default 60 s.
  }, 300_000);
});
