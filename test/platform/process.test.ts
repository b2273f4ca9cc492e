// The real process, built as npm start runs it: no settings, a bad setting, graceful shutdown on
// SIGTERM, and npm run migrate. Apart from test/platform/platform.test.ts so that these child processes
// (each one imports and starts the service: seconds) run beside the other files.
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { freePort, healthy, startProcess } from '../support/child-process.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'svc-platform-'));

// The tests run at the same time (describe.concurrent): each waits seconds for its child to
// import and start, and they share nothing but the machine. Each uses the `expect` of
// its own test context.
describe.concurrent('the process', () => {
  const children: ChildProcess[] = [];
  const databases: OwnDatabase[] = [];
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await Promise.all(
      children.map((c) =>
        c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once('exit', r)),
      ),
    );
    for (const d of databases) await d.drop();
  });

  it('starts with no settings, says where it listens and the inbound secret, and stops cleanly on SIGTERM', async ({
    expect,
  }) => {
    const dir = tmp();
    const port = await freePort();
    const p = startProcess({ DATA_DIR: dir, PORT: String(port), DATABASE_URL: '' });
    children.push(p.child);
    await healthy(port, expect);
    const secret = readFileSync(join(dir, 'secrets', 'inbound_secret'), 'utf8').trim();
    expect(p.out()).toContain(`http://127.0.0.1:${port}`);
    expect(p.out()).toContain(secret);
    expect(existsSync(join(dir, 'pglite'))).toBe(true);
    // Data survives a restart.
    const reg = await fetch(`http://127.0.0.1:${port}/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'persist@example.com', password: 'long enough pw', name: 'P' }),
    });
    expect(reg.status).toBe(201);
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);

    const again = startProcess({ DATA_DIR: dir, PORT: String(port), DATABASE_URL: '' });
    children.push(again.child);
    await healthy(port, expect);
    const login = await fetch(`http://127.0.0.1:${port}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'persist@example.com', password: 'long enough pw' }),
    });
    expect(login.status).toBe(200);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 150_000);

  it('refuses to start on a bad setting with one line naming the variable', async ({ expect }) => {
    const p = startProcess({ DATA_DIR: tmp(), PORT: 'abc' });
    children.push(p.child);
    expect(await p.exited).toBe(1);
    const lines = p
      .err()
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('npm warn'));
    expect(lines).toEqual(['configuration error: PORT: must be a whole number, got "abc"']);
  });

  it('finishes a request in flight before exiting on SIGTERM', async ({ expect }) => {
    const port = await freePort();
    // On PostgreSQL a database of its own: `npm start` runs every background worker with the
    // default settings (IMAP pollers that may not reach loopback servers, send workers), and on
    // the database the other test files share it would take their mailboxes and replies.
    const db = await ownDatabase('platform_inflight');
    databases.push(db);
    const databaseUrl = db.env.DATABASE_URL ?? process.env.DATABASE_URL ?? '';
    // At info level the service logs when the signal lands ('shutting down').
    const p = startProcess({ DATA_DIR: tmp(), PORT: String(port), DATABASE_URL: databaseUrl, LOG_LEVEL: 'info' });
    children.push(p.child);
    await healthy(port, expect);
    // A request whose headers have arrived and whose body is still coming when SIGTERM lands.
    const body = JSON.stringify({
      email: `inflight-${Date.now()}@example.com`,
      password: 'long enough pw',
      name: 'In Flight',
    });
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/v1/auth/register',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const answer = new Promise<number>((res, rej) => {
      req.on('response', (r) => {
        r.resume();
        res(r.statusCode ?? 0);
      });
      req.on('error', rej);
    });
    req.write(body.slice(0, 10));
    await new Promise((r) => setTimeout(r, 300));
    p.child.kill('SIGTERM');
    // The rest of the body goes once the service has begun to shut down, whatever the load.
    await expect.poll(() => p.out().includes('shutting down'), { timeout: 30_000 }).toBe(true);
    req.end(body.slice(10));
    expect(await answer).toBe(201);
    expect(await p.exited).toBe(0);
  }, 120_000);

  it('runs as npm run migrate', async ({ expect }) => {
    const dir = tmp();
    const p = startProcess({ DATA_DIR: dir, DATABASE_URL: process.env.DATABASE_URL ?? '' }, 'migrate');
    expect(await p.exited).toBe(0);
    expect(p.out()).toMatch(/applied: 0001_foundation|database is up to date/);
  }, 60_000);
});
