// npm run migrate: apply pending migrations and exit.
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './platform/db/index.js';
import { migrateToLatest } from './platform/db/migrate.js';

try {
  const config = loadConfig();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const applied = await migrateToLatest(database.db as never);
  await database.close();
  process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
} catch (err) {
  process.stderr.write(
    `${err instanceof ConfigError ? 'configuration error' : 'migration failed'}: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
}
