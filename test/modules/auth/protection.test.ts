import { request as httpRequest } from 'node:http';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import { accountKey, ipBucket } from '../../../src/modules/auth/protection.js';
import { isErrorBody, onPostgres, type Service, unique } from '../../support/helpers.js';
import { login, PASSWORD, protectionSuite, registered } from './protection-setup.js';

const suite = protectionSuite();
const { service } = suite;
let plain: Service;
beforeAll(() => {
  ({ plain } = suite);
});

/** The App Attest app id of the fixtures (protection-challenge.test.ts), set in the settings tests. */
const APP_ID = 'V8H6LQ9448.io.uebelacker.AppAttestExample';

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
