// Runs in every test file (vitest.config.ts setupFiles).
// - A test during which any service of the file answered outside its route's documented response
//   schema (or answered a request twice) fails, naming the route, the status and what did not
//   match (src/platform/http/response-check.ts).
// - The files share worker processes (isolate: false), so what one file leaves running would slow
//   down, or disturb, the files that come after it in the same process: a file must stop every
//   service it started.
import { afterAll, afterEach } from 'vitest';
import { runningStandIns } from './ai-standin/index.js';
import { responseViolations, running } from './helpers.js';

function failOnViolations(): void {
  if (responseViolations.length === 0) return;
  const found = responseViolations.splice(0);
  const lines = found.map((v) => `${v.route} → ${v.status}: ${v.problems.join('; ')}\n    body: ${v.body}`);
  throw new Error(`answers that do not match the documented response schema:\n  ${lines.join('\n  ')}`);
}

afterEach(failOnViolations);

afterAll(async () => {
  const left = [...running];
  await Promise.all(left.map((s) => s.stop()));
  failOnViolations();
  if (left.length > 0) throw new Error(`this file left ${left.length} service(s) running: stop them in afterAll`);
  const standIns = [...runningStandIns];
  await Promise.all(standIns.map((s) => s.stop()));
  if (standIns.length > 0)
    throw new Error(`this file left ${standIns.length} AI stand-in(s) running: stop them in afterAll`);
});
