// POST /v1/workspaces, GET/PATCH /v1/workspace.
import { sql } from 'kysely';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { widgetSecret } from '../../../src/modules/workspace/service.js';
import { addMember, newApiKey, newTenant, type Service, signUp, startService, unique } from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => svc?.stop());

describe('workspace', () => {
  it('creates a workspace with defaults, a widget key and a unique slug', async () => {
    const p = await signUp(svc.api);
    const slug = unique('acme').toLowerCase();
    const r = await svc.api.post('/v1/workspaces', { name: 'Acme', slug }, { token: p.token });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      name: 'Acme',
      slug,
      widget_key: expect.stringMatching(/^wk_/),
      avatar_url: null,
      images: { help_center_logo: null, help_center_favicon: null, widget_avatar: null, widget_launcher: null },
      settings: { timezone: 'UTC', gravatar: false, domain_logos: true, auto_assign: 'none', label_creation: 'all' },
    });
    const taken = await svc.api.post('/v1/workspaces', { name: 'Acme 2', slug }, { token: p.token });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('conflict');
    const generated = await svc.api.post('/v1/workspaces', { name: 'Acme' }, { token: p.token });
    const generated2 = await svc.api.post('/v1/workspaces', { name: 'Acme' }, { token: p.token });
    expect(generated.body.slug).not.toBe(generated2.body.slug);
    const bad = await svc.api.post('/v1/workspaces', { name: 'x', slug: 'Not A Slug!' }, { token: p.token });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].location).toBe('body.slug');
    const blank = await svc.api.post('/v1/workspaces', { name: '   ' }, { token: p.token });
    expect(blank.status).toBe(422);
  });

  it('merges settings key by key, validates them, and publishes workspace.updated', async () => {
    const t = await newTenant(svc.api);
    await svc.api.patch('/v1/workspace', { settings: { timezone: 'America/New_York', ai: { assistant: true } } }, t.as);
    const r = await svc.api.patch('/v1/workspace', { settings: { csat_enabled: true, brand_color: '#112233' } }, t.as);
    expect(r.status).toBe(200);
    expect(r.body.settings).toMatchObject({
      timezone: 'America/New_York',
      csat_enabled: true,
      brand_color: '#112233',
      ai: { assistant: true },
    });
    const read = await svc.api.get('/v1/workspace', t.as);
    expect(read.body).toEqual(r.body);
    for (const settings of [
      { timezone: 'Mars/Base' },
      { brand_color: 'red' },
      { auto_close_days: -1 },
      { unknown_key: 1 },
      { ai: { nope: true } },
    ]) {
      const bad = await svc.api.patch('/v1/workspace', { settings }, t.as);
      expect(bad.status, JSON.stringify(settings)).toBe(422);
      expect(bad.body.errors[0].location).toMatch(/^body\.settings\./);
    }
    expect((await svc.api.get('/v1/workspace', t.as)).body).toEqual(r.body);
    const events = await svc.api.get('/v1/events?since=1', t.as);
    expect(events.body.data.map((e: any) => e.type)).toEqual(['workspace.updated', 'workspace.updated']);
    expect(events.body.data[1].data.workspace.settings.csat_enabled).toBe(true);
  });

  it('sets a help center title and puts it back to the default (empty: the name) with an empty string', async () => {
    const t = await newTenant(svc.api, 'Title Co');
    expect((await svc.api.get('/v1/workspace', t.as)).body.settings.help_center_title).toBe('');
    const set = await svc.api.patch('/v1/workspace', { settings: { help_center_title: 'Title Co Help' } }, t.as);
    expect(set.body.settings.help_center_title).toBe('Title Co Help');
    const back = await svc.api.patch('/v1/workspace', { settings: { help_center_title: '' } }, t.as);
    expect(back.status).toBe(200);
    expect(back.body.settings.help_center_title).toBe('');
    const long = await svc.api.patch('/v1/workspace', { settings: { help_center_title: 'x'.repeat(101) } }, t.as);
    expect(long.status).toBe(422);
    expect(long.body.errors[0].location).toBe('body.settings.help_center_title');
  });

  it('lets only admins change the workspace', async () => {
    const t = await newTenant(svc.api);
    const viewer = await addMember(svc, t, 'viewer', 'Vera Viewer');
    const as = { token: viewer.token, workspace: t.workspaceId };
    expect((await svc.api.get('/v1/workspace', as)).status).toBe(200);
    const r = await svc.api.patch('/v1/workspace', { name: 'Mine now' }, as);
    expect(r.status).toBe(403);
    expect(r.body.code).toBe('forbidden');
  });
});

describe('deleting a workspace', () => {
  const tenantTables = async () => {
    const r = await sql<{ table_name: string }>`
      SELECT table_name FROM information_schema.columns
       WHERE table_schema = 'public' AND column_name = 'workspace_id'`.execute(svc.rt.deps.database.db);
    return r.rows.map((x) => x.table_name);
  };
  const rowsOf = async (workspaceId: string) => {
    const out: Record<string, number> = {};
    for (const t of await tenantTables()) {
      const r = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM ${sql.table(t)} WHERE workspace_id = ${workspaceId}`.execute(
        svc.rt.deps.database.db,
      );
      out[t] = r.rows[0]!.n;
    }
    out.workspaces = (
      await svc.rt.deps.database.db.selectFrom('workspaces').select('id').where('id', '=', workspaceId).execute()
    ).length;
    return out;
  };
  const enableMfa = (userId: string) =>
    svc.rt.deps.database.db.updateTable('users').set({ mfa_enabled: true }).where('id', '=', userId).execute();

  it('removes every record of the workspace and nothing of another', async () => {
    const doomed = await newTenant(svc.api, 'Doomed Inc');
    const kept = await newTenant(svc.api, 'Kept Inc');
    for (const t of [doomed, kept]) {
      await svc.api.patch('/v1/workspace', { settings: { csat_enabled: true } }, t.as);
      await svc.api.post(
        '/v1/api-keys',
        { name: 'k', scopes: ['kb:read'] },
        { ...t.as, headers: { 'idempotency-key': unique('i') } },
      );
    }
    // A key of the doomed workspace in use right up to the deletion.
    const doomedKey = await newApiKey(svc.api, doomed, ['settings:read']);
    expect((await svc.api.get('/v1/workspace', { token: doomedKey.key })).status).toBe(200);
    const keptBefore = await rowsOf(kept.workspaceId);
    expect(Object.values(await rowsOf(doomed.workspaceId)).some((n) => n > 0)).toBe(true);
    await enableMfa(doomed.owner.userId);

    const wrongName = await svc.api.req('DELETE', '/v1/workspace', {
      ...doomed.as,
      body: { confirm_name: 'doomed inc' },
    });
    expect(wrongName.status).toBe(422);
    expect(wrongName.body.errors[0].location).toBe('body.confirm_name');

    const notices: unknown[] = [];
    const off = svc.rt.deps.bus.subscribeControl((m) => notices.push(m));
    const r = await svc.api.req('DELETE', '/v1/workspace', { ...doomed.as, body: { confirm_name: 'Doomed Inc' } });
    expect(r.status).toBe(204);
    // Live sockets of the workspace are told to close (the gateway acts on this notice).
    await expect.poll(() => notices).toContainEqual({ type: 'workspace.deleted', workspace_id: doomed.workspaceId });
    off();
    const left = await rowsOf(doomed.workspaceId);
    expect(Object.entries(left).filter(([, n]) => n > 0)).toEqual([]);
    expect(await rowsOf(kept.workspaceId)).toEqual(keptBefore);
    expect((await svc.api.get('/v1/workspace', doomed.as)).status).toBe(404);
    expect((await svc.api.get('/v1/workspace', { token: doomedKey.key })).status).toBe(401);
    // The person still exists and can sign in.
    expect((await svc.api.get('/v1/me', { token: doomed.owner.token })).body.workspaces).toEqual([]);
  });

  it('needs an owner with two-factor who signed in within 10 minutes; never an admin or a key', async () => {
    const t = await newTenant(svc.api, 'Careful');
    const body = { confirm_name: 'Careful' };
    const noMfa = await svc.api.req('DELETE', '/v1/workspace', { ...t.as, body });
    expect(noMfa.status).toBe(403);
    expect(noMfa.body.detail).toMatch(/two-factor/i);
    await enableMfa(t.owner.userId);
    await svc.rt.deps.database.db
      .updateTable('sessions')
      .set({ created_at: new Date(Date.now() - 11 * 60 * 1000) })
      .where('user_id', '=', t.owner.userId)
      .execute();
    const stale = await svc.api.req('DELETE', '/v1/workspace', { ...t.as, body });
    expect(stale.status).toBe(403);
    expect(stale.body.detail).toMatch(/sign in again/i);

    const admin = await addMember(svc, t, 'admin', 'Adam Admin');
    await enableMfa(admin.userId);
    const asAdmin = await svc.api.req('DELETE', '/v1/workspace', {
      token: admin.token,
      workspace: t.workspaceId,
      body,
    });
    expect(asAdmin.status).toBe(403);
    const key = (await svc.api.post('/v1/api-keys', { name: 'all', scopes: ['settings:write'] }, t.as)).body.key;
    const asKey = await svc.api.req('DELETE', '/v1/workspace', { token: key, body });
    expect(asKey.status).toBe(403);
    expect((await svc.api.get('/v1/workspace', t.as)).status).toBe(200);
  });
});

describe('widget secret', () => {
  it('rotates a secret shown once, stored encrypted, audited', async () => {
    const t = await newTenant(svc.api);
    const r1 = await svc.api.post('/v1/workspace/widget-secret/rotate', undefined, t.as);
    expect(r1.status).toBe(200);
    expect(r1.body.widget_secret).toMatch(/^wsec_[A-Za-z0-9_-]{43}$/);
    const r2 = await svc.api.post('/v1/workspace/widget-secret/rotate', undefined, t.as);
    expect(r2.body.widget_secret).not.toBe(r1.body.widget_secret);
    const row = await svc.rt.deps.database.db
      .selectFrom('workspaces')
      .select('widget_secret_enc')
      .where('id', '=', t.workspaceId)
      .executeTakeFirstOrThrow();
    expect(row.widget_secret_enc).not.toContain(r2.body.widget_secret);
    expect(await widgetSecret(svc.rt.deps, t.workspaceId)).toBe(r2.body.widget_secret);
    const ws = await svc.api.get('/v1/workspace', t.as);
    expect(JSON.stringify(ws.body)).not.toContain(r2.body.widget_secret);
    const audit = await svc.rt.deps.database.db
      .selectFrom('audit_logs')
      .select('action')
      .where('workspace_id', '=', t.workspaceId)
      .execute();
    expect(audit.filter((a) => a.action === 'workspace.widget_secret_rotated')).toHaveLength(2);
  });
});

describe('ownership transfer', () => {
  const totpOf = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 });
  async function enrol(token: string): Promise<{ secret: string; recovery: string[] }> {
    const start = await svc.api.post('/v1/me/mfa/totp', undefined, { token });
    expect(start.status).toBe(200);
    const code = totpOf(start.body.secret).generate({ timestamp: Date.now() - 30_000 });
    const confirm = await svc.api.post('/v1/me/mfa/totp/confirm', { code }, { token });
    expect(confirm.status).toBe(200);
    return { secret: start.body.secret, recovery: confirm.body.recovery_codes };
  }

  it('makes another member the owner and the caller an admin, with a valid two-factor code', async () => {
    const t = await newTenant(svc.api, 'Handover');
    const heir = await addMember(svc, t, 'agent', 'Hector Heir');
    const body = { user_id: heir.userId, code: '000000' };

    const noMfa = await svc.api.post('/v1/workspace/transfer', body, t.as);
    expect(noMfa.status).toBe(403);
    const { secret, recovery } = await enrol(t.owner.token);
    const wrong = await svc.api.post('/v1/workspace/transfer', { ...body, code: '123456' }, t.as);
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].location).toBe('body.code');
    const stranger = await signUp(svc.api, 'Not A Member');
    const notMember = await svc.api.post(
      '/v1/workspace/transfer',
      { user_id: stranger.userId, code: recovery[0] },
      t.as,
    );
    expect(notMember.status).toBe(404);

    const ok = await svc.api.post('/v1/workspace/transfer', { ...body, code: totpOf(secret).generate() }, t.as);
    expect(ok.status).toBe(200);
    expect(ok.body.owner).toMatchObject({ user: { id: heir.userId }, role: 'owner' });
    expect(ok.body.previous_owner).toMatchObject({ user: { id: t.owner.userId }, role: 'admin' });
    const me = await svc.api.get('/v1/me', { token: t.owner.token });
    expect(me.body.workspaces[0].role).toBe('admin');
    // The former owner can no longer transfer or delete.
    const again = await svc.api.post('/v1/workspace/transfer', { user_id: heir.userId, code: recovery[1] }, t.as);
    expect(again.status).toBe(403);
    const events = await svc.api.get('/v1/events?since=1', { token: heir.token, workspace: t.workspaceId });
    expect(
      events.body.data.filter((e: any) => e.type === 'member.updated').map((e: any) => e.data.member.role),
    ).toEqual(['owner', 'admin']);
    const audit = await svc.rt.deps.database.db
      .selectFrom('audit_logs')
      .select(['action', 'data'])
      .where('workspace_id', '=', t.workspaceId)
      .where('action', '=', 'workspace.ownership_transferred')
      .execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]!.data).toMatchObject({ from: t.owner.userId, to: heir.userId });
  });

  it('is for owners only: an admin with two-factor gets 403 and nothing changes', async () => {
    const t = await newTenant(svc.api, 'Guarded');
    const admin = await addMember(svc, t, 'admin', 'Ada Admin');
    const { secret } = await enrol(admin.token);
    const r = await svc.api.post(
      '/v1/workspace/transfer',
      { user_id: admin.userId, code: totpOf(secret).generate() },
      { token: admin.token, workspace: t.workspaceId },
    );
    expect(r.status).toBe(403);
    const roles = await svc.rt.deps.database.db
      .selectFrom('members')
      .select(['user_id', 'role'])
      .where('workspace_id', '=', t.workspaceId)
      .execute();
    expect(roles.find((m) => m.user_id === t.owner.userId)?.role).toBe('owner');
    expect(roles.find((m) => m.user_id === admin.userId)?.role).toBe('admin');
  });
});
