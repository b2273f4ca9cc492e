// npm run bench:ai: the service's own cost of an AI call (issue 34), against the OpenAI stand-in
// (test/support/ai-standin/) answering at once, in this process.
//
// The service is npm start's code (bench/lib.ts) on the embedded database (DATABASE_URL set: that
// PostgreSQL), with AI_PROVIDER=openai and AI_BASE_URL the stand-in. One workspace, one ticket
// with a customer's message, and three published articles (the draft searches them).
//
// (a) Overhead: CALLS calls of each feature, one at a time (rewrite, translate, ask, summary,
//     draft; not streamed). Per call: the client's time from sending the request to the end of
//     the answer, minus the stand-in's time from receiving the provider request to the end of its
//     answer: what the service adds (routing, auth, validation, the ticket and articles read,
//     prompt building, the SDK, metering, sanitizing, and the two loopback hops). Target: p99
//     under 5 ms.
// (b) First delta: STREAMS streamed drafts (Accept: text/event-stream). The stand-in sends the
//     first piece and holds the rest (a gate); measured from the moment the stand-in has written
//     that piece to the moment this client has read the `delta` event carrying it. Target: under
//     20 ms.
// (c) References, CALLS of each: `ref_get`, an authenticated GET /v1/workspace (routing, the
//     session's check, one statement, the answer: what any request costs here), and `ref_hop`,
//     this process asking the stand-in directly with fetch, less the stand-in's time (one loopback
//     hop like the SDK's, without the SDK). They say how much of (a) is not the AI call's own work.
//
// Each phase runs ROUNDS rounds (default 3) alternated (a, c, b, a, c, b, …); the figure is the median
// of the rounds' percentiles. Results: a table on stdout and one JSON line per round in
// bench/results/ai-<time>.jsonl.
//
// Env: CALLS (default 200, 10..10000), STREAMS (default 100, 10..10000), ROUNDS (default 3, 1..15),
//      WARMUP (calls before measuring, default 50), SERVICE_CPU_PROF (a folder: the service runs with
//      node --cpu-prof there; read the profile with bench/profile-top.ts).
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { gate, type OpenAiStandIn, startOpenAiStandIn } from '../test/support/ai-standin/index.js';
import { call, envInt, expectStatus, percentile, startServiceProcess } from './lib.js';

const CALLS = envInt('CALLS', 200, 10, 10_000);
const STREAMS = envInt('STREAMS', 100, 10, 10_000);
const ROUNDS = envInt('ROUNDS', 3, 1, 15);
const WARMUP = envInt('WARMUP', 50, 0, 10_000);
const PROF = process.env.SERVICE_CPU_PROF ? resolve(process.env.SERVICE_CPU_PROF) : null;
const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
const STAMP = new Date()
  .toISOString()
  .replace(/[-:]/g, '')
  .replace(/\.\d+Z$/, 'Z');
const RESULTS = join(BENCH_DIR, 'results', `ai-${STAMP}.jsonl`);

type Headers = Record<string, string>;
interface Feature {
  name: string;
  path: string;
  body: unknown;
}

/** A reference request: what a request costs here without the AI call's own work. */
interface Reference {
  name: string;
  method: 'GET' | 'POST';
  url: string;
  headers: Headers;
  body?: unknown;
  /** Through the stand-in: its own time is taken off, as for a feature. */
  standIn: boolean;
}

async function setUp(base: string): Promise<{ headers: Headers; features: Feature[] }> {
  const reg = await call(base, 'POST', '/v1/auth/register', {
    email: `bench-ai-${process.pid}@example.com`,
    password: 'bench password 0123456789',
    name: 'Olivia Agent',
  });
  expectStatus(reg, 201, 'register');
  const auth = { authorization: `Bearer ${reg.body.access_token}` };
  const ws = await call(base, 'POST', '/v1/workspaces', { name: 'Bench AI' }, auth);
  expectStatus(ws, 201, 'workspace');
  const headers = { ...auth, 'svc-workspace': String(ws.body.id) };
  const collection = await call(base, 'POST', '/v1/kb/collections', { name: 'Billing' }, headers);
  expectStatus(collection, 201, 'collection');
  for (const title of ['Refunds for annual plans', 'Changing the card on file', 'Invoices and receipts']) {
    const a = await call(
      base,
      'POST',
      '/v1/kb/articles',
      {
        collection_id: collection.body.id,
        title,
        body_html: `<p>${title}: how it works, step by step, for every plan and every invoice.</p>`,
        status: 'published',
      },
      headers,
    );
    expectStatus(a, 201, 'article');
  }
  const ticket = await call(
    base,
    'POST',
    '/v1/tickets',
    {
      subject: 'Refund for my annual plan',
      contact: { email: 'dana@example.com', name: 'Dana Customer' },
      body_html:
        '<p>Hello, I was charged for the annual plan twice this month. Can I get a refund of the second invoice?</p>',
    },
    headers,
  );
  expectStatus(ticket, 201, 'ticket');
  const t = `/v1/tickets/${ticket.body.id}/ai`;
  const html = '<p>Thanks for writing in. We have refunded the second invoice; it shows on your card in 5 days.</p>';
  return {
    headers,
    features: [
      { name: 'rewrite', path: '/v1/ai/rewrite', body: { html, mode: 'friendlier' } },
      { name: 'translate', path: '/v1/ai/translate', body: { html, target: 'de' } },
      { name: 'ask', path: `${t}/ask`, body: { question: 'What does the customer want?' } },
      { name: 'summary', path: `${t}/summary`, body: {} },
      { name: 'draft', path: `${t}/draft`, body: {} },
    ],
  };
}

/** One call; the service's part of its time (ms). */
const overheadOf = (ai: OpenAiStandIn, base: string, headers: Headers, f: Feature): Promise<number> =>
  timed(ai, { name: f.name, method: 'POST', url: base + f.path, headers, body: f.body, standIn: true });

/** One request's time (ms), less the stand-in's time from receiving it to the end of its answer. */
async function timed(ai: OpenAiStandIn, q: Reference): Promise<number> {
  const n = ai.requests.length;
  let arrived = 0;
  let answered = 0;
  const seen = q.standIn
    ? ai.request(n).then(async (r) => {
        arrived = performance.now();
        await r.done;
        answered = performance.now();
      })
    : null;
  const t0 = performance.now();
  const r = await fetch(q.url, {
    method: q.method,
    headers: { ...q.headers, ...(q.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(q.body === undefined ? {} : { body: JSON.stringify(q.body) }),
  });
  const text = await r.text();
  const t1 = performance.now();
  if (r.status !== 200) throw new Error(`${q.name}: ${r.status} ${text.slice(0, 300)}`);
  await seen;
  return t1 - t0 - (answered - arrived);
}

/**
 * The two references: an authenticated GET of the service reading one row (routing, the
 * session's check, one statement, the answer: what any request costs here), and this process
 * asking the stand-in directly with fetch (one loopback hop, as the SDK's, without the SDK).
 */
function references(base: string, headers: Headers, ai: OpenAiStandIn): Reference[] {
  return [
    { name: 'ref_get', method: 'GET', url: `${base}/v1/workspace`, headers, standIn: false },
    {
      name: 'ref_hop',
      method: 'POST',
      url: `${ai.url}/chat/completions`,
      headers: { authorization: 'Bearer sk-bench' },
      body: {
        model: 'gpt-4.1-mini',
        messages: [
          { role: 'system', content: 'Rewrite the text.' },
          { role: 'user', content: 'Thanks for writing in.' },
        ],
        max_completion_tokens: 300,
      },
      standIn: true,
    },
  ];
}

/** One streamed draft: ms from the stand-in's first piece written to this client reading it. */
async function firstDelta(ai: OpenAiStandIn, base: string, headers: Headers, path: string): Promise<number> {
  const g = gate();
  let sent = 0;
  void g.reached.then(() => {
    sent = performance.now();
  });
  ai.answer({
    gate: g,
    text: 'Hello Dana, thanks for writing in about the refund.',
    chunks: ['Hello', ' Dana, thanks for writing in about the refund.'],
  });
  const ctrl = new AbortController();
  const r = await fetch(base + path, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: '{}',
    signal: ctrl.signal,
  });
  if (r.status !== 200 || !r.body) throw new Error(`streamed draft: ${r.status} ${await r.text()}`);
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let got = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error('the stream ended before its done event');
    buf += decoder.decode(value, { stream: true });
    if (!got && /(^|\n)event: delta\n/.test(buf)) {
      got = performance.now();
      g.release();
    }
    if (/(^|\n)event: done\n/.test(buf) && buf.endsWith('\n\n')) break;
  }
  await reader.cancel().catch(() => {});
  if (!sent) throw new Error('the stand-in never sent its first piece');
  return got - sent;
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] ?? 0 };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function main() {
  mkdirSync(dirname(RESULTS), { recursive: true });
  const ai = await startOpenAiStandIn({ keys: ['sk-bench'] });
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-ai-'));
  const svc = await startServiceProcess(
    {
      DATA_DIR: dataDir,
      ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : { DATABASE_IN_MEMORY: 'true' }),
      AI_PROVIDER: 'openai',
      AI_BASE_URL: ai.url,
      AI_API_KEY: 'sk-bench',
      AI_MODEL: 'gpt-4.1-mini',
      LOG_LEVEL: 'warn',
      // One client makes every call: the per-minute limit (700 by default) would answer 429.
      RATE_LIMIT_PER_MINUTE: '10000000',
    },
    PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROF}`] : [],
  );
  try {
    const { headers, features } = await setUp(svc.base);
    const refs = references(svc.base, headers, ai);
    const draft = features.find((f) => f.name === 'draft') as Feature;
    for (let i = 0; i < WARMUP; i++) {
      for (const f of features) await overheadOf(ai, svc.base, headers, f);
      for (const q of refs) await timed(ai, q);
      await firstDelta(ai, svc.base, headers, draft.path);
    }
    const perRound: Array<Record<string, ReturnType<typeof stats>>> = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const row: Record<string, ReturnType<typeof stats>> = {};
      const all: number[] = [];
      for (const f of features) {
        const xs: number[] = [];
        for (let i = 0; i < CALLS; i++) xs.push(await overheadOf(ai, svc.base, headers, f));
        row[f.name] = stats(xs);
        all.push(...xs);
      }
      row.all = stats(all);
      for (const q of refs) {
        const xs: number[] = [];
        for (let i = 0; i < CALLS; i++) xs.push(await timed(ai, q));
        row[q.name] = stats(xs);
      }
      const deltas: number[] = [];
      for (let i = 0; i < STREAMS; i++) deltas.push(await firstDelta(ai, svc.base, headers, draft.path));
      row.first_delta = stats(deltas);
      perRound.push(row);
      appendFileSync(RESULTS, `${JSON.stringify({ round, at: new Date().toISOString(), ...row })}\n`);
    }
    console.log(`AI overhead and first delta, ${ROUNDS} rounds (median of rounds), ms`);
    console.log('what            p50      p99      max');
    for (const k of Object.keys(perRound[0] ?? {})) {
      const p50 = median(perRound.map((r) => r[k]?.p50 ?? 0));
      const p99 = median(perRound.map((r) => r[k]?.p99 ?? 0));
      const max = median(perRound.map((r) => r[k]?.max ?? 0));
      console.log(
        `${k.padEnd(14)} ${p50.toFixed(2).padStart(6)}   ${p99.toFixed(2).padStart(6)}   ${max.toFixed(2).padStart(6)}`,
      );
    }
    console.log(`results: ${RESULTS}`);
  } finally {
    await svc.stop();
    await ai.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
