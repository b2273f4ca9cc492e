// The realtime gateway alone (ROLE=gateway, and `npm run gateway`): the sockets
// (/socket/websocket, /socket/widget/websocket), the gateway's /health, and the probes /healthz
// and /readyz; no API routes, no jobs. It needs the API's PostgreSQL (joins of ticket topics, seq
// gaps) and its NATS (events, control notices, presence between gateways), and the same
// SECRET_KEY (it checks the API's realtime tokens). config.ts refuses ROLE=gateway without
// DATABASE_URL and NATS_URL.
import { createServer } from 'node:http';
import pino from 'pino';
import type { Config } from './config.js';
import { sendJson } from './gateway/health.js';
import { Gateway, gatewayHttpHandler } from './gateway/index.js';
import { openBus } from './platform/bus/index.js';
import { TokenSigner } from './platform/crypto/tokens.js';
import { openDatabase } from './platform/db/index.js';
import { migrateToLatest } from './platform/db/migrate.js';

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);

/** Starts the gateway on config.port; resolves once it listens, exits the process on SIGTERM/SIGINT. */
export async function runGatewayProcess(config: Config): Promise<void> {
  if (!config.databaseUrl || !config.natsUrl) {
    throw new Error('the gateway alone needs DATABASE_URL and NATS_URL');
  }
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
  const gatewayHttp = gatewayHttpHandler(gateway);
  // The probes of every role (the same bodies as the API's /healthz and /readyz: src/modules/system);
  // the rest is the gateway's own (/health, 404 otherwise).
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if ((path === '/healthz' || path === '/readyz') && req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return sendJson(req, res, 405, { status: 405, code: 'method_not_allowed', detail: 'Use GET.' });
    }
    if (path === '/healthz') return sendJson(req, res, 200, { status: 'ok', role: 'gateway' });
    if (path === '/readyz') {
      void Promise.allSettled([within(database.ping(), 2000), within(bus.ping(), 2000)]).then(([dbr, busr]) => {
        const errors = [
          ...(dbr.status === 'rejected' ? [{ location: 'database', message: 'unreachable' }] : []),
          ...(busr.status === 'rejected' ? [{ location: 'bus', message: `${bus.kind} unreachable` }] : []),
        ];
        if (errors.length === 0)
          return sendJson(req, res, 200, { status: 'ok', role: 'gateway', database: 'ok', bus: 'ok' });
        sendJson(req, res, 503, {
          status: 503,
          code: 'unavailable',
          detail: `Not ready: ${errors.map((e) => e.location).join(' and ')} unreachable.`,
          errors,
        });
      });
      return;
    }
    gatewayHttp(req, res);
  });
  gateway.attach(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  process.stdout.write(
    `Realtime gateway (ROLE=gateway) listening on http://${config.host}:${port} (sockets at /socket/websocket and ` +
      `/socket/widget/websocket, health at /health, /healthz and /readyz; ${bus.kind} bus)\n`,
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
