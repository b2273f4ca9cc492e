// npm start: the service (API + gateway) on PORT, on the embedded database unless
// DATABASE_URL is set.
import { ConfigError, loadConfig } from './config.js';
import { createRuntime } from './runtime.js';

async function main() {
  // Since the process started: Node's own start and loading every module this file imports.
  const modules = performance.now();
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const rt = await createRuntime(config, { deferWorkers: true });
  const listening = performance.now();
  const address = await rt.listen();
  const listen = performance.now() - listening;
  const db = config.databaseUrl ? 'PostgreSQL' : `embedded PostgreSQL in ${config.dataDir}`;
  process.stdout.write(
    `Help desk listening on ${address} (public URL ${config.publicUrl}, ${db}, ${rt.deps.bus.kind} bus)\n` +
      `  API reference: ${config.publicUrl}/docs\n` +
      `  Inbound email secret (SVC-Inbound-Secret): ${config.inboundSecret}\n`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    rt.deps.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    await rt.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  // Job workers, schedules and mailbox pollers, once the API answers (src/runtime.ts).
  await rt.startWorkers();
  const phases = { modules, ...rt.startup, listen };
  rt.deps.log.debug(
    { startup_ms: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, Math.round(v)])) },
    'started',
  );
}

main().catch((err) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
