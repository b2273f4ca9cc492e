// npm run gateway: the realtime gateway alone, for scale-out; the same as `ROLE=gateway npm start`
// (src/gateway-process.ts). It needs DATABASE_URL and NATS_URL (a configuration error otherwise).
import { ConfigError, loadConfig } from './config.js';
import { runGatewayProcess } from './gateway-process.js';

async function main() {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig({ ...process.env, ROLE: 'gateway' });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  await runGatewayProcess(config);
}

main().catch((err) => {
  process.stderr.write(`failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
