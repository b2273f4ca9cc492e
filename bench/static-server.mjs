// The "limit" side of the help-center article pair (npm run bench, hc.article): node:http serving
// one file from memory, the fastest a page of that size can be served by Node on this machine.
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

const server = createServer((req, res) => {
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

const port = Number(process.env.PORT ?? 3300);
const host = process.env.HOST ?? '127.0.0.1';
server.listen(port, host, () => console.log(`static server on http://${host}:${port}: ${body.length} bytes`));
for (const signal of ['SIGINT', 'SIGTERM'])
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
