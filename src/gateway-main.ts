// npm run gateway: the realtime gateway alone, for scale-out (the API processes run it too, on
// their own port, unless the load balancer sends /socket/* here). It needs the API's
// PostgreSQL (joins of ticket topics, seq gaps) and its NATS (events, control notices,
// presence between gateways), and the same SECRET_KEY (it checks the API's realtime tokens).
import { createServer } from 'node:http';
import pino from 'pino';
import { type Config, ConfigError, loadConfig } from './config.js';
import { Gateway, gatewayHttpHandler } from './gateway/index.js';
import { openBus } from './platform/bus/index.js';
import { TokenSigner } from './platform/crypto/tokens.js';
import { openDatabase } from './platform/db/index.js';
import { migrateToLatest } from './platform/db/migrate.js';

function configOrExit(): Config {
  try {
    const config = loadConfig();
    if (!config.databaseUrl)
      throw new ConfigError('DATABASE_URL', "is required to run the gateway alone (the API's PostgreSQL)");
    if (!config.natsUrl)
      throw new ConfigError('NATS_URL', 'is required to run the gateway alone (events come from the API processes)');
    return config;
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

async function main() {
  const config = configOrExit();
  const log = pino({
    level: config.logLevel,
    base: { pid: process.pid, role: 'gateway' },
    redact: { paths: ['*.authorization', '*.token', '*.secret'], censor: '[redacted]' },
  });
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, memory: false });
  // Applied under an advisory lock: whichever process starts first brings the schema up to date.
  await migrateToLatest(database.db as never);
  const bus = await openBus(config.natsUrl);
  const gateway = new Gateway({ config, database, bus, tokens: new TokenSigner(config.secretKey), log });
  await gateway.start();
  const server = createServer(gatewayHttpHandler(gateway));
  gateway.attach(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  process.stdout.write(
    `Realtime gateway listening on http://${config.host}:${port} (sockets at /socket/websocket and ` +
      `/socket/widget/websocket, health at /health; ${bus.kind} bus)\n`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 15_000);
    force.unref();
    await gateway.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await bus.close();
    await database.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
