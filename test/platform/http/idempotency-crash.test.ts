// Idempotency-Key across crashes (docs/api.md "Idempotency", rules 1 and 3): a retry after the
// service died, at any point of a keyed create, returns the first result (or 409 while the first
// is still in flight) and never writes twice. The key is bound to the writes in their own
// transaction (src/platform/http/idempotency.ts).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/platform/db/index.js';
import { type ChildService, freePort, healthy, startProcess } from '../../support/child-process.js';
import {
  Api,
  newApiKey,
  newTenant,
  type Service,
  startService,
  TEST_SECRET_KEY,
  unique,
} from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

type Kind = 'ticket' | 'reply' | 'contact';

interface Keyed {
  kind: Kind;
  key: string;
  /** The text that makes the record findable: a subject, a reply's words, a contact's name. */
  mark: string;
  path: string;
  body: unknown;
  /** The answer the client got before the crash: a status, or 0 when the connection died. */
  first: number;
  firstId?: string;
}

describe('Idempotency-Key across a kill -9 of the service', () => {
  const children: ChildService[] = [];
  let db: OwnDatabase | null = null;
  afterAll(async () => {
    for (const c of children) c.child.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await db?.drop();
  });

  it('retries of every key after a kill -9 in the middle of keyed creates find exactly one record per key', async () => {
    db = await ownDatabase('idem_crash');
    const dir = mkdtempSync(join(tmpdir(), 'svc-idem-crash-'));
    const port = await freePort();
    const env = {
      DATA_DIR: dir,
      PORT: String(port),
      DATABASE_URL: db.env.DATABASE_URL ?? process.env.DATABASE_URL ?? '',
      SECRET_KEY: TEST_SECRET_KEY,
      RATE_LIMIT_PER_MINUTE: '10000000',
      // A key held by the killed process is free again after this (409 until then).
      IDEMPOTENCY_LEASE: '2s',
    };
    const first = startProcess(env);
    children.push(first);
    await healthy(port);
    const api = new Api(`http://127.0.0.1:${port}`);
    const t = await newTenant(api);
    const apiKey = await newApiKey(api, t, ['tickets:write', 'contacts:write']);
    const as = { token: apiKey.key };
    const base = await api.post('/v1/tickets', { subject: 'Replies go here', contact: { email: 'c@example.com' } }, as);
    expect(base.status).toBe(201);

    const run = unique('crash');
    const keyed: Keyed[] = [];
    for (let i = 0; i < 150; i++) {
      const kind: Kind = (['ticket', 'reply', 'contact'] as const)[i % 3]!;
      const mark = `${run}-${kind}-${i}`;
      const key = `${run}-key-${i}`;
      const request =
        kind === 'ticket'
          ? { path: '/v1/tickets', body: { subject: mark, body_html: `<p>${mark}</p>` } }
          : kind === 'reply'
            ? { path: `/v1/tickets/${base.body.id}/messages`, body: { kind: 'note', body_html: `<p>${mark}</p>` } }
            : { path: '/v1/contacts', body: { name: mark } };
      keyed.push({ kind, key, mark, ...request, first: -1 });
    }

    // Twenty-four clients send the keyed creates one after another; the service is killed once about
    // a third of them have been answered, so some are answered, some in flight, some not sent.
    let answered = 0;
    let killed = false;
    const killAt = 50;
    const send = (k: Keyed) =>
      api.post(k.path, k.body, { ...as, headers: { 'idempotency-key': k.key } }).then(
        (r) => {
          k.first = r.status;
          k.firstId = r.body?.id;
          answered++;
          if (answered >= killAt && !killed) {
            killed = true;
            first.child.kill('SIGKILL');
          }
        },
        () => {
          k.first = 0;
        },
      );
    const queue = [...keyed];
    await Promise.all(
      Array.from({ length: 24 }, async () => {
        for (let k = queue.shift(); k && !killed; k = queue.shift()) await send(k);
      }),
    );
    expect(killed).toBe(true);
    await first.exited;
    const beforeCrash = keyed.filter((k) => k.first === 201).length;
    const cut = keyed.filter((k) => k.first === 0).length;
    expect(beforeCrash).toBeGreaterThanOrEqual(killAt - 24);
    expect(cut, 'requests cut by the kill').toBeGreaterThan(0);

    const second = startProcess(env);
    children.push(second);
    await healthy(port);

    // Every key again, as a client retries: 409 while a dead request's lease runs, then the answer.
    for (const k of keyed) {
      let r = await api.post(k.path, k.body, { ...as, headers: { 'idempotency-key': k.key } });
      const until = Date.now() + 15_000;
      while (r.status === 409 && Date.now() < until) {
        expect(r.body.code).toBe('idempotency_in_progress');
        await new Promise((res) => setTimeout(res, 250));
        r = await api.post(k.path, k.body, { ...as, headers: { 'idempotency-key': k.key } });
      }
      expect(r.status, `${k.kind} ${k.key}: ${r.text}`).toBe(201);
      if (k.first === 201) {
        // Answered before the crash: the stored answer, the same record.
        expect(r.headers.get('idempotent-replayed'), k.key).toBe('true');
        expect(r.body.id).toBe(k.firstId);
      }
      k.firstId = r.body.id;
    }

    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    // Exactly one record per key, and it is the one the retry named.
    const database = await openDatabase({ databaseUrl: env.DATABASE_URL || null, dataDir: dir, memory: false });
    try {
      const counts = new Map<string, { n: number; id: string }>();
      const rows = await sql<{ mark: string; id: string }>`
        SELECT subject AS mark, id::text FROM tickets WHERE workspace_id = ${t.workspaceId} AND subject LIKE ${`${run}-%`}
        UNION ALL
        SELECT substring(body_text from ${`${run}-reply-[0-9]+`}), id::text FROM messages
          WHERE workspace_id = ${t.workspaceId} AND body_text LIKE ${`%${run}-reply-%`}
        UNION ALL
        SELECT name, id::text FROM contacts WHERE workspace_id = ${t.workspaceId} AND name LIKE ${`${run}-%`}`.execute(
        database.db,
      );
      for (const r of rows.rows) {
        const c = counts.get(r.mark);
        counts.set(r.mark, { n: (c?.n ?? 0) + 1, id: r.id });
      }
      const wrong = keyed
        .filter((k) => counts.get(k.mark)?.n !== 1 || counts.get(k.mark)?.id !== k.firstId)
        .map((k) => `${k.mark}: ${counts.get(k.mark)?.n ?? 0} records (first answer ${k.first})`);
      expect(wrong).toEqual([]);
      // Ticket-created tickets also carry their first message: one each.
      const firstMessages = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM messages
        WHERE workspace_id = ${t.workspaceId} AND body_text LIKE ${`%${run}-ticket-%`}`.execute(database.db);
      expect(firstMessages.rows[0]!.n).toBe(keyed.filter((k) => k.kind === 'ticket').length);
    } finally {
      await database.close();
    }
  }, 240_000);
});

describe('Idempotency-Key when the answer could not be stored after the write committed', () => {
  let svc: Service;
  afterAll(async () => svc?.stop());

  it('a retry rebuilds the first answer from what was committed, without writing again', async () => {
    svc = await startService({}, { jobs: false });
    const t = await newTenant(svc.api);
    const key = unique('stuck');
    const subject = unique('committed-only');
    const db = svc.rt.deps.database.db;
    // The answer's storage fails for this key only, after the ticket's transaction committed
    // (as a crash between COMMIT and storing the answer leaves it).
    const fn = `fail_store_${key.replace(/\W/g, '_')}`;
    await sql
      .raw(`CREATE FUNCTION ${fn}() RETURNS trigger AS $$
        BEGIN IF NEW.key = '${key}' AND NEW.state = 'done' THEN RAISE EXCEPTION 'induced failure'; END IF; RETURN NEW; END $$
        LANGUAGE plpgsql;
        CREATE TRIGGER ${fn} BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION ${fn}();`)
      .execute(db);
    const h = { ...t.as, headers: { 'idempotency-key': key } };
    const ticketsNamed = async () =>
      (
        await db
          .selectFrom('tickets')
          .select('id')
          .where('workspace_id', '=', t.workspaceId)
          .where('subject', '=', subject)
          .execute()
      ).map((r) => r.id);
    try {
      const failed = await svc.api.post('/v1/tickets', { subject }, h);
      expect(failed.status).toBe(500);
      expect(await ticketsNamed()).toHaveLength(1);
    } finally {
      await sql.raw(`DROP TRIGGER ${fn} ON idempotency_keys; DROP FUNCTION ${fn}();`).execute(db);
    }
    // The first request is over (it answered 500): the retry need not wait for the lease.
    const retry = await svc.api.post('/v1/tickets', { subject }, h);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('location')).toBe(`/v1/tickets/${retry.body.id}`);
    expect(retry.body.subject).toBe(subject);
    expect(await ticketsNamed()).toEqual([retry.body.id]);
    // And that answer is now the stored one.
    const again = await svc.api.post('/v1/tickets', { subject }, h);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(retry.body);
  });
});
