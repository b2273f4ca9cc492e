// npm run bench:inbound: raw mail through POST /v1/inbound/email, end to end.
//
// The service runs as a child process (npm start's code, jobs on) on a fresh PostgreSQL
// database, with one forwarding mailbox. This process posts MAILS raw RFC 822 messages to the
// inbound route (CONNS at a time): a mix of new conversations (from SENDERS customers, about
// one in four mails) and replies that thread by In-Reply-To into an earlier conversation, each
// about 3 KB (text and HTML parts, a quoted history to trim). Figures:
//
//   accepted/s      202 answers per second (the raw mail durably stored, the job queued);
//   processed/s     mails parsed, threaded and committed as messages per second, from the first
//                   202 to the last mail processed (what "end to end" means here: stored,
//                   threaded, message.created and ticket events in the outbox);
//   202 → visible   per mail, from its 202 (received_at, set in the storing transaction) to the
//                   commit of its message (processed_at, set in the same transaction as the
//                   message): p50, p90, p99, max.
//
// Checked afterwards: every mail processed (none failed or unrouted), one message per mail, one
// message.created event per message, no seq gap. Results: stdout and one JSON line in
// bench/results/inbound-<time>.jsonl. Exit code 1 when a check fails.
//
// Needs PostgreSQL at 127.0.0.1:5432 (user postgres, trust); the database is dropped at the end.
//
// Env (all optional):
//   MAILS    mails to post (default 10000, 100..100000)
//   SENDERS  distinct customers (default 500, 1..100000)
//   CONNS    concurrent posts (default 8, 1..100)
//   RATE     mails per second to post at (default 0: as fast as the route takes them); below the
//            processing rate, 202 → visible shows the latency of a mail without a backlog
//   PG_URL   PostgreSQL server URL without a database (default postgres://postgres@127.0.0.1:5432)
//   KEEP_DB=1  keep the database (its name is printed)
//   PROFILE_DIR  write the service's CPU profile there (node --cpu-prof), to see where a mail's time goes
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  call,
  cpuSeconds,
  envInt,
  expectStatus,
  percentile,
  type ServiceProcess,
  sleep,
  startServiceProcess,
} from './lib.js';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));

const MAILS = envInt('MAILS', 10_000, 100, 100_000);
const SENDERS = envInt('SENDERS', 500, 1, 100_000);
const CONNS = envInt('CONNS', 8, 1, 100);
const RATE = envInt('RATE', 0, 0, 100_000);
const PG_URL = (process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const KEEP_DB = process.env.KEEP_DB === '1';
const STAMP = new Date()
  .toISOString()
  .replace(/[-:]/g, '')
  .replace(/\.\d+Z$/, 'Z');
const DB_NAME = `svc_bench_inbound_${STAMP.toLowerCase().replace(/[^a-z0-9]/g, '')}_${process.pid}`;
const RESULTS = join(BENCH_DIR, 'results', `inbound-${STAMP}.jsonl`);

const LINES = [
  'The invoice for last month shows the wrong number of seats.',
  'Since the update the export to CSV stops halfway through.',
  'Could you tell me when the refund will reach my card?',
  'Our team cannot log in with single sign-on since this morning.',
  'The mobile app crashes when I open an attachment.',
  'Please change the billing address on our account.',
];

/** A raw mail: a new conversation (no In-Reply-To) or a reply to `parent` with a quoted history. */
function rawMail(i: number, from: string, to: string, parent: string | null): { raw: Buffer; id: string } {
  const id = `<bench-${i}-${randomBytes(6).toString('hex')}@customer.example>`;
  const line = LINES[i % LINES.length]!;
  const quote = parent
    ? `\r\n\r\nOn Mon, 16 Nov 2026 at 10:00, Support <support@example.com> wrote:\r\n> Thanks for writing in.\r\n> We are looking into it.\r\n> ${'Earlier text of the conversation. '.repeat(10)}\r\n`
    : '';
  const text = `Hello,\r\n\r\n${line}\r\n${'More detail about what happened and what I tried. '.repeat(12)}\r\n\r\nRegards,\r\nCustomer ${i}${quote}`;
  const html = `<div dir="ltr"><p>Hello,</p><p>${line}</p><p>${'More detail about what happened and what I tried. '.repeat(12)}</p><p>Regards,<br>Customer ${i}</p></div>${parent ? `<div class="gmail_quote"><div class="gmail_attr">On Mon, 16 Nov 2026 at 10:00, Support wrote:</div><blockquote class="gmail_quote">Thanks for writing in. We are looking into it.</blockquote></div>` : ''}`;
  const boundary = `b${randomBytes(8).toString('hex')}`;
  const headers = [
    `From: Customer ${i % SENDERS} <${from}>`,
    `To: Support <${to}>`,
    `Subject: ${parent ? 'Re: ' : ''}${line.slice(0, 40)}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: ${id}`,
    ...(parent ? [`In-Reply-To: ${parent}`, `References: ${parent}`] : []),
    'MIME-Version: 1.0',
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
  ];
  const body = [
    `--${boundary}`,
    'Content-Type: text/plain; charset=UTF-8',
    '',
    text,
    `--${boundary}`,
    'Content-Type: text/html; charset=UTF-8',
    '',
    html,
    `--${boundary}--`,
    '',
  ];
  return { raw: Buffer.from(`${headers.join('\r\n')}\r\n\r\n${body.join('\r\n')}`), id };
}

let service: ServiceProcess | null = null;

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: `${PG_URL}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${DB_NAME}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-inbound-'));
  let db: pg.Client | null = null;
  let exitCode = 0;
  try {
    const secret = randomBytes(32).toString('base64url');
    service = await startServiceProcess(
      {
        DATABASE_URL: `${PG_URL}/${DB_NAME}`,
        DATA_DIR: dataDir,
        RATE_LIMIT_PER_MINUTE: '10000000',
        LOG_LEVEL: 'warn',
        SECRET_KEY: randomBytes(32).toString('base64url'),
        INBOUND_SECRET: secret,
        INBOUND_DOMAIN: 'in.bench.example',
      },
      process.env.PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.PROFILE_DIR}`] : [],
    );
    const base = service.base;
    const reg = await call(base, 'POST', '/v1/auth/register', {
      email: `bench-inbound-${process.pid}@example.com`,
      password: 'bench password 0123456789',
      name: 'Bench Owner',
    });
    expectStatus(reg, 201, 'register');
    const auth = { authorization: `Bearer ${reg.body.access_token}` };
    const ws = await call(base, 'POST', '/v1/workspaces', { name: 'Bench inbound' }, auth);
    expectStatus(ws, 201, 'workspace');
    const as = { ...auth, 'svc-workspace': String(ws.body.id) };
    const mb = await call(base, 'POST', '/v1/mailboxes', { name: 'Support', email: 'support@bench.example' }, as);
    expectStatus(mb, 201, 'mailbox');
    const to = String(mb.body.forwarding_address);
    const workspaceId = String(ws.body.id);

    db = new pg.Client({ connectionString: `${PG_URL}/${DB_NAME}` });
    await db.connect();
    const seq0 = Number(
      (await db.query('SELECT coalesce(max(seq), 0) AS s FROM events WHERE workspace_id = $1', [workspaceId])).rows[0]
        .s,
    );

    console.log(
      `bench:inbound ${STAMP}: ${MAILS} mails, ${SENDERS} senders, ${CONNS} concurrent posts${RATE > 0 ? ` at ${RATE}/s` : ''}; database ${DB_NAME}`,
    );
    // Conversations: about one mail in four starts one; the others reply to a recent one.
    const starts: string[] = [];
    const plan = Array.from({ length: MAILS }, (_, i) => {
      const from = `customer${i % SENDERS}@customer.example`;
      const parent = starts.length > 0 && i % 4 !== 0 ? starts[(i * 7919) % starts.length]! : null;
      const m = rawMail(i, from, 'support@bench.example', parent);
      if (!parent) starts.push(m.id);
      return m;
    });
    const cpu0 = cpuSeconds(service.child.pid);
    const t0 = Date.now();
    let next = 0;
    let refused = 0;
    const post = async () => {
      while (next < plan.length) {
        const i = next++;
        const m = plan[i]!;
        if (RATE > 0) {
          const wait = t0 + (i * 1000) / RATE - Date.now();
          if (wait > 0) await sleep(wait);
        }
        const r = await fetch(`${base}/v1/inbound/email?to=${encodeURIComponent(to)}`, {
          method: 'POST',
          headers: { 'content-type': 'message/rfc822', 'svc-inbound-secret': secret },
          body: m.raw,
        });
        await r.arrayBuffer();
        if (r.status !== 202) refused++;
      }
    };
    await Promise.all(Array.from({ length: CONNS }, post));
    const acceptedS = (Date.now() - t0) / 1000;
    // Until every mail is processed (or failed), at most 10 minutes.
    let left = MAILS;
    for (let i = 0; i < 6000 && left > 0; i++) {
      left = Number((await db.query("SELECT count(*) AS n FROM inbound_emails WHERE status = 'received'")).rows[0].n);
      if (left > 0) await sleep(100);
    }
    const cpu1 = cpuSeconds(service.child.pid);
    const rows = (
      await db.query<{ status: string; ms: number; done: Date | null; got: Date }>(
        `SELECT status, extract(epoch FROM (processed_at - received_at)) * 1000 AS ms, processed_at AS done, received_at AS got
           FROM inbound_emails WHERE workspace_id = $1`,
        [workspaceId],
      )
    ).rows;
    const processed = rows.filter((r) => r.status === 'processed');
    const firstIn = Math.min(...rows.map((r) => r.got.getTime()));
    const lastDone = Math.max(...processed.map((r) => (r.done ? r.done.getTime() : 0)));
    const lat = processed.map((r) => Number(r.ms)).sort((a, b) => a - b);
    const messages = Number(
      (
        await db.query("SELECT count(*) AS n FROM messages WHERE workspace_id = $1 AND direction = 'inbound'", [
          workspaceId,
        ])
      ).rows[0].n,
    );
    const ev = (
      await db.query<{ type: string; n: string }>(
        'SELECT type, count(*) AS n FROM events WHERE workspace_id = $1 AND seq > $2 GROUP BY type',
        [workspaceId, seq0],
      )
    ).rows;
    const events = Object.fromEntries(ev.map((r) => [r.type, Number(r.n)]));
    const gap = (
      await db.query(
        'SELECT count(*) AS n FROM (SELECT seq - lag(seq) OVER (ORDER BY seq) AS d FROM events WHERE workspace_id = $1) x WHERE d > 1',
        [workspaceId],
      )
    ).rows[0].n;
    const tickets = Number(
      (await db.query('SELECT count(*) AS n FROM tickets WHERE workspace_id = $1', [workspaceId])).rows[0].n,
    );
    const result = {
      bench: 'inbound',
      at: STAMP,
      mails: MAILS,
      senders: SENDERS,
      conns: CONNS,
      rate: RATE || null,
      refused,
      accepted_per_s: Math.round(MAILS / acceptedS),
      processed: processed.length,
      not_processed: rows.length - processed.length,
      processed_per_s: Math.round((processed.length / (lastDone - firstIn)) * 1000),
      visible_ms: {
        p50: Math.round(percentile(lat, 50)),
        p90: Math.round(percentile(lat, 90)),
        p99: Math.round(percentile(lat, 99)),
        max: Math.round(lat[lat.length - 1] ?? Number.NaN),
      },
      tickets,
      messages,
      events,
      seq_gaps: Number(gap),
      service_cpu_ms_per_mail:
        cpu0 !== null && cpu1 !== null ? Math.round(((cpu1 - cpu0) * 1000 * 100) / MAILS) / 100 : null,
    };
    console.log(
      `  accepted ${result.accepted_per_s}/s (${refused} not 202); processed ${processed.length} of ${MAILS} at ${result.processed_per_s}/s end to end`,
    );
    console.log(
      `  202 → message committed: p50 ${result.visible_ms.p50} ms, p90 ${result.visible_ms.p90} ms, p99 ${result.visible_ms.p99} ms, max ${result.visible_ms.max} ms`,
    );
    console.log(
      `  ${tickets} tickets, ${messages} inbound messages, events ${JSON.stringify(events)}, seq gaps ${result.seq_gaps}; service CPU ${result.service_cpu_ms_per_mail} ms per mail`,
    );
    const ok =
      refused === 0 &&
      processed.length === MAILS &&
      messages === MAILS &&
      (events['message.created'] ?? 0) === MAILS &&
      result.seq_gaps === 0;
    if (!ok) {
      console.error('CHECK FAILED: not every mail became exactly one message with its event');
      exitCode = 1;
    }
    mkdirSync(dirname(RESULTS), { recursive: true });
    appendFileSync(RESULTS, `${JSON.stringify(result)}\n`);
    console.log(`results appended to ${RESULTS}`);
  } finally {
    await db?.end().catch(() => {});
    await service?.stop();
    if (KEEP_DB) console.log(`kept database ${PG_URL}/${DB_NAME}`);
    else await admin.query(`DROP DATABASE IF EXISTS ${DB_NAME} WITH (FORCE)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(exitCode);
}

await main();
