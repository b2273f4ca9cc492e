// The setup of the webhook delivery tests (delivery.test.ts, delivery-guarantees.test.ts): a
// receiver that records every request and answers each path from a plan, a service on a database
// of its own with a schedule measured in milliseconds, and the helpers that add endpoints. Each
// test file calls deliverySuite() at its top level and gets its own receiver and service (the
// files share worker processes, so nothing here lives at module level).

import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { WebhookOptions } from '../../../src/modules/webhooks/options.js';
import { type Service, startService, type Tenant, unique } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

// ---------------------------------------------------------------------------------------------
// A receiver: records every request with its raw body; answers each path from a plan.

export type Behaviour = number | 'hang' | 'close';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  body: any;
  at: number;
}

export class Receiver {
  readonly received: Received[] = [];
  readonly plans = new Map<string, Behaviour[]>();
  readonly #sockets = new Set<Socket>();
  #server!: Server;
  port = 0;

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const path = req.url ?? '/';
        let body: any = null;
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          // recorded raw
        }
        this.received.push({ path, headers: req.headers, raw, body, at: Date.now() });
        const next = this.plans.get(path)?.shift() ?? 200;
        if (next === 'hang') return;
        if (next === 'close') {
          req.socket.destroy();
          return;
        }
        res.writeHead(next, { 'content-type': 'text/plain' }).end('x'.repeat(100));
      });
    });
    this.#server.on('connection', (s) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    await new Promise<void>((r) => this.#server.listen(0, '127.0.0.1', r));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise((r) => this.#server.close(r));
  }
}

// ---------------------------------------------------------------------------------------------
// The service, with private addresses allowed and a schedule measured in milliseconds.

export const FAST: Partial<WebhookOptions> = {
  retryDelaysMs: [300, 300, 300, 300, 300, 300, 300],
  jitter: 0,
  timeoutMs: 1500,
  sweepMs: 500,
  eventGraceMs: 1000,
  orphanAfterMs: 3000,
  pollSeconds: 0.5,
};

export async function startWith(
  env: Record<string, string>,
  webhooks: Partial<WebhookOptions>,
  dataDir = mkdtempSync(join(tmpdir(), 'svc-webhooks-')),
): Promise<Service> {
  // Every background worker as in production (IMAP pollers, email senders), not only webhooks.
  return startService({ DATA_DIR: dataDir, WEBHOOK_ALLOW_PRIVATE: 'true', ...env }, { webhooks, imap: {}, email: {} });
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  ms = 20_000,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One file's receiver and service, and the helpers that use them; registers the file's hooks. */
export function deliverySuite() {
  let svc: Service;
  let own: OwnDatabase;
  const rx = new Receiver();
  beforeAll(async () => {
    await rx.start();
    // A database of its own on PostgreSQL: other files' job workers (with private addresses
    // refused) must not take these deliveries.
    own = await ownDatabase('webhooks_delivery');
    svc = await startWith(own.env, FAST);
  });
  afterAll(async () => {
    await svc?.stop();
    await own?.drop();
    await rx.stop();
  });

  let paths = 0;
  /** An endpoint at a fresh path of the receiver. */
  async function hook(t: Tenant, body: Record<string, unknown> = {}, api = svc.api) {
    const path = `/hook/${++paths}`;
    const r = await api.post('/v1/webhooks', { url: rx.url(path), events: ['team.created'], ...body }, t.as);
    if (r.status !== 201) throw new Error(`webhook: ${r.status} ${r.text}`);
    return { ...(r.body as { id: string; secret: string }), path };
  }

  async function deliveriesOf(t: Tenant, id: string, api = svc.api): Promise<any[]> {
    const r = await api.get(`/v1/webhooks/${id}/deliveries?limit=100`, t.as);
    if (r.status !== 200) throw new Error(`deliveries: ${r.status} ${r.text}`);
    return r.body.data;
  }

  const newTeam = (t: Tenant, body: Record<string, unknown> = {}, api = svc.api) =>
    api.post('/v1/teams', { name: unique('Team'), ...body }, t.as).then((r) => r.body);

  return {
    get svc() {
      return svc;
    },
    rx,
    hook,
    deliveriesOf,
    newTeam,
  };
}
