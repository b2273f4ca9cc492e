// npm run build: src/ → dist/, the JavaScript that `npm start`, `npm run gateway` and
// `npm run migrate` run. Also run by npm at install (`prepare`), and before those three commands
// with --if-stale, which builds only when a source file is newer than the last build (a
// `git pull` without a reinstall, an edit). Plain JavaScript so that it needs nothing but Node and
// esbuild (a dependency: `npm ci --omit=dev` runs `prepare` too).
//
// esbuild bundles each entry with the service's own modules and the ESM packages made of many
// small files (kysely, @sinclair/typebox, jose, uuid): Node loads one file instead of ~750. Every
// other package stays in node_modules, loaded as it is (native addons, WASM and files read next to
// their own code, CommonJS). Dynamic imports become chunks of their own, loaded when used. Every
// built module sits at the top of dist/, where the migrations are copied (dist/migrations, found
// next to the module that reads them, as src/platform/db/migrations is next to migrate.ts), and so
// are the help center's templates (dist/templates).
//
// The chat widget's browser script (src/widget-client, Preact) is bundled on its own for browsers
// (scripts/widget-bundle.mjs) into dist/widget/widget.js, which GET /widget.js serves.
//
// The agent web app (web/, React + Vite) is built by scripts/web-build.mjs into dist/web, which
// the service serves at / (src/modules/web-app). It is rebuilt only when its own inputs changed:
// an edit under src/ keeps the app that was built (it is set aside while dist/ is emptied).
//
// The package export `helpdesk/webhooks` is built on its own (no shared chunk: a receiver may
// copy it), with its type declarations from tsc when TypeScript is installed (it is not in a
// production install, where nothing compiles against the package).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWebApp, WEB_OUT, webStale } from './web-build.mjs';
import { bundleWidget } from './widget-bundle.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'dist');
const STAMP = join(OUT, '.built');
const ENTRIES = ['src/main.ts', 'src/gateway-main.ts', 'src/migrate.ts'];
const INLINE = new Set(['kysely', '@sinclair/typebox', 'jose', 'uuid']);
/** What the build reads: a newer file means the build is stale. */
const INPUTS = [
  'src',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/build.mjs',
  'scripts/widget-bundle.mjs',
  'scripts/web-build.mjs',
  'web',
];

function newest(path) {
  let st;
  try {
    st = statSync(path);
  } catch {
    return 0;
  }
  if (!st.isDirectory()) return st.mtimeMs;
  let m = st.mtimeMs;
  // web/src/api.gen.d.ts: the API's types, generated for the web app's type check; built from nothing.
  for (const e of readdirSync(path)) if (e !== 'api.gen.d.ts') m = Math.max(m, newest(join(path, e)));
  return m;
}

function stale() {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  return INPUTS.some((p) => newest(join(ROOT, p)) > built);
}

/** Bare imports stay imports of node_modules, except the packages in INLINE. */
const externalPackages = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      const parts = args.path.split('/');
      const name = args.path.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
      return INLINE.has(name) ? undefined : { external: true };
    });
  },
};

async function build() {
  const started = performance.now();
  const esbuild = await import('esbuild');
  // The web app's last build, kept when its inputs have not changed since (it takes the longest).
  const keptWeb = !webStale() ? `${OUT}.web-kept-${process.pid}` : null;
  if (keptWeb) {
    rmSync(keptWeb, { recursive: true, force: true });
    renameSync(WEB_OUT, keptWeb);
  }
  rmSync(OUT, { recursive: true, force: true });
  const common = {
    absWorkingDir: ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'warning',
    plugins: [externalPackages],
  };
  const service = await esbuild.build({
    ...common,
    entryPoints: ENTRIES,
    outdir: OUT,
    outbase: 'src',
    splitting: true,
    metafile: true,
  });
  const nested = Object.keys(service.metafile.outputs).filter((f) => dirname(f) !== relative(ROOT, OUT));
  if (nested.length > 0) throw new Error(`built modules must sit at the top of dist/: ${nested.join(', ')}`);
  await esbuild.build({ ...common, entryPoints: ['src/webhooks.ts'], outdir: OUT, outbase: 'src' });

  const migrations = join(ROOT, 'src/platform/db/migrations');
  mkdirSync(join(OUT, 'migrations'));
  for (const f of readdirSync(migrations)) {
    if (f.endsWith('.sql')) cpSync(join(migrations, f), join(OUT, 'migrations', f));
  }
  // The help center's templates and stylesheet, the portal's pages among them (portal-*.eta), read
  // next to the module that renders them (src/modules/help-center/templates, dist/templates).
  cpSync(join(ROOT, 'src/modules/help-center/templates'), join(OUT, 'templates'), { recursive: true });

  // The chat widget's script for browsers (GET /widget.js).
  const widget = await bundleWidget(esbuild);
  mkdirSync(join(OUT, 'widget'));
  writeFileSync(join(OUT, 'widget', 'widget.js'), widget);

  // The agent web app (GET /, /inbox, /app/assets/...).
  let web = 'web app kept';
  if (keptWeb) renameSync(keptWeb, WEB_OUT);
  else web = `web app in ${(await buildWebApp()).toFixed(1)} s`;

  let tsc = null;
  try {
    tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  } catch {
    process.stdout.write('build: TypeScript is not installed (a production install): no type declarations\n');
  }
  if (tsc) {
    const r = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('tsc -p tsconfig.build.json failed');
  }

  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  process.stdout.write(
    `build: dist/ in ${((performance.now() - started) / 1000).toFixed(1)} s (esbuild ${esbuild.version}${tsc ? ', tsc' : ''}; ${web})\n`,
  );
}

if (process.argv.includes('--if-stale') && !stale()) process.exit(0);
try {
  await build();
} catch (err) {
  process.stderr.write(`build failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
