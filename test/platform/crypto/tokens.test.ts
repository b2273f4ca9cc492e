// Tokens: each has one purpose that exactly one consumer accepts; realtime tokens; an access token
// is only as alive as its session.
import { hkdfSync } from 'node:crypto';
import { decodeJwt, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenSigner } from '../../../src/platform/crypto/tokens.js';
import {
  isErrorBody,
  newApiKey,
  newTenant,
  type Service,
  startService,
  TEST_SECRET_KEY,
} from '../../support/helpers.js';

let svc: Service;
beforeAll(async () => {
  svc = await startService();
});
afterAll(async () => svc?.stop());

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const realKey = new Uint8Array(hkdfSync('sha256', TEST_SECRET_KEY, 'svc-jwt', 'jwt signing key v1', 32));

describe('POST /v1/realtime/token', () => {
  it('gives a member a 5-minute ws token for their workspace and the gateway address', async () => {
    const t = await newTenant(svc.api);
    const r = await svc.api.post('/v1/realtime/token', undefined, t.as);
    expect(r.status).toBe(200);
    expect(r.body.url).toBe(`${svc.rt.deps.config.publicUrl.replace('http', 'ws')}/socket/websocket`);
    const claims = decodeJwt(r.body.token);
    expect(claims).toMatchObject({ purpose: 'ws', sub: t.owner.userId, wid: t.workspaceId, teams: [] });
    expect(claims.exp! - claims.iat!).toBe(300);
    expect(new Date(r.body.expires_at).getTime()).toBe(claims.exp! * 1000);
    // Only valid where it is meant: not as an access token.
    const misuse = await svc.api.get('/v1/workspace', { token: r.body.token, workspace: t.workspaceId });
    expect(misuse.status).toBe(401);
  });

  it('serves API keys with the realtime scope only', async () => {
    const t = await newTenant(svc.api);
    const rt = await newApiKey(svc.api, t, ['realtime']);
    const other = await newApiKey(svc.api, t, ['tickets:read', 'settings:write']);
    const ok = await svc.api.post('/v1/realtime/token', undefined, { token: rt.key });
    expect(ok.status).toBe(200);
    expect(decodeJwt(ok.body.token)).toMatchObject({ purpose: 'ws', sub: rt.id, kind: 'api_key', wid: t.workspaceId });
    const no = await svc.api.post('/v1/realtime/token', undefined, { token: other.key });
    expect(no.status).toBe(403);
    expect(no.body.code).toBe('forbidden');
  });
});

describe('forged and misused tokens', () => {
  it('refuses alg none, other algorithms, other keys, other purposes and expired tokens with 401', async () => {
    const t = await newTenant(svc.api);
    const good = decodeJwt(t.owner.token);
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: good.sub, sid: good.sid, purpose: 'access', iat: now, exp: now + 600 };
    const forged: Record<string, string> = {
      'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`,
      'alg none, signature kept': `${b64({ alg: 'none' })}.${b64(claims)}.${t.owner.token.split('.')[2]}`,
      HS512: await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).sign(new Uint8Array(64).fill(1)),
      'HS512 with the real key': await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).sign(realKey),
      'RS256 header': `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}.${t.owner.token.split('.')[2]}`,
      'other secret': (await new TokenSigner('some-other-secret-key-0123456789-abcdefgh').sign(claims as never)).token,
      'claims edited': `${t.owner.token.split('.')[0]}.${b64({ ...claims, sub: '00000000-0000-7000-8000-000000000000' })}.${t.owner.token.split('.')[2]}`,
      'ws purpose': (await new TokenSigner(TEST_SECRET_KEY).sign({ ...claims, purpose: 'ws' } as never)).token,
      'mfa purpose': (await new TokenSigner(TEST_SECRET_KEY).sign({ ...claims, purpose: 'mfa' } as never)).token,
      'no purpose': await new SignJWT({ sub: good.sub, sid: good.sid })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime('5m')
        .sign(realKey),
      expired: await new SignJWT({ ...claims, iat: now - 2000, exp: now - 1000 })
        .setProtectedHeader({ alg: 'HS256' })
        .sign(realKey),
    };
    for (const [label, token] of Object.entries(forged)) {
      const r = await svc.api.get('/v1/workspace', { token, workspace: t.workspaceId });
      expect(r.status, label).toBe(401);
      expect(r.body.code).toBe('unauthorized');
    }
    // The genuine token works, so the refusals above are about the forgery.
    expect((await svc.api.get('/v1/workspace', t.as)).status).toBe(200);
  });

  it('binds an API key to its workspace whatever SVC-Workspace says', async () => {
    const a = await newTenant(svc.api, 'Alpha');
    const b = await newTenant(svc.api, 'Beta');
    const k = await newApiKey(svc.api, a, ['settings:write']);
    const r = await svc.api.patch(
      '/v1/workspace',
      { name: 'Renamed by key' },
      { token: k.key, workspace: b.workspaceId },
    );
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(a.workspaceId);
    expect((await svc.api.get('/v1/workspace', b.as)).body.name).toBe('Beta');
  });
});

describe('access tokens', () => {
  it('stop working as soon as their session ends, not when their own 15 minutes do', async () => {
    const db = svc.rt.deps.database.db;
    for (const ended of [
      // Past the session's absolute end (60 days after the sign-in).
      { expires_at: new Date(Date.now() - 1000) },
      // Unused for longer than the idle limit (30 days).
      { last_used_at: new Date(Date.now() - 31 * 86_400_000) },
    ]) {
      const t = await newTenant(svc.api);
      const sid = decodeJwt(t.owner.token).sid as string;
      // Live: the token works, with and without a workspace.
      expect((await svc.api.get('/v1/me', { token: t.owner.token })).status).toBe(200);
      expect((await svc.api.get('/v1/workspace', t.as)).status).toBe(200);
      await db.updateTable('sessions').set(ended).where('id', '=', sid).execute();
      for (const r of [
        await svc.api.get('/v1/me', { token: t.owner.token }),
        await svc.api.get('/v1/workspace', t.as),
      ]) {
        expect(r.status, JSON.stringify(ended)).toBe(401);
        expect(isErrorBody(r.body, 401, 'unauthorized')).toBe(true);
      }
    }
  });
});
