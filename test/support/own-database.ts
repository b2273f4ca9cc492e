// A database of the test file's own on PostgreSQL (created for the file, dropped after it).
// On PostgreSQL the test files run in parallel on one database, and some state belongs to the
// whole database: the job queue (inbound mail, sends, purges, auto-close), the IMAP mailbox
// leases, every table's row count. A file needs its own database when it compares such state
// (test/bad-input.test.ts counts rows of every table), when another file's workers or pollers
// could take its jobs or mailboxes (and run them with other settings), when its own background
// work would take other files' (a child running `npm start`), or when it makes many sign-ins.
// On the embedded database every file already has its own.
//
// The new database is a copy of the run's migrated template (test/support/global-setup.ts), unless the
// test asks for an empty one (to migrate it itself).
import pg from 'pg';
import { postgresTemplate } from './database-template.js';
import { onPostgres } from './helpers.js';

export interface OwnDatabase {
  /** Extra environment for startService (DATABASE_URL of the file's database). */
  env: Record<string, string>;
  drop(): Promise<void>;
}

async function admin<T>(base: URL, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(base);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function ownDatabase(tag: string, opts: { empty?: boolean } = {}): Promise<OwnDatabase> {
  if (!onPostgres) return { env: {}, drop: async () => {} };
  const base = new URL(process.env.DATABASE_URL!);
  const name = `${base.pathname.slice(1)}_${tag}_${process.pid}`
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 63);
  try {
    await admin(base, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      const template = opts.empty ? null : postgresTemplate();
      await c.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
    });
  } catch (err) {
    // No right to create databases: share the test database after all.
    console.warn(`${tag} tests: using the shared database (${(err as Error).message})`);
    return { env: {}, drop: async () => {} };
  }
  const own = new URL(base);
  own.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: own.toString() },
    drop: () => admin(base, async (c) => void (await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))),
  };
}
