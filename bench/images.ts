// npm run bench:images: pictures (issue 26), on PostgreSQL (a fresh database, created here and
// dropped at the end; PG_URL, default postgres://postgres@127.0.0.1:5432).
//
//   BENCH_UPLOADERS=4 BENCH_SECONDS=20 BENCH_HTTP_CONNECTIONS=20 BENCH_HTTP_SECONDS=10 npm run bench:images
//
// (a) Uploads: BENCH_UPLOADERS clients each PUT a 2 MB JPEG (4,000 x 3,000 px… of noise, made
//     here with sharp) to /v1/me/avatar in a loop for BENCH_SECONDS; uploads per second and the
//     upload's p50/p99. Meanwhile a client asks GET /healthz every 10 ms on its own connection:
//     its p50/p99/max during the load, against the same measured with no load first. Target: the
//     health route's p99 under 20 ms while pictures are decoded (the pool keeps decoding off the
//     event loop).
// (b) The pipeline alone, in this process: the same JPEG processed BENCH_UPLOADERS at a time for
//     5 s, on the event loop's thread (sharp's own threads only) and then in the worker pool; a
//     1 ms timer's lateness (what a request would wait) p99 and max. This is the measurement the
//     pool is for.
// (c) Serving: GET /v1/images/{id} (the 256 px PNG) against the same bytes with the same headers
//     served from memory by Fastify (bench/static-server.mjs): autocannon, BENCH_HTTP_CONNECTIONS
//     connections, BENCH_HTTP_SECONDS each after 3 s of warm-up, the two one after the other.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import sharp from 'sharp';
import { PicturePool } from '../src/modules/images/pool.js';
import { PICTURE_LIMITS, processPicture } from '../src/modules/images/process.js';
import {
  call,
  cpuSeconds,
  envInt,
  expectStatus,
  freePort,
  HOST,
  percentile,
  ROOT,
  sleep,
  startServiceProcess,
} from './lib.js';

const UPLOADERS = envInt('BENCH_UPLOADERS', 4, 1, 64);
const SECONDS = envInt('BENCH_SECONDS', 20, 2, 3600);
const HTTP_CONNECTIONS = envInt('BENCH_HTTP_CONNECTIONS', 20, 1, 1000);
const HTTP_SECONDS = envInt('BENCH_HTTP_SECONDS', 10, 1, 600);
const PG_URL = (process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const STAMP = new Date()
  .toISOString()
  .replace(/[-:]/g, '')
  .replace(/\.\d+Z$/, 'Z');
const DB_NAME = `bench_images_${STAMP.toLowerCase()}`;

const ms = (v: number) => Math.round(v * 100) / 100;
const summary = (values: number[]) => {
  const s = [...values].sort((a, b) => a - b);
  return { n: s.length, p50: ms(percentile(s, 50)), p99: ms(percentile(s, 99)), max: ms(s.at(-1) ?? Number.NaN) };
};

/** A JPEG of about 2 MB: noise over a gradient (noise does not compress), 2,000 px or so a side. */
async function twoMegabyteJpeg(): Promise<Buffer> {
  let side = 1400;
  for (;;) {
    const raw = Buffer.alloc(side * side * 3);
    let seed = 42;
    for (let i = 0; i < raw.length; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      raw[i] = ((i / 3) % side) / (side / 200) + ((seed >> 16) & 55);
    }
    const jpeg = await sharp(raw, { raw: { width: side, height: side, channels: 3 } })
      .jpeg({ quality: 90 })
      .toBuffer();
    if (jpeg.length > 1.9e6 && jpeg.length < 2.2e6) return jpeg;
    side = Math.round(side * Math.sqrt(2.05e6 / jpeg.length));
    if (side > 4000) return jpeg;
  }
}

// ------------------------------------------------------------------------------------- (a) uploads

async function pingHealth(base: string, stopAt: () => boolean): Promise<number[]> {
  const times: number[] = [];
  while (!stopAt()) {
    const t0 = performance.now();
    const r = await fetch(`${base}/healthz`);
    await r.arrayBuffer();
    times.push(performance.now() - t0);
    await sleep(10);
  }
  return times;
}

async function uploads(base: string, token: string, jpeg: Buffer, pid: number | undefined) {
  // The first seconds of a process are start-up (job workers, code not optimized yet): a few
  // uploads and a wait before anything is measured.
  for (let i = 0; i < 3; i++) {
    const form = new FormData();
    form.append('file', new Blob([jpeg], { type: 'image/jpeg' }), 'warm.jpg');
    await (
      await fetch(`${base}/v1/me/avatar`, { method: 'PUT', headers: { authorization: `Bearer ${token}` }, body: form })
    ).arrayBuffer();
  }
  await sleep(5000);
  const quiet = await pingHealth(
    base,
    (() => {
      const end = Date.now() + 3000;
      return () => Date.now() > end;
    })(),
  );
  const end = Date.now() + SECONDS * 1000;
  const done = () => Date.now() > end;
  const times: number[] = [];
  let failed = 0;
  const cpu0 = cpuSeconds(pid);
  const started = performance.now();
  const health = pingHealth(base, done);
  await Promise.all(
    Array.from({ length: UPLOADERS }, async () => {
      while (!done()) {
        const form = new FormData();
        form.append('file', new Blob([jpeg], { type: 'image/jpeg' }), 'photo.jpg');
        const t0 = performance.now();
        const r = await fetch(`${base}/v1/me/avatar`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}` },
          body: form,
        });
        await r.arrayBuffer();
        if (r.status === 200) times.push(performance.now() - t0);
        else failed++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpu1 = cpuSeconds(pid);
  return {
    uploaders: UPLOADERS,
    seconds: ms(seconds),
    uploads: times.length,
    uploads_per_s: ms(times.length / seconds),
    failed,
    upload_ms: summary(times),
    healthz_ms_idle: summary(quiet),
    healthz_ms_under_load: summary(await health),
    service_cpu_s: cpu0 !== null && cpu1 !== null ? ms(cpu1 - cpu0) : null,
  };
}

// ----------------------------------------------------------------------------- (b) the pipeline

async function loopLag(run: () => Promise<unknown>, seconds: number) {
  const lags: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    lags.push(Math.max(0, now - last - 1));
    last = now;
  }, 1);
  const end = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: UPLOADERS }, async () => {
      while (Date.now() < end) {
        await run();
        n++;
      }
    }),
  );
  clearInterval(timer);
  return { pictures_per_s: ms(n / seconds), timer_lateness_ms: summary(lags) };
}

async function pipeline(jpeg: Buffer) {
  const limits = {
    maxSide: PICTURE_LIMITS.maxSide,
    maxPixels: PICTURE_LIMITS.maxPixels,
    minSide: PICTURE_LIMITS.minSide,
  };
  sharp.cache(false);
  const inline = await loopLag(() => processPicture(sharp, new Uint8Array(jpeg), 'crop', limits), 5);
  const pool = new PicturePool();
  await pool.process(jpeg, 'crop'); // start the workers
  const pooled = await loopLag(() => pool.process(new Uint8Array(jpeg), 'crop'), 5);
  await pool.close();
  return { concurrency: UPLOADERS, pool_workers: pool.size, on_event_loop_thread: inline, in_worker_pool: pooled };
}

// --------------------------------------------------------------------------------- (c) serving

function cannon(url: string, seconds: number) {
  return new Promise<autocannon.Result>((resolve, reject) => {
    autocannon({ url, connections: HTTP_CONNECTIONS, duration: seconds }, (err, r) => (err ? reject(err) : resolve(r)));
  });
}

let staticServer: ChildProcess | null = null;

async function startStatic(body: Buffer, headers: Record<string, string>, dir: string): Promise<string> {
  const bodyFile = join(dir, 'picture.body');
  const headersFile = join(dir, 'picture.headers.json');
  writeFileSync(bodyFile, body);
  writeFileSync(headersFile, JSON.stringify(headers));
  const port = await freePort();
  staticServer = spawn(process.execPath, [join(ROOT, 'bench', 'static-server.mjs'), bodyFile, headersFile], {
    env: { ...process.env, PORT: String(port), HOST },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const base = `http://${HOST}:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return base;
    } catch {
      // not yet
    }
    await sleep(100);
  }
  throw new Error('the static server did not start');
}

const rate = (r: autocannon.Result) => ({
  req_per_s: Math.round(r.requests.average),
  p50_ms: r.latency.p50,
  p99_ms: r.latency.p99,
  non_2xx: r.non2xx,
  errors: r.errors,
});

async function serving(base: string, avatarUrl: string, dir: string) {
  const id = avatarUrl.split('/').pop()!;
  const url = `${base}/v1/images/${id}`;
  const r = await fetch(url);
  const body = Buffer.from(await r.arrayBuffer());
  const headers: Record<string, string> = {};
  r.headers.forEach((v, k) => {
    headers[k] = v;
  });
  await cannon(url, 3);
  const service = await cannon(url, HTTP_SECONDS);
  const staticBase = await startStatic(body, headers, dir);
  await cannon(`${staticBase}/picture.png`, 3);
  const limit = await cannon(`${staticBase}/picture.png`, HTTP_SECONDS);
  staticServer?.kill('SIGTERM');
  staticServer = null;
  return {
    bytes: body.length,
    connections: HTTP_CONNECTIONS,
    service: rate(service),
    static_fastify: rate(limit),
    ratio: Math.round((service.requests.average / limit.requests.average) * 100) / 100,
  };
}

// -------------------------------------------------------------------------------------------------

async function main() {
  const jpeg = await twoMegabyteJpeg();
  const meta = await sharp(jpeg).metadata();
  console.log(`2 MB JPEG: ${jpeg.length} bytes, ${meta.width} x ${meta.height} px`);
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB_NAME}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-images-'));
  let exitCode = 0;
  try {
    const svc = await startServiceProcess({
      DATABASE_URL: `${PG_URL}/${DB_NAME}`,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '1000000',
    });
    try {
      const email = `bench-${STAMP.toLowerCase()}@example.com`;
      const reg = await call(svc.base, 'POST', '/v1/auth/register', { email, password: 'a long password', name: 'B' });
      expectStatus(reg, 201, 'register');
      const token = reg.body.access_token as string;
      const a = await uploads(svc.base, token, jpeg, svc.child.pid);
      console.log(JSON.stringify({ uploads: a }, null, 2));
      const me = await call(svc.base, 'GET', '/v1/me', undefined, { authorization: `Bearer ${token}` });
      const c = await serving(svc.base, me.body.avatar_url, dataDir);
      console.log(JSON.stringify({ serving: c }, null, 2));
    } finally {
      await svc.stop();
    }
    const b = await pipeline(jpeg);
    console.log(JSON.stringify({ pipeline: b }, null, 2));
  } catch (err) {
    console.error(err);
    exitCode = 1;
  } finally {
    staticServer?.kill('SIGTERM');
    await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(exitCode);
}

await main();
