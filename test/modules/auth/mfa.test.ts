// Two-factor authentication over HTTP and directly: TOTP enrolment and confirmation, sign-in
// with mfa_required / mfa_token / POST /v1/auth/mfa, codes that work once (TOTP replay and
// recovery codes), turning it off, expired or foreign mfa tokens, and the functions other
// modules use (verifyMfaCode, hasMfa).
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasMfa, verifyMfaCode } from '../../../src/modules/auth/mfa.js';
import { TokenSigner } from '../../../src/platform/crypto/tokens.js';
import { isErrorBody, type Service, startService, TEST_SECRET_KEY, unique } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

let svc: Service;
let own: OwnDatabase;
beforeAll(async () => {
  own = await ownDatabase('auth_mfa');
  svc = await startService({ ...own.env, SIGNIN_MAX_FAILURES_PER_IP: '1000' }, { jobs: false });
});
afterAll(async () => {
  await svc?.stop();
  await own?.drop();
});

const PASSWORD = 'correct horse battery';
const NATIVE = { 'svc-client': 'ios/3.1.0' };

interface Person {
  userId: string;
  email: string;
  token: string;
}

async function person(name = 'Tess Totp'): Promise<Person> {
  const email = `${unique('mfa')}@example.com`;
  const r = await svc.api.post('/v1/auth/register', { email, password: PASSWORD, name });
  expect(r.status).toBe(201);
  return { userId: r.body.user.id, email, token: r.body.access_token };
}

const totpOf = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 });
/** The code of the step `offset` steps from now (the service accepts one step either way). */
const codeAt = (secret: string, offset: number) => totpOf(secret).generate({ timestamp: Date.now() + offset * 30_000 });

/** Lets the same person use a code of the current steps again (each test step takes a fresh one). */
async function forgetLastStep(userId: string) {
  await svc.rt.deps.database.db.updateTable('users').set({ mfa_last_step: null }).where('id', '=', userId).execute();
}

async function enrol(p: Person): Promise<{ secret: string; recovery: string[] }> {
  const start = await svc.api.post('/v1/me/mfa/totp', undefined, { token: p.token });
  expect(start.status, start.text).toBe(200);
  const secret = start.body.secret as string;
  const confirm = await svc.api.post('/v1/me/mfa/totp/confirm', { code: codeAt(secret, 0) }, { token: p.token });
  expect(confirm.status, confirm.text).toBe(200);
  await forgetLastStep(p.userId);
  return { secret, recovery: confirm.body.recovery_codes };
}

const login = (email: string, password = PASSWORD, headers: Record<string, string> = {}) =>
  svc.api.post('/v1/auth/login', { email, password }, { headers });

describe('enrolment', () => {
  it('gives a secret and otpauth URL, keeps it sealed and pending until a first code confirms it', async () => {
    const p = await person();
    const start = await svc.api.post('/v1/me/mfa/totp', undefined, { token: p.token });
    expect(start.status).toBe(200);
    expect(start.headers.get('cache-control')).toBe('no-store');
    const { secret, otpauth_url } = start.body;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(otpauth_url);
    expect(url.protocol).toBe('otpauth:');
    expect(url.host).toBe('totp');
    expect(url.searchParams.get('secret')).toBe(secret);
    expect(url.searchParams.get('issuer')).toBeTruthy();
    expect(decodeURIComponent(url.pathname)).toContain(p.email);

    const row = await svc.rt.deps.database.db
      .selectFrom('users')
      .select(['mfa_secret', 'mfa_enabled'])
      .where('id', '=', p.userId)
      .executeTakeFirstOrThrow();
    expect(row.mfa_enabled).toBe(false);
    expect(row.mfa_secret).toMatch(/^v1\./);
    expect(row.mfa_secret).not.toContain(secret);

    // Pending: sign-in is not asked for a code yet.
    const pending = await login(p.email);
    expect(pending.body.access_token).toBeTypeOf('string');
    expect((await svc.api.get('/v1/me', { token: p.token })).body.mfa_enabled).toBe(false);

    const current = new Set([-1, 0, 1].map((o) => codeAt(secret, o)));
    const wrongCode = ['000000', '111111', '222222', '333333'].find((c) => !current.has(c))!;
    const wrong = await svc.api.post('/v1/me/mfa/totp/confirm', { code: wrongCode }, { token: p.token });
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].location).toBe('body.code');

    const ok = await svc.api.post('/v1/me/mfa/totp/confirm', { code: codeAt(secret, 0) }, { token: p.token });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    const codes: string[] = ok.body.recovery_codes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const c of codes) expect(c).toMatch(/^[0-9a-f]{5}(-[0-9a-f]{5}){3}$/);
    const stored = await svc.rt.deps.database.db
      .selectFrom('mfa_recovery_codes')
      .select('code_hash')
      .where('user_id', '=', p.userId)
      .execute();
    expect(stored).toHaveLength(10);
    for (const c of codes) expect(JSON.stringify(stored)).not.toContain(c.replace(/-/g, ''));
    // Nothing about the enrolment is kept for Idempotency-Key replays.
    const kept = await svc.rt.deps.database.db.selectFrom('idempotency_keys').select('body').execute();
    expect(JSON.stringify(kept)).not.toContain(secret);

    expect((await svc.api.get('/v1/me', { token: p.token })).body.mfa_enabled).toBe(true);
    const again = await svc.api.post('/v1/me/mfa/totp', undefined, { token: p.token });
    expect(again.status).toBe(409);
    const reconfirm = await svc.api.post('/v1/me/mfa/totp/confirm', { code: codeAt(secret, 1) }, { token: p.token });
    expect(reconfirm.status).toBe(409);
  });

  it('needs a pending enrolment to confirm, and a signed-in person (not an API key)', async () => {
    const p = await person();
    const none = await svc.api.post('/v1/me/mfa/totp/confirm', { code: '123456' }, { token: p.token });
    expect(none.status).toBe(409);
    expect((await svc.api.post('/v1/me/mfa/totp')).status).toBe(401);
  });
});

describe('sign-in with two-factor', () => {
  it('answers mfa_required with an mfa_token (no session, no cookie), then a session for the right code', async () => {
    const p = await person();
    const { secret } = await enrol(p);
    const sessionsBefore = await svc.rt.deps.database.db
      .selectFrom('sessions')
      .select('id')
      .where('user_id', '=', p.userId)
      .execute();

    const first = await login(p.email);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ mfa_required: true, mfa_token: expect.any(String) });
    expect(first.headers.getSetCookie()).toEqual([]);
    const claims = JSON.parse(Buffer.from(first.body.mfa_token.split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({ sub: p.userId, purpose: 'mfa' });
    expect(claims.exp - claims.iat).toBe(300);
    expect(claims).not.toHaveProperty('sid');
    const sessionsAfter = await svc.rt.deps.database.db
      .selectFrom('sessions')
      .select('id')
      .where('user_id', '=', p.userId)
      .execute();
    expect(sessionsAfter).toHaveLength(sessionsBefore.length);
    // The mfa_token is not an access token.
    expect((await svc.api.get('/v1/me', { token: first.body.mfa_token })).status).toBe(401);

    const wrongPassword = await login(p.email, 'wrong password!');
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body).not.toHaveProperty('mfa_token');

    const code = codeAt(secret, 1);
    const done = await svc.api.post('/v1/auth/mfa', { mfa_token: first.body.mfa_token, code });
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: 900,
      user: { id: p.userId, mfa_enabled: true },
    });
    expect(done.headers.getSetCookie().some((c) => c.startsWith(`svc_rt_${p.userId}=`))).toBe(true);
    expect((await svc.api.get('/v1/me', { token: done.body.access_token })).status).toBe(200);

    // The same code again, even with a fresh mfa_token: refused.
    const second = await login(p.email);
    const replay = await svc.api.post('/v1/auth/mfa', { mfa_token: second.body.mfa_token, code });
    expect(replay.status).toBe(401);
    expect(isErrorBody(replay.body, 401, 'unauthorized')).toBe(true);
    // An older code (the step before) is refused as well once a later one was used.
    const older = await svc.api.post('/v1/auth/mfa', { mfa_token: second.body.mfa_token, code: codeAt(secret, 0) });
    expect(older.status).toBe(401);
  });

  it('gives native clients the refresh token in the body after the code step', async () => {
    const p = await person();
    const { secret } = await enrol(p);
    const first = await login(p.email, PASSWORD, NATIVE);
    expect(first.body.mfa_required).toBe(true);
    expect(first.body).not.toHaveProperty('refresh_token');
    const done = await svc.api.post(
      '/v1/auth/mfa',
      { mfa_token: first.body.mfa_token, code: codeAt(secret, 0) },
      { headers: NATIVE },
    );
    expect(done.status).toBe(200);
    expect(done.body.refresh_token).toMatch(/^svc_rt_/);
    expect(done.headers.getSetCookie()).toEqual([]);
  });

  it('takes each recovery code once', async () => {
    const p = await person();
    const { recovery } = await enrol(p);
    const a = await login(p.email);
    const used = await svc.api.post('/v1/auth/mfa', { mfa_token: a.body.mfa_token, code: recovery[3] });
    expect(used.status).toBe(200);
    const b = await login(p.email);
    const again = await svc.api.post('/v1/auth/mfa', { mfa_token: b.body.mfa_token, code: recovery[3] });
    expect(again.status).toBe(401);
    // Written differently (upper case, spaces for dashes) it is the same code: still used.
    const variant = recovery[3]!.toUpperCase().replace(/-/g, ' ');
    expect((await svc.api.post('/v1/auth/mfa', { mfa_token: b.body.mfa_token, code: variant })).status).toBe(401);
    // Another one works, written loosely.
    const other = recovery[4]!.toUpperCase().replace(/-/g, '');
    expect((await svc.api.post('/v1/auth/mfa', { mfa_token: b.body.mfa_token, code: other })).status).toBe(200);
    const left = await svc.rt.deps.database.db
      .selectFrom('mfa_recovery_codes')
      .select('used_at')
      .where('user_id', '=', p.userId)
      .where('used_at', 'is', null)
      .execute();
    expect(left).toHaveLength(8);
  });

  it('refuses an expired mfa_token, one signed with another key, and one from before a password change', async () => {
    const p = await person();
    const { secret } = await enrol(p);
    const first = await login(p.email);
    const claims = JSON.parse(Buffer.from(first.body.mfa_token.split('.')[1], 'base64url').toString());
    const { iat: _i, exp: _e, ...rest } = claims;
    const signer = new TokenSigner(TEST_SECRET_KEY);
    // The same claims, valid signature, expired a few seconds ago.
    const expired = await signer.sign(rest, -5);
    const r1 = await svc.api.post('/v1/auth/mfa', { mfa_token: expired.token, code: codeAt(secret, 0) });
    expect(r1.status).toBe(401);
    // The same claims, still valid: the control that shows the re-signed token is otherwise fine.
    const fresh = await signer.sign(rest);
    const foreign = await new TokenSigner('another-secret-key-0123456789-abcdefghijk').sign(rest);
    const r2 = await svc.api.post('/v1/auth/mfa', { mfa_token: foreign.token, code: codeAt(secret, 0) });
    expect(r2.status).toBe(401);
    const r3 = await svc.api.post('/v1/auth/mfa', { mfa_token: fresh.token, code: codeAt(secret, 0) });
    expect(r3.status).toBe(200);

    await forgetLastStep(p.userId);
    const before = await login(p.email);
    const changed = await svc.api.post(
      '/v1/me/password',
      { current_password: PASSWORD, new_password: 'another fine password' },
      { token: r3.body.access_token },
    );
    expect(changed.status).toBe(204);
    const stale = await svc.api.post('/v1/auth/mfa', { mfa_token: before.body.mfa_token, code: codeAt(secret, 1) });
    expect(stale.status).toBe(401);
  });

  it('refuses the mfa step when the browser already holds five other accounts', async () => {
    const p = await person();
    const { secret } = await enrol(p);
    const first = await login(p.email);
    const cookies: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await svc.api.post('/v1/auth/register', {
        email: `${unique('five')}@example.com`,
        password: PASSWORD,
        name: `Five ${i}`,
      });
      cookies.push(r.headers.getSetCookie()[0]!.split(';')[0]!);
    }
    const r = await svc.api.post(
      '/v1/auth/mfa',
      { mfa_token: first.body.mfa_token, code: codeAt(secret, 0) },
      { headers: { cookie: cookies.join('; ') } },
    );
    expect(r.status).toBe(409);
    expect(r.body.code).toBe('too_many_accounts');
    // With four, it goes through, with the same code (the refused step did not use it up).
    const ok = await svc.api.post(
      '/v1/auth/mfa',
      { mfa_token: first.body.mfa_token, code: codeAt(secret, 0) },
      { headers: { cookie: cookies.slice(1).join('; ') } },
    );
    expect(ok.status).toBe(200);
  });
});

describe('turning two-factor off', () => {
  it('needs a valid code (TOTP or recovery code); afterwards sign-in answers a session directly', async () => {
    const p = await person();
    const { secret, recovery } = await enrol(p);
    const db = svc.rt.deps.database.db;
    const bad = await svc.api.delete('/v1/me/mfa', { token: p.token, body: { code: '12345x' } });
    expect(bad.status).toBe(422);
    const badRecovery = await svc.api.delete('/v1/me/mfa', {
      token: p.token,
      body: { code: 'aaaaa-bbbbb-ccccc-ddddd' },
    });
    expect(badRecovery.status).toBe(422);
    expect(badRecovery.body.errors[0].location).toBe('body.code');
    expect(await hasMfa(svc.rt.deps, p.userId)).toBe(true);

    const off = await svc.api.delete('/v1/me/mfa', { token: p.token, body: { code: codeAt(secret, 0) } });
    expect(off.status).toBe(204);
    expect(await hasMfa(svc.rt.deps, p.userId)).toBe(false);
    const row = await db
      .selectFrom('users')
      .select(['mfa_secret', 'mfa_enabled'])
      .where('id', '=', p.userId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ mfa_secret: null, mfa_enabled: false });
    const codes = await db
      .selectFrom('mfa_recovery_codes')
      .select('code_hash')
      .where('user_id', '=', p.userId)
      .execute();
    expect(codes).toEqual([]);
    const direct = await login(p.email);
    expect(direct.body.access_token).toBeTypeOf('string');
    expect((await svc.api.delete('/v1/me/mfa', { token: p.token, body: { code: recovery[0] } })).status).toBe(409);

    // On again, and off with a recovery code.
    const again = await enrol(p);
    const off2 = await svc.api.delete('/v1/me/mfa', { token: p.token, body: { code: again.recovery[9] } });
    expect(off2.status).toBe(204);
    expect(await hasMfa(svc.rt.deps, p.userId)).toBe(false);
  });
});

describe('verifyMfaCode and hasMfa (for workspace deletion and ownership transfer)', () => {
  it('checks TOTP codes once, uses recovery codes up, and is false without two-factor', async () => {
    const deps = svc.rt.deps;
    const p = await person();
    expect(await hasMfa(deps, p.userId)).toBe(false);
    expect(await verifyMfaCode(deps, p.userId, '123456')).toBe(false);
    const { secret, recovery } = await enrol(p);
    expect(await hasMfa(deps, p.userId)).toBe(true);

    const code = codeAt(secret, 0);
    expect(await verifyMfaCode(deps, p.userId, code)).toBe(true);
    expect(await verifyMfaCode(deps, p.userId, code)).toBe(false);
    expect(await verifyMfaCode(deps, p.userId, recovery[0]!)).toBe(true);
    expect(await verifyMfaCode(deps, p.userId, recovery[0]!)).toBe(false);
    expect(await verifyMfaCode(deps, p.userId, 'not a code')).toBe(false);
    expect(await verifyMfaCode(deps, '00000000-0000-4000-8000-000000000000', code)).toBe(false);
    // Another person's codes are not this person's.
    const q = await person();
    const theirs = await enrol(q);
    expect(await verifyMfaCode(deps, p.userId, theirs.recovery[0]!)).toBe(false);
    expect(await verifyMfaCode(deps, q.userId, theirs.recovery[0]!)).toBe(true);
  });
});
