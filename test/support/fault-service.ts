// A service process as `npm start` runs it (src/main.ts, run from source through tsx: createRuntime, listen, workers; SIGTERM
// stops it), but with the runtime options that tests shorten and that no environment variable
// sets (the webhook retry schedule and recovery sweeps, say), read as JSON from
// FAULT_RUNTIME_OPTIONS. The fault tests (test/faults) start it as a child and kill it with -9.
import { loadConfig } from '../../src/config.js';
import { createRuntime } from '../../src/runtime.js';

const opts = JSON.parse(process.env.FAULT_RUNTIME_OPTIONS || '{}');
const rt = await createRuntime(loadConfig(), { ...opts, deferWorkers: true });
await rt.listen();
process.on('SIGTERM', () => {
  rt.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
await rt.startWorkers();
