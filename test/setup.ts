// Runs in every test file (vitest.config.ts setupFiles). The files share worker processes
// (isolate: false), so what one file leaves running would slow down, or disturb, the files that
// come after it in the same process: a file must stop every service it started.
import { afterAll } from 'vitest';
import { running } from './helpers.js';

afterAll(async () => {
  const left = [...running];
  await Promise.all(left.map((s) => s.stop()));
  if (left.length > 0) throw new Error(`this file left ${left.length} service(s) running: stop them in afterAll`);
});
