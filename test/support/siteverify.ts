// A loopback stand-in for the human check's siteverify endpoint (Cloudflare Turnstile, hCaptcha),
// speaking its protocol: a form post with secret and response; `good-token` passes with the right
// secret. It records what it was asked and can be made to fail (502) to test an unreachable check.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Siteverify {
  url: string;
  seen: Array<Record<string, string>>;
  mode: { down: boolean };
  server: Server;
}

/** A loopback stand-in for the provider's siteverify endpoint, speaking its protocol. */
export async function siteverify(secret: string): Promise<Siteverify> {
  const seen: Array<Record<string, string>> = [];
  const mode = { down: false };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      seen.push({ ...form, _method: req.method ?? '', _path: req.url ?? '', _type: req.headers['content-type'] ?? '' });
      if (mode.down) {
        res.writeHead(502).end('bad gateway');
        return;
      }
      const ok = form.secret === secret && form.response === 'good-token';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          ok
            ? { success: true, challenge_ts: new Date().toISOString(), hostname: 'localhost', 'error-codes': [] }
            : {
                success: false,
                'error-codes': [form.secret === secret ? 'invalid-input-response' : 'invalid-input-secret'],
              },
        ),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/siteverify`, seen, mode, server };
}
