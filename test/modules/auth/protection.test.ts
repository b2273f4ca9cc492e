// Sign-in protection: failed-attempt limits per account and per IP address (429 with
// Retry-After and RateLimit-* headers; shared through Redis between processes), the same
// answers and similar timing for known and unknown emails, audit entries of failed sign-ins,
// the human-verification challenge against a stand-in siteverify server, and App Attest
// (single-use challenges, attestation checks with genuine Apple attestations, assertions).
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import cbor from 'cbor';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { rpIdHash, verifyAttestationObject } from '../../../src/modules/auth/app-attest.js';
import { accountKey, ipBucket } from '../../../src/modules/auth/protection.js';
import { hashSecret } from '../../../src/platform/crypto/tokens.js';
import { isErrorBody, onPostgres, type Service, startService, unique } from '../../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../../support/own-database.js';

const PASSWORD = 'correct horse battery';
const services: Service[] = [];
let own: OwnDatabase;
async function service(env: Record<string, string>): Promise<Service> {
  const s = await startService({ ...own.env, ...env }, { jobs: false });
  services.push(s);
  return s;
}
/** A service with the default settings (10 per account, 30 per address, no challenge, no App Attest). */
let plain: Service;
beforeAll(async () => {
  own = await ownDatabase('auth_protection');
  plain = await service({});
});
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()));
  await own?.drop();
});

async function registered(s: Service, name = 'Lou Lock'): Promise<{ email: string; userId: string; token: string }> {
  const email = `${unique('prot')}@example.com`;
  const r = await s.api.post('/v1/auth/register', { email, password: PASSWORD, name, challenge_token: 'good-token' });
  expect(r.status, r.text).toBe(201);
  return { email, userId: r.body.user.id, token: r.body.access_token };
}

const login = (s: Service, email: string, password: string, extra: Record<string, unknown> = {}) =>
  s.api.post('/v1/auth/login', { email, password, ...extra });

function expectLocked(r: { status: number; body: any; headers: Headers }, limit: number, windowSeconds: number) {
  expect(r.status).toBe(429);
  expect(isErrorBody(r.body, 429, 'rate_limited')).toBe(true);
  const retry = Number(r.headers.get('retry-after'));
  expect(Number.isInteger(retry)).toBe(true);
  expect(retry).toBeGreaterThan(0);
  expect(retry).toBeLessThanOrEqual(windowSeconds);
  expect(r.headers.get('ratelimit-limit')).toBe(String(limit));
  expect(r.headers.get('ratelimit-remaining')).toBe('0');
  expect(Number(r.headers.get('ratelimit-reset'))).toBe(retry);
}

describe('settings', () => {
  it('defaults to 10 per account and 30 per address in 15 minutes, and names a bad value', () => {
    const base = { DATABASE_IN_MEMORY: 'true', SECRET_KEY: 'k'.repeat(40), INBOUND_SECRET: 'i'.repeat(20) };
    const c = loadConfig(base);
    expect(c.signin).toEqual({ maxFailuresPerAccount: 10, maxFailuresPerIp: 30, windowMs: 900_000 });
    expect(c.challenge.verifyUrl).toBeNull();
    expect(c.appAttest).toEqual({ appId: null, allowDevelopment: false });
    const set = loadConfig({
      ...base,
      SIGNIN_MAX_FAILURES_PER_ACCOUNT: '5',
      SIGNIN_MAX_FAILURES_PER_IP: '50',
      SIGNIN_WINDOW: '1h',
      CHALLENGE: 'turnstile',
      CHALLENGE_SECRET: 's',
      CHALLENGE_VERIFY_URL: 'http://127.0.0.1:9/siteverify',
      APP_ATTEST_APP_ID: APP_ID,
      APP_ATTEST_ENVIRONMENT: 'development',
    });
    expect(set.signin).toEqual({ maxFailuresPerAccount: 5, maxFailuresPerIp: 50, windowMs: 3_600_000 });
    expect(set.challenge).toEqual({
      kind: 'turnstile',
      secret: 's',
      verifyUrl: 'http://127.0.0.1:9/siteverify',
      siteKey: null,
    });
    expect(set.appAttest).toEqual({ appId: APP_ID, allowDevelopment: true });
    for (const [name, value] of [
      ['SIGNIN_MAX_FAILURES_PER_ACCOUNT', '0'],
      ['SIGNIN_MAX_FAILURES_PER_IP', 'lots'],
      ['SIGNIN_WINDOW', 'a while'],
      ['CHALLENGE_VERIFY_URL', 'ftp://x'],
      ['APP_ATTEST_APP_ID', 'com.example.app'],
      ['APP_ATTEST_ENVIRONMENT', 'staging'],
    ]) {
      let err: unknown;
      try {
        loadConfig({ ...base, [name!]: value });
      } catch (e) {
        err = e;
      }
      expect(err, name).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe(name);
    }
  });
});

describe('failed sign-in limits per account', () => {
  let s: Service;
  beforeAll(async () => {
    s = await service({ SIGNIN_MAX_FAILURES_PER_ACCOUNT: '3', SIGNIN_MAX_FAILURES_PER_IP: '1000' });
  });

  it('locks an account after its maximum of failures, the same way whether or not the email exists', async () => {
    const known = await registered(s);
    const unknownEmail = `${unique('nobody')}@example.com`;
    for (let i = 0; i < 3; i++) {
      expect((await login(s, known.email, 'wrong password')).status).toBe(401);
      expect((await login(s, unknownEmail, 'wrong password')).status).toBe(401);
    }
    const lockedKnown = await login(s, known.email, 'wrong password');
    const lockedUnknown = await login(s, unknownEmail, 'wrong password');
    expectLocked(lockedKnown, 3, 900);
    expectLocked(lockedUnknown, 3, 900);
    // The same answer (the seconds to wait may differ by one between two requests).
    const sameShape = (b: any) => ({ ...b, detail: b.detail.replace(/\d+ s\b/, 'N s') });
    expect(sameShape(lockedKnown.body)).toEqual(sameShape(lockedUnknown.body));
    // Even the right password waits; the email is matched without regard to case or spaces.
    expectLocked(await login(s, known.email, PASSWORD), 3, 900);
    expectLocked(await login(s, ` ${known.email.toUpperCase()} `, PASSWORD), 3, 900);
    // Other accounts are not affected.
    const other = await registered(s);
    expect((await login(s, other.email, PASSWORD)).status).toBe(200);
  });

  it('does not count successful sign-ins', async () => {
    const p = await registered(s);
    for (let i = 0; i < 8; i++) expect((await login(s, p.email, PASSWORD)).status).toBe(200);
    expect((await login(s, p.email, 'wrong password')).status).toBe(401);
    expect((await login(s, p.email, PASSWORD)).status).toBe(200);
  });

  it('holds against a burst of parallel guesses', async () => {
    const p = await registered(s);
    const answers = await Promise.all(Array.from({ length: 12 }, () => login(s, p.email, 'wrong password')));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((x) => x === 401).length).toBeLessThanOrEqual(3);
    expect(statuses.filter((x) => x === 429).length).toBeGreaterThanOrEqual(9);
    expect(statuses.every((x) => x === 401 || x === 429)).toBe(true);
  });

  it('counts wrong two-factor codes against the account', async () => {
    const p = await registered(s);
    const start = await s.api.post('/v1/me/mfa/totp', undefined, { token: p.token });
    const { TOTP, Secret } = await import('otpauth');
    const totp = new TOTP({ secret: Secret.fromBase32(start.body.secret) });
    expect((await s.api.post('/v1/me/mfa/totp/confirm', { code: totp.generate() }, { token: p.token })).status).toBe(
      200,
    );
    const first = await login(s, p.email, PASSWORD);
    const current = new Set([-1, 0, 1].map((o) => totp.generate({ timestamp: Date.now() + o * 30_000 })));
    const wrong = ['000000', '111111', '222222', '333333', '444444'].filter((c) => !current.has(c));
    for (let i = 0; i < 3; i++) {
      const r = await s.api.post('/v1/auth/mfa', { mfa_token: first.body.mfa_token, code: wrong[i] });
      expect(r.status).toBe(401);
    }
    const locked = await s.api.post('/v1/auth/mfa', { mfa_token: first.body.mfa_token, code: wrong[3] });
    expectLocked(locked, 3, 900);
    expectLocked(await login(s, p.email, PASSWORD), 3, 900);
  });

  it('writes user.sign_in_failed in every workspace of a known account, and only for a failure', async () => {
    const p = await registered(s, 'Audra Audit');
    const w1 = await s.api.post('/v1/workspaces', { name: 'Audit One' }, { token: p.token });
    const w2 = await s.api.post('/v1/workspaces', { name: 'Audit Two' }, { token: p.token });
    const db = s.rt.deps.database.db;
    const entries = () =>
      db
        .selectFrom('audit_logs')
        .select(['workspace_id', 'actor_type', 'actor_user_id', 'ip', 'entity_type', 'entity_id', 'data'])
        .where('action', '=', 'user.sign_in_failed')
        .where('workspace_id', 'in', [w1.body.id, w2.body.id])
        .execute();
    expect((await login(s, p.email, PASSWORD)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
    expect(await entries()).toEqual([]);
    expect((await login(s, p.email, 'wrong password')).status).toBe(401);
    let rows = await entries();
    for (let i = 0; i < 50 && rows.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 20));
      rows = await entries();
    }
    expect(rows.map((r) => r.workspace_id).sort()).toEqual([w1.body.id, w2.body.id].sort());
    for (const r of rows) {
      expect(r).toMatchObject({
        actor_type: 'user',
        actor_user_id: p.userId,
        ip: '127.0.0.1',
        entity_type: 'user',
        entity_id: p.userId,
        data: { reason: 'password' },
      });
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(await entries()).toHaveLength(2);
  });
});

describe('failed sign-in limits per IP address', () => {
  it('locks the address after its maximum of failures across accounts, for every account', async () => {
    const s = await service({ SIGNIN_MAX_FAILURES_PER_ACCOUNT: '1000', SIGNIN_MAX_FAILURES_PER_IP: '4' });
    const p = await registered(s);
    for (let i = 0; i < 4; i++) {
      expect((await login(s, `${unique('spray')}@example.com`, 'wrong password')).status).toBe(401);
    }
    expectLocked(await login(s, `${unique('spray')}@example.com`, 'wrong password'), 4, 900);
    expectLocked(await login(s, p.email, PASSWORD), 4, 900);
  });

  it('lets attempts through again once the window has passed', async () => {
    const s = await service({ SIGNIN_MAX_FAILURES_PER_ACCOUNT: '2', SIGNIN_WINDOW: '2s' });
    const p = await registered(s);
    expect((await login(s, p.email, 'wrong password')).status).toBe(401);
    expect((await login(s, p.email, 'wrong password')).status).toBe(401);
    expectLocked(await login(s, p.email, PASSWORD), 2, 2);
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await login(s, p.email, PASSWORD)).status).toBe(200);
  });

  it('groups IPv6 addresses by /64 and leaves IPv4 as is', () => {
    expect(ipBucket('203.0.113.9')).toBe('203.0.113.9');
    expect(ipBucket('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(ipBucket('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(ipBucket('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(ipBucket('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(ipBucket('::1')).toBe('0:0:0:0::/64');
    expect(accountKey(' Ann@Example.COM ')).toBe(accountKey('ann@example.com'));
  });
});

describe('known and unknown emails', () => {
  it('answer the same, in a similar time', async () => {
    const s = plain;
    const p = await registered(s);
    const timed = async (email: string) => {
      const t = performance.now();
      const r = await login(s, email, 'wrong password');
      expect(r.status).toBe(401);
      return { ms: performance.now() - t, body: r.body };
    };
    await timed(p.email);
    await timed(`${unique('warm')}@example.com`);
    const known: number[] = [];
    const unknown: number[] = [];
    let bodies: unknown[] = [];
    for (let i = 0; i < 5; i++) {
      const a = await timed(p.email);
      const b = await timed(`${unique('ghost')}@example.com`);
      known.push(a.ms);
      unknown.push(b.ms);
      bodies = [a.body, b.body];
    }
    expect(bodies[0]).toEqual(bodies[1]);
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const ratio = median(known) / median(unknown);
    expect(ratio, `known ${median(known)} ms, unknown ${median(unknown)} ms`).toBeGreaterThan(0.2);
    expect(ratio).toBeLessThan(5);
  });
});

/**
 * A POST from another loopback address (127.0.0.2): Redis is shared with other test files, and
 * this keeps this test's counts (the sign-in ones and the general per-address ones) apart.
 */
function postFrom(
  s: Service,
  path: string,
  body: unknown,
  localAddress = '127.0.0.2',
): Promise<{ status: number; body: any; headers: Headers }> {
  const u = new URL(s.url + path);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        localAddress,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        let data = '';
        res.on('data', (c) => {
          data += c;
        });
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          resolve({ status: res.statusCode ?? 0, body: data ? JSON.parse(data) : null, headers });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

describe.runIf(Boolean(process.env.TEST_REDIS_URL) && onPostgres)('limits shared through Redis', () => {
  it('counts failures made on one process in the other', async () => {
    const env = {
      REDIS_URL: process.env.TEST_REDIS_URL!,
      SIGNIN_MAX_FAILURES_PER_ACCOUNT: '3',
      SIGNIN_MAX_FAILURES_PER_IP: '5',
    };
    const a = await service(env);
    const b = await service(env);
    const email = `${unique('redis')}@example.com`;
    const reg = await postFrom(a, '/v1/auth/register', { email, password: PASSWORD, name: 'Reddy' });
    expect(reg.status).toBe(201);
    const redis = new Redis(process.env.TEST_REDIS_URL!);
    const ipKey = 'svc-signin:ip:127.0.0.2';
    const acctKey = `svc-signin:acct:${accountKey(email)}`;
    const signIn = (s: Service, e: string, password: string) => postFrom(s, '/v1/auth/login', { email: e, password });
    try {
      await redis.del(ipKey);
      expect((await signIn(a, email, 'wrong password')).status).toBe(401);
      expect((await signIn(b, email, 'wrong password')).status).toBe(401);
      expect((await signIn(a, email, 'wrong password')).status).toBe(401);
      expectLocked(await signIn(b, email, PASSWORD), 3, 900);
      expectLocked(await signIn(a, email, PASSWORD), 3, 900);
      // The counts live in Redis, under a hash of the email and under the address.
      expect(await redis.zcard(acctKey)).toBe(3);
      expect(await redis.pttl(acctKey)).toBeGreaterThan(0);
      expect(await redis.zcard(ipKey)).toBe(3);
      // Two more failures on other accounts reach the address's limit of 5, on both processes.
      expect((await signIn(b, `${unique('other')}@example.com`, 'wrong password')).status).toBe(401);
      expect((await signIn(a, `${unique('other')}@example.com`, 'wrong password')).status).toBe(401);
      expectLocked(await signIn(b, `${unique('other')}@example.com`, 'wrong password'), 5, 900);
      expectLocked(await signIn(a, `${unique('other')}@example.com`, 'wrong password'), 5, 900);
      // Another address is not affected.
      const elsewhere = await postFrom(
        a,
        '/v1/auth/login',
        { email: `${unique('x')}@example.com`, password: 'x' },
        '127.0.0.3',
      );
      expect(elsewhere.status).toBe(401);
    } finally {
      await redis.del(acctKey, ipKey, 'svc-signin:ip:127.0.0.3');
      redis.disconnect();
    }
  });
});

// --- The human-verification challenge -------------------------------------------------------------

interface Siteverify {
  url: string;
  seen: Array<Record<string, string>>;
  mode: { down: boolean };
  server: Server;
}

/** A loopback stand-in for the provider's siteverify endpoint, speaking its protocol. */
async function siteverify(secret: string): Promise<Siteverify> {
  const seen: Array<Record<string, string>> = [];
  const mode = { down: false };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      seen.push({ ...form, _method: req.method ?? '', _path: req.url ?? '', _type: req.headers['content-type'] ?? '' });
      if (mode.down) {
        res.writeHead(502).end('bad gateway');
        return;
      }
      const ok = form.secret === secret && form.response === 'good-token';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          ok
            ? { success: true, challenge_ts: new Date().toISOString(), hostname: 'localhost', 'error-codes': [] }
            : {
                success: false,
                'error-codes': [form.secret === secret ? 'invalid-input-response' : 'invalid-input-secret'],
              },
        ),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/siteverify`, seen, mode, server };
}

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
