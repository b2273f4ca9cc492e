// npm start: the service (API + gateway) on PORT, on the embedded database unless
// DATABASE_URL is set.
import { ConfigError, loadConfig } from './config.js';
import { createRuntime } from './runtime.js';

async function main() {
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
  const rt = await createRuntime(config);
  const address = await rt.listen();
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
}

main().catch((err) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
