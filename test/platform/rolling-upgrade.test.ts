// A rolling upgrade against the previous release (docs/operations.md "Rolling upgrades"): the
// commit pinned in .ci/previous-release runs on a schema the new code migrated, beside the new
// code, on one PostgreSQL database. Tickets made on either are read and replied to on the other,
// lists answer on both, the workspace's event seq stays gapless, nothing answers 5xx.
import { execFileSync, execSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildService, freePort, healthy, spawnKept, startProcess } from '../support/child-process.js';
import { Api, newTenant, onPostgres, type ReqOpts, TEST_SECRET_KEY } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';

const root = resolve(import.meta.dirname, '../..');
const pin = readFileSync(join(root, '.ci/previous-release'), 'utf8').trim().split(/\s+/)[0]!;
// The migrator that leaves a newer release's migrations alone (src/platform/db/migrate.ts). A
// pinned release without it would refuse the new schema ("previously executed migration … is
// missing") before serving anything: such a release gets this one file from the new tree.
const TOLERANT = 'newer release';

describe.skipIf(!onPostgres)('rolling upgrade from the previous release', () => {
  const children: ChildService[] = [];
  let tree = '';
  let db: OwnDatabase | undefined;
  let backported = false;

  beforeAll(() => {
    try {
      execFileSync('git', ['cat-file', '-e', `${pin}^{commit}`], { cwd: root, stdio: 'ignore' });
    } catch {
      throw new Error(
        `the previous release ${pin} (.ci/previous-release) is not in this clone: CI needs the full history (git clone, not --depth)`,
      );
    }
    tree = mkdtempSync(join(tmpdir(), 'svc-previous-'));
    execSync(`git archive ${pin} | tar -x -C ${tree}`, { cwd: root });
    symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'));
    const migrator = join(tree, 'src/platform/db/migrate.ts');
    if (!readFileSync(migrator, 'utf8').includes(TOLERANT)) {
      copyFileSync(join(root, 'src/platform/db/migrate.ts'), migrator);
      backported = true;
    }
  }, 60_000);

  afterAll(async () => {
    for (const c of children) {
      if (c.child.exitCode === null && c.child.signalCode === null) {
        c.child.kill('SIGKILL');
        await c.exited;
      }
    }
    await db?.drop();
    if (tree && existsSync(tree)) rmSync(tree, { recursive: true, force: true });
  });

  it('runs the previous release beside the new one on the new schema', async () => {
    db = await ownDatabase('rolling', { empty: true });
    const env = {
      DATABASE_URL: db.env.DATABASE_URL!,
      SECRET_KEY: TEST_SECRET_KEY,
      RATE_LIMIT_PER_MINUTE: '10000000',
    };
    // The new release migrates the empty database.
    const migrate = startProcess(env, 'migrate');
    children.push(migrate);
    expect(await migrate.exited, migrate.err()).toBe(0);

    // The previous release starts on it (its own migration step first), then the new one.
    const [oldPort, newPort] = [await freePort(), await freePort()];
    const old = spawnKept(['--import', 'tsx', join(tree, 'src/main.ts')], {
      ...env,
      PORT: String(oldPort),
      DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-previous-data-')),
    });
    children.push(old);
    const neu = startProcess({ ...env, PORT: String(newPort), DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-new-data-')) });
    children.push(neu);
    const oldExit = old.exited.then((code) => {
      throw new Error(
        `the previous release exited (${code})${backported ? ' [migrator backported]' : ''}: ${old.err()}`,
      );
    });
    await Promise.race([Promise.all([healthy(oldPort), healthy(newPort)]), oldExit]);
    for (const port of [oldPort, newPort]) {
      await expect.poll(() => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status)).toBe(200);
    }

    const statuses: Array<[string, number]> = [];
    const track = (name: string, api: Api) =>
      new Proxy(api, {
        get(target, prop) {
          const v = Reflect.get(target, prop);
          if (typeof v !== 'function') return v;
          return async (...args: unknown[]) => {
            const r = await v.apply(target, args);
            if (r && typeof r.status === 'number')
              statuses.push([`${name} ${String(args[0])} ${String(args[1])}`, r.status]);
            return r;
          };
        },
      });
    const oldApi = track('old', new Api(`http://127.0.0.1:${oldPort}`));
    const newApi = track('new', new Api(`http://127.0.0.1:${newPort}`));

    // A workspace made on the previous release, used from both.
    const t = await newTenant(oldApi);
    const as: ReqOpts = t.as;
    const seq0: number = (await newApi.get('/v1/events?since=0', as)).body.latest_seq;

    const onOld = await oldApi.post('/v1/tickets', { subject: 'made on the previous release' }, as);
    expect(onOld.status, onOld.text).toBe(201);
    const onNew = await newApi.post('/v1/tickets', { subject: 'made on the new release' }, as);
    expect(onNew.status, onNew.text).toBe(201);

    // Each read and replied to on the other.
    for (const [api, ticket] of [
      [newApi, onOld.body],
      [oldApi, onNew.body],
    ] as const) {
      const got = await api.get(`/v1/tickets/${ticket.id}`, as);
      expect(got.status, got.text).toBe(200);
      expect(got.body.subject).toBe(ticket.subject);
      const reply = await api.post(`/v1/tickets/${ticket.id}/messages`, { kind: 'note', body_html: '<p>seen</p>' }, as);
      expect(reply.status, reply.text).toBe(201);
    }
    // Lists on both show both tickets and both notes.
    for (const api of [oldApi, newApi]) {
      const list = await api.get('/v1/tickets', as);
      expect(list.status, list.text).toBe(200);
      const subjects = (list.body.data as { subject: string }[]).map((x) => x.subject);
      expect(subjects).toEqual(expect.arrayContaining([onOld.body.subject, onNew.body.subject]));
      for (const ticket of [onOld.body, onNew.body]) {
        const msgs = await api.get(`/v1/tickets/${ticket.id}/messages`, as);
        expect(msgs.status, msgs.text).toBe(200);
        expect(JSON.stringify(msgs.body)).toContain('seen');
      }
    }

    // The events of the workspace, written by both processes: seq gapless in replay on both.
    for (const api of [oldApi, newApi]) {
      const ev = await api.get(`/v1/events?since=${seq0}&limit=1000`, as);
      expect(ev.status, ev.text).toBe(200);
      const seqs = (ev.body.data as { seq: number }[]).map((e) => e.seq);
      expect(seqs.length).toBeGreaterThanOrEqual(4);
      expect(seqs).toEqual(seqs.map((_, i) => seq0 + 1 + i));
    }

    expect(statuses.filter(([, s]) => s >= 500)).toEqual([]);
    for (const port of [oldPort, newPort]) {
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    }
    expect(old.child.exitCode, old.err()).toBeNull();
    expect(neu.child.exitCode, neu.err()).toBeNull();
  }, 170_000);
});
