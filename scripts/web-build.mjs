// The agent web app (web/, React + Vite, docs/app.md) built for browsers into dist/web: index.html
// and hashed files under dist/web/assets, which the service serves at / and /app/assets/
// (src/modules/web-app/routes.ts). One definition for its users: scripts/build.mjs (npm install,
// npm run build, and npm start when stale) and the tests, which build it when web/ changed since
// (test/support/web-app.ts). Plain JavaScript: it needs nothing but Node and Vite (a dependency, like
// esbuild: `npm ci --omit=dev` runs `prepare` too).
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const WEB_OUT = join(ROOT, 'dist', 'web');
const STAMP = '.built';
/** What the app's build reads; the generated API types are for the type check only. */
const INPUTS = ['web', 'package-lock.json', 'scripts/web-build.mjs'];
const IGNORED = new Set(['api.gen.d.ts', 'node_modules']);

function newest(path) {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let m = st.mtimeMs;
  for (const e of readdirSync(path)) if (!IGNORED.has(e)) m = Math.max(m, newest(join(path, e)));
  return m;
}

/** Whether dist/web is missing or older than one of its inputs. */
export function webStale(out = WEB_OUT) {
  const stamp = join(out, STAMP);
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  return INPUTS.some((p) => newest(join(ROOT, p)) > built);
}

/**
 * Builds the app into `out` (dist/web by default): into a new folder first, which then replaces
 * the old one, so a service serving the old build never sees half of the new one.
 */
export async function buildWebApp(out = WEB_OUT) {
  const started = performance.now();
  // React's production build whoever runs this: vitest's global setup runs scripts/build.mjs with
  // NODE_ENV=test, which Vite would otherwise pass on (React's development build, 50 % larger).
  process.env.NODE_ENV = 'production';
  const { build } = await import('vite');
  const tmp = `${out}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  await build({
    configFile: join(ROOT, 'web', 'vite.config.ts'),
    mode: 'production',
    logLevel: 'warn',
    build: { outDir: tmp, emptyOutDir: true },
  });
  writeFileSync(join(tmp, STAMP), `${new Date().toISOString()}\n`);
  mkdirSync(dirname(out), { recursive: true });
  rmSync(out, { recursive: true, force: true });
  renameSync(tmp, out);
  return (performance.now() - started) / 1000;
}
