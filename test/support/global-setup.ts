// Once per run, before any test file: a migrated database that each test's database is copied
// from, instead of migrating a new one every time (test/support/database-template.ts).
//
// Embedded (DATABASE_URL unset): a new in-memory PGlite, migrated, its data directory dumped to a
// file; startService loads it into each new embedded database (initdb and 26 migrations took
// about 2.5 s per service, loading the copy about 0.7 s). PostgreSQL: a migrated database that
// ownDatabase() copies with CREATE DATABASE … TEMPLATE (about 0.1 s instead of 1.2 s).
//
// Every service still runs the migrator on start (it finds nothing to do), and the real
// migrations run from an empty database at least once per run: test/platform/platform.test.ts migrates
// an empty database in process and starts `npm start` on an empty data directory.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../src/platform/db/index.js';
import { migrateToLatest } from '../../src/platform/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A file holding the migrated embedded data directory ('' on PostgreSQL). */
    embeddedTemplate: string;
    /** The migrated PostgreSQL database to copy ('' when none could be made). */
    postgresTemplate: string;
  }
}

async function admin(base: string, fn: (c: pg.Client) => Promise<unknown>): Promise<void> {
  const url = new URL(base);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await fn(client);
  } finally {
    await client.end();
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // The child-process tests run dist/ as npm start does: built again when a source is newer.
  execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
  const base = process.env.DATABASE_URL;
  if (!base) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-template-'));
    const database = await openDatabase({ databaseUrl: null, dataDir: dir, memory: true });
    try {
      await migrateToLatest(database.db as never);
      const file = join(dir, 'pglite.tar');
      writeFileSync(file, Buffer.from(await (await database.dump!()).arrayBuffer()));
      project.provide('embeddedTemplate', file);
      project.provide('postgresTemplate', '');
    } finally {
      await database.close();
    }
    return async () => rmSync(dir, { recursive: true, force: true });
  }

  const name = `${new URL(base).pathname.slice(1)}_template_${process.pid}`
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 63);
  project.provide('embeddedTemplate', '');
  try {
    await admin(base, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.query(`CREATE DATABASE "${name}"`);
    });
  } catch (err) {
    // No right to create databases: ownDatabase() shares the test database (and says so).
    console.warn(`no template database (${(err as Error).message})`);
    project.provide('postgresTemplate', '');
    return async () => {};
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: tmpdir(), poolSize: 1 });
  try {
    await migrateToLatest(database.db as never);
  } finally {
    await database.close();
  }
  project.provide('postgresTemplate', name);
  return () => admin(base, (c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}
