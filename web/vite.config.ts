// The agent web app's build (docs/app.md): web/ → dist/web (scripts/web-build.mjs sets outDir).
// Hashed files go under /app/assets/, which the service serves immutable; index.html is served
// for the app's routes. `npm run dev:web` runs Vite's dev server on :5173, proxying the API, the
// socket and the public pages to a service on :3000 (`npm run dev`).
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const API = process.env.HELPDESK_API ?? 'http://127.0.0.1:3000';

export default defineConfig(({ command }) => ({
  root: import.meta.dirname,
  base: command === 'build' ? '/app/' : '/',
  plugins: [react()],
  // A placeholder the service replaces with a fresh nonce for every index.html it sends: Vite puts
  // it on its tags and in <meta property="csp-nonce">, which the app hands to the libraries that
  // add <style> elements (Radix's scroll lock), so the CSP needs no 'unsafe-inline'.
  html: { cspNonce: 'CSP_NONCE_PLACEHOLDER' },
  build: {
    assetsDir: 'assets',
    manifest: true,
    sourcemap: false,
    target: ['chrome111', 'firefox114', 'safari16.4', 'edge111'],
    // The inbox's first load is measured against 250 KB gzipped (test/app-build.test.ts).
    chunkSizeWarningLimit: 600,
  },
  server: {
    port: 5173,
    strictPort: true,
    proxy: {
      '/v1': { target: API, changeOrigin: false },
      '/socket': { target: API, ws: true },
      '/hc': API,
      '/csat': API,
      '/widget.js': API,
      '/docs': API,
    },
  },
}));
