// npm start: the service on PORT, on the embedded database unless DATABASE_URL is set. ROLE
// (config.ts) says what this process runs: all (default: the API, the gateway and the jobs), api
// (the HTTP routes), gateway (the sockets: src/gateway-process.ts) or worker (the jobs, with
// /healthz and /readyz on PORT); docs/operations.md "Several processes".
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
  if (config.role === 'gateway') {
    const { runGatewayProcess } = await import('./gateway-process.js');
    return runGatewayProcess(config);
  }
  const rt = await createRuntime(config, { deferWorkers: true });
  // A worker serves no API: its probes answer once its job workers run (ready means working).
  if (config.role === 'worker') await rt.startWorkers();
  const listening = performance.now();
  const address = await rt.listen();
  const listen = performance.now() - listening;
  const db = config.databaseUrl ? 'PostgreSQL' : `embedded PostgreSQL in ${config.dataDir}`;
  const what = {
    all: 'Help desk',
    api: 'Help desk API (ROLE=api: HTTP routes, no sockets, no job workers)',
    worker: 'Help desk worker (ROLE=worker: jobs, schedules and pollers; /healthz and /readyz only)',
  }[rt.role];
  process.stdout.write(
    `${what} listening on ${address} (public URL ${config.publicUrl}, ${db}, ${rt.deps.bus.kind} bus)\n` +
      (rt.role === 'worker' ? '' : `  API reference: ${config.publicUrl}/docs\n`) +
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

  // Job workers, schedules and mailbox pollers, once the API answers (src/runtime.ts); none
  // with ROLE=api.
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
