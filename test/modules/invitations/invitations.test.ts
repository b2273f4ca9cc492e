// /v1/invitations: create (token and link once), list, revoke, public lookup, accept by the
// invited address; tokens stored only as hashes; replaced, reused, expired, revoked and
// foreign invitations; the invitation email through a stand-in SMTP server whose link
// really accepts, and the logged (unsent) mail that never shows the token.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendInvitationMail } from '../../../src/modules/invitations/mail.js';
import { tokenSealContext } from '../../../src/modules/invitations/service.js';
import {
  addMember,
  eventsAfterOf,
  isErrorBody,
  latestSeqOf,
  newApiKey,
  newTenant,
  onPostgres,
  type Person,
  type ReqOpts,
  type Service,
  signUp,
  startService,
  type Tenant,
  unique,
} from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  // No job worker here: the email tests below run their own services (see isolated()).
  svc = await startService({}, { jobs: false });
});
afterAll(async () => svc?.stop());

/**
 * A service with its job worker on a database of its own: on a shared PostgreSQL, the workers
 * of other test files' services would otherwise take its mail jobs (and log them instead).
 */
async function isolated(env: Record<string, string> = {}): Promise<{ s: Service; stop(): Promise<void> }> {
  if (!onPostgres) {
    const s = await startService(env);
    return { s, stop: () => s.stop() };
  }
  const name = `svc_mail_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${name}`;
  const s = await startService({ ...env, DATABASE_URL: url.toString() });
  return {
    s,
    async stop() {
      await s.stop();
      await admin.query(`drop database ${name} with (force)`);
      await admin.end();
    },
  };
}

const DAY = 86_400_000;
type Joined = Person & { as: ReqOpts };

const join = (t: Tenant, role: 'owner' | 'admin' | 'agent' | 'viewer'): Promise<Joined> => addMember(svc, t, role);
/** A person registered with this email (any case). */
async function register(api: Service['api'], email: string, name = 'Invited Person'): Promise<Person> {
  const password = 'correct horse battery';
  const r = await api.post('/v1/auth/register', { email, password, name });
  expect(r.status).toBe(201);
  return { token: r.body.access_token, userId: r.body.user.id, email, password };
}
async function invite(t: Tenant, body: { email: string; role: string }, as: ReqOpts = t.as) {
  const r = await svc.api.post('/v1/invitations', body, as);
  expect(r.status, r.text).toBe(201);
  return r.body as {
    id: string;
    email: string;
    role: string;
    token: string;
    url: string;
    expires_at: string;
    invited_by: unknown;
  };
}
const newEmail = () => `${unique('invitee')}@example.com`;
const latestSeq = (t: Tenant) => latestSeqOf(svc, t);
const eventsAfter = (t: Tenant, since: number) => eventsAfterOf(svc, t, since);
async function actionsOf(t: Tenant, entityId: string) {
  const rows = await svc.rt.deps.database.db
    .selectFrom('audit_logs')
    .selectAll()
    .where('workspace_id', '=', t.workspaceId)
    .where('entity_id', '=', entityId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows;
}
async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 30_000) {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('creating and listing invitations', () => {
  it('creates an invitation (201) with the token and link once; stores only a hash; lists it without them', async () => {
    const t = await newTenant(svc.api, 'Globex Support');
    const email = newEmail();
    const before = Date.now();
    const r = await svc.api.post('/v1/invitations', { email, role: 'agent' }, t.as);
    expect(r.status).toBe(201);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email,
      role: 'agent',
      expires_at: expect.any(String),
      created_at: expect.any(String),
      invited_by: { id: t.owner.userId, name: 'Olivia Owner', email: t.owner.email, avatar_url: null },
      token: expect.stringMatching(/^svc_inv_[A-Za-z0-9_-]{43}$/),
      url: `${svc.rt.deps.config.publicUrl}/invite/${r.body.token}`,
    });
    const ttl = Date.parse(r.body.expires_at) - Date.parse(r.body.created_at);
    expect(Math.abs(ttl - 7 * DAY)).toBeLessThan(5_000);
    expect(Date.parse(r.body.created_at)).toBeGreaterThanOrEqual(before - 1000);

    const list = await svc.api.get('/v1/invitations', t.as);
    expect(list.status).toBe(200);
    const { token, url, ...view } = r.body;
    expect(list.body).toEqual({ data: [view], next_cursor: null });
    expect(list.text).not.toContain(token);

    // Only the hash is kept, and nothing else in the database carries the token.
    const row = await svc.rt.deps.database.db
      .selectFrom('invitations')
      .selectAll()
      .where('id', '=', r.body.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).not.toContain(token.slice(8));
    expect(JSON.stringify(row)).not.toContain(token.slice(8));
    const audit = await actionsOf(t, r.body.id);
    expect(audit.map((a) => a.action)).toEqual(['invitation.created']);
    expect(JSON.stringify(audit)).not.toContain(token.slice(8));
    expect(audit[0]!.data).toEqual({ email, role: 'agent' });
  });

  it('tells what a token is for, publicly and nothing more', async () => {
    const t = await newTenant(svc.api, 'Initech Help');
    const inv = await invite(t, { email: newEmail(), role: 'viewer' });
    const r = await svc.api.get(`/v1/invitations/lookup?token=${encodeURIComponent(inv.token)}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      workspace: { name: 'Initech Help' },
      email: inv.email,
      role: 'viewer',
      expires_at: inv.expires_at,
    });
    for (const bad of ['nope', `svc_inv_${'A'.repeat(43)}`, inv.token.slice(0, -1), `${inv.token}x`]) {
      const miss = await svc.api.get(`/v1/invitations/lookup?token=${encodeURIComponent(bad)}`);
      expect(miss.status, bad).toBe(404);
      expect(isErrorBody(miss.body, 404, 'not_found')).toBe(true);
    }
    expect((await svc.api.get('/v1/invitations/lookup')).status).toBe(422);
  });

  it('refuses inviting a member (409, ignoring case) and an owner role or a bad address (422)', async () => {
    const t = await newTenant(svc.api);
    const agent = await join(t, 'agent');
    const dup = await svc.api.post('/v1/invitations', { email: agent.email.toUpperCase(), role: 'agent' }, t.as);
    expect(dup.status).toBe(409);
    expect(isErrorBody(dup.body, 409, 'conflict')).toBe(true);
    for (const [body, location] of [
      [{ email: newEmail(), role: 'owner' }, 'body.role'],
      [{ email: 'not an address', role: 'agent' }, 'body.email'],
      [{ role: 'agent' }, 'body.email'],
      [{ email: newEmail() }, 'body.role'],
      [{ email: newEmail(), role: 'agent', team: 'x' }, 'body.team'],
    ] as Array<[object, string]>) {
      const r = await svc.api.post('/v1/invitations', body, t.as);
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(r.body.errors[0].location).toBe(location);
    }
    expect((await svc.api.get('/v1/invitations', t.as)).body.data).toEqual([]);
  });

  it('replaces a pending invitation for the same address: the old link stops working', async () => {
    const t = await newTenant(svc.api);
    const email = newEmail();
    const first = await invite(t, { email, role: 'viewer' });
    const second = await invite(t, { email: email.toUpperCase(), role: 'admin' });
    expect(second.id).not.toBe(first.id);
    const list = await svc.api.get('/v1/invitations', t.as);
    expect(list.body.data.map((i: any) => [i.id, i.role])).toEqual([[second.id, 'admin']]);
    expect((await svc.api.get(`/v1/invitations/lookup?token=${first.token}`)).status).toBe(404);
    expect((await svc.api.get(`/v1/invitations/lookup?token=${second.token}`)).status).toBe(200);
    const audit = await actionsOf(t, second.id);
    expect(audit[0]!.data).toMatchObject({ replaced_ids: [first.id] });
    const person = await register(svc.api, email);
    expect((await svc.api.post('/v1/invitations/accept', { token: first.token }, { token: person.token })).status).toBe(
      404,
    );
  });

  it('pages newest first and shows only pending invitations', async () => {
    const t = await newTenant(svc.api);
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await invite(t, { email: newEmail(), role: 'agent' }));
    await svc.api.delete(`/v1/invitations/${made[2]!.id}`, t.as);
    await svc.rt.deps.database.db
      .updateTable('invitations')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', made[3]!.id)
      .execute();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const r = await svc.api.get(`/v1/invitations${q}`, t.as);
      seen.push(...r.body.data.map((x: any) => x.id));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual([made[4]!.id, made[1]!.id, made[0]!.id]);
  });

  it('is for admins and keys with settings:write; a key invites with invited_by null', async () => {
    const t = await newTenant(svc.api);
    const agent = await join(t, 'agent');
    const viewer = await join(t, 'viewer');
    const inv = await invite(t, { email: newEmail(), role: 'agent' });
    for (const who of [agent.as, viewer.as]) {
      expect((await svc.api.get('/v1/invitations', who)).status).toBe(403);
      expect((await svc.api.post('/v1/invitations', { email: newEmail(), role: 'admin' }, who)).status).toBe(403);
      expect((await svc.api.delete(`/v1/invitations/${inv.id}`, who)).status).toBe(403);
    }
    const read = await newApiKey(svc.api, t, ['settings:read']);
    expect((await svc.api.get('/v1/invitations', { token: read.key })).status).toBe(403);
    const write = await newApiKey(svc.api, t, ['settings:write']);
    const byKey = await invite(t, { email: newEmail(), role: 'viewer' }, { token: write.key });
    expect(byKey.invited_by).toBeNull();
    expect((await actionsOf(t, byKey.id))[0]).toMatchObject({ actor_type: 'api_key', actor_api_key_id: write.id });
    const admin = await join(t, 'admin');
    expect((await svc.api.get('/v1/invitations', admin.as)).body.data).toHaveLength(2);
    // Accepting is for people: an API key is refused, no credential is a 401.
    expect((await svc.api.post('/v1/invitations/accept', { token: inv.token }, { token: write.key })).status).toBe(403);
    expect((await svc.api.post('/v1/invitations/accept', { token: inv.token })).status).toBe(401);
  });
});

describe('accepting', () => {
  it('makes the invited person a member with the role, with member.added and audit entries; once', async () => {
    const t = await newTenant(svc.api, 'Umbrella Desk');
    const email = newEmail();
    const inv = await invite(t, { email, role: 'admin' });
    // The account's address matches ignoring case.
    const person = await register(svc.api, email.toUpperCase(), 'Ivy Invited');
    expect((await svc.api.get('/v1/members', { token: person.token, workspace: t.workspaceId })).status).toBe(404);
    const seq = await latestSeq(t);

    // A workspace header on this route is ignored: the workspace is the invitation's.
    const other = await newTenant(svc.api);
    const r = await svc.api.post(
      '/v1/invitations/accept',
      { token: inv.token },
      { token: person.token, workspace: other.workspaceId },
    );
    expect(r.status).toBe(200);
    expect(r.body.workspace).toEqual({ id: t.workspaceId, name: 'Umbrella Desk', slug: expect.any(String) });
    expect(r.body.member).toMatchObject({
      user: { id: person.userId, name: 'Ivy Invited', email: email.toUpperCase() },
      role: 'admin',
      availability: 'online',
      open_tickets: 0,
    });

    const as = { token: person.token, workspace: t.workspaceId };
    const members = await svc.api.get('/v1/members', as);
    expect(members.status).toBe(200);
    expect(members.body.data.map((m: any) => m.user.id)).toContain(person.userId);
    expect((await svc.api.get('/v1/invitations', as)).status).toBe(200); // an admin now

    const events = await eventsAfter(t, seq);
    expect(events.map((e) => e.type)).toEqual(['member.added']);
    expect(events[0].topics).toEqual([`workspace:${t.workspaceId}`, `user:${person.userId}`]);
    expect(events[0].data).toEqual({ member: r.body.member });
    const audit = await actionsOf(t, inv.id);
    expect(audit.map((a) => a.action)).toEqual(['invitation.created', 'invitation.accepted']);
    expect(audit[1]).toMatchObject({ actor_type: 'user', actor_user_id: person.userId, ip: expect.any(String) });

    // Used: the token is gone for everyone.
    const again = await svc.api.post('/v1/invitations/accept', { token: inv.token }, { token: person.token });
    expect(again.status).toBe(404);
    expect(isErrorBody(again.body, 404, 'not_found')).toBe(true);
    expect((await svc.api.get(`/v1/invitations/lookup?token=${inv.token}`)).status).toBe(404);
    expect((await svc.api.get('/v1/invitations', t.as)).body.data).toEqual([]);
    expect((await svc.api.delete(`/v1/invitations/${inv.id}`, t.as)).status).toBe(404);
  });

  it('refuses someone signed in with another address (403) and leaves the invitation pending', async () => {
    const t = await newTenant(svc.api);
    const inv = await invite(t, { email: newEmail(), role: 'agent' });
    const stranger = await signUp(svc.api, 'Not Invited');
    const r = await svc.api.post('/v1/invitations/accept', { token: inv.token }, { token: stranger.token });
    expect(r.status).toBe(403);
    expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
    expect((await svc.api.get(`/v1/invitations/lookup?token=${inv.token}`)).status).toBe(200);
    expect((await svc.api.get('/v1/members', { token: stranger.token, workspace: t.workspaceId })).status).toBe(404);
    const owner = await svc.api.post('/v1/invitations/accept', { token: inv.token }, { token: t.owner.token });
    expect(owner.status).toBe(403);
  });

  it('answers 404 for an expired invitation everywhere', async () => {
    const t = await newTenant(svc.api);
    const email = newEmail();
    const inv = await invite(t, { email, role: 'agent' });
    await svc.rt.deps.database.db
      .updateTable('invitations')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('workspace_id', '=', t.workspaceId)
      .where('id', '=', inv.id)
      .execute();
    const person = await register(svc.api, email);
    expect((await svc.api.post('/v1/invitations/accept', { token: inv.token }, { token: person.token })).status).toBe(
      404,
    );
    expect((await svc.api.get(`/v1/invitations/lookup?token=${inv.token}`)).status).toBe(404);
    expect((await svc.api.get('/v1/invitations', t.as)).body.data).toEqual([]);
    expect((await svc.api.delete(`/v1/invitations/${inv.id}`, t.as)).status).toBe(404);
    expect((await svc.api.get('/v1/members', { token: person.token, workspace: t.workspaceId })).status).toBe(404);
    // A new invitation for the address replaces the expired one and works.
    const fresh = await invite(t, { email, role: 'viewer' });
    const ok = await svc.api.post('/v1/invitations/accept', { token: fresh.token }, { token: person.token });
    expect(ok.status).toBe(200);
    expect(ok.body.member.role).toBe('viewer');
  });

  it('revokes (204): the link stops working and the revocation is audited', async () => {
    const t = await newTenant(svc.api);
    const email = newEmail();
    const inv = await invite(t, { email, role: 'agent' });
    const r = await svc.api.delete(`/v1/invitations/${inv.id}`, t.as);
    expect(r.status).toBe(204);
    expect((await svc.api.delete(`/v1/invitations/${inv.id}`, t.as)).status).toBe(404);
    expect((await svc.api.get(`/v1/invitations/lookup?token=${inv.token}`)).status).toBe(404);
    const person = await register(svc.api, email);
    expect((await svc.api.post('/v1/invitations/accept', { token: inv.token }, { token: person.token })).status).toBe(
      404,
    );
    const audit = await actionsOf(t, inv.id);
    expect(audit.map((a) => a.action)).toEqual(['invitation.created', 'invitation.revoked']);
    expect(audit[1]!.data).toEqual({ email, role: 'agent' });
  });

  it('lets only one of two simultaneous accepts through', async () => {
    const t = await newTenant(svc.api);
    const email = newEmail();
    const inv = await invite(t, { email, role: 'agent' });
    const person = await register(svc.api, email);
    const [a, b] = await Promise.all([
      svc.api.post('/v1/invitations/accept', { token: inv.token }, { token: person.token }),
      svc.api.post('/v1/invitations/accept', { token: inv.token }, { token: person.token }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 404]);
  });
});

describe('tenant isolation', () => {
  it('answers 404 for another workspace’s invitation, identical to a missing one, and keeps it', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const theirs = await invite(b, { email: newEmail(), role: 'agent' });
    const missing = await svc.api.delete(`/v1/invitations/${randomUUID()}`, a.as);
    expect(missing.status).toBe(404);
    const foreign = await svc.api.delete(`/v1/invitations/${theirs.id}`, a.as);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
    const key = await newApiKey(svc.api, a, ['settings:write']);
    expect((await svc.api.delete(`/v1/invitations/${theirs.id}`, { token: key.key })).status).toBe(404);
    expect((await svc.api.delete('/v1/invitations/not-an-id', a.as)).status).toBe(404);
    expect((await svc.api.get('/v1/invitations', a.as)).body.data).toEqual([]);
    expect((await svc.api.get(`/v1/invitations/lookup?token=${theirs.token}`)).status).toBe(200);
  });
});

describe('the invitation email', () => {
  it('is kept in the outbox, not sent, without SMTP_URL: logged with recipient and subject only, never the token', async () => {
    const { s: logged, stop } = await isolated();
    try {
      const t = await newTenant(logged.api, 'Logged Mail Co');
      const email = newEmail();
      const r = await logged.api.post('/v1/invitations', { email, role: 'agent' }, t.as);
      expect(r.status).toBe(201);
      const line = await waitFor('the logged mail', () =>
        logged.logs.find((l) => l.includes('mail not sent') && l.includes(email)),
      );
      expect(JSON.parse(line).mail).toEqual({ to: email, subject: 'Invitation to join Logged Mail Co' });
      const secret = r.body.token.slice(8);
      expect(logged.logs.filter((l) => l.includes(secret))).toEqual([]);
      // The workspace's admins read it, link and all, in the outbox.
      const kept = (await logged.api.get('/v1/mail/outbox', t.as)).body.data;
      expect(kept.map((m: any) => [m.kind, m.to, m.subject])).toEqual([
        ['invitation', [email], 'Invitation to join Logged Mail Co'],
      ]);
      const one = await logged.api.get(`/v1/mail/outbox/${kept[0].id}`, t.as);
      expect(one.body.links).toEqual([r.body.url]);
      // The queued job carries the token sealed, never in plain.
      const jobs = await sql<{
        data: string;
      }>`select data::text as data from ${sql.id(logged.rt.deps.jobs.schema)}.job where name = 'mail.invitation'`.execute(
        logged.rt.deps.database.db,
      );
      expect(jobs.rows.filter((j) => j.data.includes(r.body.id))).toHaveLength(1);
      expect(jobs.rows.filter((j) => j.data.includes(secret))).toEqual([]);
    } finally {
      await stop();
    }
  });

  it('is not sent for an invitation revoked before the job ran, nor with a token that does not open', async () => {
    const t = await newTenant(svc.api);
    const inv = await invite(t, { email: newEmail(), role: 'agent' });
    const deps = svc.rt.deps;
    const job = {
      workspace_id: t.workspaceId,
      invitation_id: inv.id,
      sealed_token: deps.secrets.seal(inv.token, tokenSealContext(inv.id)),
    };
    // No SMTP_URL here: kept in the outbox, and said so.
    expect(await sendInvitationMail(deps, job)).toBe('kept');
    expect(await sendInvitationMail(deps, { ...job, sealed_token: deps.secrets.seal(inv.token, 'other') })).toBe(
      'skipped',
    );
    expect(await sendInvitationMail(deps, { ...job, workspace_id: randomUUID() })).toBe('skipped');
    await svc.api.delete(`/v1/invitations/${inv.id}`, t.as);
    expect(await sendInvitationMail(deps, job)).toBe('skipped');
  });

  it('goes out through SMTP_URL, and the link in it accepts', async () => {
    const received: Array<{ from: string; to: string[]; raw: string }> = [];
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    const port = (smtp.server.address() as { port: number }).port;
    const { s: mailed, stop } = await isolated({
      SMTP_URL: `smtp://127.0.0.1:${port}?from=${encodeURIComponent('Acme Help <help@acme.test>')}`,
      PUBLIC_URL: 'https://help.acme.test',
    });
    try {
      const t = await newTenant(mailed.api, 'Acme Mail');
      const email = newEmail();
      const created = await mailed.api.post('/v1/invitations', { email, role: 'agent' }, t.as);
      expect(created.status).toBe(201);
      expect(created.body.url).toBe(`https://help.acme.test/invite/${created.body.token}`);

      const msg = await waitFor('the invitation email', () => received.find((m) => m.to.includes(email)));
      expect(msg.from).toBe('help@acme.test');
      // Quoted-printable soft breaks and escapes undone, to read the link as a person would.
      const text = msg.raw
        .replace(/=\r?\n/g, '')
        .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
      expect(text).toMatch(/^Subject: Invitation to join Acme Mail\r?$/m);
      expect(text).toMatch(new RegExp(`^To: ${email.replace(/[.+]/g, '\\$&')}\\r?$`, 'm'));
      expect(text).toContain('Olivia Owner invited you to join Acme Mail as an agent.');
      const link = /https:\/\/help\.acme\.test\/invite\/(svc_inv_[A-Za-z0-9_-]{43})/.exec(text);
      expect(link).not.toBeNull();
      const token = decodeURIComponent(link![1]!);
      expect(token).toBe(created.body.token);

      const person = await register(mailed.api, email);
      const accepted = await mailed.api.post('/v1/invitations/accept', { token }, { token: person.token });
      expect(accepted.status).toBe(200);
      expect(accepted.body.workspace.id).toBe(t.workspaceId);
      expect(mailed.logs.filter((l) => l.includes('mail not sent'))).toEqual([]);
    } finally {
      await stop();
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
    }
  });
});
