// /v1/attachments, part 2 (part 1: attachments.test.ts, shared setup in setup.ts): claiming
// attachments for a message, purging unattached uploads, S3-compatible storage and its settings.
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { purgeUnattachedAttachments } from '../../../src/modules/attachments/purge.js';
import { attachmentsOfMessages, claimAttachments, storageKeyOf } from '../../../src/modules/attachments/service.js';
import type { LocalStorage } from '../../../src/platform/storage/local.js';
import {
  addMember,
  newApiKey,
  newTenant,
  type Service,
  startService,
  TEST_SECRET_KEY,
  unique,
} from '../../support/helpers.js';
import type { OwnDatabase } from '../../support/own-database.js';
import { attachmentsSuite, download, filesUnder, headersOf, local, PNG, postForm, rowsOf, upload } from './setup.js';

const suite = attachmentsSuite();
let svc: Service;
let own: OwnDatabase;
beforeAll(() => {
  ({ svc, own } = suite);
});

/** A ticket and a message in the workspace (inserted directly: the tickets module is not needed here). */
async function messageIn(s: Service, workspaceId: string, teamId: string | null = null) {
  const db = s.rt.deps.database.db;
  const ticketId = randomUUID();
  const messageId = randomUUID();
  const n = await sql<{ n: number }>`
    select coalesce(max(number), 0)::int + 1 as n from tickets where workspace_id = ${workspaceId}`.execute(db);
  await sql`
    insert into tickets (workspace_id, id, number, subject, status, priority, channel, team_id, last_message_at)
    values (${workspaceId}, ${ticketId}, ${n.rows[0]!.n}, 'Printer on fire', 'open', 'normal', 'api', ${teamId}, now())`.execute(
    db,
  );
  await sql`
    insert into messages (workspace_id, id, ticket_id, kind, direction, author_type, body_html, body_text)
    values (${workspaceId}, ${messageId}, ${ticketId}, 'note', 'outbound', 'api', '<p>x</p>', 'x')`.execute(db);
  return { ticketId, messageId };
}

describe('claiming attachments for a message', () => {
  it('attaches uploads in the given order (deduplicated) and lists them per message', async () => {
    const t = await newTenant(svc.api);
    const a = await upload(svc, t.as, 'a', 'a.txt');
    const b = await upload(svc, t.as, PNG, 'b.png');
    const { messageId } = await messageIn(svc, t.workspaceId);
    const deps = svc.rt.deps;
    const views = await deps.writer.run(t.workspaceId, (u) =>
      claimAttachments(deps, u, [b.id, a.id.toUpperCase(), b.id], messageId),
    );
    expect(views.map((v) => v.id)).toEqual([b.id, a.id]);
    expect(views[0]).toMatchObject({ filename: 'b.png', content_type: 'image/png', size_bytes: PNG.length });
    expect(views[0]!.url).toContain(`/v1/attachments/${b.id}?token=`);
    const rows = await rowsOf(svc, t.workspaceId);
    expect(rows.every((r) => r.message_id === messageId)).toBe(true);

    const empty = randomUUID();
    const lists = await attachmentsOfMessages(deps, deps.database.db, t.workspaceId, [messageId, empty]);
    expect(lists.get(messageId)!.map((v) => v.id)).toEqual([a.id, b.id]); // upload order
    expect(lists.get(empty)).toEqual([]);
    expect(await deps.writer.run(t.workspaceId, (u) => claimAttachments(deps, u, [], messageId))).toEqual([]);
  });

  it('refuses ids that are not UUIDs, of another workspace, unknown or already attached (422 at body.attachment_ids)', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api);
    const mine = await upload(svc, t.as, 'mine', 'm.txt');
    const used = await upload(svc, t.as, 'used', 'u.txt');
    const foreign = await upload(svc, other.as, 'theirs', 't.txt');
    const deps = svc.rt.deps;
    const { messageId } = await messageIn(svc, t.workspaceId);
    await deps.writer.run(t.workspaceId, (u) => claimAttachments(deps, u, [used.id], messageId));
    const second = await messageIn(svc, t.workspaceId);
    for (const bad of ['not-a-uuid', foreign.id, randomUUID(), used.id]) {
      const err = await deps.writer
        .run(t.workspaceId, (u) => claimAttachments(deps, u, [mine.id, bad], second.messageId))
        .then(
          () => null,
          (e) => e,
        );
      expect(err?.status, bad).toBe(422);
      expect(err.errors[0].location).toBe('body.attachment_ids');
      expect(err.detail).toContain(bad);
    }
    // Nothing was claimed by the refused calls.
    const row = (await rowsOf(svc, t.workspaceId)).find((r) => r.id === mine.id)!;
    expect(row.message_id).toBeNull();
    expect((await rowsOf(svc, other.workspaceId))[0]!.message_id).toBeNull();
  });

  it("hides an attachment of a private team's ticket from members outside the team; the url token still works", async () => {
    const t = await newTenant(svc.api);
    const team = await svc.api.post('/v1/teams', { name: unique('Secret'), private: true, member_ids: [] }, t.as);
    expect(team.status, team.text).toBe(201);
    const a = await upload(svc, t.as, 'secret', 's.txt');
    const { messageId } = await messageIn(svc, t.workspaceId, team.body.id);
    const deps = svc.rt.deps;
    await deps.writer.run(t.workspaceId, (u) => claimAttachments(deps, u, [a.id], messageId));
    const agent = await addMember(svc, t, 'agent');
    const reader = await newApiKey(svc.api, t, ['tickets:read']);
    expect((await svc.api.get(`/v1/attachments/${a.id}`, agent.as)).status).toBe(404);
    expect((await svc.api.get(`/v1/attachments/${a.id}`, { token: reader.key })).status).toBe(404);
    expect((await svc.api.get(`/v1/attachments/${a.id}`, t.as)).status).toBe(200);
    expect((await svc.api.get(new URL(a.url).pathname + new URL(a.url).search)).status).toBe(200);
  });
});

describe('purging unattached uploads', () => {
  it('removes rows and bytes of unattached uploads older than 24 hours; keeps attached and recent ones', async () => {
    const t = await newTenant(svc.api);
    const deps = svc.rt.deps;
    const storage = deps.storage as LocalStorage;
    const attached = await upload(svc, t.as, 'attached', 'a.txt');
    const old1 = await upload(svc, t.as, 'old one', 'o1.txt');
    const old2 = await upload(svc, t.as, 'old two', 'o2.txt');
    const recent = await upload(svc, t.as, 'recent', 'r.txt');
    const { messageId } = await messageIn(svc, t.workspaceId);
    await deps.writer.run(t.workspaceId, (u) => claimAttachments(deps, u, [attached.id], messageId));
    await deps.database.db
      .updateTable('attachments')
      .set({ created_at: sql`now() - interval '25 hours'` })
      .where('workspace_id', '=', t.workspaceId)
      .where('id', 'in', [attached.id, old1.id, old2.id])
      .execute();
    const keyOf = (id: string) => storageKeyOf(t.workspaceId, id);
    // Bytes already gone are fine.
    unlinkSync(storage.pathOf(keyOf(old2.id)));

    // The clock: an hour from now, uploads older than 27 hours → none of these yet. The other
    // tests' uploads (this file's database) are all recent: nothing at all.
    expect(
      await purgeUnattachedAttachments(deps, { now: new Date(Date.now() + 3600_000), olderThanMs: 27 * 3600_000 }),
    ).toBe(0);
    expect((await rowsOf(svc, t.workspaceId)).length).toBe(4);

    // The two old unattached ones (one with its bytes already gone), one per batch.
    const purged = await purgeUnattachedAttachments(deps, { batch: 1 });
    expect(purged).toBe(2);
    const left = (await rowsOf(svc, t.workspaceId)).map((r) => r.id).sort();
    expect(left).toEqual([attached.id, recent.id].sort());
    expect(existsSync(storage.pathOf(keyOf(old1.id)))).toBe(false);
    expect(existsSync(storage.pathOf(keyOf(attached.id)))).toBe(true);
    expect(existsSync(storage.pathOf(keyOf(recent.id)))).toBe(true);
    expect((await svc.api.get(new URL(old1.url).pathname + new URL(old1.url).search)).status).toBe(404);
    expect((await svc.api.get(new URL(recent.url).pathname + new URL(recent.url).search)).status).toBe(200);
  });
});

describe('S3-compatible storage', () => {
  let s3: { close(): Promise<void> };
  let s3Dir: string;
  let port: number;
  let svcS3: Service;
  beforeAll(async () => {
    // s3rver: an S3 protocol server (PUT, GET, DELETE, presigned GET) on loopback.
    const { default: S3rver } = (await import('s3rver' as string)) as {
      default: new (o: object) => { run(): Promise<{ port: number }>; close(): Promise<void> };
    };
    s3Dir = mkdtempSync(join(tmpdir(), 's3rver-'));
    const server = new S3rver({
      port: 0,
      address: '127.0.0.1',
      silent: true,
      directory: s3Dir,
      configureBuckets: [{ name: 'helpdesk-test' }],
    });
    port = (await server.run()).port;
    s3 = server;
    svcS3 = await startService(
      {
        ...own.env,
        S3_BUCKET: 'helpdesk-test',
        S3_ENDPOINT: `http://127.0.0.1:${port}`,
        S3_REGION: 'us-east-1',
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
        S3_FORCE_PATH_STYLE: 'true',
      },
      { jobs: false },
    );
  });
  afterAll(async () => {
    await svcS3?.stop();
    await s3?.close();
    if (s3Dir) rmSync(s3Dir, { recursive: true, force: true });
  });

  it('stores the bytes in the bucket and redirects downloads to a short-lived signed URL', async () => {
    expect(svcS3.rt.deps.storage.kind).toBe('s3');
    const t = await newTenant(svcS3.api);
    const bytes = Buffer.concat([PNG, randomBytes(300_000)]);
    const a = await upload(svcS3, t.as, bytes, 'photo (1).png', 'text/plain');
    expect(a.content_type).toBe('image/png');
    // Nothing on local disk.
    expect(filesUnder(join(svcS3.rt.deps.config.dataDir, 'attachments'))).toEqual([]);

    for (const init of [{}, { headers: headersOf(t.as) }]) {
      const url = init.headers ? `${svcS3.url}/v1/attachments/${a.id}` : local(svcS3, a.url);
      const r = await download(url, init);
      expect(r.status).toBe(302);
      expect(r.headers.get('cache-control')).toBe('no-store');
      const location = new URL(r.headers.get('location')!);
      expect(location.origin).toBe(`http://127.0.0.1:${port}`);
      expect(location.pathname).toBe(`/helpdesk-test/attachments/${storageKeyOf(t.workspaceId, a.id)}`);
      expect(location.searchParams.get('X-Amz-Expires')).toBe('300');
      const d = await download(location.href);
      expect(d.status).toBe(200);
      expect(d.bytes.equals(bytes)).toBe(true);
      expect(d.headers.get('content-type')).toBe('image/png');
      expect(d.headers.get('content-disposition')).toBe(
        `inline; filename="photo (1).png"; filename*=UTF-8''photo%20%281%29.png`,
      );
    }

    // The purge deletes the object too.
    const key = storageKeyOf(t.workspaceId, a.id);
    const opened = await svcS3.rt.deps.storage.open(key);
    expect(opened).not.toBeNull();
    opened!.destroy();
    await svcS3.rt.deps.database.db
      .updateTable('attachments')
      .set({ created_at: sql`now() - interval '25 hours'` })
      .where('workspace_id', '=', t.workspaceId)
      .execute();
    await purgeUnattachedAttachments(svcS3.rt.deps);
    expect(await rowsOf(svcS3, t.workspaceId)).toEqual([]);
    expect(await svcS3.rt.deps.storage.open(key)).toBeNull();
  });

  it('refuses an over-limit upload without leaving an object behind', async () => {
    const small = await startService(
      {
        ...own.env,
        ATTACHMENT_MAX_MB: '1',
        S3_BUCKET: 'helpdesk-test',
        S3_ENDPOINT: `http://127.0.0.1:${port}`,
        S3_ACCESS_KEY_ID: 'S3RVER',
        S3_SECRET_ACCESS_KEY: 'S3RVER',
        S3_FORCE_PATH_STYLE: 'true',
      },
      { jobs: false },
    );
    try {
      const t = await newTenant(small.api);
      const r = await postForm(small, t.as, [{ name: 'file', data: randomBytes(1024 * 1024 + 1), filename: 'x' }]);
      expect(r.status).toBe(413);
      expect(await rowsOf(small, t.workspaceId)).toEqual([]);
      expect(filesUnder(s3Dir).filter((f) => f.includes(t.workspaceId))).toEqual([]);
    } finally {
      await small.stop();
    }
  });
});

describe('S3 settings', () => {
  const base = {
    DATABASE_IN_MEMORY: 'true',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-config-')),
    SECRET_KEY: TEST_SECRET_KEY,
    INBOUND_SECRET: 'test-inbound-secret-0123456789',
  };
  const refusal = (env: Record<string, string>) => {
    try {
      loadConfig({ ...base, ...env });
      return null;
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).message;
    }
  };

  it('are off without S3_BUCKET, and read with their defaults when it is set', () => {
    expect(loadConfig(base).s3).toBeNull();
    expect(loadConfig({ ...base, S3_BUCKET: 'my-bucket' }).s3).toEqual({
      bucket: 'my-bucket',
      endpoint: null,
      region: 'us-east-1',
      accessKeyId: null,
      secretAccessKey: null,
      forcePathStyle: false,
    });
  });

  it('stop the start with one line naming the variable when a value is wrong', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ S3_ENDPOINT: 'http://127.0.0.1:9000' }, 'S3_BUCKET'],
      [{ S3_BUCKET: 'Not_A_Bucket' }, 'S3_BUCKET'],
      [{ S3_BUCKET: 'b1b', S3_ENDPOINT: 'ftp://example.com' }, 'S3_ENDPOINT'],
      [{ S3_BUCKET: 'b1b', S3_ENDPOINT: 'not a url' }, 'S3_ENDPOINT'],
      [{ S3_BUCKET: 'b1b', S3_REGION: 'eu west' }, 'S3_REGION'],
      [{ S3_BUCKET: 'b1b', S3_ACCESS_KEY_ID: 'AKIA' }, 'S3_SECRET_ACCESS_KEY'],
      [{ S3_BUCKET: 'b1b', S3_SECRET_ACCESS_KEY: 'shh-very-secret' }, 'S3_ACCESS_KEY_ID'],
      [{ S3_BUCKET: 'b1b', S3_FORCE_PATH_STYLE: 'maybe' }, 'S3_FORCE_PATH_STYLE'],
    ];
    for (const [env, variable] of cases) {
      const message = refusal(env);
      expect(message, JSON.stringify(env)).toMatch(new RegExp(`^${variable}: `));
      expect(message).not.toContain('\n');
      expect(message).not.toContain('shh-very-secret');
    }
  });
});
