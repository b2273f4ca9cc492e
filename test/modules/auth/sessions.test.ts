// Sessions over HTTP: refresh rotation, reuse detection, up to five accounts per browser,
// refresh by user_id or most recent, the legacy svc_refresh cookie, logout (one or all), the
// accounts of a browser, native clients (tokens in the body), password change, and tokens
// presented where another kind is expected.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneEndedSessions } from '../../../src/modules/auth/sessions.js';
import type { ControlMessage } from '../../../src/platform/bus/index.js';
import { TokenSigner } from '../../../src/platform/crypto/tokens.js';
import { isErrorBody, type Res, type Service, startService, TEST_SECRET_KEY, unique } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

let svc: Service;
let own: OwnDatabase;
const control: ControlMessage[] = [];
beforeAll(async () => {
  own = await ownDatabase('auth_sessions');
  svc = await startService(own.env, { jobs: false });
  svc.rt.deps.bus.subscribeControl((m) => control.push(m));
});
afterAll(async () => {
  await svc?.stop();
  await own?.drop();
});

const NATIVE = { 'svc-client': 'ios/3.1.0' };
const PASSWORD = 'correct horse battery';

/** A browser's cookies for path /v1/auth, as Set-Cookie leaves them. */
class Jar {
  readonly cookies = new Map<string, string>();
  header(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }
  take(res: Res): this {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = decodeURIComponent(pair!.slice(i + 1).trim());
      if (/max-age=0\b/i.test(c) || /expires=thu, 01 jan 1970/i.test(c) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return this;
  }
  clone(): Jar {
    const j = new Jar();
    for (const [k, v] of this.cookies) j.cookies.set(k, v);
    return j;
  }
}

interface Account {
  userId: string;
  email: string;
  accessToken: string;
}

async function registerIn(jar: Jar, name = 'Bea Browser'): Promise<Account> {
  const email = `${unique('sess')}@example.com`;
  const r = await svc.api.post('/v1/auth/register', { email, password: PASSWORD, name }, { headers: jar.header() });
  expect(r.status, r.text).toBe(201);
  jar.take(r);
  return { userId: r.body.user.id, email, accessToken: r.body.access_token };
}

const post = (path: string, jar: Jar | null, body?: unknown, headers: Record<string, string> = {}) =>
  svc.api.req('POST', path, {
    ...(body !== undefined ? { body } : {}),
    headers: { ...(jar?.header() ?? {}), ...headers },
  });

const me = (token: string) => svc.api.get('/v1/me', { token });

async function session(id: string) {
  return svc.rt.deps.database.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}
const sidOf = (accessToken: string) =>
  JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sid as string;

describe('refresh', () => {
  it('answers a new access token and rotates the refresh cookie on every use, keeping the sign-in time', async () => {
    const jar = new Jar();
    const a = await registerIn(jar);
    const name = `svc_rt_${a.userId}`;
    const first = jar.cookies.get(name)!;
    expect(first).toMatch(/^svc_rt_[A-Za-z0-9_-]{43}$/);
    const signedIn = await session(sidOf(a.accessToken));

    await new Promise((r) => setTimeout(r, 20));
    const r1 = await post('/v1/auth/refresh', jar);
    expect(r1.status, r1.text).toBe(200);
    expect(r1.body).toMatchObject({ expires_in: 900, token_type: 'Bearer', user: { id: a.userId } });
    expect(r1.body).not.toHaveProperty('refresh_token');
    expect(r1.headers.get('cache-control')).toBe('no-store');
    const setCookie = r1.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/Secure/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).toMatch(/Path=\/v1\/auth/);
    jar.take(r1);
    const second = jar.cookies.get(name)!;
    expect(second).not.toBe(first);
    expect((await me(r1.body.access_token)).status).toBe(200);
    expect(sidOf(r1.body.access_token)).toBe(signedIn.id);

    // A body-less call with a JSON content type, as some HTTP clients send it, is fine too.
    const r2 = await post('/v1/auth/refresh', jar, undefined, { 'content-type': 'application/json' });
    expect(r2.status).toBe(200);
    jar.take(r2);
    expect(jar.cookies.get(name)).not.toBe(second);

    const after = await session(signedIn.id);
    expect(after.created_at.getTime()).toBe(signedIn.created_at.getTime());
    expect(after.last_used_at.getTime()).toBeGreaterThan(signedIn.last_used_at.getTime());
    // Only hashes are stored.
    expect(after.refresh_hash).not.toContain(jar.cookies.get(name)!);
    const retired = await svc.rt.deps.database.db
      .selectFrom('session_retired_tokens')
      .select('token_hash')
      .where('session_id', '=', signedIn.id)
      .execute();
    expect(retired).toHaveLength(2);
    expect(JSON.stringify(retired)).not.toContain(first.slice(7));
  });

  it('revokes the whole session when a rotated refresh token comes back, and its access tokens stop working', async () => {
    const jar = new Jar();
    const a = await registerIn(jar);
    const stolen = jar.clone();
    const r1 = await post('/v1/auth/refresh', jar);
    expect(r1.status).toBe(200);
    jar.take(r1);
    expect((await me(r1.body.access_token)).status).toBe(200);

    const before = control.length;
    const replay = await post('/v1/auth/refresh', stolen);
    expect(replay.status).toBe(401);
    expect(isErrorBody(replay.body, 401, 'unauthorized')).toBe(true);
    // The cookie that led nowhere is cleared.
    expect(
      replay.headers
        .getSetCookie()
        .some((c) => c.startsWith(`svc_rt_${a.userId}=`) && /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c)),
    ).toBe(true);

    // The session is gone: its access tokens and its newest refresh token alike.
    expect((await me(r1.body.access_token)).status).toBe(401);
    expect((await me(a.accessToken)).status).toBe(401);
    const legit = await post('/v1/auth/refresh', jar);
    expect(legit.status).toBe(401);
    expect((await session(sidOf(a.accessToken))).revoked_at).not.toBeNull();
    expect(control.slice(before)).toContainEqual({
      type: 'sessions.revoked',
      user_id: a.userId,
      session_ids: [sidOf(a.accessToken)],
    });
  });

  it('refreshes the account named by user_id, otherwise the most recently used one', async () => {
    const jar = new Jar();
    const a = await registerIn(jar, 'Ann');
    const b = await registerIn(jar, 'Bob');
    const c = await registerIn(jar, 'Cat');

    const ra = await post('/v1/auth/refresh', jar, { user_id: a.userId });
    expect(ra.status).toBe(200);
    expect(ra.body.user.id).toBe(a.userId);
    jar.take(ra);
    // Only A's cookie changed.
    expect(ra.headers.getSetCookie().map((s) => s.split('=')[0])).toEqual([`svc_rt_${a.userId}`]);
    const latest = await post('/v1/auth/refresh', jar);
    expect(latest.body.user.id).toBe(a.userId);
    jar.take(latest);

    const rb = await post('/v1/auth/refresh', jar, { user_id: b.userId });
    expect(rb.body.user.id).toBe(b.userId);
    jar.take(rb);
    const now = await post('/v1/auth/refresh', jar);
    expect(now.body.user.id).toBe(b.userId);
    jar.take(now);

    // An account this browser is not signed in to: 401.
    const other = new Jar();
    const d = await registerIn(other);
    const miss = await post('/v1/auth/refresh', jar, { user_id: d.userId });
    expect(miss.status).toBe(401);
    void c;
  });

  it('needs a credential: no cookie answers 401, and without a cookie the body is required', async () => {
    const none = await post('/v1/auth/refresh', null, {});
    expect(none.status).toBe(401);
    const noBody = await post('/v1/auth/refresh', null);
    expect(noBody.status).toBe(422);
    const emptyJson = await post('/v1/auth/refresh', null, undefined, { 'content-type': 'application/json' });
    expect(emptyJson.status).toBe(422);
    const garbage = await post(
      '/v1/auth/refresh',
      null,
      {},
      { cookie: `svc_rt_${crypto.randomUUID()}=svc_rt_${'A'.repeat(43)}` },
    );
    expect(garbage.status).toBe(401);
    // A browser does not send the refresh token in the body.
    const jar = new Jar();
    const a = await registerIn(jar);
    const inBody = await post('/v1/auth/refresh', null, { refresh_token: jar.cookies.get(`svc_rt_${a.userId}`) });
    expect(inBody.status).toBe(422);
    expect(inBody.body.errors[0].location).toBe('body.refresh_token');
  });

  it('ends a session 30 days after its last use and 60 days after the sign-in', async () => {
    const db = svc.rt.deps.database.db;
    const idle = new Jar();
    const a = await registerIn(idle);
    await db
      .updateTable('sessions')
      .set({ last_used_at: new Date(Date.now() - 31 * 86_400_000) })
      .where('id', '=', sidOf(a.accessToken))
      .execute();
    const r1 = await post('/v1/auth/refresh', idle);
    expect(r1.status).toBe(401);
    expect(r1.headers.getSetCookie().some((c) => c.startsWith(`svc_rt_${a.userId}=`))).toBe(true);

    const old = new Jar();
    const b = await registerIn(old);
    const fresh = await post('/v1/auth/refresh', old);
    old.take(fresh);
    const maxAge = Number(/Max-Age=(\d+)/.exec(fresh.headers.getSetCookie()[0]!)![1]);
    expect(maxAge).toBeGreaterThan(59 * 86_400);
    expect(maxAge).toBeLessThanOrEqual(60 * 86_400);
    await db
      .updateTable('sessions')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', sidOf(b.accessToken))
      .execute();
    expect((await post('/v1/auth/refresh', old)).status).toBe(401);
    // Not as a reuse: the session was not revoked, it ended.
    expect((await session(sidOf(b.accessToken))).revoked_at).toBeNull();
  });

  it('does not accept one account’s token under another account’s cookie name', async () => {
    const jar = new Jar();
    const a = await registerIn(jar);
    const other = new Jar();
    const b = await registerIn(other);
    const forged = `svc_rt_${b.userId}=${jar.cookies.get(`svc_rt_${a.userId}`)}`;
    const r = await post('/v1/auth/refresh', null, {}, { cookie: forged });
    expect(r.status).toBe(401);
  });
});

describe('accounts per browser', () => {
  it('holds up to five accounts; a sixth sign-in answers 409 too_many_accounts', async () => {
    const jar = new Jar();
    const five: Account[] = [];
    for (let i = 0; i < 5; i++) five.push(await registerIn(jar, `User ${i}`));
    expect([...jar.cookies.keys()].filter((k) => k.startsWith('svc_rt_'))).toHaveLength(5);

    const email = `${unique('sixth')}@example.com`;
    const sixth = await post('/v1/auth/register', jar, { email, password: PASSWORD, name: 'Six' });
    expect(sixth.status).toBe(409);
    expect(isErrorBody(sixth.body, 409, 'too_many_accounts')).toBe(true);
    // Nothing was created.
    const created = await svc.rt.deps.database.db.selectFrom('users').select('id').where('email', '=', email).execute();
    expect(created).toHaveLength(0);

    const elsewhere = await registerIn(new Jar(), 'Elsewhere');
    const login6 = await post('/v1/auth/login', jar, { email: elsewhere.email, password: PASSWORD });
    expect(login6.status).toBe(409);
    expect(login6.body.code).toBe('too_many_accounts');

    // Signing in again to one of the five is not a sixth account; the session it replaces ends.
    const again = await post('/v1/auth/login', jar, { email: five[2]!.email, password: PASSWORD });
    expect(again.status).toBe(200);
    jar.take(again);
    expect((await me(five[2]!.accessToken)).status).toBe(401);
    expect((await me(again.body.access_token)).status).toBe(200);

    // An account signed out elsewhere no longer takes a place.
    const out = await post('/v1/auth/logout', jar, { user_id: five[0]!.userId });
    expect(out.status).toBe(204);
    jar.take(out);
    const now = await post('/v1/auth/login', jar, { email: elsewhere.email, password: PASSWORD });
    expect(now.status).toBe(200);

    // Native sign-ins carry no cookies and are never counted.
    const native = await post('/v1/auth/login', null, { email: elsewhere.email, password: PASSWORD }, NATIVE);
    expect(native.status).toBe(200);
  });
});

describe('the legacy svc_refresh cookie', () => {
  it('keeps working and moves to svc_rt_<user_id> on first use', async () => {
    // A session made the native way gives a raw refresh token to put in the old cookie.
    const email = `${unique('legacy')}@example.com`;
    const reg = await post('/v1/auth/register', null, { email, password: PASSWORD, name: 'Leg Acy' }, NATIVE);
    const token = reg.body.refresh_token as string;
    const r = await post('/v1/auth/refresh', null, undefined, { cookie: `svc_refresh=${token}` });
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.id).toBe(reg.body.user.id);
    const set = r.headers.getSetCookie();
    const moved = set.find((c) => c.startsWith(`svc_rt_${reg.body.user.id}=`));
    expect(moved).toMatch(/HttpOnly/);
    expect(moved).toMatch(/Path=\/v1\/auth/);
    const cleared = set.filter((c) => c.startsWith('svc_refresh='));
    expect(cleared.length).toBeGreaterThanOrEqual(1);
    for (const c of cleared) expect(c).toMatch(/Max-Age=0|Expires=Thu, 01 Jan 1970/i);
    expect(cleared.some((c) => /Path=\/v1\/auth/.test(c))).toBe(true);
    // The old token rotated: presenting it again is a reuse.
    const jar = new Jar().take(r);
    expect(jar.cookies.has('svc_refresh')).toBe(false);
    const next = await post('/v1/auth/refresh', jar);
    expect(next.status).toBe(200);
    const reuse = await post('/v1/auth/refresh', null, {}, { cookie: `svc_refresh=${token}` });
    expect(reuse.status).toBe(401);
  });
});

describe('logout', () => {
  it('signs out the current account only, or with all: true every account of the browser', async () => {
    const jar = new Jar();
    const a = await registerIn(jar, 'Ann');
    const b = await registerIn(jar, 'Bob');
    const c = await registerIn(jar, 'Cat');
    const rc = await post('/v1/auth/refresh', jar, { user_id: c.userId });
    jar.take(rc);

    const before = control.length;
    const one = await post('/v1/auth/logout', jar);
    expect(one.status).toBe(204);
    jar.take(one);
    expect(jar.cookies.has(`svc_rt_${c.userId}`)).toBe(false);
    expect(jar.cookies.has(`svc_rt_${a.userId}`)).toBe(true);
    expect((await me(rc.body.access_token)).status).toBe(401);
    expect(control.slice(before)).toEqual([
      { type: 'sessions.revoked', user_id: c.userId, session_ids: [sidOf(c.accessToken)] },
    ]);
    expect((await me(a.accessToken)).status).toBe(200);
    const ra = await post('/v1/auth/refresh', jar, { user_id: a.userId });
    expect(ra.status).toBe(200);
    jar.take(ra);

    const all = await post('/v1/auth/logout', jar, { all: true });
    expect(all.status).toBe(204);
    jar.take(all);
    expect([...jar.cookies.keys()].filter((k) => k.startsWith('svc_rt_'))).toEqual([]);
    expect((await me(ra.body.access_token)).status).toBe(401);
    expect((await me(b.accessToken)).status).toBe(401);
    const users = control
      .slice(before)
      .filter((m) => m.type === 'sessions.revoked')
      .map((m) => (m as { user_id: string }).user_id);
    expect(users).toEqual(expect.arrayContaining([a.userId, b.userId, c.userId]));
    // Nothing left to refresh.
    expect((await post('/v1/auth/refresh', jar, {})).status).toBe(401);
  });

  it('signs out the account of the access token sent with it', async () => {
    const jar = new Jar();
    const a = await registerIn(jar, 'Ann');
    const b = await registerIn(jar, 'Bob');
    const r = await post('/v1/auth/logout', jar, {}, { authorization: `Bearer ${a.accessToken}` });
    expect(r.status).toBe(204);
    expect((await me(a.accessToken)).status).toBe(401);
    expect((await me(b.accessToken)).status).toBe(200);
  });
});

describe('accounts of this browser', () => {
  it('lists the signed-in accounts with their workspaces, most recent first, and rotates nothing', async () => {
    const jar = new Jar();
    const a = await registerIn(jar, 'Ann Accounts');
    const ws1 = await svc.api.post('/v1/workspaces', { name: 'Alpha Desk' }, { token: a.accessToken });
    const ws2 = await svc.api.post('/v1/workspaces', { name: 'Beta Desk' }, { token: a.accessToken });
    const b = await registerIn(jar, 'Bob Accounts');
    const before = new Map(jar.cookies);

    const r = await post('/v1/auth/accounts', jar);
    expect(r.status, r.text).toBe(200);
    expect(r.headers.getSetCookie()).toEqual([]);
    expect(r.body.data.map((x: any) => x.user.id)).toEqual([b.userId, a.userId]);
    expect(r.body.data[0]).toMatchObject({ current: true, workspaces: [] });
    expect(r.body.data[1]).toMatchObject({
      current: false,
      user: { id: a.userId, email: a.email, name: 'Ann Accounts', mfa_enabled: false },
    });
    expect(r.body.data[1].workspaces).toEqual([
      { id: ws1.body.id, name: 'Alpha Desk', slug: ws1.body.slug, role: 'owner' },
      { id: ws2.body.id, name: 'Beta Desk', slug: ws2.body.slug, role: 'owner' },
    ]);
    expect(JSON.stringify(r.body)).not.toMatch(/svc_rt_[A-Za-z0-9_-]{43}/);

    // Nothing rotated: the same cookies still refresh.
    const again = await post('/v1/auth/accounts', jar, {});
    expect(again.body.data).toHaveLength(2);
    expect(new Map(jar.cookies)).toEqual(before);
    expect((await post('/v1/auth/refresh', jar, { user_id: a.userId })).status).toBe(200);

    const empty = await post('/v1/auth/accounts', null, {});
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ data: [] });
  });
});

describe('native clients', () => {
  it('get the refresh token in the body, never a cookie, and send it back in the body', async () => {
    const email = `${unique('ios')}@example.com`;
    const reg = await post('/v1/auth/register', null, { email, password: PASSWORD, name: 'Ivy Ios' }, NATIVE);
    expect(reg.status).toBe(201);
    const t1 = reg.body.refresh_token as string;
    expect(t1).toMatch(/^svc_rt_/);
    expect(reg.headers.getSetCookie()).toEqual([]);

    const r1 = await post('/v1/auth/refresh', null, { refresh_token: t1 }, NATIVE);
    expect(r1.status).toBe(200);
    expect(r1.headers.getSetCookie()).toEqual([]);
    const t2 = r1.body.refresh_token as string;
    expect(t2).toMatch(/^svc_rt_/);
    expect(t2).not.toBe(t1);

    const login = await post('/v1/auth/login', null, { email, password: PASSWORD }, NATIVE);
    expect(login.body.refresh_token).toMatch(/^svc_rt_/);
    expect(login.headers.getSetCookie()).toEqual([]);

    // Without the token: 401. With an Origin header the request is a browser's.
    expect((await post('/v1/auth/refresh', null, {}, NATIVE)).status).toBe(401);
    const withOrigin = await post(
      '/v1/auth/refresh',
      null,
      { refresh_token: t2 },
      { ...NATIVE, origin: 'https://app.example.com' },
    );
    expect(withOrigin.status).toBe(422);

    const out = await post('/v1/auth/logout', null, { refresh_token: t2 }, NATIVE);
    expect(out.status).toBe(204);
    expect((await me(r1.body.access_token)).status).toBe(401);
    expect((await post('/v1/auth/refresh', null, { refresh_token: t2 }, NATIVE)).status).toBe(401);
    // The other sign-in of the same person is untouched.
    expect((await me(login.body.access_token)).status).toBe(200);

    // Reuse of a rotated native token revokes its session too.
    const l2 = await post('/v1/auth/login', null, { email, password: PASSWORD }, NATIVE);
    const r2 = await post('/v1/auth/refresh', null, { refresh_token: l2.body.refresh_token }, NATIVE);
    expect(r2.status).toBe(200);
    expect((await post('/v1/auth/refresh', null, { refresh_token: l2.body.refresh_token }, NATIVE)).status).toBe(401);
    expect((await me(r2.body.access_token)).status).toBe(401);

    // No token or password ever reaches a log line.
    const logs = svc.logs.join('\n');
    expect(logs).toContain('/v1/auth/refresh');
    for (const secret of [t1, t2, r1.body.access_token, PASSWORD]) expect(logs).not.toContain(secret);
    expect(logs).not.toMatch(/svc_rt_[A-Za-z0-9_-]{43}/);
  });
});

describe('password change', () => {
  it('signs out every other session of the person and keeps the current one', async () => {
    const email = `${unique('pw')}@example.com`;
    const reg = await post('/v1/auth/register', null, { email, password: PASSWORD, name: 'Pat Word' }, NATIVE);
    const other1 = await post('/v1/auth/login', null, { email, password: PASSWORD }, NATIVE);
    const jar = new Jar();
    const other2 = await post('/v1/auth/login', jar, { email, password: PASSWORD });
    jar.take(other2);
    const stranger = await registerIn(new Jar());

    const wrong = await svc.api.post(
      '/v1/me/password',
      { current_password: 'not my password', new_password: 'a brand new password' },
      { token: reg.body.access_token },
    );
    expect(wrong.status).toBe(422);
    expect(wrong.body.errors[0].location).toBe('body.current_password');
    expect((await me(other1.body.access_token)).status).toBe(200);

    const before = control.length;
    const ok = await svc.api.post(
      '/v1/me/password',
      { current_password: PASSWORD, new_password: 'a brand new password' },
      { token: reg.body.access_token },
    );
    expect(ok.status).toBe(204);
    expect((await me(reg.body.access_token)).status).toBe(200);
    expect((await me(other1.body.access_token)).status).toBe(401);
    expect((await me(other2.body.access_token)).status).toBe(401);
    expect((await post('/v1/auth/refresh', jar)).status).toBe(401);
    expect((await post('/v1/auth/refresh', null, { refresh_token: other1.body.refresh_token }, NATIVE)).status).toBe(
      401,
    );
    // The current session still refreshes.
    expect((await post('/v1/auth/refresh', null, { refresh_token: reg.body.refresh_token }, NATIVE)).status).toBe(200);
    expect((await me(stranger.accessToken)).status).toBe(200);

    const notice = control.slice(before).find((m) => m.type === 'sessions.revoked') as any;
    expect(notice.user_id).toBe(reg.body.user.id);
    expect([...notice.session_ids].sort()).toEqual(
      [sidOf(other1.body.access_token), sidOf(other2.body.access_token)].sort(),
    );
    expect(notice.session_ids).not.toContain(sidOf(reg.body.access_token));

    expect((await post('/v1/auth/login', null, { email, password: PASSWORD })).status).toBe(401);
    expect((await post('/v1/auth/login', null, { email, password: 'a brand new password' })).status).toBe(200);
  });
});

describe('each token only where it belongs', () => {
  it('refuses an access token as a refresh or mfa token, and refresh or mfa tokens as access tokens', async () => {
    const email = `${unique('kinds')}@example.com`;
    const reg = await post('/v1/auth/register', null, { email, password: PASSWORD, name: 'Kim Kinds' }, NATIVE);
    const access = reg.body.access_token as string;
    const refreshToken = reg.body.refresh_token as string;
    const signer = new TokenSigner(TEST_SECRET_KEY);
    const mfa = await signer.sign({ sub: reg.body.user.id, purpose: 'mfa' });
    const ws = await signer.sign({ sub: reg.body.user.id, purpose: 'ws' });

    for (const token of [access, mfa.token, ws.token]) {
      expect((await post('/v1/auth/refresh', null, { refresh_token: token }, NATIVE)).status).toBe(401);
    }
    for (const token of [access, refreshToken, ws.token]) {
      expect((await post('/v1/auth/mfa', null, { mfa_token: token, code: '123456' })).status).toBe(401);
    }
    for (const token of [refreshToken, mfa.token]) expect((await me(token)).status).toBe(401);
    // And the real ones still work.
    expect((await me(access)).status).toBe(200);
  });

  it('refuses JWTs with alg none, HS512 or RS256 headers, as access and as mfa tokens', async () => {
    const reg = await post(
      '/v1/auth/register',
      null,
      { email: `${unique('alg')}@example.com`, password: PASSWORD, name: 'Al Gorithm' },
      NATIVE,
    );
    const [, payload] = (reg.body.access_token as string).split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const forge = (header: object, body: object, key: string | null) => {
      const head = `${b64(header)}.${b64(body)}`;
      if (key === null) return `${head}.`;
      const alg = (header as { alg: string }).alg === 'HS512' ? 'sha512' : 'sha256';
      return `${head}.${createHmac(alg, key).update(head).digest('base64url')}`;
    };
    const mfaClaims = { ...claims, purpose: 'mfa' };
    for (const body of [claims, mfaClaims]) {
      const tokens = [
        forge({ alg: 'none', typ: 'JWT' }, body, null),
        forge({ alg: 'HS512', typ: 'JWT' }, body, TEST_SECRET_KEY),
        forge({ alg: 'HS256', typ: 'JWT' }, body, TEST_SECRET_KEY), // the raw secret is not the signing key
        forge({ alg: 'RS256', typ: 'JWT' }, body, TEST_SECRET_KEY),
        `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(body)}.${'A'.repeat(342)}`,
      ];
      for (const t of tokens) {
        expect((await me(t)).status, t.slice(0, 30)).toBe(401);
        expect((await post('/v1/auth/mfa', null, { mfa_token: t, code: '123456' })).status).toBe(401);
      }
    }
  });
});

describe('housekeeping', () => {
  it('prunes sessions that ended over a week ago, and keeps live ones', async () => {
    const reg = await svc.api.post('/v1/auth/register', {
      email: `${unique('prune')}@example.com`,
      password: 'a long password 1',
      name: 'Pru Ne',
    });
    expect(reg.status).toBe(201);
    const userId = reg.body.user.id as string;
    const db = svc.rt.deps.database.db;
    const old = new Date(Date.now() - 8 * 86_400_000);
    await db
      .insertInto('sessions')
      .values([
        {
          id: '0193c6a0-0000-7000-8000-0000000000a1',
          user_id: userId,
          refresh_hash: unique('h1'),
          revoked_at: old,
          expires_at: new Date(Date.now() + 86_400_000),
        },
        {
          id: '0193c6a0-0000-7000-8000-0000000000a2',
          user_id: userId,
          refresh_hash: unique('h2'),
          revoked_at: null,
          expires_at: old,
        },
      ])
      .execute();
    await pruneEndedSessions(svc.rt.deps.database);
    const left = await db.selectFrom('sessions').select('id').where('user_id', '=', userId).execute();
    expect(left).toHaveLength(1);
    expect(left[0]!.id).not.toMatch(/0000000000a[12]$/);
    // The live session still works.
    expect((await svc.api.get('/v1/me', { token: reg.body.access_token })).status).toBe(200);
  });
});
