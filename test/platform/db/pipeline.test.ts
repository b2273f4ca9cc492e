// The requests' connections are pipelined on PostgreSQL (src/platform/db/index.ts wrapClient): a
// transaction's BEGIN is held back and sent with its first statement, and a THEN_COMMIT statement
// (the Writer's last outbox append) takes its COMMIT along. What a user would notice if that went
// wrong: a failed write leaving half of itself behind, a connection left inside a transaction
// (later writes invisible to everyone else, then lost), or a statement run in another workspace's
// scope or with the wrong role. One connection in the pool, so every step meets the previous one's
// connection.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase, raiseWall, THEN_COMMIT } from '../../../src/platform/db/index.js';
import { unscoped, withWorkspace } from '../../../src/platform/db/scope.js';
import { onPostgres } from '../../support/helpers.js';

const table = `pipeline_probe_${process.pid}`;

describe.runIf(onPostgres)('pipelined transactions on PostgreSQL', () => {
  let one: Database;
  let other: Database;

  beforeAll(async () => {
    one = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, dataDir: '', poolSize: 1 });
    other = await openDatabase({ databaseUrl: process.env.DATABASE_URL!, dataDir: '', poolSize: 1 });
    await sql`CREATE TABLE ${sql.id(table)} (id int PRIMARY KEY, note text NOT NULL)`.execute(one.db);
    expect(await raiseWall(one)).toBe(true);
  });
  afterAll(async () => {
    await sql`DROP TABLE IF EXISTS ${sql.id(table)}`.execute(other.db);
    await one?.close();
    await other?.close();
  });

  /** The rows as another connection sees them: only what committed. */
  const committed = async () =>
    (await sql<{ id: number }>`SELECT id FROM ${sql.id(table)} ORDER BY id`.execute(other.db)).rows.map((r) => r.id);
  const insert = (id: number) => sql`INSERT INTO ${sql.id(table)} (id, note) VALUES (${id}, 'x')`;

  it('commits a transaction whose last statement takes the COMMIT along, and the next one starts clean', async () => {
    const out = await one.db.transaction().execute(async (trx) => {
      await insert(1).execute(trx);
      return (await sql<{ n: number }>`${sql.raw(THEN_COMMIT)}SELECT 41 + 1 AS n`.execute(trx)).rows[0]!.n;
    });
    expect(out).toBe(42);
    expect(await committed()).toEqual([1]);
    // The connection is out of the transaction: a statement after it commits on its own.
    await insert(2).execute(one.db);
    expect(await committed()).toEqual([1, 2]);
  });

  it('rolls everything back when the statement carrying the COMMIT fails, and says why', async () => {
    await expect(
      one.db.transaction().execute(async (trx) => {
        await insert(3).execute(trx);
        await sql`${sql.raw(THEN_COMMIT)}SELECT 1 / 0`.execute(trx);
      }),
    ).rejects.toThrow(/division by zero/);
    expect(await committed()).toEqual([1, 2]);
    await insert(4).execute(one.db);
    expect(await committed()).toEqual([1, 2, 4]);
  });

  it('rolls back a failing first statement sent with its held BEGIN', async () => {
    await expect(
      one.db.transaction().execute(async (trx) => {
        await insert(1).execute(trx); // a duplicate key: the first statement, sent with BEGIN
      }),
    ).rejects.toThrow(/duplicate key/);
    await expect(
      one.db.transaction().execute(async (trx) => {
        await insert(5).execute(trx);
        await insert(1).execute(trx);
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await committed()).toEqual([1, 2, 4]);
  });

  it('leaves no transaction open when a unit fails before its first statement', async () => {
    for (let i = 0; i < 3; i++) {
      await expect(
        one.db.transaction().execute(async () => {
          throw new Error('changed my mind');
        }),
      ).rejects.toThrow('changed my mind');
    }
    // Were a BEGIN left open on the one connection, this insert would stay invisible to others.
    await insert(6).execute(one.db);
    expect(await committed()).toEqual([1, 2, 4, 6]);
  });

  it('runs each statement in its own scope after a transaction that switched and failed', async () => {
    const who = () => sql<{ u: string; ws: string }>`SELECT current_user AS u,
      coalesce(nullif(current_setting('app.workspace_id', true), ''), '-') AS ws`;
    const ws = '01a20000-0000-7000-8000-000000000001';
    // The switch to the workspace's role rides with BEGIN; the transaction fails, which undoes it.
    await expect(
      withWorkspace(ws, () =>
        one.db.transaction().execute(async (trx) => {
          await sql`SELECT 1 / 0`.execute(trx);
        }),
      ),
    ).rejects.toThrow(/division by zero/);
    const owner = (await unscoped(() => who().execute(one.db))).rows[0]!;
    expect(owner.u).not.toBe('svc_tenant');
    expect(owner.ws).toBe('-');
    const scoped = (await withWorkspace(ws, () => who().execute(one.db))).rows[0]!;
    expect(scoped).toEqual({ u: 'svc_tenant', ws });
    // And a committed switch inside a transaction stays until the scope changes.
    await withWorkspace(ws, () =>
      one.db.transaction().execute(async (trx) => {
        await sql`${sql.raw(THEN_COMMIT)}SELECT 1`.execute(trx);
      }),
    );
    expect((await withWorkspace(ws, () => who().execute(one.db))).rows[0]).toEqual({ u: 'svc_tenant', ws });
    expect((await unscoped(() => who().execute(one.db))).rows[0]!.u).not.toBe('svc_tenant');
  });
});
