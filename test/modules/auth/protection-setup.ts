// The setup of the sign-in protection tests (protection.test.ts, protection-challenge.test.ts):
// services on a database of its own, started with the settings a test needs and stopped after the
// file, and the helpers that register and log in. Each test file calls protectionSuite() at its
// top level and gets its own services (the files share worker processes, so nothing here lives
// at module level).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { type Service, startService, unique } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

export const PASSWORD = 'correct horse battery';

export async function registered(
  s: Service,
  name = 'Lou Lock',
): Promise<{ email: string; userId: string; token: string }> {
  const email = `${unique('prot')}@example.com`;
  const r = await s.api.post('/v1/auth/register', { email, password: PASSWORD, name, challenge_token: 'good-token' });
  expect(r.status, r.text).toBe(201);
  return { email, userId: r.body.user.id, token: r.body.access_token };
}

export const login = (s: Service, email: string, password: string, extra: Record<string, unknown> = {}) =>
  s.api.post('/v1/auth/login', { email, password, ...extra });

/** One file's services; registers the file's hooks. */
export function protectionSuite() {
  const services: Service[] = [];
  let own: OwnDatabase;
  async function service(env: Record<string, string>): Promise<Service> {
    const s = await startService({ ...own.env, ...env }, { jobs: false });
    services.push(s);
    return s;
  }
  /** A service with the default settings (10 per account, 30 per address, no challenge, no App Attest). */
  let plain: Service;
  beforeAll(async () => {
    own = await ownDatabase('auth_protection');
    plain = await service({});
  });
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
    await own?.drop();
  });

  return {
    get plain() {
      return plain;
    },
    service,
  };
}

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
