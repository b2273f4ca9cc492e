// Backup and restore as docs/operations.md "Backup and restore" tells an operator to do it, with
// `npm start`'s build in child processes: a ticket made before the backup is there after the
// restore into a fresh place, and the service starts on it.
// - Embedded database: stop the service, archive DATA_DIR (tar), unpack it somewhere new, start
//   there. The generated secrets travel in DATA_DIR too: a token signed before still works.
// - PostgreSQL: pg_dump -Fc of the running service's database, pg_restore into a new empty
//   database, start on it with the same SECRET_KEY.
// The embedded case runs in the embedded run, the PostgreSQL case in the PostgreSQL run (each
// starts two services, seconds each).
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildService, freePort, healthy, startProcess } from '../support/child-process.js';
import { Api, newTenant, onPostgres, TEST_SECRET_KEY } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'svc-backup-'));

function run(cmd: string, args: string[]) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.status} ${r.stderr}`);
}

describe('backup and restore', () => {
  const children: ChildService[] = [];
  const databases: OwnDatabase[] = [];
  afterAll(async () => {
    for (const c of children) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    for (const d of databases) await d.drop();
  });

  async function serve(env: Record<string, string>) {
    const port = await freePort();
    const p = startProcess({ PORT: String(port), RATE_LIMIT_PER_MINUTE: '100000', ...env });
    children.push(p);
    await healthy(port);
    return { ...p, api: new Api(`http://127.0.0.1:${port}`) };
  }

  async function stop(p: ChildService) {
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  }

  it.runIf(!onPostgres)(
    'embedded database: a copy of DATA_DIR taken while stopped starts elsewhere with its tickets and secrets',
    async () => {
      const dir = tmp();
      const first = await serve({ DATA_DIR: dir, DATABASE_URL: '' });
      const t = await newTenant(first.api);
      const ticket = await first.api.post('/v1/tickets', { subject: 'Before the backup' }, t.as);
      expect(ticket.status, ticket.text).toBe(201);
      await stop(first);

      // Back up: the whole DATA_DIR (database, generated secrets, attachments), while stopped.
      const archive = join(tmp(), 'helpdesk-data.tar.gz');
      run('tar', ['-C', dir, '-czf', archive, '.']);
      // Restore into a fresh place.
      const restored = tmp();
      run('tar', ['-C', restored, '-xzf', archive]);
      const second = await serve({ DATA_DIR: restored, DATABASE_URL: '' });
      // The token signed before the backup still works: SECRET_KEY came with DATA_DIR/secrets.
      const got = await second.api.get(`/v1/tickets/${ticket.body.id}`, t.as);
      expect(got.status, got.text).toBe(200);
      expect(got.body.subject).toBe('Before the backup');
      await stop(second);
    },
    180_000,
  );

  it.runIf(onPostgres)(
    'PostgreSQL: pg_dump -Fc of the running service, pg_restore into a new database, the service starts on it',
    async () => {
      const source = await ownDatabase('backup_src');
      databases.push(source);
      const target = await ownDatabase('backup_dst', { empty: true });
      databases.push(target);
      if (!source.env.DATABASE_URL || !target.env.DATABASE_URL) {
        throw new Error('the backup test needs the right to create databases on the test PostgreSQL');
      }
      const common = { SECRET_KEY: TEST_SECRET_KEY, INBOUND_SECRET: 'backup-inbound-secret-0123' };
      const first = await serve({ ...common, DATA_DIR: tmp(), DATABASE_URL: source.env.DATABASE_URL });
      const t = await newTenant(first.api);
      const ticket = await first.api.post('/v1/tickets', { subject: 'Before the backup' }, t.as);
      expect(ticket.status, ticket.text).toBe(201);

      // Back up while the service runs: pg_dump reads one consistent snapshot.
      const file = join(tmp(), 'helpdesk.dump');
      run('pg_dump', ['-Fc', '-f', file, '-d', source.env.DATABASE_URL]);
      await stop(first);
      // Restore into a new, empty database.
      run('pg_restore', ['--no-owner', '--exit-on-error', '-d', target.env.DATABASE_URL, file]);

      const second = await serve({ ...common, DATA_DIR: tmp(), DATABASE_URL: target.env.DATABASE_URL });
      const got = await second.api.get(`/v1/tickets/${ticket.body.id}`, t.as);
      expect(got.status, got.text).toBe(200);
      expect(got.body.subject).toBe('Before the backup');
      // And it goes on working: a new ticket after the restore.
      const after = await second.api.post('/v1/tickets', { subject: 'After the restore' }, t.as);
      expect(after.status, after.text).toBe(201);
      expect(after.body.number).toBeGreaterThan(ticket.body.number);
      await stop(second);
    },
    180_000,
  );
});
