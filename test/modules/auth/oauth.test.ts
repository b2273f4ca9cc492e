// OAuth sign-in against a stand-in OpenID provider on loopback (test/support/oidc-provider.ts):
// the test plays the browser (start → the provider → the callback) with real signed ID tokens,
// and the native app (client=native, the custom-scheme redirect, POST /exchange with PKCE).
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Service, signUp, startService } from '../../support/helpers.js';
import { OIDC_CLIENT, type OidcProvider, startOidcProvider } from '../../support/oidc-provider.js';

let op: OidcProvider;
let svc: Service;
let bare: Service;
let n = 0;
const fresh = (verified = true) => {
  n++;
  op.account = {
    sub: `sub-${n}-${randomBytes(4).toString('hex')}`,
    email: `oauth${n}-${randomBytes(4).toString('hex')}@example.com`,
    email_verified: verified,
  };
  return op.account;
};

beforeAll(async () => {
  op = await startOidcProvider();
  svc = await startService({
    APP_URL: 'http://app.test',
    APP_SCHEME: 'helpdeskapp',
    GOOGLE_CLIENT_ID: OIDC_CLIENT.id,
    GOOGLE_CLIENT_SECRET: OIDC_CLIENT.secret,
    GOOGLE_AUTH_URL: `${op.base}/authorize`,
    GOOGLE_TOKEN_URL: `${op.base}/token`,
    GOOGLE_JWKS_URL: `${op.base}/keys`,
    GOOGLE_ISSUER: op.issuer,
  });
  bare = await startService();
});
afterAll(async () => {
  await svc?.stop();
  await bare?.stop();
  await op?.close();
});

const get = (url: string, cookie = '') => fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
const cookiesOf = (r: Response) => r.headers.getSetCookie().map((c) => c.split(';')[0]!);

/** start → provider → callback location (not followed), with the browser's cookies. */
async function browserFlow(opts: { query?: string; cookie?: string; tamperCallback?: (u: URL) => void } = {}) {
  const start = await get(`${svc.url}/v1/auth/oauth/google/start${opts.query ?? ''}`, opts.cookie);
  expect(start.status).toBe(302);
  const flowCookie = cookiesOf(start).find((c) => c.startsWith('svc_oauth_signin='));
  const atProvider = await get(start.headers.get('location')!);
  expect(atProvider.status).toBe(302);
  // The redirect URI names PUBLIC_URL (its default here is not this service's loopback port).
  const sent = new URL(atProvider.headers.get('location')!);
  const back = new URL(sent.pathname + sent.search, svc.url);
  opts.tamperCallback?.(back);
  const cookie = [opts.cookie, flowCookie].filter(Boolean).join('; ');
  return { back, cookie, callback: () => get(back.toString(), cookie) };
}

async function usersWith(email: string) {
  return svc.rt.deps.database.db.selectFrom('users').select('id').where('email', '=', email).execute();
}

describe('GET /v1/auth/methods', () => {
  it('shows a provider only when its settings are set', async () => {
    expect((await svc.api.get('/v1/auth/methods')).body).toEqual({
      password: true,
      passkeys: true,
      oauth: { google: true, microsoft: false },
    });
    expect((await bare.api.get('/v1/auth/methods')).body.oauth).toEqual({ google: false, microsoft: false });
    const r = await fetch(`${bare.url}/v1/auth/oauth/google/start`, { redirect: 'manual' });
    expect(r.status).toBe(404);
  });
});

describe('browser sign-in', () => {
  it('registers a new person with a verified email, then signs the same person in again', async () => {
    const a = fresh();
    const f = await browserFlow();
    expect(f.back.searchParams.get('state')).toBeTruthy();
    const cb = await f.callback();
    expect(cb.status).toBe(302);
    expect(cb.headers.get('location')).toBe('http://app.test/');
    const rt = cookiesOf(cb).find((c) => c.startsWith('svc_rt_'));
    expect(rt).toBeTruthy();
    const refreshed = await fetch(`${svc.url}/v1/auth/refresh`, { method: 'POST', headers: { cookie: rt! } });
    expect(refreshed.status).toBe(200);
    expect(((await refreshed.json()) as any).user.email).toBe(a.email);
    const again = await (await browserFlow()).callback();
    expect(again.status).toBe(302);
    expect(await usersWith(a.email)).toHaveLength(1);
  });

  it('signs an existing person in by a verified email and links the identity', async () => {
    const a = fresh();
    const reg = await svc.api.post('/v1/auth/register', {
      email: a.email,
      password: 'correct horse battery',
      name: 'Pat',
    });
    expect(reg.status).toBe(201);
    const u = { token: reg.body.access_token as string };
    const cb = await (await browserFlow()).callback();
    expect(cb.status).toBe(302);
    const ids = await svc.api.get('/v1/me/identities', { token: u.token });
    expect(ids.body.data).toEqual([expect.objectContaining({ provider: 'google', email: a.email })]);
  });

  it('refuses a wrong state, a reused state, a missing browser cookie and a replayed code', async () => {
    fresh();
    const f = await browserFlow();
    const wrong = new URL(f.back);
    wrong.searchParams.set('state', 'x'.repeat(32));
    const r1 = await get(wrong.toString(), f.cookie);
    expect(r1.status).toBe(401);
    expect(((await r1.json()) as any).code).toBe('unauthorized');
    const noCookie = await get(f.back.toString());
    expect(noCookie.status).toBe(401);
    // Neither refusal used the flow up: the browser that started it still signs in, once.
    const ok = await f.callback();
    expect(ok.status).toBe(302);
    const replay = await f.callback();
    expect(replay.status).toBe(401);
    expect(cookiesOf(replay).some((c) => c.startsWith('svc_rt_'))).toBe(false);
  });

  it.each(['audience', 'issuer', 'nonce', 'signature'] as const)(
    'refuses an ID token with a wrong %s: nothing created',
    async (t) => {
      const a = fresh();
      op.tamper = t;
      try {
        const cb = await (await browserFlow()).callback();
        expect(cb.status).toBe(401);
        expect(((await cb.json()) as any).code).toBe('unauthorized');
        expect(cookiesOf(cb).some((c) => c.startsWith('svc_rt_'))).toBe(false);
      } finally {
        op.tamper = null;
      }
      expect(await usersWith(a.email)).toHaveLength(0);
    },
  );

  it('refuses an unverified email: nothing created, nobody signed in', async () => {
    const a = fresh(false);
    const cb = await (await browserFlow()).callback();
    expect(cb.status).toBe(422);
    expect(((await cb.json()) as any).code).toBe('validation_failed');
    expect(cookiesOf(cb).some((c) => c.startsWith('svc_rt_'))).toBe(false);
    expect(await usersWith(a.email)).toHaveLength(0);
  });
});

describe('native sign-in', () => {
  const pkce = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };
  async function nativeCode(challenge: string) {
    fresh();
    const f = await browserFlow({ query: `?client=native&code_challenge=${challenge}` });
    const cb = await f.callback();
    expect(cb.status).toBe(302);
    const loc = new URL(cb.headers.get('location')!);
    expect(loc.protocol).toBe('helpdeskapp:');
    return loc.searchParams.get('code')!;
  }

  it('exchanges the one-time code with the code_verifier for a native session, once', async () => {
    const { verifier, challenge } = pkce();
    const code = await nativeCode(challenge);
    const r = await svc.api.post('/v1/auth/oauth/exchange', { code, code_verifier: verifier });
    expect(r.status).toBe(200);
    expect(r.body.refresh_token).toBeTruthy();
    expect(r.body.user.email).toBe(op.account.email);
    const replay = await svc.api.post('/v1/auth/oauth/exchange', { code, code_verifier: verifier });
    expect(replay.status).toBe(401);
  });

  it('refuses a wrong or missing code_verifier, and start without a code_challenge', async () => {
    const { challenge } = pkce();
    const code = await nativeCode(challenge);
    const wrong = await svc.api.post('/v1/auth/oauth/exchange', { code, code_verifier: pkce().verifier });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe('unauthorized');
    const missing = await svc.api.post('/v1/auth/oauth/exchange', { code });
    expect(missing.status).toBe(422);
    const start = await get(`${svc.url}/v1/auth/oauth/google/start?client=native`);
    expect(start.status).toBe(422);
  });
});

describe('linked accounts', () => {
  it('links while signed in and refuses to unlink the only way to sign in', async () => {
    // A person registered through OAuth has no password: the identity is their only way in.
    const a = fresh();
    const cb = await (await browserFlow()).callback();
    const first = cookiesOf(cb).find((c) => c.startsWith('svc_rt_'))!;
    const res = await fetch(`${svc.url}/v1/auth/refresh`, { method: 'POST', headers: { cookie: first } });
    const rt = cookiesOf(res).find((c) => c.startsWith('svc_rt_'))!; // refresh rotates the cookie
    const session = (await res.json()) as { access_token: string };
    const token = session.access_token as string;
    const ids = await svc.api.get('/v1/me/identities', { token });
    expect(ids.body.data).toHaveLength(1);
    const refused = await svc.api.delete(`/v1/me/identities/${ids.body.data[0].id}`, { token });
    expect(refused.status).toBe(409);
    // Link a second account (link=1 with the refresh cookie), then the first can go.
    fresh();
    const link = await (await browserFlow({ query: '?link=1', cookie: rt })).callback();
    expect(link.status).toBe(302);
    const two = await svc.api.get('/v1/me/identities', { token });
    expect(two.body.data).toHaveLength(2);
    const gone = await svc.api.delete(`/v1/me/identities/${ids.body.data[0].id}`, { token });
    expect(gone.status).toBe(204);
    expect(a.email).toBeTruthy();
  });

  it('answers 404 for another person identity and 401 for link without being signed in', async () => {
    const other = await signUp(svc.api);
    const mine = await svc.api.get('/v1/me/identities', { token: other.token });
    expect(mine.body.data).toEqual([]);
    const r = await svc.api.delete('/v1/me/identities/00000000-0000-4000-8000-000000000000', { token: other.token });
    expect(r.status).toBe(404);
    const link = await get(`${svc.url}/v1/auth/oauth/google/start?link=1`);
    expect(link.status).toBe(401);
  });
});
