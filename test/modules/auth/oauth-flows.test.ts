// OAuth sign-in beyond the happy path (oauth.test.ts): two-factor after OAuth (web and native),
// Microsoft's tenant-specific issuers and its email rule, expired flows and codes (the rows'
// expiry moved in the database, never waited for), a new person's picture through the pictures
// pipeline, audit entries, the provider's error redirect (Cancel), the sign-in limits on the
// callback and the exchange, and the sweep job. Stand-in OpenID providers on loopback
// (test/support/oidc-provider.ts) sign real ID tokens.
import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { Secret, TOTP } from 'otpauth';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIGN_IN_SWEEP_JOB, takeOAuthPicture } from '../../../src/modules/auth/jobs.js';
import { OAUTH_PICTURE_JOB } from '../../../src/modules/auth/oauth/service.js';
import { hashSecret } from '../../../src/platform/crypto/tokens.js';
import { isErrorBody, type Service, startService } from '../../support/helpers.js';
import { OIDC_CLIENT, type OidcProvider, startOidcProvider } from '../../support/oidc-provider.js';

let google: OidcProvider;
let microsoft: OidcProvider;
let svc: Service;
let n = 0;
const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const NATIVE = { 'svc-client': 'ios/3.1.0' };

const fresh = (op: OidcProvider, extra: Partial<OidcProvider['account']> = {}) => {
  n++;
  op.account = {
    sub: `sub-${n}-${randomBytes(4).toString('hex')}`,
    email: `flows${n}-${randomBytes(4).toString('hex')}@example.com`,
    email_verified: true,
    ...extra,
  };
  return op.account;
};

const providerEnv = (op: OidcProvider, p: 'GOOGLE' | 'MICROSOFT') => ({
  [`${p}_CLIENT_ID`]: OIDC_CLIENT.id,
  [`${p}_CLIENT_SECRET`]: OIDC_CLIENT.secret,
  [`${p}_AUTH_URL`]: `${op.base}/authorize`,
  [`${p}_TOKEN_URL`]: `${op.base}/token`,
  [`${p}_JWKS_URL`]: `${op.base}/keys`,
  // Google's issuer is the stand-in's; Microsoft's is the default template, as in production.
  ...(p === 'GOOGLE' ? { GOOGLE_ISSUER: op.issuer } : {}),
});

const BASE_ENV = {
  APP_URL: 'http://app.test',
  APP_SCHEME: 'helpdeskapp',
  // The stand-in serves the picture over http on loopback.
  WEBHOOK_ALLOW_PRIVATE: 'true',
};

beforeAll(async () => {
  google = await startOidcProvider();
  microsoft = await startOidcProvider({ microsoft: true });
  svc = await startService({
    ...BASE_ENV,
    ...providerEnv(google, 'GOOGLE'),
    ...providerEnv(microsoft, 'MICROSOFT'),
    SIGNIN_MAX_FAILURES_PER_IP: '1000',
  });
});
afterAll(async () => {
  await svc?.stop();
  await google?.close();
  await microsoft?.close();
});

const get = (url: string, cookie = '') => fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
const cookiesOf = (r: Response) => r.headers.getSetCookie().map((c) => c.split(';')[0]!);
const signedIn = (r: Response) => cookiesOf(r).some((c) => c.startsWith('svc_rt_'));

/** start → the provider → the callback's URL (not followed), with the browser's cookies. */
async function browserFlow(
  s: Service,
  opts: { provider?: 'google' | 'microsoft'; query?: string; cookie?: string } = {},
) {
  const start = await get(`${s.url}/v1/auth/oauth/${opts.provider ?? 'google'}/start${opts.query ?? ''}`, opts.cookie);
  expect(start.status).toBe(302);
  const flowCookie = cookiesOf(start).find((c) => c.startsWith('svc_oauth_signin='));
  const atProvider = await get(start.headers.get('location')!);
  expect(atProvider.status).toBe(302);
  const sent = new URL(atProvider.headers.get('location')!);
  const back = new URL(sent.pathname + sent.search, s.url);
  const cookie = [opts.cookie, flowCookie].filter(Boolean).join('; ');
  return { back, cookie, state: back.searchParams.get('state')!, callback: () => get(back.toString(), cookie) };
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/** A native sign-in up to the app's one-time code. */
async function nativeCode(s: Service, challenge: string) {
  const f = await browserFlow(s, { query: `?client=native&code_challenge=${challenge}` });
  const cb = await f.callback();
  expect(cb.status).toBe(302);
  const loc = new URL(cb.headers.get('location')!);
  expect(loc.protocol).toBe('helpdeskapp:');
  return loc.searchParams.get('code')!;
}

const usersWith = (s: Service, email: string) =>
  s.rt.deps.database.db
    .selectFrom('users')
    .select(['id', 'avatar_url', 'avatar_source'])
    .where('email', '=', email)
    .execute();

/** A signed-in person in a workspace (password), whose audit entries the tests read. */
async function personInWorkspace(email: string) {
  const reg = await svc.api.post('/v1/auth/register', { email, password: 'correct horse battery', name: 'Pat' });
  expect(reg.status, reg.text).toBe(201);
  const ws = await svc.api.post('/v1/workspaces', { name: 'Audit Co' }, { token: reg.body.access_token });
  expect(ws.status, ws.text).toBe(201);
  return { userId: reg.body.user.id as string, token: reg.body.access_token as string, workspaceId: ws.body.id };
}

const auditOf = (workspaceId: string) =>
  svc.rt.deps.database.db
    .selectFrom('audit_logs')
    .select(['action', 'entity_type', 'entity_id', 'data'])
    .where('workspace_id', '=', workspaceId)
    .where('action', 'like', 'oauth.%')
    .orderBy('created_at')
    .execute();

describe('two-factor after OAuth', () => {
  const totp = (secret: string) =>
    new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30 }).generate({ timestamp: Date.now() });

  async function personWithMfa(email: string) {
    const reg = await svc.api.post('/v1/auth/register', { email, password: 'correct horse battery', name: 'Mo' });
    expect(reg.status).toBe(201);
    const token = reg.body.access_token as string;
    const start = await svc.api.post('/v1/me/mfa/totp', undefined, { token });
    const secret = start.body.secret as string;
    const confirm = await svc.api.post('/v1/me/mfa/totp/confirm', { code: totp(secret) }, { token });
    expect(confirm.status, confirm.text).toBe(200);
    // The confirmation used this step's code: the sign-in below may use it again.
    await svc.rt.deps.database.db
      .updateTable('users')
      .set({ mfa_last_step: null })
      .where('id', '=', reg.body.user.id)
      .execute();
    return secret;
  }

  it('web: the callback sends the browser to /sign-in#mfa_token= and POST /v1/auth/mfa completes it', async () => {
    const a = fresh(google);
    const secret = await personWithMfa(a.email);
    const cb = await (await browserFlow(svc)).callback();
    expect(cb.status).toBe(302);
    expect(signedIn(cb)).toBe(false); // not before the second factor
    const loc = cb.headers.get('location')!;
    expect(loc.startsWith('http://app.test/sign-in#mfa_token=')).toBe(true);
    const mfaToken = decodeURIComponent(loc.split('#mfa_token=')[1]!);
    const wrong = await svc.api.post('/v1/auth/mfa', { mfa_token: mfaToken, code: '000000' });
    expect(wrong.status).toBe(401);
    const done = await svc.api.post('/v1/auth/mfa', { mfa_token: mfaToken, code: totp(secret) });
    expect(done.status, done.text).toBe(200);
    expect(done.body.user.email).toBe(a.email);
    expect(done.body.access_token).toBeTruthy();
  });

  it('native: the exchange answers mfa_required, and the code completes it', async () => {
    const a = fresh(google);
    const secret = await personWithMfa(a.email);
    const { verifier, challenge } = pkce();
    const code = await nativeCode(svc, challenge);
    const r = await svc.api.post('/v1/auth/oauth/exchange', { code, code_verifier: verifier });
    expect(r.status).toBe(200);
    expect(r.body.mfa_required).toBe(true);
    expect(r.body.refresh_token).toBeUndefined();
    expect(r.body.access_token).toBeUndefined();
    const done = await svc.api.post(
      '/v1/auth/mfa',
      { mfa_token: r.body.mfa_token, code: totp(secret) },
      { headers: NATIVE },
    );
    expect(done.status, done.text).toBe(200);
    expect(done.body.user.email).toBe(a.email);
    expect(done.body.refresh_token).toBeTruthy();
  });
});

describe('Microsoft', () => {
  it('accepts a token of the tenant its issuer names (the {tenantid} template) with xms_edov', async () => {
    const a = fresh(microsoft, { email_verified: undefined, tid: TENANT, xms_edov: true });
    const f = await browserFlow(svc, { provider: 'microsoft' });
    const cb = await f.callback();
    expect(cb.status).toBe(302);
    expect(cb.headers.get('location')).toBe('http://app.test/');
    expect(signedIn(cb)).toBe(true);
    expect(await usersWith(svc, a.email)).toHaveLength(1);
  });

  it('refuses a token whose issuer names another tenant than its tid: 401, nothing created', async () => {
    const a = fresh(microsoft, { email_verified: undefined, tid: TENANT, xms_edov: true });
    microsoft.tamper = 'tenant';
    try {
      const cb = await (await browserFlow(svc, { provider: 'microsoft' })).callback();
      expect(cb.status).toBe(401);
      expect(signedIn(cb)).toBe(false);
    } finally {
      microsoft.tamper = null;
    }
    expect(await usersWith(svc, a.email)).toHaveLength(0);
  });

  it('does not take a bare email as verified: no registration, no match by email', async () => {
    // A tenant's admin can give an account any address: without xms_edov it proves nothing.
    const a = fresh(microsoft, { email_verified: undefined, tid: TENANT });
    const cb = await (await browserFlow(svc, { provider: 'microsoft' })).callback();
    expect(cb.status).toBe(422);
    expect(signedIn(cb)).toBe(false);
    expect(await usersWith(svc, a.email)).toHaveLength(0);
    // Someone else's address: not signed in as them either.
    const victim = await personInWorkspace(`victim-${randomBytes(4).toString('hex')}@example.com`);
    fresh(microsoft, { email_verified: undefined, tid: TENANT, email: (await whoIs(victim.token)).email });
    const cb2 = await (await browserFlow(svc, { provider: 'microsoft' })).callback();
    expect(cb2.status).toBe(422);
    expect(signedIn(cb2)).toBe(false);
    expect((await svc.api.get('/v1/me/identities', { token: victim.token })).body.data).toEqual([]);
  });

  it('an account linked while signed in signs in by its subject, without xms_edov', async () => {
    const p = await personInWorkspace(`linker-${randomBytes(4).toString('hex')}@example.com`);
    const rt = await refreshCookieOf(p);
    fresh(microsoft, { email_verified: undefined, tid: TENANT, email: 'work@contoso.example' });
    const link = await (await browserFlow(svc, { provider: 'microsoft', query: '?link=1', cookie: rt })).callback();
    expect(link.status).toBe(302);
    expect(link.headers.get('location')).toBe('http://app.test/profile?linked=1');
    const again = await (await browserFlow(svc, { provider: 'microsoft' })).callback();
    expect(again.status).toBe(302);
    const cookie = cookiesOf(again).find((c) => c.startsWith('svc_rt_'))!;
    const who = await fetch(`${svc.url}/v1/auth/refresh`, { method: 'POST', headers: { cookie } });
    expect(((await who.json()) as any).user.id).toBe(p.userId);
  });
});

async function whoIs(token: string) {
  return (await svc.api.get('/v1/me', { token })).body as { id: string; email: string };
}

/** The browser's refresh cookie of a person who signed in with their password. */
async function refreshCookieOf(p: { token: string }) {
  const me = await whoIs(p.token);
  const r = await fetch(`${svc.url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: me.email, password: 'correct horse battery' }),
  });
  expect(r.status).toBe(200);
  return cookiesOf(r).find((c) => c.startsWith('svc_rt_'))!;
}

describe('expiry', () => {
  it('a flow past its lifetime answers 401 and signs nobody in', async () => {
    const a = fresh(google);
    const f = await browserFlow(svc);
    await svc.rt.deps.database.db
      .updateTable('oauth_sign_in_flows')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('state_hash', '=', hashSecret(f.state))
      .execute();
    const cb = await f.callback();
    expect(cb.status).toBe(401);
    expect(isErrorBody(await cb.json(), 401, 'unauthorized')).toBe(true);
    expect(signedIn(cb)).toBe(false);
    expect(await usersWith(svc, a.email)).toHaveLength(0);
  });

  it('an exchange code past its 60 s answers 401', async () => {
    fresh(google);
    const { verifier, challenge } = pkce();
    const code = await nativeCode(svc, challenge);
    const row = await svc.rt.deps.database.db
      .selectFrom('oauth_exchange_codes')
      .select('expires_at')
      .where('code_hash', '=', hashSecret(code))
      .executeTakeFirstOrThrow();
    // Issued for 60 seconds.
    expect(Math.abs(row.expires_at.getTime() - Date.now() - 60_000)).toBeLessThan(15_000);
    await svc.rt.deps.database.db
      .updateTable('oauth_exchange_codes')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('code_hash', '=', hashSecret(code))
      .execute();
    const r = await svc.api.post('/v1/auth/oauth/exchange', { code, code_verifier: verifier });
    expect(isErrorBody(r.body, 401, 'unauthorized'), r.text).toBe(true);
    expect(r.body.refresh_token).toBeUndefined();
  });
});

/** The states of the picture jobs queued for the person (the queue's own rows). */
async function pictureJobsOf(userId: string): Promise<string[]> {
  const r = await sql<{ state: string }>`SELECT state FROM ${sql.table(`${svc.rt.deps.jobs.schema}.job`)}
    WHERE name = ${OAUTH_PICTURE_JOB} AND data ->> 'user_id' = ${userId}`.execute(svc.rt.deps.database.db);
  return r.rows.map((x) => x.state);
}

describe("a new person's picture", () => {
  it('is fetched from the picture claim, processed and served by the service, source oauth', async () => {
    google.pictureBytes = await sharp({
      create: { width: 300, height: 200, channels: 3, background: { r: 200, g: 40, b: 60 } },
    })
      .png()
      .toBuffer();
    const hits = google.pictureHits;
    const a = fresh(google, { picture: google.pictureUrl });
    const cb = await (await browserFlow(svc)).callback();
    expect(cb.status).toBe(302);
    const [user] = await usersWith(svc, a.email);
    expect(user).toBeTruthy();
    await expect.poll(async () => (await usersWith(svc, a.email))[0]?.avatar_source, { timeout: 20_000 }).toBe('oauth');
    const [after] = await usersWith(svc, a.email);
    expect(after!.avatar_url).toMatch(/\/v1\/images\/[0-9a-f-]{36}$/);
    expect(after!.avatar_url).not.toContain(google.base);
    expect(google.pictureHits).toBeGreaterThan(hits);
    // Served by the service: its own PNG, 256 px square (cropped), not the provider's bytes.
    const path = new URL(after!.avatar_url!).pathname;
    const served = await fetch(`${svc.url}${path}`);
    expect(served.status).toBe(200);
    expect(served.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await served.arrayBuffer());
    expect(bytes.equals(google.pictureBytes)).toBe(false);
    const meta = await sharp(bytes).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 256, 256]);
  });

  it('a picture that is not an image leaves the person without one', async () => {
    google.pictureBytes = Buffer.from('<html>not a picture</html>');
    const hits = google.pictureHits;
    const a = fresh(google, { picture: google.pictureUrl });
    expect((await (await browserFlow(svc)).callback()).status).toBe(302);
    const [user] = await usersWith(svc, a.email);
    // The job is done with it (the queue's own row), and fetched it.
    await expect.poll(() => pictureJobsOf(user!.id), { timeout: 20_000 }).toEqual(['completed']);
    expect(google.pictureHits).toBeGreaterThan(hits);
    expect(
      await svc.rt.deps.database.db.selectFrom('images').select('id').where('owner_id', '=', user!.id).execute(),
    ).toEqual([]);
    expect((await usersWith(svc, a.email))[0]).toMatchObject({ avatar_url: null, avatar_source: null });
  });
});

describe("a new person's picture, against a picture of their own", () => {
  it('does not replace a picture the person set before the job ran', async () => {
    google.pictureBytes = await sharp({
      create: { width: 64, height: 64, channels: 3, background: { r: 10, g: 120, b: 200 } },
    })
      .png()
      .toBuffer();
    const p = await personInWorkspace(`own-pic-${randomBytes(4).toString('hex')}@example.com`);
    const set = await svc.api.patch('/v1/me', { avatar_url: google.pictureUrl }, { token: p.token });
    expect(set.status, set.text).toBe(200);
    const own = (await whoIs(p.token)) as unknown as { avatar_url: string; avatar_source: string };
    expect(own.avatar_source).toBe('upload');
    expect(await takeOAuthPicture(svc.rt.deps, { user_id: p.userId, url: google.pictureUrl })).toBe(false);
    expect(await whoIs(p.token)).toMatchObject({ avatar_url: own.avatar_url, avatar_source: 'upload' });
  });
});

describe('audit', () => {
  it('records the link by verified email, sign-ins, a link while signed in and an unlink', async () => {
    const email = `audited-${randomBytes(4).toString('hex')}@example.com`;
    const p = await personInWorkspace(email);
    fresh(google, { email });
    const first = await (await browserFlow(svc)).callback();
    expect(first.status).toBe(302);
    const rt = await refreshCookieOf(p);
    const second = fresh(google, { email: `other-${randomBytes(4).toString('hex')}@example.com` });
    expect((await (await browserFlow(svc, { query: '?link=1', cookie: rt })).callback()).status).toBe(302);
    const ids = (await svc.api.get('/v1/me/identities', { token: p.token })).body.data as Array<{
      id: string;
      email: string;
    }>;
    expect(ids).toHaveLength(2);
    const linked = ids.find((i) => i.email === second.email)!;
    expect((await svc.api.delete(`/v1/me/identities/${linked.id}`, { token: p.token })).status).toBe(204);
    const byEmail = ids.find((i) => i.email === email)!;
    const audit = await auditOf(p.workspaceId);
    expect(audit.map((a) => [a.action, a.entity_type, a.entity_id])).toEqual([
      ['oauth.linked', 'oauth_identity', byEmail.id],
      ['oauth.signed_in', 'oauth_identity', byEmail.id],
      ['oauth.linked', 'oauth_identity', linked.id],
      ['oauth.unlinked', 'oauth_identity', linked.id],
    ]);
    const data = (i: number) =>
      (typeof audit[i]!.data === 'string' ? JSON.parse(audit[i]!.data as string) : audit[i]!.data) as object;
    expect(data(0)).toEqual({ provider: 'google', email, by: 'verified_email' });
    expect(data(1)).toEqual({ provider: 'google', email, client: 'web' });
    expect(data(3)).toEqual({ provider: 'google', email: second.email });
  });
});

describe("the provider's error redirect (Cancel)", () => {
  it('web: uses the flow up and sends the browser to /sign-in#oauth_error=, nobody signed in', async () => {
    const a = fresh(google);
    google.refuse = 'access_denied';
    let f: Awaited<ReturnType<typeof browserFlow>>;
    try {
      f = await browserFlow(svc);
    } finally {
      google.refuse = null;
    }
    expect(f.back.searchParams.get('code')).toBeNull();
    const cb = await f.callback();
    expect(cb.status).toBe(302);
    expect(cb.headers.get('location')).toBe('http://app.test/sign-in#oauth_error=access_denied');
    expect(signedIn(cb)).toBe(false);
    expect(await usersWith(svc, a.email)).toHaveLength(0);
    // Single use: the same return again is refused.
    const again = await f.callback();
    expect(again.status).toBe(401);
  });

  it('an error that is not a plain code becomes oauth_failed; a wrong state is still 401', async () => {
    fresh(google);
    google.refuse = 'Bad <thing>!';
    let f: Awaited<ReturnType<typeof browserFlow>>;
    try {
      f = await browserFlow(svc);
    } finally {
      google.refuse = null;
    }
    const wrong = new URL(f.back);
    wrong.searchParams.set('state', 'y'.repeat(32));
    const r1 = await get(wrong.toString(), f.cookie);
    expect(r1.status).toBe(401);
    const cb = await f.callback();
    expect(cb.status).toBe(302);
    expect(cb.headers.get('location')).toBe('http://app.test/sign-in#oauth_error=oauth_failed');
  });

  it('native: sends the app to {APP_SCHEME}://auth/callback?error=', async () => {
    fresh(google);
    google.refuse = 'access_denied';
    try {
      const f = await browserFlow(svc, { query: `?client=native&code_challenge=${pkce().challenge}` });
      const cb = await f.callback();
      expect(cb.status).toBe(302);
      expect(cb.headers.get('location')).toBe('helpdeskapp://auth/callback?error=access_denied');
    } finally {
      google.refuse = null;
    }
  });

  it('neither code nor error: 422 at query.code', async () => {
    const r = await svc.api.get('/v1/auth/oauth/google/callback?state=abc');
    expect(isErrorBody(r.body, 422, 'validation_failed'), r.text).toBe(true);
    expect(r.body.errors[0].location).toBe('query.code');
  });
});

describe('sign-in limits on the callback and the exchange', () => {
  it('counts refused callbacks and exchanges per address: past the limit 429, nobody signed in', async () => {
    const tight = await startService({
      ...BASE_ENV,
      ...providerEnv(google, 'GOOGLE'),
      SIGNIN_MAX_FAILURES_PER_IP: '4',
      SIGNIN_MAX_FAILURES_PER_ACCOUNT: '1000',
    });
    try {
      fresh(google);
      const f = await browserFlow(tight);
      // Two wrong states and two wrong codes: four refusals from this address.
      for (const state of ['a'.repeat(32), 'b'.repeat(32)]) {
        const wrong = new URL(f.back);
        wrong.searchParams.set('state', state);
        expect((await get(wrong.toString(), f.cookie)).status).toBe(401);
      }
      for (const code of ['c'.repeat(32), 'd'.repeat(32)]) {
        const r = await tight.api.post('/v1/auth/oauth/exchange', { code, code_verifier: pkce().verifier });
        expect(r.status).toBe(401);
      }
      // Now even the right flow is refused before it is looked at.
      const cb = await f.callback();
      expect(cb.status).toBe(429);
      const body = await cb.json();
      expect(isErrorBody(body, 429, 'rate_limited')).toBe(true);
      expect(Number(cb.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(signedIn(cb)).toBe(false);
      expect(await usersWith(tight, google.account.email)).toHaveLength(0);
      const ex = await tight.api.post('/v1/auth/oauth/exchange', {
        code: 'e'.repeat(32),
        code_verifier: pkce().verifier,
      });
      expect(isErrorBody(ex.body, 429, 'rate_limited'), ex.text).toBe(true);
      // The flow was not used up by the 429: it is still there.
      const flow = await tight.rt.deps.database.db
        .selectFrom('oauth_sign_in_flows')
        .select('state_hash')
        .where('state_hash', '=', hashSecret(f.state))
        .execute();
      expect(flow).toHaveLength(1);
    } finally {
      await tight.stop();
    }
  });

  it('successful sign-ins do not count', async () => {
    const easy = await startService({
      ...BASE_ENV,
      ...providerEnv(google, 'GOOGLE'),
      SIGNIN_MAX_FAILURES_PER_IP: '2',
    });
    try {
      for (let i = 0; i < 4; i++) {
        fresh(google);
        const cb = await (await browserFlow(easy)).callback();
        expect(cb.status).toBe(302);
        expect(signedIn(cb)).toBe(true);
      }
    } finally {
      await easy.stop();
    }
  });
});

describe('the sweep job', () => {
  it('deletes expired passkey challenges, OAuth flows and exchange codes, and keeps live ones', async () => {
    const db = svc.rt.deps.database.db;
    // Live rows through the API: two flows, two exchange codes, two passkey challenges.
    const flows = [await browserFlow(svc), await browserFlow(svc)];
    const { challenge } = pkce();
    fresh(google);
    const codes = [await nativeCode(svc, challenge), await nativeCode(svc, challenge)];
    const options = [
      await svc.api.post('/v1/auth/passkey/options', {}),
      await svc.api.post('/v1/auth/passkey/options', {}),
    ];
    for (const o of options) expect(o.status, o.text).toBe(200);
    const past = new Date(Date.now() - 1000);
    // The first of each pair is past its lifetime.
    await db
      .updateTable('oauth_sign_in_flows')
      .set({ expires_at: past })
      .where('state_hash', '=', hashSecret(flows[0]!.state))
      .execute();
    await db
      .updateTable('oauth_exchange_codes')
      .set({ expires_at: past })
      .where('code_hash', '=', hashSecret(codes[0]!))
      .execute();
    await db
      .updateTable('passkey_challenges')
      .set({ expires_at: past })
      .where('id', '=', options[0]!.body.challenge_id)
      .execute();
    await svc.rt.deps.jobs.send(SIGN_IN_SWEEP_JOB, {});
    const flowLeft = async (state: string) =>
      (
        await db
          .selectFrom('oauth_sign_in_flows')
          .select('state_hash')
          .where('state_hash', '=', hashSecret(state))
          .execute()
      ).length;
    await expect.poll(() => flowLeft(flows[0]!.state), { timeout: 20_000 }).toBe(0);
    // The job ran: the other expired rows are gone too, the live ones are all there.
    const codeLeft = async (code: string) =>
      (
        await db
          .selectFrom('oauth_exchange_codes')
          .select('code_hash')
          .where('code_hash', '=', hashSecret(code))
          .execute()
      ).length;
    const challengeLeft = async (id: string) =>
      (await db.selectFrom('passkey_challenges').select('id').where('id', '=', id).execute()).length;
    await expect.poll(() => codeLeft(codes[0]!)).toBe(0);
    await expect.poll(() => challengeLeft(options[0]!.body.challenge_id)).toBe(0);
    expect(await flowLeft(flows[1]!.state)).toBe(1);
    expect(await codeLeft(codes[1]!)).toBe(1);
    expect(await challengeLeft(options[1]!.body.challenge_id)).toBe(1);
    // The live ones still work: the second flow signs in.
    expect((await flows[1]!.callback()).status).toBe(302);
  });
});
