// Redis down and back (issue 39 item 3): a private redis-server (its own port, no persistence),
// the service (a child process) with REDIS_URL pointing at it. While Redis is up, the rate-limit
// counters live in it; kill -9 it and requests keep working, the limits counted by the process
// itself (a 429 still comes: the limit holds), which it logs once; start Redis again and the
// counters are shared again (they reappear in Redis) — docs/operations.md "Several processes".
//
// PostgreSQL only (skipped without DATABASE_URL): CI runs it once, in the PostgreSQL run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildService, freePort, healthy, startProcess } from '../support/child-process.js';
import { Api, isErrorBody, newApiKey, newTenant, onPostgres, TEST_SECRET_KEY } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';
import { killHard, type PrivateRedis, privateRedis, redisCommand } from '../support/private-servers.js';

const FALLBACK = 'rate limits: Redis unreachable';
const BACK = 'rate limits: Redis reachable again';
const count = (text: string, what: string) => text.split(what).length - 1;

// Only on PostgreSQL: see the header.
describe.runIf(onPostgres)('Redis killed and started again', () => {
  let redis: PrivateRedis | null = null;
  let svc: ChildService | null = null;
  let db: OwnDatabase | null = null;
  // Made in the test, not here: a skipped suite's afterAll does not run.
  let dir = '';
  afterAll(async () => {
    await killHard(svc);
    await redis?.destroy();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('counts locally while Redis is down (logged once), keeps answering, and shares again once it is back', async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-fault-redis-'));
    const [redisPort, port, own] = await Promise.all([freePort(), freePort(), ownDatabase('faults_redis')]);
    db = own;
    redis = privateRedis(redisPort);
    await redis.start();
    svc = startProcess({
      DATA_DIR: dir,
      PORT: String(port),
      DATABASE_URL: own.env.DATABASE_URL ?? process.env.DATABASE_URL ?? '',
      SECRET_KEY: TEST_SECRET_KEY,
      REDIS_URL: redis.url,
      RATE_LIMIT_PER_MINUTE: '40',
      LOG_LEVEL: 'info',
    });
    await healthy(port);
    const api = new Api(`http://127.0.0.1:${port}`);
    const t = await newTenant(api);
    // One key per phase: each starts with a fresh minute of 40.
    const [before, during, after] = await Promise.all(
      [1, 2, 3].map(() => newApiKey(api, t, ['tickets:read']).then((k) => ({ token: k.key }))),
    );
    const keys = async () => (await redisCommand(redisPort, 'KEYS', 'svc-rl:*')).match(/svc-rl:/g)?.length ?? 0;

    // Up: the counters are in Redis.
    expect((await api.get('/v1/tickets', before)).status).toBe(200);
    expect(await keys()).toBeGreaterThan(0);

    // Down: every request answers, the limit still holds (counted in the process), logged once.
    await redis.kill();
    const statuses: number[] = [];
    for (let i = 0; i < 45; i++) {
      const r = await api.get('/v1/tickets', during);
      statuses.push(r.status);
      if (r.status === 429) expect(isErrorBody(r.body, 429, 'rate_limited'), r.text).toBe(true);
    }
    expect(
      statuses.slice(0, 40).every((s) => s === 200),
      statuses.join(','),
    ).toBe(true);
    expect(
      statuses.slice(40).every((s) => s === 429),
      statuses.join(','),
    ).toBe(true);
    expect(count(svc.out(), FALLBACK)).toBe(1);

    // Back: the counters are shared again (they are in the new, empty Redis), logged once.
    await redis.start();
    await expect
      .poll(
        async () => {
          const r = await api.get('/v1/tickets', after);
          return r.status === 200 && (await keys()) > 0;
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBe(true);
    await expect.poll(() => count(svc!.out(), BACK), { timeout: 5_000 }).toBe(1);
    expect(count(svc.out(), FALLBACK)).toBe(1);
    expect(svc.out() + svc.err()).not.toMatch(/ {4}at /);

    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
  }, 90_000);
});
