// Process roles (ROLE=all|api|gateway|worker; docs/operations.md "Several processes"), as real
// processes of `npm start`'s build on one PostgreSQL (a database of the file's own) and the
// machine's NATS: an api process, a gateway process and worker processes.
//
// - A ticket created through the api's HTTP reaches a socket on the gateway.
// - Inbound mail posted to the api is kept and acknowledged there, and processed only by a worker:
//   not while no worker runs, then once one starts.
// - A worker killed with SIGKILL in the middle of that work, and another started: every mail
//   becomes exactly one message on one ticket.
//
// Duration: about 2.5 to 3.5 minutes, above the usual ~60 s, and necessarily: a job that was
// running in the killed worker comes back through the inbound sweep (rows still `received` two
// minutes after they arrived, looked for every minute: src/modules/email/ingest.ts), pg-boss's
// own expiry of an active job being 15 minutes. The test waits for that state (polls), it does
// not sleep for it; the processes mostly idle meanwhile. The rest (starts, the socket, the first
// worker's run) takes about 30 s.
//
// Needs DATABASE_URL and TEST_NATS_URL (bash .ci/run sets both for its PostgreSQL run). The
// configuration errors are checked on both databases.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, freePort, startProcess } from '../support/child-process.js';
import { type Client, collect, connect, join as joinChannel, realtimeToken, sleep } from '../support/gateway-client.js';
import { Api, newTenant, onPostgres, TEST_SECRET_KEY, unique } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';

const NATS = process.env.TEST_NATS_URL;
const enabled = onPostgres && Boolean(NATS);
const INBOUND_SECRET = 'roles-inbound-secret-0123456789';
const tmp = () => mkdtempSync(join(tmpdir(), 'svc-roles-'));

describe('ROLE', () => {
  const bad = async (env: Record<string, string>) => {
    const p = startProcess({ DATA_DIR: tmp(), PORT: '0', ...env });
    expect(await p.exited).toBe(1);
    return p
      .err()
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('npm warn'));
  };

  it('refuses an unknown role, naming the allowed values, and a split role without PostgreSQL or NATS', async () => {
    const [unknown, noDatabase, noNats, gatewayNoNats] = await Promise.all([
      bad({ ROLE: 'scheduler' }),
      bad({ ROLE: 'api', DATABASE_URL: '', NATS_URL: 'nats://127.0.0.1:4222' }),
      bad({ ROLE: 'worker', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x', NATS_URL: '' }),
      // npm run gateway is ROLE=gateway.
      (async () => {
        const p = startProcess(
          { DATA_DIR: tmp(), PORT: '0', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/x', NATS_URL: '' },
          'gateway-main',
        );
        expect(await p.exited).toBe(1);
        return p.err().trim().split('\n');
      })(),
    ]);
    expect(unknown).toEqual(['configuration error: ROLE: must be one of all, api, gateway, worker, got "scheduler"']);
    expect(noDatabase).toEqual([
      'configuration error: DATABASE_URL: is required with ROLE=api: the processes of each role share one PostgreSQL (the embedded database belongs to one process; run ROLE=all for that)',
    ]);
    expect(noNats).toEqual([
      "configuration error: NATS_URL: is required with ROLE=worker: the processes of each role hear each other's events over NATS",
    ]);
    expect(gatewayNoNats).toEqual([
      "configuration error: NATS_URL: is required with ROLE=gateway: the processes of each role hear each other's events over NATS",
    ]);
  }, 60_000);
});

describe.runIf(enabled || (onPostgres && Boolean(process.env.CI)))('api, gateway and worker processes', () => {
  const children: ChildService[] = [];
  const clients: Client[] = [];
  let own: OwnDatabase | null = null;
  let db: pg.Pool | null = null;
  let env: Record<string, string> = {};

  beforeAll(async () => {
    if (!NATS) throw new Error('TEST_NATS_URL is not set: the roles test needs NATS (bash .ci/run sets it)');
    // A database of its own: the worker runs every background job with the default settings and
    // would take the other files' jobs and mailboxes on the shared one.
    own = await ownDatabase('roles');
    const databaseUrl = own.env.DATABASE_URL ?? process.env.DATABASE_URL!;
    db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    env = {
      DATABASE_URL: databaseUrl,
      NATS_URL: NATS,
      REDIS_URL: '',
      SECRET_KEY: TEST_SECRET_KEY,
      INBOUND_SECRET,
      RATE_LIMIT_PER_MINUTE: '1000000',
      HOST: '127.0.0.1',
    };
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.disconnect();
    for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGTERM');
    await Promise.all(
      children.map((c) =>
        Promise.race([c.exited, sleep(15_000).then(() => c.child.kill('SIGKILL'))]).then(() => c.exited),
      ),
    );
    await db?.end();
    await own?.drop();
  }, 60_000);

  /** A process of this role on a port of its own, once /readyz answers 200. */
  async function start(role: 'api' | 'gateway' | 'worker', extra: Record<string, string> = {}) {
    const port = await freePort();
    const p = startProcess({ ...env, ROLE: role, PORT: String(port), DATA_DIR: tmp(), LOG_LEVEL: 'info', ...extra });
    children.push(p);
    const url = `http://127.0.0.1:${port}`;
    // A start migrates (nothing to do on the copied template) and, for a worker, registers every
    // queue: seconds, more while CI runs other files beside it.
    await expect
      .poll(
        async () => {
          if (p.child.exitCode !== null) throw new Error(`ROLE=${role} exited: ${p.err()} ${p.out()}`);
          return fetch(`${url}/readyz`).then(
            (r) => r.status,
            () => 0,
          );
        },
        { timeout: 120_000, interval: 200 },
      )
      .toBe(200);
    return { ...p, url, port };
  }

  const mail = (to: string, subject: string, messageId: string) =>
    Buffer.from(
      [
        'From: Jane Customer <jane@example.com>',
        `To: ${to}`,
        `Subject: ${subject}`,
        'Date: Tue, 9 Jan 2024 10:00:00 +0000',
        `Message-ID: <${messageId}>`,
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Hello, please help.',
      ].join('\r\n'),
    );

  const rows = async (ids: string[]) =>
    (
      await db!.query<{ id: string; status: string; ticket_id: string | null }>(
        'SELECT id, status, ticket_id FROM inbound_emails WHERE id = ANY($1)',
        [ids],
      )
    ).rows;

  it('split the work: sockets on the gateway, HTTP on the api, jobs only on workers; a worker killed mid-run loses and repeats nothing', async () => {
    const [api, gateway] = await Promise.all([start('api'), start('gateway')]);
    const http = new Api(api.url);

    // Each process says its role; the api has no sockets and no gateway health, the gateway no routes.
    expect(await (await fetch(`${api.url}/readyz`)).json()).toEqual({
      status: 'ok',
      role: 'api',
      database: 'ok',
      bus: 'ok',
    });
    expect(await (await fetch(`${gateway.url}/readyz`)).json()).toEqual({
      status: 'ok',
      role: 'gateway',
      database: 'ok',
      bus: 'ok',
    });
    expect(await (await fetch(`${gateway.url}/healthz`)).json()).toEqual({ status: 'ok', role: 'gateway' });
    expect((await fetch(`${api.url}/health`)).status).toBe(404);
    expect((await fetch(`${gateway.url}/v1/me`)).status).toBe(404);
    expect(api.out()).toContain('ROLE=api');

    // A ticket created through the api reaches a socket on the gateway (over NATS).
    const t = await newTenant(http);
    const sock = connect(gateway.url, await realtimeToken(http, t.as));
    clients.push(sock);
    const ch = sock.socket.channel(`workspace:${t.workspaceId}`);
    const events = collect(ch);
    expect((await joinChannel(ch)).status).toBe('ok');
    const created = await http.post(
      '/v1/tickets',
      { subject: 'Through the api', contact: { email: 'c@example.com' } },
      t.as,
    );
    expect(created.status, created.text).toBe(201);
    await expect
      .poll(() => events.find((e) => e.type === 'ticket.created' && e.data?.ticket?.id === created.body.id), {
        timeout: 15_000,
      })
      .toBeTruthy();

    // Inbound mail posted to the api: acknowledged and kept there, processed by no one yet.
    const mb = await http.post('/v1/mailboxes', { name: 'Support', email: 'support@acme.test' }, t.as);
    expect(mb.status, mb.text).toBe(201);
    const to = mb.body.forwarding_address as string;
    const N = 60;
    const mails = Array.from({ length: N }, (_, i) => ({
      subject: `Mail ${i}`,
      messageId: `${unique('m')}@example.com`,
    }));
    const ids: string[] = [];
    for (const m of mails) {
      const r = await http.req('POST', `/v1/inbound/email?to=${encodeURIComponent(to)}`, {
        raw: mail(to, m.subject, m.messageId),
        headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': INBOUND_SECRET },
      });
      expect(r.status, r.text).toBe(202);
      ids.push(r.body.id);
    }
    // A fixed wait, only to show that something does not happen: any process running the inbound
    // queue would take a job within its 2 s polling interval, and a job sent from a process
    // wakes that process's own workers at once.
    await sleep(3000);
    expect((await rows(ids)).map((r) => r.status)).toEqual(Array(N).fill('received'));

    // A worker starts and takes the queue; it is killed (SIGKILL) as soon as it has done some.
    const w1 = await start('worker');
    expect(await (await fetch(`${w1.url}/readyz`)).json()).toMatchObject({ status: 'ok', role: 'worker' });
    expect((await fetch(`${w1.url}/v1/tickets`)).status).toBe(404);
    await expect
      .poll(async () => (await rows(ids)).filter((r) => r.status === 'processed').length, {
        timeout: 60_000,
        interval: 20,
      })
      .toBeGreaterThan(0);
    w1.child.kill('SIGKILL');
    await w1.exited;
    const done = (await rows(ids)).filter((r) => r.status !== 'received').length;
    // Mid-run: some of the mails were left (queued or in the killed process's hands).
    expect(done).toBeLessThan(N);

    // Another worker: every mail is processed, exactly once.
    const w2 = await start('worker');
    await expect
      .poll(async () => (await rows(ids)).filter((r) => r.status === 'received').length, {
        timeout: 240_000,
        interval: 500,
      })
      .toBe(0);
    const final = await rows(ids);
    expect(final.every((r) => r.status === 'processed' && r.ticket_id)).toBe(true);
    // One message per mail, and one ticket per mail (each mail is a new conversation).
    const messages = await db!.query<{ n: number; subject: string }>(
      `SELECT count(*)::int AS n, t.subject FROM messages m JOIN tickets t ON t.workspace_id = m.workspace_id AND t.id = m.ticket_id
        WHERE m.workspace_id = $1 AND t.subject LIKE 'Mail %' GROUP BY t.subject ORDER BY t.subject`,
      [t.workspaceId],
    );
    expect(messages.rows.length).toBe(N);
    expect(messages.rows.every((r) => r.n === 1)).toBe(true);
    expect(new Set(final.map((r) => r.ticket_id)).size).toBe(N);
    w2.child.kill('SIGTERM');
    expect(await w2.exited).toBe(0);
  }, 400_000);
});
