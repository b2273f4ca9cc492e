// Runs around every test file (vitest.config.ts setupFiles): a test during which any service of
// the file answered outside its route's documented response schema fails, naming the route, the
// status and what did not match (src/platform/http/response-check.ts).
import { afterEach } from 'vitest';
import { responseViolations } from './helpers.js';

afterEach(() => {
  if (responseViolations.length === 0) return;
  const found = responseViolations.splice(0);
  const lines = found.map((v) => `${v.route} → ${v.status}: ${v.problems.join('; ')}\n    body: ${v.body}`);
  throw new Error(`answers that do not match the documented response schema:\n  ${lines.join('\n  ')}`);
});
