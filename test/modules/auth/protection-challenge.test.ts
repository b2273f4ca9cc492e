// Sign-in protection, part 2 (part 1: protection.test.ts, setup in protection-setup.ts): the
// sign-in challenge (a stand-in siteverify server), App Attest attestations (genuine Apple
// fixtures) and the App Attest routes.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import cbor from 'cbor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpIdHash, verifyAttestationObject } from '../../../src/modules/auth/app-attest.js';
import { hashSecret } from '../../../src/platform/crypto/tokens.js';
import { isErrorBody, type Service, unique } from '../../support/helpers.js';
import { login, PASSWORD, protectionSuite, registered, type Siteverify, siteverify } from './protection-setup.js';

const suite = protectionSuite();
const { service } = suite;
let plain: Service;
beforeAll(() => {
  ({ plain } = suite);
});

// --- The human-verification challenge -------------------------------------------------------------

describe('the sign-in challenge', () => {
  let verify: Siteverify;
  let s: Service;
  beforeAll(async () => {
    verify = await siteverify('turnstile-secret');
    s = await service({
      CHALLENGE: 'turnstile',
      CHALLENGE_SECRET: 'turnstile-secret',
      CHALLENGE_VERIFY_URL: verify.url,
      SIGNIN_MAX_FAILURES_PER_ACCOUNT: '2',
      SIGNIN_MAX_FAILURES_PER_IP: '1000',
    });
  });
  afterAll(() => new Promise<void>((r) => verify.server.close(() => r())));

  it('needs challenge_token on login and register: missing or refused is 422 at body.challenge_token', async () => {
    const email = `${unique('human')}@example.com`;
    const noToken = await s.api.post('/v1/auth/register', { email, password: PASSWORD, name: 'Hu Man' });
    expect(noToken.status).toBe(422);
    expect(noToken.body.code).toBe('validation_failed');
    expect(noToken.body.errors[0].location).toBe('body.challenge_token');
    const seenBefore = verify.seen.length;
    const bad = await s.api.post('/v1/auth/register', {
      email,
      password: PASSWORD,
      name: 'Hu Man',
      challenge_token: 'bad-token',
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].location).toBe('body.challenge_token');
    expect(verify.seen.slice(seenBefore)).toEqual([
      {
        secret: 'turnstile-secret',
        response: 'bad-token',
        remoteip: '127.0.0.1',
        _method: 'POST',
        _path: '/siteverify',
        _type: 'application/x-www-form-urlencoded',
      },
    ]);
    const good = await s.api.post('/v1/auth/register', {
      email,
      password: PASSWORD,
      name: 'Hu Man',
      challenge_token: 'good-token',
    });
    expect(good.status).toBe(201);

    expect((await login(s, email, PASSWORD)).body.errors[0].location).toBe('body.challenge_token');
    expect((await login(s, email, PASSWORD, { challenge_token: 'bad-token' })).status).toBe(422);
    expect((await login(s, email, PASSWORD, { challenge_token: 'good-token' })).status).toBe(200);
    // A verified human with the wrong password is still refused.
    expect((await login(s, email, 'wrong password', { challenge_token: 'good-token' })).status).toBe(401);
  });

  it('does not count a refused challenge as a failed password', async () => {
    const p = await registered(s);
    for (let i = 0; i < 5; i++) {
      expect((await login(s, p.email, 'wrong password', { challenge_token: 'bad-token' })).status).toBe(422);
    }
    expect((await login(s, p.email, PASSWORD, { challenge_token: 'good-token' })).status).toBe(200);
  });

  it('fails closed with 503 when the provider cannot be reached', async () => {
    const p = await registered(s);
    verify.mode.down = true;
    try {
      const r = await login(s, p.email, PASSWORD, { challenge_token: 'good-token' });
      expect(r.status).toBe(503);
      expect(isErrorBody(r.body, 503, 'unavailable')).toBe(true);
    } finally {
      verify.mode.down = false;
    }
    expect((await login(s, p.email, PASSWORD, { challenge_token: 'good-token' })).status).toBe(200);
    expect(s.logs.join('\n')).not.toContain('good-token');
  });

  it('works the same with hCaptcha', async () => {
    const h = await siteverify('hcaptcha-secret');
    try {
      const hs = await service({
        CHALLENGE: 'hcaptcha',
        CHALLENGE_SECRET: 'hcaptcha-secret',
        CHALLENGE_VERIFY_URL: h.url,
      });
      const email = `${unique('hcap')}@example.com`;
      const reg = await hs.api.post('/v1/auth/register', {
        email,
        password: PASSWORD,
        name: 'H',
        challenge_token: 'good-token',
      });
      expect(reg.status).toBe(201);
      expect((await login(hs, email, PASSWORD, { challenge_token: 'nope' })).status).toBe(422);
      expect((await login(hs, email, PASSWORD)).status).toBe(422);
      expect((await login(hs, email, PASSWORD, { challenge_token: 'good-token' })).status).toBe(200);
      expect(h.seen.every((x) => x.secret === 'hcaptcha-secret')).toBe(true);
    } finally {
      await new Promise<void>((r) => h.server.close(() => r()));
    }
  });
});

// --- App Attest --------------------------------------------------------------------------------------

const APP_ID = 'V8H6LQ9448.io.uebelacker.AppAttestExample';
const APP = { teamIdentifier: 'V8H6LQ9448', bundleIdentifier: 'io.uebelacker.AppAttestExample' };
const fixture = (name: 'development' | 'production') =>
  JSON.parse(readFileSync(new URL(`./fixtures/app-attest/attestation-${name}.json`, import.meta.url), 'utf8')) as {
    attestation: string;
    challenge: string;
    keyId: string;
  };
/** Inside the fixtures' certificates' validity. */
const WHEN_VALID = new Date('2024-06-01T00:00:00Z');

describe('App Attest attestation verification (genuine Apple attestations)', () => {
  const dev = fixture('development');
  const prod = fixture('production');
  const challengeOf = (f: { challenge: string }) => Buffer.from(f.challenge, 'base64').toString('utf8');
  const input = (f: typeof dev) => ({ keyId: f.keyId, challenge: challengeOf(f), attestation: f.attestation });

  it('accepts them for the right app, challenge and key, within the certificates’ validity', () => {
    const d = verifyAttestationObject({ ...APP, allowDevelopment: true }, input(dev), WHEN_VALID);
    expect(d.environment).toBe('development');
    expect(d.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    const p = verifyAttestationObject({ ...APP, allowDevelopment: false }, input(prod), WHEN_VALID);
    expect(p.environment).toBe('production');
  });

  it('refuses another app, challenge, key, environment, a changed byte, or an expired certificate', () => {
    const refuse = (fn: () => unknown) => {
      let err: any;
      try {
        fn();
      } catch (e) {
        err = e;
      }
      expect(err?.code).toBe('validation_failed');
      expect(err?.errors?.[0]?.location).toBe('body.attestation');
    };
    const ok = { ...APP, allowDevelopment: true };
    refuse(() => verifyAttestationObject({ ...ok, teamIdentifier: 'AAAAAAAAAA' }, input(dev), WHEN_VALID));
    refuse(() => verifyAttestationObject({ ...ok, bundleIdentifier: 'com.evil.app' }, input(dev), WHEN_VALID));
    refuse(() => verifyAttestationObject(ok, { ...input(dev), challenge: challengeOf(prod) }, WHEN_VALID));
    refuse(() => verifyAttestationObject(ok, { ...input(dev), keyId: prod.keyId }, WHEN_VALID));
    refuse(() => verifyAttestationObject({ ...ok, allowDevelopment: false }, input(dev), WHEN_VALID));
    refuse(() => verifyAttestationObject(ok, input(dev), new Date()));
    // One changed bit in the credential certificate, the intermediate certificate or the
    // authenticator data. (The receipt is not verified: see app-attest.ts.)
    const bytes = Buffer.from(dev.attestation, 'base64');
    const decoded = cbor.decodeFirstSync(bytes) as { authData: Buffer; attStmt: { x5c: Buffer[] } };
    const offsets = [decoded.attStmt.x5c[0]!, decoded.attStmt.x5c[1]!, decoded.authData].flatMap((part) => {
      const start = bytes.indexOf(part);
      expect(start).toBeGreaterThan(0);
      return [start + 1, start + Math.floor(part.length / 2), start + part.length - 2];
    });
    for (const at of offsets) {
      const changed = Buffer.from(bytes);
      changed[at] = changed[at]! ^ 0x01;
      refuse(() => verifyAttestationObject(ok, { ...input(dev), attestation: changed.toString('base64') }, WHEN_VALID));
    }
    refuse(() =>
      verifyAttestationObject(ok, { ...input(dev), attestation: randomBytes(600).toString('base64') }, WHEN_VALID),
    );
  });
});

/** An App Attest key of our own (the device side), to make assertions. */
function deviceKey() {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const point = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x as string, 'base64url'),
    Buffer.from(jwk.y as string, 'base64url'),
  ]);
  return {
    keyId: createHash('sha256').update(point).digest('base64'),
    pem: publicKey.export({ type: 'spki', format: 'pem' }) as string,
    privateKey,
  };
}

/** What DCAppAttestService.generateAssertion makes: {signature, authenticatorData} in CBOR, base64. */
function assertion(privateKey: KeyObject, challenge: string, counter: number, appId = APP_ID): string {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter);
  const authenticatorData = Buffer.concat([rpIdHash(appId), Buffer.from([0x40]), count]);
  const clientDataHash = createHash('sha256').update(challenge, 'utf8').digest();
  const nonce = createHash('sha256')
    .update(Buffer.concat([authenticatorData, clientDataHash]))
    .digest();
  const signature = sign('sha256', nonce, privateKey);
  return (cbor.encode({ signature, authenticatorData }) as Buffer).toString('base64');
}

describe('App Attest routes', () => {
  let verify: Siteverify;
  let s: Service;
  beforeAll(async () => {
    verify = await siteverify('cs');
    s = await service({
      APP_ATTEST_APP_ID: APP_ID,
      APP_ATTEST_ENVIRONMENT: 'development',
      CHALLENGE: 'turnstile',
      CHALLENGE_SECRET: 'cs',
      CHALLENGE_VERIFY_URL: verify.url,
    });
  });
  afterAll(() => new Promise<void>((r) => verify.server.close(() => r())));

  const challenge = async () => {
    const r = await s.api.post('/v1/auth/app-attest/challenge');
    expect(r.status, r.text).toBe(200);
    return r.body as { challenge: string; expires_at: string };
  };
  const keys = (body: unknown) => s.api.post('/v1/auth/app-attest/keys', body);

  it('issues single-use five-minute challenges, stored only as hashes', async () => {
    const c = await challenge();
    expect(c.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const ttl = new Date(c.expires_at).getTime() - Date.now();
    expect(ttl).toBeGreaterThan(290_000);
    expect(ttl).toBeLessThanOrEqual(300_000);
    const rows = await s.rt.deps.database.db.selectFrom('app_attest_challenges').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(c.challenge);
    expect(rows.some((r) => r.challenge_hash === hashSecret(c.challenge))).toBe(true);
    const other = await challenge();
    expect(other.challenge).not.toBe(c.challenge);
  });

  it('validates the key registration body strictly', async () => {
    const c = await challenge();
    const key = deviceKey();
    const att = randomBytes(64).toString('base64');
    const cases: Array<[unknown, string]> = [
      [{ key_id: 'short', attestation: att, challenge: c.challenge }, 'body.key_id'],
      [{ key_id: key.keyId.replace(/=$/, '!'), attestation: att, challenge: c.challenge }, 'body.key_id'],
      [{ key_id: key.keyId, attestation: 'not base64 at all!', challenge: c.challenge }, 'body.attestation'],
      [{ key_id: key.keyId, attestation: 'A'.repeat(20_000), challenge: c.challenge }, 'body.attestation'],
      [{ key_id: key.keyId, attestation: att, challenge: 'has spaces in it!!' }, 'body.challenge'],
      [{ key_id: key.keyId, attestation: att }, 'body.challenge'],
      [{ key_id: key.keyId, attestation: att, challenge: c.challenge, extra: 1 }, 'body.extra'],
    ];
    for (const [body, location] of cases) {
      const r = await keys(body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(r.body.errors[0].location).toBe(location);
    }
    // None of these used the challenge up (they never reached it).
    const r = await keys({ key_id: key.keyId, attestation: att, challenge: c.challenge });
    expect(r.body.errors[0].location).toBe('body.attestation');
  });

  it('uses a challenge up on the first try, refuses unknown or expired ones, and stores no unverified key', async () => {
    const key = deviceKey();
    const garbage = randomBytes(400).toString('base64');
    const unknown = await keys({
      key_id: key.keyId,
      attestation: garbage,
      challenge: randomBytes(32).toString('base64url'),
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].location).toBe('body.challenge');

    const c = await challenge();
    const first = await keys({ key_id: key.keyId, attestation: garbage, challenge: c.challenge });
    expect(first.status).toBe(422);
    expect(first.body.errors[0].location).toBe('body.attestation');
    const second = await keys({ key_id: key.keyId, attestation: garbage, challenge: c.challenge });
    expect(second.status).toBe(422);
    expect(second.body.errors[0].location).toBe('body.challenge');

    // Two requests racing for one challenge: only one gets past it.
    const c2 = await challenge();
    const raced = await Promise.all(
      [0, 1].map(() => keys({ key_id: key.keyId, attestation: garbage, challenge: c2.challenge })),
    );
    expect(raced.map((r) => r.body.errors[0].location).sort()).toEqual(['body.attestation', 'body.challenge']);

    const c3 = await challenge();
    await s.rt.deps.database.db
      .updateTable('app_attest_challenges')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('challenge_hash', '=', hashSecret(c3.challenge))
      .execute();
    const expired = await keys({ key_id: key.keyId, attestation: garbage, challenge: c3.challenge });
    expect(expired.body.errors[0].location).toBe('body.challenge');

    // A genuine Apple attestation whose certificate has expired: refused, nothing stored.
    const dev = fixture('development');
    const devChallenge = Buffer.from(dev.challenge, 'base64').toString('utf8');
    await s.rt.deps.database.db
      .insertInto('app_attest_challenges')
      .values({ challenge_hash: hashSecret(devChallenge), expires_at: new Date(Date.now() + 60_000) })
      .execute();
    const genuine = await keys({ key_id: dev.keyId, attestation: dev.attestation, challenge: devChallenge });
    expect(genuine.status).toBe(422);
    expect(genuine.body.errors[0].location).toBe('body.attestation');
    const stored = await s.rt.deps.database.db.selectFrom('app_attest_keys').select('key_id').execute();
    expect(stored.map((k) => k.key_id)).not.toContain(dev.keyId);
  });

  it('signs in a native client with an assertion from a registered key instead of challenge_token', async () => {
    const p = await registered(s);
    const key = deviceKey();
    await s.rt.deps.database.db
      .insertInto('app_attest_keys')
      .values({ key_id: key.keyId, public_key: key.pem, environment: 'development' })
      .execute();
    const native = { headers: { 'svc-client': 'ios/3.1.0' } };
    const signIn = (proof: unknown) =>
      s.api.post('/v1/auth/login', { email: p.email, password: PASSWORD, app_attest: proof }, native);

    const c1 = (await challenge()).challenge;
    const ok = await signIn({ key_id: key.keyId, challenge: c1, assertion: assertion(key.privateKey, c1, 1) });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.refresh_token).toMatch(/^svc_rt_/);

    // The challenge is used up.
    const again = await signIn({ key_id: key.keyId, challenge: c1, assertion: assertion(key.privateKey, c1, 2) });
    expect(again.status).toBe(422);
    expect(again.body.errors[0].location).toBe('body.app_attest.challenge');
    // An assertion made for another challenge.
    const c2 = (await challenge()).challenge;
    const c2b = (await challenge()).challenge;
    const wrongChallenge = await signIn({
      key_id: key.keyId,
      challenge: c2,
      assertion: assertion(key.privateKey, c2b, 3),
    });
    expect(wrongChallenge.body.errors[0].location).toBe('body.app_attest.assertion');
    // The counter must grow.
    const c3 = (await challenge()).challenge;
    const sameCounter = await signIn({ key_id: key.keyId, challenge: c3, assertion: assertion(key.privateKey, c3, 1) });
    expect(sameCounter.body.errors[0].location).toBe('body.app_attest.assertion');
    // Another key's signature, another app's rpId, an unknown key.
    const stranger = deviceKey();
    const c4 = (await challenge()).challenge;
    const forged = await signIn({ key_id: key.keyId, challenge: c4, assertion: assertion(stranger.privateKey, c4, 5) });
    expect(forged.body.errors[0].location).toBe('body.app_attest.assertion');
    const c5 = (await challenge()).challenge;
    const otherApp = await signIn({
      key_id: key.keyId,
      challenge: c5,
      assertion: assertion(key.privateKey, c5, 6, 'AAAAAAAAAA.com.evil.app'),
    });
    expect(otherApp.body.errors[0].location).toBe('body.app_attest.assertion');
    const c6 = (await challenge()).challenge;
    const unknownKey = await signIn({
      key_id: stranger.keyId,
      challenge: c6,
      assertion: assertion(stranger.privateKey, c6, 1),
    });
    expect(unknownKey.body.errors[0].location).toBe('body.app_attest.key_id');
    // A later counter with a fresh challenge works again.
    const c7 = (await challenge()).challenge;
    const later = await signIn({ key_id: key.keyId, challenge: c7, assertion: assertion(key.privateKey, c7, 7) });
    expect(later.status).toBe(200);
    const row = await s.rt.deps.database.db
      .selectFrom('app_attest_keys')
      .select('sign_count')
      .where('key_id', '=', key.keyId)
      .executeTakeFirstOrThrow();
    expect(Number(row.sign_count)).toBe(7);
    // Without any proof: the challenge token is required.
    const none = await s.api.post('/v1/auth/login', { email: p.email, password: PASSWORD }, native);
    expect(none.body.errors[0].location).toBe('body.challenge_token');
  });

  it('is off (404) without APP_ATTEST_APP_ID', async () => {
    const off = plain;
    const r = await off.api.post('/v1/auth/app-attest/challenge');
    expect(r.status).toBe(404);
    expect(isErrorBody(r.body, 404, 'not_found')).toBe(true);
    const k = await off.api.post('/v1/auth/app-attest/keys', {
      key_id: deviceKey().keyId,
      attestation: randomBytes(64).toString('base64'),
      challenge: randomBytes(32).toString('base64url'),
    });
    expect(k.status).toBe(404);
  });
});
