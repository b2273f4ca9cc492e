// The minimum identity of the foundation: register, login, access tokens, workspaces,
// /v1/me, the SVC-Workspace header and API keys with scope checks.
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnownKeys } from '../../../src/modules/api-keys/known-keys.js';
import { TokenSigner } from '../../../src/platform/crypto/tokens.js';
import {
  ALL_SCOPES,
  addMember,
  isErrorBody,
  newApiKey,
  newTenant,
  onPostgres,
  type Service,
  signUp,
  startService,
  TEST_SECRET_KEY,
  unique,
} from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => svc?.stop());

describe('register and login', () => {
  it('registers, signs in, and answers /v1/me with the user and their workspaces', async () => {
    const { api } = svc;
    const email = `${unique('Mixed.Case')}@Example.com`;
    const reg = await api.post('/v1/auth/register', { email, password: 'long enough pw', name: 'Ann Agent' });
    expect(reg.status).toBe(201);
    expect(reg.body.expires_in).toBe(900);
    expect(reg.body.user).toMatchObject({ email, name: 'Ann Agent', mfa_enabled: false, avatar_url: null });
    expect(reg.body).not.toHaveProperty('refresh_token');
    const cookie = reg.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(new RegExp(`^svc_rt_${reg.body.user.id}=`));
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).toMatch(/Path=\/v1\/auth/);

    // Email is unique ignoring case.
    const dup = await api.post('/v1/auth/register', {
      email: email.toUpperCase(),
      password: 'long enough pw',
      name: 'Again',
    });
    expect(dup.status).toBe(409);
    expect(isErrorBody(dup.body, 409, 'conflict')).toBe(true);

    const login = await api.post('/v1/auth/login', { email: email.toLowerCase(), password: 'long enough pw' });
    expect(login.status).toBe(200);
    const token = login.body.access_token as string;

    const ws = await api.post('/v1/workspaces', { name: 'Globex Help' }, { token });
    expect(ws.status).toBe(201);
    expect(ws.body).toMatchObject({ name: 'Globex Help', slug: expect.stringMatching(/^globex-help/) });

    const me = await api.get('/v1/me', { token });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: reg.body.user.id, email, kind: 'user' });
    expect(me.body.workspaces).toEqual([{ id: ws.body.id, name: 'Globex Help', slug: ws.body.slug, role: 'owner' }]);
    expect(me.body).not.toHaveProperty('password_hash');
  });

  it('gives native clients the refresh token in the body and no cookie', async () => {
    const r = await svc.api.post(
      '/v1/auth/register',
      { email: `${unique('ios')}@example.com`, password: 'long enough pw', name: 'Ios' },
      { headers: { 'svc-client': 'ios/2.3.1' } },
    );
    expect(r.status).toBe(201);
    expect(r.body.refresh_token).toMatch(/^svc_rt_/);
    expect(r.headers.get('set-cookie')).toBeNull();
  });

  it('answers a wrong password and an unknown email the same way', async () => {
    const p = await signUp(svc.api);
    const wrong = await svc.api.post('/v1/auth/login', { email: p.email, password: 'not the password' });
    const unknown = await svc.api.post('/v1/auth/login', {
      email: `${unique('nobody')}@example.com`,
      password: 'whatever12345',
    });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
  });

  it('refuses short passwords and malformed emails with located errors', async () => {
    const r = await svc.api.post('/v1/auth/register', { email: 'not-an-email', password: 'short', name: 'X' });
    expect(r.status).toBe(422);
    expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
    expect(r.body.errors[0].location).toMatch(/^body\.(email|password)$/);
  });
});

describe('access tokens', () => {
  it('rejects a missing, malformed, expired, foreign-key or wrong-purpose token with 401', async () => {
    const t = await newTenant(svc.api);
    const signer = new TokenSigner(TEST_SECRET_KEY);
    const ws = await signer.sign({ sub: t.owner.userId, purpose: 'ws' });
    const expired = await new SignJWT({ sub: t.owner.userId, purpose: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt(1_000_000)
      .setExpirationTime(1_000_900)
      .sign(new TextEncoder().encode('whatever'));
    const other = await new TokenSigner('another-secret-key-0123456789-abcdefghijk').sign({
      sub: t.owner.userId,
      sid: '00000000-0000-7000-8000-000000000000',
      purpose: 'access',
    });
    for (const token of [undefined, 'garbage', ws.token, expired, other.token]) {
      const r = await svc.api.get('/v1/workspace', { token, workspace: t.workspaceId });
      expect(r.status, String(token)).toBe(401);
      expect(isErrorBody(r.body, 401, 'unauthorized')).toBe(true);
    }
    const bad = await svc.api.get('/v1/workspace', { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    expect(bad.status).toBe(401);
  });

  it('needs SVC-Workspace naming a workspace the user belongs to (404 otherwise)', async () => {
    const a = await newTenant(svc.api);
    const b = await newTenant(svc.api);
    const ok = await svc.api.get('/v1/workspace', a.as);
    expect(ok.status).toBe(200);
    expect(ok.body.id).toBe(a.workspaceId);
    const none = await svc.api.get('/v1/workspace', { token: a.owner.token });
    expect(none.status).toBe(404);
    const foreign = await svc.api.get('/v1/workspace', { token: a.owner.token, workspace: b.workspaceId });
    const missing = await svc.api.get('/v1/workspace', {
      token: a.owner.token,
      workspace: '00000000-0000-4000-8000-000000000000',
    });
    const garbage = await svc.api.get('/v1/workspace', { token: a.owner.token, workspace: "1' or '1'='1" });
    for (const r of [foreign, missing, garbage]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual(missing.body);
    }
  });
});

describe('API keys', () => {
  it('creates a key shown once, lists it without the secret, and revokes it at once', async () => {
    const t = await newTenant(svc.api);
    const created = await svc.api.post(
      '/v1/api-keys',
      { name: 'Zapier', scopes: ['tickets:read', 'settings:read'] },
      t.as,
    );
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    expect(created.body.prefix).toBe(created.body.key.slice(0, 15));
    expect(created.body.created_by).toMatchObject({ id: t.owner.userId });
    expect(created.body.scopes).toEqual(['tickets:read', 'settings:read']);

    const list = await svc.api.get('/v1/api-keys', t.as);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0]).not.toHaveProperty('key');
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);

    // The key works, with its workspace fixed by the key (SVC-Workspace ignored).
    const other = await newTenant(svc.api);
    const ws = await svc.api.get('/v1/workspace', { token: created.body.key, workspace: other.workspaceId });
    expect(ws.status).toBe(200);
    expect(ws.body.id).toBe(t.workspaceId);
    const me = await svc.api.get('/v1/me', { token: created.body.key });
    expect(me.body).toMatchObject({ kind: 'api_key', id: created.body.id, scopes: ['tickets:read', 'settings:read'] });

    const del = await svc.api.delete(`/v1/api-keys/${created.body.id}`, t.as);
    expect(del.status).toBe(204);
    const after = await svc.api.get('/v1/workspace', { token: created.body.key });
    expect(after.status).toBe(401);

    const audit = await svc.rt.deps.database.db
      .selectFrom('audit_logs')
      .select(['action', 'entity_id', 'actor_user_id'])
      .where('workspace_id', '=', t.workspaceId)
      .orderBy('created_at')
      .execute();
    expect(audit.map((a) => a.action)).toEqual(['api_key.created', 'api_key.deleted']);
    expect(audit.every((a) => a.entity_id === created.body.id && a.actor_user_id === t.owner.userId)).toBe(true);
  });

  it('checks scopes: 403 forbidden for a key without the route scope', async () => {
    const t = await newTenant(svc.api);
    const kb = await newApiKey(svc.api, t, ['kb:read']);
    const r = await svc.api.patch('/v1/workspace', { name: 'Renamed' }, { token: kb.key });
    expect(r.status).toBe(403);
    expect(isErrorBody(r.body, 403, 'forbidden')).toBe(true);
    const read = await svc.api.get('/v1/workspace', { token: kb.key });
    expect(read.status).toBe(403);
    const settings = await newApiKey(svc.api, t, ['settings:write']);
    const ok = await svc.api.patch('/v1/workspace', { name: 'Renamed' }, { token: settings.key });
    expect(ok.status).toBe(200);
    expect(ok.body.name).toBe('Renamed');
    // A key cannot mint a key with more than it holds.
    const escalate = await svc.api.post('/v1/api-keys', { name: 'more', scopes: ALL_SCOPES }, { token: settings.key });
    expect(escalate.status).toBe(403);
    // User-only routes refuse keys.
    const ws = await svc.api.post('/v1/workspaces', { name: 'Nope' }, { token: settings.key });
    expect(ws.status).toBe(403);
  });

  it('refuses an expired key, a past expiry, empty or unknown scopes', async () => {
    const t = await newTenant(svc.api);
    const past = await svc.api.post(
      '/v1/api-keys',
      { name: 'old', scopes: ['realtime'], expires_at: '2001-01-01T00:00:00Z' },
      t.as,
    );
    expect(past.status).toBe(422);
    expect(past.body.errors[0].location).toBe('body.expires_at');
    const empty = await svc.api.post('/v1/api-keys', { name: 'none', scopes: [] }, t.as);
    expect(empty.status).toBe(422);
    const unknown = await svc.api.post('/v1/api-keys', { name: 'x', scopes: ['admin:everything'] }, t.as);
    expect(unknown.status).toBe(422);

    // A key expiring in a moment works until then, and not after (also once it has been used).
    const expiresAt = Date.now() + 3000;
    const soon = await newApiKey(svc.api, t, ['settings:read'], { expires_at: new Date(expiresAt).toISOString() });
    expect((await svc.api.get('/v1/workspace', { token: soon.key })).status).toBe(200);
    expect((await svc.api.get('/v1/workspace', { token: soon.key })).status).toBe(200);
    await new Promise((res) => setTimeout(res, expiresAt - Date.now() + 100));
    const expired = await svc.api.get('/v1/workspace', { token: soon.key });
    expect(expired.status).toBe(401);
    expect(isErrorBody(expired.body, 401, 'unauthorized')).toBe(true);
  });

  it('does not keep a key whose row was read while a deletion landed', () => {
    const keys = new KnownKeys();
    const row = { workspaceId: 'w', id: 'k1', scopes: [], createdBy: null, expiresAt: null, lastUsedAt: null };
    const during = keys.begin();
    keys.forgetKey('k2'); // a deletion lands while k1's row is being read
    keys.remember('hash-1', row, during);
    expect(keys.get('hash-1')).toBeUndefined();
    keys.remember('hash-1', row, keys.begin());
    expect(keys.get('hash-1')).toEqual(row);
    keys.forgetWorkspace('w');
    expect(keys.get('hash-1')).toBeUndefined();
  });

  it.runIf(Boolean(process.env.TEST_NATS_URL) && onPostgres)(
    'revokes at once on every process: a key deleted through one is refused by another that knew it',
    async () => {
      const env = { NATS_URL: process.env.TEST_NATS_URL! };
      const a = await startService(env, { jobs: false });
      const b = await startService(env, { jobs: false });
      try {
        const t = await newTenant(a.api);
        const k = await newApiKey(a.api, t, ['settings:read']);
        for (const p of [a, b, b]) expect((await p.api.get('/v1/workspace', { token: k.key })).status).toBe(200);
        const heard: unknown[] = [];
        const off = b.rt.deps.bus.subscribeControl((m) => heard.push(m));
        expect((await a.api.delete(`/v1/api-keys/${k.id}`, t.as)).status).toBe(204);
        // The deleting process refuses it on the very next request.
        expect((await a.api.get('/v1/workspace', { token: k.key })).status).toBe(401);
        await expect
          .poll(() => heard)
          .toContainEqual({ type: 'api_key.deleted', workspace_id: t.workspaceId, api_key_id: k.id });
        off();
        const onB = await b.api.get('/v1/workspace', { token: k.key });
        expect(onB.status).toBe(401);
        expect(isErrorBody(onB.body, 401, 'unauthorized')).toBe(true);
        // Another key of the workspace is untouched.
        const other = await newApiKey(a.api, t, ['settings:read']);
        expect((await b.api.get('/v1/workspace', { token: other.key })).status).toBe(200);
      } finally {
        await a.stop();
        await b.stop();
      }
    },
  );

  it('is admin-only for people and records last use', async () => {
    const t = await newTenant(svc.api);
    const agent = await addMember(svc, t, 'agent', 'Andy Agent');
    const r = await svc.api.get('/v1/api-keys', { token: agent.token, workspace: t.workspaceId });
    expect(r.status).toBe(403);
    const k = await newApiKey(svc.api, t, ['settings:read']);
    await svc.api.get('/v1/workspace', { token: k.key });
    // Written off the request's path: on a loaded machine it may land after any fixed wait.
    await expect
      .poll(
        async () => (await svc.api.get('/v1/api-keys', t.as)).body.data.find((x: any) => x.id === k.id).last_used_at,
        { timeout: 10_000, interval: 100 },
      )
      .not.toBeNull();
  });
});
