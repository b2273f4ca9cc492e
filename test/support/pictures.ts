// Pictures for the tests of src/modules/images (and the app's screens that upload them): the
// fixture files (fixtures/images, made by make-fixtures.ts), a stand-in picture server on loopback
// (Gravatar, a company's website) with its answers, the names the services resolve, and the
// upload and download routes called as a browser calls them.
import { readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { refusedAddress } from '../../src/platform/net/address.js';
import type { ReqOpts, Service } from './helpers.js';

/** The folder of the picture fixtures. */
export const PICTURES = join(import.meta.dirname, 'fixtures', 'images');
/** A picture fixture's bytes. */
export const fixture = (name: string) => readFileSync(join(PICTURES, name));

// ---- the stand-in picture server ---------------------------------------------------------------

/** What the stand-in answers, by path. */
export type Routes = Map<string, (res: ServerResponse) => void>;

export const png = (bytes: Buffer) => (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(bytes.length) });
  res.end(bytes);
};
export const html = (body: string) => (res: ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end(body);
};
export const redirect = (to: string) => (res: ServerResponse) => {
  res.writeHead(302, { location: to });
  res.end();
};

/** The stand-in on a loopback port: answers by `routes`, 404 otherwise; records every path asked. */
export async function startStandIn(routes: Routes, asked: string[]): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    asked.push(path);
    const route = routes.get(path);
    if (route) route(res);
    else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Names the services resolve (no DNS in the tests). */
export async function resolve(host: string) {
  const table: Record<string, string> = { 'ten.test': '10.0.0.1', 'pics.test': '127.0.0.1' };
  const a = table[host];
  if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return [{ address: a, family: 4 }];
}

/**
 * The pictures options of a service whose automatic sources are the stand-in at `base`: the
 * address rules of production, except that the stand-in's 127.0.0.1 counts as public.
 */
export const standInPictures = (base: string) => ({
  gravatarUrl: (hash: string) => `${base}/avatar/${hash}`,
  domainUrl: (domain: string) => `${base}/site/${domain}/`,
  resolve,
  refuse: (a: string) => (a === '127.0.0.1' ? null : refusedAddress(a)),
});

// ---- the routes, as a browser calls them ---------------------------------------------------------

/** The headers of request options, for the calls that are not JSON. */
export function headersOf(as: ReqOpts): Record<string, string> {
  const h: Record<string, string> = {};
  if (as.token) h.authorization = `Bearer ${as.token}`;
  if (as.workspace) h['svc-workspace'] = as.workspace;
  return h;
}

/** A multipart PUT of one picture (`file`), as the app sends it. */
export async function put(s: Service, path: string, as: ReqOpts, data: Buffer, filename: string, type: string) {
  const form = new FormData();
  form.append('file', new Blob([data], { type }), filename);
  const r = await fetch(`${s.url}${path}`, { method: 'PUT', headers: headersOf(as), body: form });
  const text = await r.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: r.status, body, headers: r.headers, text };
}

/** A picture's URL as the API gives it. */
export const ID_RE = /\/v1\/images\/([0-9a-f-]{36})$/;
export function idOf(url: string | null): string {
  const m = ID_RE.exec(url ?? '');
  if (!m) throw new Error(`not a picture url: ${url}`);
  return m[1]!;
}

/** A picture as served, at 256 px or `size`. */
export async function served(s: Service, url: string | null, size?: 64 | 256, headers: Record<string, string> = {}) {
  const r = await fetch(`${s.url}/v1/images/${idOf(url)}${size ? `?s=${size}` : ''}`, { headers });
  return { status: r.status, headers: r.headers, bytes: Buffer.from(await r.arrayBuffer()) };
}

/** `what()` again until `ok` holds of it (a picture fetched in the background) or `ms` passed. */
export async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, ms = 8000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}
