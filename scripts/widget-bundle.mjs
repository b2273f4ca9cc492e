// The chat widget's browser script (GET /widget.js, docs/widget.md): src/widget-client bundled by
// esbuild into one minified IIFE, Preact and the Phoenix client included. One definition of the
// bundle for its two users: scripts/build.mjs writes it to dist/widget/widget.js (what `npm start`
// serves), and the service running from its TypeScript sources (tests, `npm run dev`) builds it in
// memory the first time /widget.js is asked for (src/modules/widget/script.ts), so both serve the
// same bytes from the same sources. Plain JavaScript: it needs nothing but Node and esbuild.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const WIDGET_ENTRY = 'src/widget-client/main.tsx';

/** The bundle's bytes. `esbuild` is the module (the caller imports it, so this file imports nothing). */
export async function bundleWidget(esbuild) {
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [WIDGET_ENTRY],
    tsconfig: 'src/widget-client/tsconfig.json',
    bundle: true,
    write: false,
    minify: true,
    format: 'iife',
    platform: 'browser',
    // Browsers of the last few years: custom elements, shadow DOM, fetch, optional chaining.
    target: ['chrome100', 'firefox100', 'safari15', 'edge100'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    define: { 'process.env.NODE_ENV': '"production"' },
    legalComments: 'eof',
    charset: 'utf8',
    logLevel: 'warning',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error('the widget bundle is empty');
  return file.contents;
}
