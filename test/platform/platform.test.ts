// Configuration, migrations and the job queue. The real process (npm start, npm run migrate) and
// graceful shutdown: test/platform/process.test.ts.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseDuration } from '../../src/config.js';
import { openDatabase } from '../../src/platform/db/index.js';
import { migrateToLatest } from '../../src/platform/db/migrate.js';
import { Jobs } from '../../src/platform/jobs/index.js';
import { onPostgres, type Service, startService } from '../support/helpers.js';
import { type OwnDatabase, ownDatabase } from '../support/own-database.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'svc-platform-'));

/**
 * A test that needs a new, empty PostgreSQL database got the shared one instead (the database
 * user may not create databases): what it exists to check cannot be checked. A failure in CI
 * (CI=1, .ci/run), where that must never pass quietly; a warning on a developer's machine.
 */
function withoutOwnDatabase(own: OwnDatabase, what: string): void {
  if (own.env.DATABASE_URL) return;
  const why = `no database of its own (CREATE DATABASE refused), so it cannot check ${what}`;
  if (process.env.CI) throw new Error(`${why} (CI=1: failing, not skipping)`);
  console.warn(`platform.test.ts: ${why}`);
}

describe('configuration', () => {
  it('has the documented defaults (README "Configuration") and generates secrets once', () => {
    const dir = tmp();
    const c = loadConfig({ DATA_DIR: dir });
    expect(c).toMatchObject({
      port: 3000,
      host: '127.0.0.1',
      publicUrl: 'http://localhost:3000',
      databaseUrl: null,
      natsUrl: null,
      redisUrl: null,
      eventRetentionMs: 7 * 86_400_000,
      // Both loopback spellings of the default address: the start banner prints 127.0.0.1.
      checkOrigins: ['http://localhost:3000', 'http://127.0.0.1:3000'],
      webhookAllowPrivate: false,
      challenge: { kind: 'none', secret: null },
      smtpUrl: null,
      rateLimitPerMinute: 700,
      attachmentMaxMb: 25,
      trustProxy: false,
      idempotencyLeaseMs: 60_000,
    });
    expect(c.generated).toEqual({ secretKey: true, inboundSecret: true });
    expect(Buffer.byteLength(c.secretKey)).toBeGreaterThanOrEqual(32);
    const again = loadConfig({ DATA_DIR: dir });
    expect(again.secretKey).toBe(c.secretKey);
    expect(again.inboundSecret).toBe(c.inboundSecret);
    expect(again.generated).toEqual({ secretKey: false, inboundSecret: false });
    expect(readFileSync(join(dir, 'secrets', 'secret_key'), 'utf8').trim()).toBe(c.secretKey);
  });

  it('reads every setting', () => {
    const c = loadConfig({
      DATA_DIR: tmp(),
      PORT: '8080',
      HOST: '0.0.0.0',
      PUBLIC_URL: 'https://help.example.com/',
      DATABASE_URL: 'postgres://u@db:5432/hd',
      NATS_URL: 'nats://nats:4222',
      REDIS_URL: 'redis://redis:6379',
      SECRET_KEY: 'k'.repeat(40),
      INBOUND_SECRET: 'inbound-secret-123456',
      EVENT_RETENTION: '36h',
      CHECK_ORIGINS: 'https://a.example.com, https://b.example.com',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      CHALLENGE: 'turnstile',
      CHALLENGE_SECRET: 'cs',
      AI_PROVIDER: 'openai',
      AI_BASE_URL: 'http://127.0.0.1:9999/v1',
      AI_API_KEY: 'sk',
      AI_MODEL: 'm',
      AI_FAST_MODEL: 'f',
      STRIPE_SECRET_KEY: 'sk_test',
      STRIPE_WEBHOOK_SECRET: 'whsec',
      STRIPE_API_BASE: 'http://127.0.0.1:12111',
      SMTP_URL: 'smtp://127.0.0.1:2525',
      TRUST_PROXY: 'true',
      IDEMPOTENCY_LEASE: '2m',
    });
    expect(c).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      publicUrl: 'https://help.example.com',
      eventRetentionMs: 36 * 3_600_000,
      checkOrigins: ['https://a.example.com', 'https://b.example.com'],
      webhookAllowPrivate: true,
      trustProxy: true,
      idempotencyLeaseMs: 120_000,
      challenge: { kind: 'turnstile', secret: 'cs' },
      ai: { provider: 'openai', baseUrl: 'http://127.0.0.1:9999/v1', apiKey: 'sk', model: 'm', fastModel: 'f' },
      stripe: { secretKey: 'sk_test', webhookSecret: 'whsec', apiBase: 'http://127.0.0.1:12111' },
      smtpUrl: 'smtp://127.0.0.1:2525',
      generated: { secretKey: false, inboundSecret: false },
    });
  });

  it('lets the agent socket take the loopback addresses while PUBLIC_URL is unset, and PUBLIC_URL alone once it is set', () => {
    expect(loadConfig({ DATA_DIR: tmp(), PORT: '8080' }).checkOrigins).toEqual([
      'http://localhost:8080',
      'http://127.0.0.1:8080',
    ]);
    // Listening on IPv6 too: [::1] is one more way to this machine.
    expect(loadConfig({ DATA_DIR: tmp(), PORT: '8080', HOST: '::' }).checkOrigins).toEqual([
      'http://localhost:8080',
      'http://127.0.0.1:8080',
      'http://[::1]:8080',
    ]);
    expect(loadConfig({ DATA_DIR: tmp(), PUBLIC_URL: 'http://localhost:3000' }).checkOrigins).toEqual([
      'http://localhost:3000',
    ]);
    expect(
      loadConfig({ DATA_DIR: tmp(), PUBLIC_URL: 'https://help.example.com', CHECK_ORIGINS: 'https://a.example.com' })
        .checkOrigins,
    ).toEqual(['https://a.example.com']);
  });

  it("takes a vendor's own API with a key alone, and another OpenAI-compatible server with the model it names", () => {
    expect(loadConfig({ DATA_DIR: tmp(), AI_PROVIDER: 'anthropic', AI_API_KEY: 'sk-ant' }).ai).toEqual({
      provider: 'anthropic',
      baseUrl: null,
      apiKey: 'sk-ant',
      model: null,
      fastModel: null,
      embeddings: 'embedded',
      embeddingModel: null,
    });
    // Ollama: no key.
    expect(
      loadConfig({
        DATA_DIR: tmp(),
        AI_PROVIDER: 'openai',
        AI_BASE_URL: 'http://127.0.0.1:11434/v1',
        AI_MODEL: 'llama3.1:8b',
      }).ai,
    ).toEqual({
      provider: 'openai',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: null,
      model: 'llama3.1:8b',
      fastModel: null,
      embeddings: 'embedded',
      embeddingModel: null,
    });
    expect(loadConfig({ DATA_DIR: tmp() }).ai.provider).toBeNull();
    // Semantic search through the provider's /embeddings: only an OpenAI-compatible one has it.
    expect(
      loadConfig({ DATA_DIR: tmp(), AI_PROVIDER: 'openai', AI_API_KEY: 'sk', AI_EMBEDDINGS: 'provider' }).ai,
    ).toMatchObject({ embeddings: 'provider', embeddingModel: 'text-embedding-3-small' });
    expect(() =>
      loadConfig({ DATA_DIR: tmp(), AI_PROVIDER: 'anthropic', AI_API_KEY: 'sk', AI_EMBEDDINGS: 'provider' }),
    ).toThrow(/AI_EMBEDDINGS/);
    expect(() => loadConfig({ DATA_DIR: tmp(), AI_EMBEDDINGS: 'sometimes' })).toThrow(/AI_EMBEDDINGS/);
  });

  it('names the variable of a bad value', () => {
    const bad: Array<[Record<string, string>, string]> = [
      [{ PORT: 'eighty' }, 'PORT'],
      [{ PORT: '70000' }, 'PORT'],
      [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
      [{ SECRET_KEY: 'short' }, 'SECRET_KEY'],
      [{ EVENT_RETENTION: 'a week' }, 'EVENT_RETENTION'],
      [{ CHECK_ORIGINS: 'not an origin' }, 'CHECK_ORIGINS'],
      [{ WEBHOOK_ALLOW_PRIVATE: 'maybe' }, 'WEBHOOK_ALLOW_PRIVATE'],
      [{ CHALLENGE: 'recaptcha' }, 'CHALLENGE'],
      [{ CHALLENGE: 'hcaptcha' }, 'CHALLENGE_SECRET'],
      [{ AI_PROVIDER: 'skynet' }, 'AI_PROVIDER'],
      [{ AI_API_KEY: 'sk-without-provider' }, 'AI_PROVIDER'],
      [{ AI_PROVIDER: 'anthropic' }, 'AI_API_KEY'],
      [{ AI_PROVIDER: 'openai', AI_BASE_URL: 'http://127.0.0.1:11434/v1' }, 'AI_MODEL'],
      [{ AI_PROVIDER: 'openai', AI_BASE_URL: 'ftp://x', AI_MODEL: 'm' }, 'AI_BASE_URL'],
      [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    ];
    for (const [env, variable] of bad) {
      let err: unknown;
      try {
        loadConfig({ DATA_DIR: tmp(), ...env });
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(env)).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe(variable);
      expect((err as ConfigError).message.startsWith(`${variable}: `)).toBe(true);
    }
    expect(parseDuration('7d')).toBe(604_800_000);
    expect(parseDuration('0d')).toBeNull();
  });
});

describe('migrations', () => {
  it('applies each migration once, also when several processes start at once', async () => {
    if (onPostgres) {
      // A fresh database of its own: three processes find it empty at the same moment.
      const own = await ownDatabase('platform_migrate', { empty: true });
      withoutOwnDatabase(own, 'that three processes apply every migration of an empty database between them');
      const url = own.env.DATABASE_URL ?? process.env.DATABASE_URL!;
      const dbs = await Promise.all([1, 2, 3].map(() => openDatabase({ databaseUrl: url, dataDir: tmp() })));
      try {
        const results = await Promise.all(dbs.map((d) => migrateToLatest(d.db as never)));
        const applied = results.flat();
        // Each migration applied by exactly one of the three, none twice.
        expect(new Set(applied).size).toBe(applied.length);
        const rows = await dbs[0]!.db
          .selectFrom('kysely_migration' as never)
          .select('name' as never)
          .execute();
        expect(rows.length).toBeGreaterThan(0);
        expect(new Set(rows.map((r: any) => r.name)).size).toBe(rows.length);
        // On the fresh database, all of them between the three (none missed).
        if (own.env.DATABASE_URL) expect([...applied].sort()).toEqual(rows.map((r: any) => r.name).sort());
        expect(await migrateToLatest(dbs[1]!.db as never)).toEqual([]);
      } finally {
        for (const d of dbs) await d.close();
        await own.drop();
      }
    } else {
      const d = await openDatabase({ databaseUrl: null, dataDir: tmp(), memory: true });
      try {
        const first = await migrateToLatest(d.db as never);
        expect(first[0]).toBe('0001_foundation');
        expect(await migrateToLatest(d.db as never)).toEqual([]);
      } finally {
        await d.close();
      }
    }
  });

  it.runIf(onPostgres)(
    'three processes starting at once on a fresh database all start: migrations, then the job queues',
    async () => {
      // pg-boss creates its queues on start; two processes creating the same queue at once once
      // deadlocked, and the loser failed to start ("deadlock detected").
      const own = await ownDatabase('platform_start', { empty: true });
      withoutOwnDatabase(own, 'three processes starting on an empty database');
      const started = await Promise.allSettled([1, 2, 3].map(() => startService(own.env, { jobs: true })));
      try {
        expect(started.map((s) => (s.status === 'rejected' ? String(s.reason) : 'started'))).toEqual([
          'started',
          'started',
          'started',
        ]);
        for (const s of started) {
          if (s.status !== 'fulfilled') continue;
          expect((await s.value.api.get('/readyz')).status).toBe(200);
        }
      } finally {
        for (const s of started) if (s.status === 'fulfilled') await s.value.stop();
        await own.drop();
      }
    },
    120_000,
  );
});

describe('job queue', () => {
  let svc: Service;
  beforeAll(async () => {
    svc = await startService();
  });
  afterAll(async () => svc?.stop());

  it('runs a job, retries a failing one, and honours startAfter', async () => {
    const { jobs } = svc.rt.deps;
    const queue = `test-${process.pid}-${Date.now()}`;
    const done: string[] = [];
    const doneAt = new Map<string, number>();
    let failures = 0;
    await jobs.work<{ n: string }>(
      queue,
      async (data) => {
        if (data.n === 'flaky' && failures++ === 0) throw new Error('first try fails');
        done.push(data.n);
        doneAt.set(data.n, Date.now());
      },
      { pollingIntervalSeconds: 0.5 },
    );
    await jobs.send(queue, { n: 'now' });
    await jobs.send(queue, { n: 'flaky' }, { retryLimit: 2, retryDelaySeconds: 1 });
    const laterAt = new Date(Date.now() + 2500);
    await jobs.send(queue, { n: 'later' }, { startAfter: laterAt });
    await expect.poll(() => done.includes('now'), { timeout: 15_000 }).toBe(true);
    // Not before its time, whenever the check runs (a loaded machine may take 2.5 s to get here).
    if (Date.now() < laterAt.getTime()) expect(done).not.toContain('later');
    await expect.poll(() => done.includes('flaky'), { timeout: 20_000 }).toBe(true);
    expect(failures).toBe(2);
    await expect.poll(() => done.includes('later'), { timeout: 20_000 }).toBe(true);
    expect(doneAt.get('later')).toBeGreaterThanOrEqual(laterAt.getTime());
  }, 60_000);

  it('drains a backlog without waiting for the polling interval between jobs', async () => {
    const { jobs } = svc.rt.deps;
    const queue = `test-drain-${process.pid}-${Date.now()}`;
    const got: number[] = [];
    for (let i = 0; i < 20; i++) await jobs.send(queue, { n: i });
    // With a 10 s interval, one job per interval would take over three minutes.
    await jobs.work<{ n: number }>(queue, async (d) => void got.push(d.n), {
      pollingIntervalSeconds: 10,
      concurrency: 2,
    });
    await expect.poll(() => got.length, { timeout: 15_000 }).toBe(20);
    const late: number[] = [];
    const queue2 = `test-wake-${process.pid}-${Date.now()}`;
    await jobs.work<{ n: number }>(queue2, async (d) => void late.push(d.n), { pollingIntervalSeconds: 10 });
    await new Promise((r) => setTimeout(r, 300));
    await jobs.send(queue2, { n: 1 });
    await expect.poll(() => late, { timeout: 5_000 }).toEqual([1]);
  }, 60_000);

  it('a job that ends after the queue stopped writes nothing on the closed database', async () => {
    // pg-boss reports a handler's outcome without awaiting it: a handler that outlives stop()
    // used to fail on a closed pool as an unhandled rejection (a red CI run).
    const database = await openDatabase({
      databaseUrl: process.env.DATABASE_URL || null,
      dataDir: tmp(),
      memory: !process.env.DATABASE_URL,
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => void unhandled.push(err);
    process.on('unhandledRejection', onUnhandled);
    const warned: string[] = [];
    const log = { warn: (_: object, msg: string) => void warned.push(msg), error: () => {} };
    const jobs = new Jobs(database, log, { stopTimeoutMs: 1000 });
    let release = () => {};
    const released = new Promise<void>((r) => {
      release = r;
    });
    let started = false;
    try {
      await jobs.start();
      const queue = `test-late-${process.pid}-${Date.now()}`;
      await jobs.work(
        queue,
        async () => {
          started = true;
          await released;
          throw new Error('ends after the stop');
        },
        { pollingIntervalSeconds: 0.5 },
      );
      await jobs.send(queue, { n: 1 });
      await expect.poll(() => started, { timeout: 15_000 }).toBe(true);
      await jobs.stop(); // gives up waiting after 1 s: the handler is still running
      await database.close();
      await expect(database.executeSql('select 1')).rejects.toThrow(); // closed for real
      release();
      await expect.poll(() => warned, { timeout: 5_000 }).toContain('job failed');
      // pg-boss's report of the failure runs on the following turns of the event loop.
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      release();
      process.off('unhandledRejection', onUnhandled);
    }
  }, 30_000);

  // The embedded database of the tests lives in memory, so a restart needs PostgreSQL.
  it.runIf(onPostgres)(
    'keeps queued jobs across a restart',
    async () => {
      const queue = `test-restart-${process.pid}-${Date.now()}`;
      // One queue across the restart (a test service has a queue of its own otherwise).
      const schema = `pgboss_restart_${process.pid}`;
      const first = await startService({}, { jobs: true, jobsSchema: schema });
      await first.rt.deps.jobs.send(queue, { n: 1 }, { startAfter: new Date(Date.now() + 1000) });
      await first.stop();
      const second = await startService({}, { jobs: true, jobsSchema: schema });
      try {
        const got: number[] = [];
        await second.rt.deps.jobs.work<{ n: number }>(queue, async (d) => void got.push(d.n), {
          pollingIntervalSeconds: 0.5,
        });
        await expect.poll(() => got, { timeout: 20_000 }).toEqual([1]);
      } finally {
        await second.stop();
      }
    },
    60_000,
  );
});
