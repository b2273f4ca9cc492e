// Row-level security, the second wall between workspaces (src/platform/db/scope.ts, migration
// 0056): a statement run in a workspace's scope reads and writes that workspace's rows only,
// even when it carries no workspace filter at all; out of any scope (the cross-tenant paths) the
// database's own user sees everything. On both databases: the embedded one takes the role too.

import { randomBytes } from 'node:crypto';
import {
  BinaryOperationNode,
  ColumnNode,
  type KyselyPlugin,
  OperationNodeTransformer,
  OperatorNode,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  ReferenceNode,
  type RootOperationNode,
  sql,
  type UnknownRow,
  ValueNode,
} from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unscoped, withWorkspace } from '../../../src/platform/db/scope.js';
import { makeTicket } from '../../support/builders.js';
import { newTenant, onPostgres, type Service, startService, type Tenant } from '../../support/helpers.js';

/** Takes every `workspace_id = …` condition out of a query: the bug the wall is there for. */
class ForgetWorkspaceFilter extends OperationNodeTransformer {
  protected override transformBinaryOperation(node: BinaryOperationNode): BinaryOperationNode {
    const left = node.leftOperand;
    const column = ReferenceNode.is(left)
      ? ColumnNode.is(left.column)
        ? left.column.column.name
        : null
      : ColumnNode.is(left)
        ? left.column.name
        : null;
    if (column === 'workspace_id') {
      return BinaryOperationNode.create(
        ValueNode.createImmediate(1),
        OperatorNode.create('='),
        ValueNode.createImmediate(1),
      );
    }
    return super.transformBinaryOperation(node);
  }
}
class ForgetWorkspaceFilterPlugin implements KyselyPlugin {
  readonly #t = new ForgetWorkspaceFilter();
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.#t.transformNode(args.node);
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

describe('row-level security between workspaces', () => {
  let svc: Service;
  let a: Tenant;
  let b: Tenant;
  let ticketA: { id: string };
  let ticketB: { id: string };

  beforeAll(async () => {
    svc = await startService({}, { jobs: false });
    [a, b] = await Promise.all([newTenant(svc.api, 'Wall A'), newTenant(svc.api, 'Wall B')]);
    [ticketA, ticketB] = await Promise.all([
      makeTicket(svc.api, a, { subject: 'A ticket' }),
      makeTicket(svc.api, b, { subject: 'B ticket' }),
    ]);
  });
  afterAll(() => svc?.stop());

  const db = () => svc.rt.deps.database.db;

  it('is up on this database', () => {
    expect(svc.rt.deps.database.wall.up).toBe(true);
  });

  it('a query with no workspace filter, in a workspace scope, reads only that workspace', async () => {
    const ids = (ws: string) =>
      withWorkspace(ws, () => db().selectFrom('tickets').select(['id', 'workspace_id']).execute());
    const seenByA = await ids(a.workspaceId);
    expect(seenByA.map((r) => r.id)).toContain(ticketA.id);
    expect(seenByA.every((r) => r.workspace_id === a.workspaceId)).toBe(true);
    expect((await ids(b.workspaceId)).map((r) => r.id)).not.toContain(ticketA.id);
    // Raw SQL too, and the search connections.
    const raw = await withWorkspace(a.workspaceId, () =>
      sql<{ n: number }>`select count(*)::int as n from tickets where id = ${ticketB.id}`.execute(db()),
    );
    expect(raw.rows[0]?.n).toBe(0);
    const searched = await withWorkspace(a.workspaceId, () =>
      svc.rt.deps.database.search.selectFrom('tickets').select('id').where('id', '=', ticketB.id).execute(),
    );
    expect(searched).toEqual([]);
    // Out of any scope (the cross-tenant paths) the service's own user sees both.
    const all = await unscoped(() =>
      db().selectFrom('tickets').select('id').where('id', 'in', [ticketA.id, ticketB.id]).execute(),
    );
    expect(all).toHaveLength(2);
  });

  it('a write in one workspace scope cannot touch or create another workspace’s rows', async () => {
    const changed = await withWorkspace(a.workspaceId, () =>
      db().updateTable('tickets').set({ subject: 'taken over' }).where('id', '=', ticketB.id).executeTakeFirst(),
    );
    expect(Number(changed.numUpdatedRows)).toBe(0);
    const gone = await withWorkspace(a.workspaceId, () =>
      db().deleteFrom('tags').where('workspace_id', '=', b.workspaceId).executeTakeFirst(),
    );
    expect(Number(gone.numDeletedRows)).toBe(0);
    await expect(
      withWorkspace(a.workspaceId, () =>
        sql`insert into tags (workspace_id, id, name, color) values (${b.workspaceId}, gen_random_uuid(), 'planted', '#000000')`.execute(
          db(),
        ),
      ),
    ).rejects.toThrow(/row-level security/);
    const b1 = await svc.api.get(`/v1/tickets/${ticketB.id}`, b.as);
    expect(b1.body.subject).toBe('B ticket');
  });

  it("a request whose query lost its workspace filter at run time still answers 404 for another workspace's ticket", async () => {
    const deps = svc.rt.deps;
    const kept = deps.database.db;
    deps.database.db = kept.withPlugin(new ForgetWorkspaceFilterPlugin());
    try {
      // The control: with the wall down the broken query leaks B's ticket to A.
      deps.database.wall.up = false;
      const leaked = await svc.api.get(`/v1/tickets/${ticketB.id}`, a.as);
      expect(leaked.status).toBe(200);
      expect(leaked.body.subject).toBe('B ticket');
      // With the wall up the same request finds nothing.
      deps.database.wall.up = true;
      const walled = await svc.api.get(`/v1/tickets/${ticketB.id}`, a.as);
      expect(walled.status, walled.text).toBe(404);
      expect(walled.body.code).toBe('not_found');
      expect((await svc.api.get(`/v1/tickets/${ticketA.id}`, a.as)).status).toBe(200);
    } finally {
      deps.database.db = kept;
      deps.database.wall.up = true;
    }
  });

  it('every table with a workspace_id has the policy, with row-level security on', async () => {
    const { rows } = await unscoped(() =>
      sql<{ table: string; rls: boolean; policy: string | null }>`
        select c.relname as table, c.relrowsecurity as rls,
               (select p.polname from pg_policy p where p.polrelid = c.oid and p.polname = 'tenant_wall') as policy
        from pg_class c
        join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
        where c.relkind = 'r'
          and exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'workspace_id' and not a.attisdropped)
        order by 1`.execute(db()),
    );
    expect(rows.length).toBeGreaterThan(20);
    expect(rows.filter((r) => !r.rls || r.policy !== 'tenant_wall').map((r) => r.table)).toEqual([]);
  });
});

// A database user that may not take the role (no CREATEROLE, the role made by someone else or
// not at all): the migration leaves the tables as they are or with policies nobody takes, and the
// service starts with the wall down, says so once, and serves requests on its filters alone.
describe.runIf(onPostgres)('row-level security when the database user may not take the role', () => {
  const name = `svc_plain_${randomBytes(4).toString('hex')}`;
  let admin: pg.Client;
  let svc: Service | undefined;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE ROLE ${name} LOGIN`);
    await admin.query(`CREATE DATABASE ${name} OWNER ${name}`);
  });
  afterAll(async () => {
    await svc?.stop();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${name}`);
    await admin.end();
  });

  it('starts with the wall down, logs it once, and works', async () => {
    const url = new URL(process.env.DATABASE_URL!);
    url.username = name;
    url.pathname = `/${name}`;
    svc = await startService({ DATABASE_URL: url.toString() }, { jobs: false });
    expect(svc.rt.deps.database.wall.up).toBe(false);
    expect(svc.logs.filter((l) => l.includes('row-level security is off'))).toHaveLength(1);
    const t = await newTenant(svc.api);
    const made = await makeTicket(svc.api, t, { subject: 'Still served' });
    expect((await svc.api.get(`/v1/tickets/${made.id}`, t.as)).body.subject).toBe('Still served');
  });
});
