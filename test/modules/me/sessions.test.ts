// A person's own sessions (GET /v1/me/sessions, DELETE /v1/me/sessions/{id}, POST
// /v1/me/sessions/revoke-others): the list of sign-ins on every device with the current one
// marked; signing one out (its tokens refused, its socket closed); signing out everywhere else;
// another person's session untouchable; the password change reflected; API keys refused.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Client, connect, join, realtimeToken, sleep } from '../../support/gateway-client.js';
import {
  isErrorBody,
  newApiKey,
  newTenant,
  type Res,
  type Service,
  startService,
  type Tenant,
  unique,
} from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

let svc: Service;
let own: OwnDatabase;
beforeAll(async () => {
  own = await ownDatabase('me_sessions');
  svc = await startService(own.env, { jobs: false });
});
afterAll(async () => {
  await svc?.stop();
  await own?.drop();
});

const clients: Client[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.disconnect();
});

const PASSWORD = 'correct horse battery';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';
const IOS_APP = 'HelpDesk/3.1.0 CFNetwork/1494.0.7 Darwin/23.4.0';

/** One sign-in: its access token, and how to refresh it (the browser's cookie, or the native body). */
interface SignIn {
  token: string;
  sid: string;
  /** Refreshes it (with another User-Agent when given: the browser was updated, say). */
  refresh(userAgent?: string): Promise<Res>;
}

const sidOf = (accessToken: string) =>
  JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()).sid as string;

/** Signs in as a browser (the refresh cookie) with this User-Agent. */
async function browserSignIn(email: string, userAgent: string, password = PASSWORD): Promise<SignIn> {
  const r = await svc.api.post('/v1/auth/login', { email, password }, { headers: { 'user-agent': userAgent } });
  expect(r.status, r.text).toBe(200);
  const cookie = r.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('svc_rt_'))!;
  expect(cookie).toBeDefined();
  return {
    token: r.body.access_token,
    sid: sidOf(r.body.access_token),
    refresh: (ua = userAgent) => svc.api.post('/v1/auth/refresh', {}, { headers: { cookie, 'user-agent': ua } }),
  };
}

/** Signs in as the native app (refresh token in the body). */
async function nativeSignIn(email: string, userAgent = IOS_APP): Promise<SignIn> {
  const headers = { 'svc-client': 'ios/3.1.0', 'user-agent': userAgent };
  const r = await svc.api.post('/v1/auth/login', { email, password: PASSWORD }, { headers });
  expect(r.status, r.text).toBe(200);
  const refreshToken = r.body.refresh_token as string;
  return {
    token: r.body.access_token,
    sid: sidOf(r.body.access_token),
    refresh: () => svc.api.post('/v1/auth/refresh', { refresh_token: refreshToken }, { headers }),
  };
}

async function person(): Promise<{ email: string; userId: string }> {
  const email = `${unique('me-sess')}@example.com`;
  const r = await svc.api.post('/v1/auth/register', { email, password: PASSWORD, name: 'Sam Sessions' });
  expect(r.status, r.text).toBe(201);
  return { email, userId: r.body.user.id };
}

const listOf = async (token: string) => {
  const r = await svc.api.get('/v1/me/sessions', { token });
  expect(r.status, r.text).toBe(200);
  return r.body.data as Array<Record<string, any>>;
};
const me = (token: string) => svc.api.get('/v1/me', { token });

/** A socket of this sign-in joined to the workspace topic, reconnecting quickly with the same token. */
async function socketOf(s: SignIn, t: Tenant): Promise<Client> {
  const c = connect(svc.url, await realtimeToken(svc.api, { token: s.token, workspace: t.workspaceId }), {
    reconnectMs: 50,
  });
  clients.push(c);
  expect((await join(c.socket.channel(`workspace:${t.workspaceId}`))).status).toBe('ok');
  return c;
}

/** The gateway closed it as a revoked session, and refuses it on reconnect. */
async function closedAsRevoked(c: Client) {
  await expect.poll(() => c.closes.map((x) => x.code)).toContain(4001);
  expect(c.closes[0]!.reason).toBe('session_revoked');
  await sleep(400);
  expect(c.socket.isConnected()).toBe(false);
  expect(c.opened).toBe(1);
}

describe('GET /v1/me/sessions', () => {
  it('lists the sign-ins of every device, most recently used first, with the current one marked', async () => {
    const p = await person();
    const laptop = await browserSignIn(p.email, FIREFOX);
    const phone = await nativeSignIn(p.email);
    const stranger = await person();
    await browserSignIn(stranger.email, SAFARI);

    const r = await svc.api.get('/v1/me/sessions', { token: laptop.token });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    // The registration's session, the laptop and the phone: the phone was used last.
    const list = r.body.data as Array<Record<string, any>>;
    expect(list).toHaveLength(3);
    expect(list[0]).toMatchObject({ id: phone.sid, kind: 'native', user_agent: IOS_APP, current: false });
    expect(list[1]).toMatchObject({ id: laptop.sid, kind: 'browser', user_agent: FIREFOX, current: true });
    expect(list.filter((s) => s.current)).toHaveLength(1);
    for (const s of list) {
      expect(Object.keys(s).sort()).toEqual(
        ['created_at', 'current', 'expires_at', 'id', 'ip', 'kind', 'last_used_at', 'user_agent'].sort(),
      );
      expect(s.ip).toMatch(/^(::ffff:)?127\.0\.0\.1$/);
      expect(Date.parse(s.expires_at)).toBeGreaterThan(Date.now() + 29 * 86_400_000);
    }
    // No token, and no hash of one, is ever shown.
    expect(r.text).not.toMatch(/svc_rt_|refresh|hash/);

    // The phone sees the same sessions, with itself as the current one.
    const fromPhone = await listOf(phone.token);
    expect(fromPhone.map((s) => [s.id, s.current])).toEqual(list.map((s) => [s.id, s.id === phone.sid]));

    // A refresh is a use: the laptop moves to the top, with the User-Agent it refreshed with.
    await sleep(20);
    const updated = FIREFOX.replaceAll('128.0', '129.0');
    expect((await laptop.refresh(updated)).status).toBe(200);
    const after = await listOf(laptop.token);
    expect(after[0]).toMatchObject({ id: laptop.sid, user_agent: updated, current: true });
    expect(Date.parse(after[0]!.last_used_at)).toBeGreaterThan(Date.parse(list[1]!.last_used_at));
    expect(after[0]!.created_at).toBe(list[1]!.created_at);
  });

  it('shows no ended session, and cuts an overlong or odd User-Agent', async () => {
    const p = await person();
    const here = await browserSignIn(p.email, FIREFOX);
    const long = `Mozilla/5.0\t\t${'x'.repeat(5000)}`;
    const odd = await browserSignIn(p.email, long);
    const idle = await nativeSignIn(p.email);
    // The native one has not been refreshed for 31 days: it ended (idle).
    await svc.rt.deps.database.db
      .updateTable('sessions')
      .set({ last_used_at: new Date(Date.now() - 31 * 86_400_000) })
      .where('id', '=', idle.sid)
      .execute();
    const list = await listOf(here.token);
    expect(list.map((s) => s.id)).not.toContain(idle.sid);
    const shown = list.find((s) => s.id === odd.sid)!;
    expect(shown.user_agent).toHaveLength(256);
    expect(shown.user_agent.startsWith('Mozilla/5.0 x')).toBe(true);
    // Signing an ended session out finds nothing to sign out.
    const gone = await svc.api.delete(`/v1/me/sessions/${idle.sid}`, { token: here.token });
    expect(gone.status).toBe(404);
  });
});

describe('DELETE /v1/me/sessions/{id}', () => {
  it('signs that session out: its tokens are refused and its live socket closes; this one stays', async () => {
    const t = await newTenant(svc.api);
    const here = await browserSignIn(t.owner.email, FIREFOX);
    const phone = await nativeSignIn(t.owner.email);
    const kept = await socketOf(here, t);
    const doomed = await socketOf(phone, t);

    const r = await svc.api.delete(`/v1/me/sessions/${phone.sid}`, { token: here.token });
    expect(r.status, r.text).toBe(204);
    await closedAsRevoked(doomed);
    expect((await me(phone.token)).status).toBe(401);
    expect((await phone.refresh()).status).toBe(401);
    // This session and its socket are untouched.
    expect(kept.socket.isConnected()).toBe(true);
    expect(kept.closes).toEqual([]);
    expect((await me(here.token)).status).toBe(200);
    expect((await here.refresh()).status).toBe(200);
    expect((await listOf(here.token)).map((s) => s.id)).not.toContain(phone.sid);

    // Signed out already: nothing more to sign out.
    const again = await svc.api.delete(`/v1/me/sessions/${phone.sid}`, { token: here.token });
    expect(again.status).toBe(404);
    expect(isErrorBody(again.body, 404, 'not_found')).toBe(true);
  });

  it("answers another person's session as an unknown one (404) and leaves it signed in", async () => {
    const a = await person();
    const aHere = await browserSignIn(a.email, FIREFOX);
    const aOther = await nativeSignIn(a.email);
    const b = await person();
    const bPhone = await nativeSignIn(b.email);

    const foreign = await svc.api.delete(`/v1/me/sessions/${bPhone.sid}`, { token: aHere.token });
    const unknown = await svc.api.delete('/v1/me/sessions/0193c6a0-0000-7000-8000-00000000dead', {
      token: aHere.token,
    });
    expect(foreign.status).toBe(404);
    expect(isErrorBody(foreign.body, 404, 'not_found')).toBe(true);
    expect(foreign.body).toEqual(unknown.body);
    // B's session works as before and is still in B's list; A's list never showed it.
    expect((await me(bPhone.token)).status).toBe(200);
    expect((await bPhone.refresh()).status).toBe(200);
    expect((await listOf(bPhone.token)).map((s) => s.id)).toContain(bPhone.sid);
    expect((await listOf(aHere.token)).map((s) => s.id)).not.toContain(bPhone.sid);
    // A's own other session is A's to sign out.
    expect((await svc.api.delete(`/v1/me/sessions/${aOther.sid}`, { token: aHere.token })).status).toBe(204);
    expect((await me(aOther.token)).status).toBe(401);

    // An id that is not a UUID is a validation error at path.id.
    for (const bad of ['not-a-session', '1', `${bPhone.sid}x`]) {
      const r = await svc.api.delete(`/v1/me/sessions/${bad}`, { token: aHere.token });
      expect(r.status, bad).toBe(422);
      expect(isErrorBody(r.body, 422, 'validation_failed')).toBe(true);
      expect(r.body.errors[0].location).toBe('path.id');
    }
  });
});

describe('POST /v1/me/sessions/revoke-others', () => {
  it('signs out every other session of the person, on every device, and keeps this one', async () => {
    const t = await newTenant(svc.api);
    const here = await browserSignIn(t.owner.email, FIREFOX);
    const otherBrowser = await browserSignIn(t.owner.email, SAFARI);
    const phone = await nativeSignIn(t.owner.email);
    const stranger = await person();
    const strangerSession = await nativeSignIn(stranger.email);
    const kept = await socketOf(here, t);
    const closedBrowser = await socketOf(otherBrowser, t);
    const closedPhone = await socketOf(phone, t);

    const r = await svc.api.post('/v1/me/sessions/revoke-others', undefined, { token: here.token });
    expect(r.status, r.text).toBe(200);
    // The registration's session (newTenant), the other browser and the phone.
    expect(r.body).toEqual({ revoked: 3 });
    await closedAsRevoked(closedBrowser);
    await closedAsRevoked(closedPhone);
    for (const s of [otherBrowser, phone]) {
      expect((await me(s.token)).status).toBe(401);
      expect((await s.refresh()).status).toBe(401);
    }
    expect((await me(t.owner.token)).status).toBe(401);
    expect(kept.socket.isConnected()).toBe(true);
    expect(kept.closes).toEqual([]);
    expect((await here.refresh()).status).toBe(200);
    expect((await listOf(here.token)).map((s) => [s.id, s.current])).toEqual([[here.sid, true]]);
    // Someone else is not affected.
    expect((await me(strangerSession.token)).status).toBe(200);

    // Nothing left to sign out.
    const again = await svc.api.post('/v1/me/sessions/revoke-others', undefined, { token: here.token });
    expect(again.body).toEqual({ revoked: 0 });
  });
});

describe('the password change', () => {
  it('still signs out the other sessions, and the list shows only this one', async () => {
    const p = await person();
    const here = await browserSignIn(p.email, FIREFOX);
    const phone = await nativeSignIn(p.email);
    expect((await listOf(here.token)).map((s) => s.id)).toContain(phone.sid);
    const r = await svc.api.post(
      '/v1/me/password',
      { current_password: PASSWORD, new_password: 'a brand new password' },
      { token: here.token },
    );
    expect(r.status, r.text).toBe(204);
    expect((await listOf(here.token)).map((s) => [s.id, s.current])).toEqual([[here.sid, true]]);
    expect((await phone.refresh()).status).toBe(401);
  });
});

describe('who may call', () => {
  it('refuses API keys (403, like every route of a signed-in person) and calls without a credential (401)', async () => {
    const t = await newTenant(svc.api);
    const key = await newApiKey(svc.api, t, ['settings:read', 'settings:write']);
    const sid = sidOf(t.owner.token);
    const calls: Array<[string, string]> = [
      ['GET', '/v1/me/sessions'],
      ['DELETE', `/v1/me/sessions/${sid}`],
      ['POST', '/v1/me/sessions/revoke-others'],
    ];
    for (const [method, path] of calls) {
      const asKey = await svc.api.req(method, path, { token: key.key });
      expect(asKey.status, `${method} ${path}`).toBe(403);
      expect(isErrorBody(asKey.body, 403, 'forbidden')).toBe(true);
      const anonymous = await svc.api.req(method, path);
      expect(anonymous.status, `${method} ${path}`).toBe(401);
      expect(isErrorBody(anonymous.body, 401, 'unauthorized')).toBe(true);
    }
    // The owner's session is still there.
    expect((await listOf(t.owner.token)).map((s) => s.id)).toEqual([sid]);
  });
});
