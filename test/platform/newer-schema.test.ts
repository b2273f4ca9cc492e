// Rolling upgrades (docs/operations.md "Rolling upgrades"): while a new release migrates the
// database, processes of the release before it keep running on the new schema, and restart on it.
// Here this release plays the release before: a newer release's expand step is applied to its
// database (a new table, a new nullable column on tickets, its row in kysely_migration), and this
// release must start on it without migrating anything, say so in its log, and serve as before;
// on PostgreSQL a second process runs beside it on the same database. Before this test, a process
// refused such a database at start (Kysely's migrator: "previously executed migration ... is
// missing"), so a previous release that crashed or scaled out during an upgrade could not come back.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/platform/db/migrate.js';
import { makeTicket } from '../support/builders.js';
import { newTenant, onPostgres, type Service, startService, type Tenant } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';

const FUTURE = '9999_future_expand';

describe('this release on a schema a newer release expanded', () => {
  let own: OwnDatabase;
  let svc: Service;
  let beside: Service | null = null;
  let tenant: Tenant;
  let before: { id: string; number: number };

  beforeAll(async () => {
    own = await ownDatabase('rolling_upgrade');
    svc = await startService({ ...own.env }, { jobs: false }, { restartable: true });
    tenant = await newTenant(svc.api, 'Upgrade Co');
    before = await makeTicket(svc.api, tenant, { subject: 'Made before the upgrade' });
    // The newer release's expand step, as its migration would leave the database.
    const db = svc.rt.deps.database.db;
    await sql`CREATE TABLE future_notes (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      id uuid NOT NULL, body text NOT NULL, PRIMARY KEY (workspace_id, id))`.execute(db);
    await sql`ALTER TABLE tickets ADD COLUMN future_flag boolean`.execute(db);
    await sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${FUTURE}, ${new Date().toISOString()})`.execute(
      db,
    );
  });
  afterAll(async () => {
    await beside?.stop();
    await svc?.stop();
    await own?.drop();
  });

  it('applies nothing and says the database is ahead of it', async () => {
    const told: string[][] = [];
    expect(await migrateToLatest(svc.rt.deps.database.db as never, { onAhead: (n) => told.push(n) })).toEqual([]);
    expect(told).toEqual([[FUTURE]]);
  });

  it('starts again on it and serves: create, list, read, reply, change, replay', async () => {
    await svc.restart();
    expect(svc.logs.join('\n')).toContain('migrated by a newer release');
    expect((await svc.api.get('/readyz')).status).toBe(200);

    const made = await svc.api.post(
      '/v1/tickets',
      { subject: 'Made during the upgrade', contact: { email: 'up@example.com' } },
      tenant.as,
    );
    expect(made.status, made.text).toBe(201);
    const list = await svc.api.get('/v1/tickets?limit=50', tenant.as);
    expect(list.status).toBe(200);
    expect(list.body.data.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining([made.body.id, before.id]));
    expect((await svc.api.get(`/v1/tickets/${before.number}`, tenant.as)).body.subject).toBe('Made before the upgrade');
    const reply = await svc.api.post(
      `/v1/tickets/${made.body.number}/messages`,
      { kind: 'reply', body_html: '<p>On it.</p>' },
      tenant.as,
    );
    expect(reply.status, reply.text).toBe(201);
    const patched = await svc.api.patch(`/v1/tickets/${made.body.number}`, { priority: 'high' }, tenant.as);
    expect(patched.status, patched.text).toBe(200);
    // The newer release's column is there and this release's writes leave it alone.
    const row = await svc.rt.deps.database.db
      .selectFrom('tickets')
      .select(sql<boolean | null>`future_flag`.as('future_flag'))
      .where('id', '=', made.body.id)
      .executeTakeFirstOrThrow();
    expect(row.future_flag).toBeNull();
    // Every event of the workspace in replay (after seq 1), seq without a gap.
    const events = await svc.api.get('/v1/events?since=1&limit=1000', tenant.as);
    expect(events.status, events.text).toBe(200);
    const seqs = events.body.data.map((e: { seq: number }) => e.seq);
    expect(seqs.length, events.text.slice(0, 300)).toBeGreaterThan(3);
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => 2 + i));
    expect(seqs.at(-1)).toBe(events.body.latest_seq);
  });

  it.runIf(onPostgres)('runs beside another process on the same database', async () => {
    beside = await startService({ ...own.env }, { jobs: false });
    expect(beside.logs.join('\n')).toContain('migrated by a newer release');
    const there = await beside.api.post('/v1/tickets', { subject: 'Made on the second process' }, tenant.as);
    expect(there.status, there.text).toBe(201);
    const here = await svc.api.get(`/v1/tickets/${there.body.number}`, tenant.as);
    expect(here.status).toBe(200);
    expect(here.body.subject).toBe('Made on the second process');
  });
});
