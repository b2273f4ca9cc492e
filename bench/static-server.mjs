// The "limit" side of the help-center article pair (npm run bench, hc.article): one file served
// from memory, by Fastify as the limit server is (or by bare node:http with STATIC_MODE=raw).
// bench/run.ts captures the service's article page (body and response headers) into two files and
// starts this server with them, so both sides send the same bytes with the same kind of headers
// (content type, Cache-Control, ETag, Content-Security-Policy, …); this side does no work per
// request beyond writing them. GET /healthz answers 200 "ok"; any other GET or HEAD gets the file.
//
//   node bench/static-server.mjs <body file> <headers JSON file>   (PORT, HOST from the environment)
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [bodyFile, headersFile] = process.argv.slice(2);
if (!bodyFile || !headersFile) {
  console.error('usage: node bench/static-server.mjs <body file> <headers JSON file>');
  process.exit(2);
}
const body = readFileSync(bodyFile);
/** @type {Record<string, string>} */
const headers = JSON.parse(readFileSync(headersFile, 'utf8'));
// Per-connection and per-response headers are the server's own (node:http writes them).
for (const k of Object.keys(headers)) {
  if (['connection', 'content-length', 'date', 'keep-alive', 'transfer-encoding'].includes(k.toLowerCase()))
    delete headers[k];
}
headers['content-length'] = String(body.length);

// The reference is "a static file served by the limit server": Fastify 5, as
// ../shared/bench/limit-server.mjs, with one route answering the file from memory. STATIC_MODE=raw
// serves it with bare node:http instead (no framework: the ceiling of Node itself).
const raw = process.env.STATIC_MODE === 'raw';
let server;
if (raw) {
  server = createServer((req, res) => {
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' });
      res.end();
      return;
    }
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  server.keepAliveTimeout = 72_000;
} else {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false, keepAliveTimeout: 72_000 });
  app.get('/healthz', (_req, reply) => reply.type('text/plain').send('ok'));
  app.get('/*', (_req, reply) => reply.headers(headers).send(body));
  await app.ready();
  server = app.server;
}
const port = Number(process.env.PORT ?? 3300);
const host = process.env.HOST ?? '127.0.0.1';
server.listen(port, host, () =>
  console.log(`static server (${raw ? 'node:http' : 'fastify'}) on http://${host}:${port}: ${body.length} bytes`),
);
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
