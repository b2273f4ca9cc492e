// Forward-only SQL migrations (src/platform/db/migrations/NNNN_name.sql), the same files
// for PGlite and PostgreSQL. Kysely's migrator takes an advisory lock, so two processes
// starting at once apply each migration exactly once.
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';

// Next to this module: src/platform/db/migrations, or dist/migrations in the build, where every
// built module sits at the top of dist/ (scripts/build.mjs).
const dir = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

const migrationFiles = async () => (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();

class SqlFileProvider implements MigrationProvider {
  /** Applied migrations with no file here: a newer release's (see migrateToLatest). */
  constructor(private readonly newer: string[] = []) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = await migrationFiles();
    const out: Record<string, Migration> = {};
    // Already applied, so never run: listed only so that the migrator does not call the database
    // corrupted ("previously executed migration ... is missing").
    for (const name of this.newer) out[name] = { up: async () => {} };
    for (const f of files) {
      const text = await readFile(join(dir, f), 'utf8');
      out[f.replace(/\.sql$/, '')] = {
        up: async (db: Kysely<unknown>) => {
          // Each migration runs in the migrator's transaction: lift the request statement timeout
          // for it (an index on a large table may take minutes).
          await sql.raw('SET LOCAL statement_timeout = 0').execute(db);
          await sql.raw(text).execute(db);
        },
      };
    }
    return out;
  }
}

/**
 * What the database holds against this release's files: whether a file is not applied yet, and
 * the applied migrations this release has no file for (a newer release migrated the database).
 * Two small queries; Kysely's migrator, whose own checks list every table with its columns
 * (about a second of every start on an existing embedded database), runs only when a file is new.
 */
async function compare(db: Kysely<unknown>): Promise<{ pending: boolean; ahead: string[] }> {
  const table = await sql<{ found: boolean }>`select to_regclass('kysely_migration') is not null as found`.execute(db);
  if (!table.rows[0]?.found) return { pending: true, ahead: [] };
  const names = (await migrationFiles()).map((f) => f.replace(/\.sql$/, ''));
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  const applied = new Set(rows.map((r) => r.name));
  const known = new Set(names);
  return {
    pending: names.some((n) => !applied.has(n)),
    ahead: [...applied].filter((n) => !known.has(n)).sort(),
  };
}

/**
 * Applies this release's pending migrations. A database a newer release already migrated (its
 * migrations are a superset of this release's files) is left as it is and `onAhead` is told:
 * during a rolling upgrade the processes of the previous release keep running, and restarting,
 * on the new schema, which the rule of docs/operations.md "Rolling upgrades" (expand, then
 * contract a release later) keeps readable to them. Kysely's migrator would refuse such a
 * database ("previously executed migration ... is missing") and the process would not start.
 */
export async function migrateToLatest(
  db: Kysely<unknown>,
  opts: { onAhead?: (names: string[]) => void } = {},
): Promise<string[]> {
  const { pending, ahead } = await compare(db);
  if (!pending) {
    if (ahead.length > 0) opts.onAhead?.(ahead);
    return [];
  }
  // Unordered: a migration merged after a later-numbered one still applies on databases
  // that already ran the later one (each file is applied once, in name order when new).
  // A file of ours still to apply on a database a newer release migrated: its migrations stay
  // as they are, listed to the migrator as already done.
  const migrator = new Migrator({ db, provider: new SqlFileProvider(ahead), allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    const cause = error instanceof Error ? error.message : String(error);
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${cause}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
