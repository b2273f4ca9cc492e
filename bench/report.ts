// The bench's record format and its summary: service / limit ratios per pair, taken from
// quiet rounds. Used by bench/run.ts at the end of a run, and on its own to summarise
// recorded results again:
//
//   npx tsx bench/report.ts bench/results/<time>.jsonl
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

export type Side = 'service' | 'limit';

export interface CpuUse {
  /** The server process under load: share of one core, and CPU ms per answered request. */
  server_pct: number;
  server_ms_per_req: number;
  /** PostgreSQL backends connected to the bench database (both servers' pools). */
  pg_pct: number;
  pg_ms_per_req: number;
  /** The bench process (autocannon), share of one core. */
  loadgen_pct: number;
  /** The whole machine: busy share of all cores. */
  machine_busy_pct: number;
  /** Everything else on the machine (other processes, PostgreSQL's own background work), share of one core. */
  other_pct: number;
}

export interface Measurement {
  kind: 'measurement';
  run: string;
  round: number;
  id: string;
  side: Side;
  label: string;
  method: string;
  path: string;
  connections: number;
  duration_s: number;
  warmup_s: number;
  requests_per_s: number;
  /** Response bytes per request (headers and body, as autocannon counts them). */
  bytes_per_req?: number;
  total_2xx: number;
  latency_ms: { p50: number; p90: number; p99: number; avg: number; max: number };
  non_2xx: number;
  status_codes: Record<string, number>;
  errors: number;
  timeouts: number;
  warmup_2xx: number;
  warmup_non_2xx: number;
  /** Where the CPU went during the measured seconds (Linux /proc; null elsewhere). */
  cpu: CpuUse | null;
  /** Seconds spent waiting for a quiet machine before the run, and how busy it was when the run started. */
  quiet_wait_s: number;
  machine_busy_pct_before: number | null;
}

export interface Pair {
  id: string;
  what: string;
  service: string;
  /**
   * The reference the service scenario is divided by: a limit-server scenario, or another service
   * scenario (a ratio to the service's own simpler route, e.g. the field list to the plain list).
   */
  limit: string;
}

export const PAIRS: Pair[] = [
  { id: 'framework', what: 'framework ceiling, no DB', service: 'service.healthz', limit: 'limit.healthz' },
  { id: 'read', what: 'authenticated read vs one indexed read', service: 'service.me', limit: 'limit.list50' },
  {
    id: 'read.ceiling',
    what: 'authenticated read vs framework ceiling',
    service: 'service.me',
    limit: 'limit.healthz',
  },
  {
    id: 'write',
    what: 'write + event (1 ws vs random ws)',
    service: 'service.patch.busy',
    limit: 'limit.create.spread',
  },
  { id: 'write.busy', what: 'single busy workspace', service: 'service.patch.busy', limit: 'limit.create.busy' },
  { id: 'write.spread', what: 'many quiet workspaces', service: 'service.patch.spread', limit: 'limit.create.spread' },
  // Tickets, on the workspace seeded with SEED_SERVICE_TICKETS tickets (bench/tickets.ts). The limit
  // server has no single-ticket read: reads compare with its list of 50 (one indexed read), writes
  // with its ticket create on one workspace (one counter row serialises both sides' writers).
  {
    id: 'tickets.list',
    what: 'tickets: list 50 newest vs list 50',
    service: 'service.tickets.list',
    limit: 'limit.list50',
  },
  {
    id: 'tickets.list_q',
    what: 'tickets: list q=common word vs list 50',
    service: 'service.tickets.list_q',
    limit: 'limit.list50',
  },
  {
    id: 'tickets.list_q_rare',
    what: 'tickets: list q=rare word vs list 50',
    service: 'service.tickets.list_q_rare',
    limit: 'limit.list50',
  },
  {
    id: 'tickets.get_number',
    what: 'tickets: GET by number vs list 50',
    service: 'service.tickets.get_number',
    limit: 'limit.list50',
  },
  {
    id: 'tickets.get_number.ceiling',
    what: 'tickets: GET by number vs framework ceiling',
    service: 'service.tickets.get_number',
    limit: 'limit.healthz',
  },
  // Issue 5: a select-field filter and a number-field sort over the 100,000 tickets with 20 fields
  // defined, against the limit's list of 50 and against the service's own plain list of 50.
  {
    id: 'tickets.list_fields',
    what: 'tickets: list by select, sort number vs list 50',
    service: 'service.tickets.list_fields',
    limit: 'limit.list50',
  },
  {
    id: 'tickets.list_fields.plain',
    what: 'tickets: list by select, sort number vs plain',
    service: 'service.tickets.list_fields',
    limit: 'service.tickets.list',
  },
  {
    id: 'tickets.create',
    what: 'tickets: create vs create (1 workspace)',
    service: 'service.tickets.create',
    limit: 'limit.create.busy',
  },
  // Issue 9: creation with 50 enabled automations and an SLA policy (business hours) against
  // creation in a workspace without them; both workspaces fresh. Target: ratio at least 0.67.
  {
    id: 'workflow.create',
    what: 'workflow: create, 50 automations + SLA vs none',
    service: 'service.workflow.create',
    limit: 'service.workflow.create.plain',
  },
  {
    id: 'tickets.reply',
    what: 'tickets: reply, many tickets vs create',
    service: 'service.tickets.reply',
    limit: 'limit.create.busy',
  },
  {
    id: 'tickets.reply.hot',
    what: 'tickets: reply, one ticket vs create',
    service: 'service.tickets.reply.hot',
    limit: 'limit.create.busy',
  },
  // Issue 23: the help center's public pages (bench/helpcenter.ts). The article page against the
  // same bytes served from memory by bench/static-server.mjs (target: ratio at least 0.5, p99 under
  // 50 ms), read by one visitor (the view mark is read) and by a new visitor per request (each
  // request counts a view). Search has no static equivalent: its reference is the service's own
  // article page, and its target is absolute (p99 under 100 ms over 5,000 articles).
  {
    id: 'hc.article',
    what: 'help center: article page vs static file',
    service: 'service.hc.article',
    limit: 'static.hc.article',
  },
  {
    id: 'hc.article.views',
    what: 'help center: article, new visitor vs static',
    service: 'service.hc.article.views',
    limit: 'static.hc.article',
  },
  {
    id: 'hc.search',
    what: 'help center: search common word vs article',
    service: 'service.hc.search',
    limit: 'service.hc.article',
  },
  {
    id: 'hc.search_rare',
    what: 'help center: search rare word vs article',
    service: 'service.hc.search_rare',
    limit: 'service.hc.article',
  },
];

/**
 * A round counts as quiet when everything else on the machine (other people's processes)
 * used at most this share of one core while it ran.
 */
export const QUIET_OTHER_PCT = 15;

export const fmtInt = (n: number) => n.toLocaleString('en-US');
export const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : 'n/a');
export const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
export const lpad = (s: string, n: number) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);

const isQuiet = (m: Measurement) => m.cpu !== null && m.cpu.other_pct <= QUIET_OTHER_PCT;

export function printRow(m: Measurement): void {
  const bad = m.non_2xx + m.errors + m.timeouts;
  console.log(
    `  ${pad(m.side, 8)}${pad(m.label, 58)}${lpad(fmtInt(m.requests_per_s), 8)} req/s  ` +
      `p50 ${lpad(String(m.latency_ms.p50), 3)} ms  p99 ${lpad(String(m.latency_ms.p99), 3)} ms  ` +
      `avg ${m.latency_ms.avg.toFixed(2)} ms` +
      (m.bytes_per_req ? `  ${(m.bytes_per_req / 1024).toFixed(1)} KiB/resp` : '') +
      (bad > 0
        ? `  !! non-2xx ${m.non_2xx} errors ${m.errors} timeouts ${m.timeouts} ${JSON.stringify(m.status_codes)}`
        : ''),
  );
  if (m.quiet_wait_s > 1 || (m.machine_busy_pct_before ?? 0) > 20) {
    console.log(
      `            waited ${m.quiet_wait_s} s for a quiet machine; it was ${m.machine_busy_pct_before}% busy at the start`,
    );
  }
  if (m.cpu) {
    const c = m.cpu;
    console.log(
      `            cpu: server ${c.server_pct}% of a core, ${c.server_ms_per_req} ms/req; ` +
        `postgres ${c.pg_pct}%, ${c.pg_ms_per_req} ms/req; autocannon ${c.loadgen_pct}%; ` +
        `everything else ${c.other_pct}%${isQuiet(m) ? '' : ' (disturbed)'}; machine ${c.machine_busy_pct}% busy`,
    );
  }
}

/** Each side's best quiet round (interference only ever slows a run down); the best round if none was quiet. */
function pick(all: Measurement[], id: string): { m: Measurement; quiet: boolean } | null {
  const runs = all.filter((m) => m.id === id);
  if (runs.length === 0) return null;
  const quiet = runs.filter(isQuiet);
  const from = quiet.length > 0 ? quiet : runs;
  return { m: from.reduce((a, b) => (b.requests_per_s > a.requests_per_s ? b : a)), quiet: quiet.length > 0 };
}

/** The median of the rounds' own ratios: how ../shared/bench/side-by-side.sh reduces its pairs. */
export function medianOf(values: Array<number | null>): number | null {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : +((v[m - 1]! + v[m]!) / 2).toFixed(2);
}

/** Prints the ratio table; returns one record per pair. */
export function summarize(all: Measurement[], pairs: Pair[] = PAIRS): object[] {
  const rounds = Math.max(0, ...all.map((m) => m.round));
  const out: object[] = [];
  console.log(
    `\nratios service / limit. "median": the median of the rounds' own req/s ratios (rounds alternate ` +
      `service and limit; the basis of ../shared/bench/side-by-side.sh and of the targets). The other columns: ` +
      `each side's best quiet round (everything else <= ${QUIET_OTHER_PCT}% of a core; * = no quiet round, best ` +
      `disturbed one used). A pair whose reference is a service route, "vs plain": service / service.`,
  );
  console.log(
    `  ${pad('pair', 46)}${lpad('median', 7)}${lpad('svc req/s', 10)}${lpad('lim req/s', 10)}${lpad('req/s', 7)}` +
      `${lpad('p50', 7)}${lpad('p99', 7)}${lpad('avg', 7)}${lpad('cpu/req', 8)}  req/s ratio per round`,
  );
  for (const p of pairs) {
    const s = pick(all, p.service);
    const l = pick(all, p.limit);
    if (!s || !l) continue;
    const perRound = Array.from({ length: rounds }, (_, i) => {
      const sr = all.find((m) => m.id === p.service && m.round === i + 1);
      const lr = all.find((m) => m.id === p.limit && m.round === i + 1);
      return sr && lr ? +ratio(sr.requests_per_s, lr.requests_per_s) : null;
    });
    const sm = s.m;
    const lm = l.m;
    const median = medianOf(perRound);
    out.push({
      kind: 'ratio',
      run: sm.run,
      id: p.id,
      what: p.what,
      service: p.service,
      limit: p.limit,
      basis: `median of the rounds' ratios; best quiet round of each side (other <= ${QUIET_OTHER_PCT}% of a core) for the rest`,
      requests_per_s_median_of_rounds: median,
      service_round: sm.round,
      service_quiet: s.quiet,
      limit_round: lm.round,
      limit_quiet: l.quiet,
      service_requests_per_s: sm.requests_per_s,
      limit_requests_per_s: lm.requests_per_s,
      requests_per_s: +ratio(sm.requests_per_s, lm.requests_per_s),
      p50: lm.latency_ms.p50 > 0 ? +ratio(sm.latency_ms.p50, lm.latency_ms.p50) : null,
      p99: lm.latency_ms.p99 > 0 ? +ratio(sm.latency_ms.p99, lm.latency_ms.p99) : null,
      avg_latency: lm.latency_ms.avg > 0 ? +ratio(sm.latency_ms.avg, lm.latency_ms.avg) : null,
      server_cpu_per_req: sm.cpu && lm.cpu ? +ratio(sm.cpu.server_ms_per_req, lm.cpu.server_ms_per_req) : null,
      requests_per_s_by_round: perRound,
    });
    const star = (q: boolean) => (q ? ' ' : '*');
    console.log(
      `  ${pad(p.what, 46)}${lpad(median === null ? '-' : median.toFixed(2), 7)}` +
        `${lpad(fmtInt(sm.requests_per_s) + star(s.quiet), 10)}` +
        `${lpad(fmtInt(lm.requests_per_s) + star(l.quiet), 10)}` +
        `${lpad(ratio(sm.requests_per_s, lm.requests_per_s), 7)}${lpad(ratio(sm.latency_ms.p50, lm.latency_ms.p50), 7)}` +
        `${lpad(ratio(sm.latency_ms.p99, lm.latency_ms.p99), 7)}${lpad(ratio(sm.latency_ms.avg, lm.latency_ms.avg), 7)}` +
        `${lpad(sm.cpu && lm.cpu ? ratio(sm.cpu.server_ms_per_req, lm.cpu.server_ms_per_req) : 'n/a', 8)}` +
        `  ${perRound.map((r) => (r === null ? '-' : r.toFixed(2))).join(' ')}`,
    );
  }
  return out;
}

// CLI: summarise recorded result files again.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: npx tsx bench/report.ts bench/results/<time>.jsonl');
    process.exit(2);
  }
  for (const file of files) {
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { kind?: string });
    const all = lines.filter((l): l is Measurement => l.kind === 'measurement');
    console.log(`== ${file}`);
    for (const m of all) printRow(m);
    summarize(all);
  }
}
