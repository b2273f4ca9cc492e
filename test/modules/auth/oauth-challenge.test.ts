// The human check on OAuth sign-in (interface.md "Authentication" rule 5): with CHALLENGE set,
// `GET /v1/auth/oauth/{provider}/start` asks for `challenge_token` (or, from the native app, its
// device check as three app_attest_* query parameters) before it stores a flow or sends anyone to
// the provider; a link by a signed-in person asks for none. A stand-in siteverify server and a
// stand-in OpenID provider on loopback; a database of the file's own, so its flow rows are its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorBody, type Service, startService } from '../../support/helpers.js';
import { OIDC_CLIENT, type OidcProvider, startOidcProvider } from '../../support/oidc-provider.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';
import { type Siteverify, siteverify } from './protection-setup.js';

let google: OidcProvider;
let verify: Siteverify;
let own: OwnDatabase;
let svc: Service;

beforeAll(async () => {
  own = await ownDatabase('oauth_challenge');
  google = await startOidcProvider();
  verify = await siteverify('turnstile-secret');
  svc = await startService(
    {
      ...own.env,
      APP_URL: 'http://app.test',
      APP_SCHEME: 'helpdeskapp',
      CHALLENGE: 'turnstile',
      CHALLENGE_SECRET: 'turnstile-secret',
      CHALLENGE_VERIFY_URL: verify.url,
      APP_ATTEST_APP_ID: 'ABCDE12345.com.example.helpdesk',
      APP_ATTEST_ENVIRONMENT: 'development',
      GOOGLE_CLIENT_ID: OIDC_CLIENT.id,
      GOOGLE_CLIENT_SECRET: OIDC_CLIENT.secret,
      GOOGLE_AUTH_URL: `${google.base}/authorize`,
      GOOGLE_TOKEN_URL: `${google.base}/token`,
      GOOGLE_JWKS_URL: `${google.base}/keys`,
      GOOGLE_ISSUER: google.issuer,
    },
    { jobs: false },
  );
});
afterAll(async () => {
  await svc?.stop();
  await google?.close();
  await new Promise((r) => verify?.server.close(r));
  await own?.drop();
});

const get = (url: string, cookie = '') => fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
const start = (query: string, cookie = '') => get(`${svc.url}/v1/auth/oauth/google/start${query}`, cookie);
const cookiesOf = (r: Response) => r.headers.getSetCookie().map((c) => c.split(';')[0]!);
const flows = async () =>
  Number(
    (
      await svc.rt.deps.database.db
        .selectFrom('oauth_sign_in_flows')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** A refused start: 422 at `field`, and no flow stored, no cookie set, nobody sent to the provider. */
async function refused(r: Response, field: string) {
  expect(r.status).toBe(422);
  const body = (await r.json()) as { errors: Array<{ location: string }> };
  expect(isErrorBody(body, 422, 'validation_failed')).toBe(true);
  expect(body.errors.map((e) => e.location)).toContain(field);
  expect(r.headers.get('location')).toBeNull();
  expect(cookiesOf(r)).toEqual([]);
}

describe('the human check on OAuth sign-in start', () => {
  it('refuses a start without a token, with a refused token, and stores no flow', async () => {
    const before = await flows();
    const asked = verify.seen.length;
    await refused(await start(''), 'query.challenge_token');
    expect(verify.seen.length).toBe(asked); // nothing to verify: the provider was not asked
    await refused(await start('?challenge_token=bad-token'), 'query.challenge_token');
    expect(verify.seen.at(-1)).toMatchObject({ response: 'bad-token', secret: 'turnstile-secret' });
    expect(await flows()).toBe(before);
  });

  it('answers 503 when the check cannot be verified, and stores no flow', async () => {
    const before = await flows();
    verify.mode.down = true;
    try {
      const r = await start('?challenge_token=good-token');
      expect(r.status).toBe(503);
      expect(isErrorBody(await r.json(), 503, 'unavailable')).toBe(true);
    } finally {
      verify.mode.down = false;
    }
    expect(await flows()).toBe(before);
  });

  it('sends a checked browser to the provider, and the flow signs the person in; a link then asks for none', async () => {
    google.account = { sub: 'sub-challenge-1', email: 'checked@example.com', email_verified: true };
    const r = await start('?challenge_token=good-token');
    expect(r.status).toBe(302);
    const flowCookie = cookiesOf(r).find((c) => c.startsWith('svc_oauth_signin='))!;
    expect(flowCookie).toBeDefined();
    const atProvider = await get(r.headers.get('location')!);
    expect(atProvider.status).toBe(302);
    const sent = new URL(atProvider.headers.get('location')!);
    const back = await get(new URL(sent.pathname + sent.search, svc.url).toString(), flowCookie);
    expect(back.status).toBe(302);
    const session = cookiesOf(back).find((c) => c.startsWith('svc_rt_'));
    expect(session).toBeDefined();

    // Signed in, linking another account is not a sign-in: no human check.
    const link = await start('?link=1', session!);
    expect(link.status).toBe(302);
    expect(new URL(link.headers.get('location')!).origin).toBe(new URL(google.base).origin);
  });

  it("checks the native app's device proof instead of a token, at query.app_attest_*", async () => {
    const before = await flows();
    const native = '?client=native&code_challenge=' + 'a'.repeat(43);
    await refused(
      await start(`${native}&app_attest_key_id=key-1&app_attest_challenge=never-issued&app_attest_assertion=AAAA`),
      'query.app_attest_challenge',
    );
    await refused(
      await start(`${native}&app_attest_key_id=key-1&app_attest_challenge=never-issued`),
      'query.app_attest_assertion',
    );
    await refused(await start(native), 'query.challenge_token');
    expect(await flows()).toBe(before);
  });
});
