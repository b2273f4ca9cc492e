// The agent web app's build for the tests that serve or measure it (test/web/**/*.browser.test.ts): dist/web,
// as `npm install` and `npm run build` leave it, and as the run's global setup brings up to date
// (scripts/build.mjs --if-stale). Should web/ still be newer (an edit during a watch run), it is
// built again first, in a child process, one file at a time (a lock directory: test files run in
// parallel).
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ROOT, WEB_OUT, webStale } from '../../scripts/web-build.mjs';

export { WEB_OUT };

function build(): void {
  const r = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', "await (await import('./scripts/web-build.mjs')).buildWebApp()"],
    { cwd: ROOT, env: { ...process.env, NODE_ENV: 'production' }, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`the web app's build failed:\n${r.stdout}${r.stderr}`);
}

/** dist/web, built now if it is missing or older than web/. */
export async function ensureWebApp(): Promise<string> {
  if (!webStale()) return WEB_OUT;
  const lock = join(ROOT, 'dist', '.web-build.lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another file builds it; a lock left by a killed run is taken over after two minutes.
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) rmSync(lock, { recursive: true, force: true });
      else await delay(100);
    }
  }
  try {
    if (webStale()) build();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  return WEB_OUT;
}
