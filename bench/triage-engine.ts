// npm run bench:ai:triage: the dedicated triage engine in process, on the generated data set
// (bench/data/tickets.ts): how long training takes (TRAIN tickets, 50,000 by default), how long
// one ticket's triage takes (the features, every field's calibrated probabilities and the
// language; p50, p99 and max over TEST tickets), the stored model's size, and, on the held-out
// TEST tickets (another seed), each field's accuracy against the most frequent class, its
// expected calibration error (ECE, 10 equal-width bins of confidence) and the reliability bins
// of priority. Also for a small workspace (SMALL tickets) as most are.
//
// Writes the tables in Markdown on stdout (docs/ai.md "The dedicated engine" is this output)
// and the figures as one JSON line in bench/results/triage-engine-<time>.jsonl.
//
// Env (all optional): TRAIN (default 50000), SMALL (default 500), TEST (default 5000).
import { mkdirSync, writeFileSync } from 'node:fs';
import { decisionsOf } from '../src/modules/triage/dedicated/engine.js';
import {
  encodeModel,
  LEARNED,
  type LearnedField,
  predict,
  trainModel,
  type WorkspaceModel,
} from '../src/modules/triage/dedicated/model.js';
import { type GeneratedTicket, generateTickets } from './data/tickets.js';

const TRAIN = Number(process.env.TRAIN ?? 50_000);
const SMALL = Number(process.env.SMALL ?? 500);
const TEST = Number(process.env.TEST ?? 5_000);
const BINS = 10;
const OPTIONS = {
  teams: ['Billing', 'Accounts', 'Engineering'].map((id) => ({ id, name: id })),
  typeLabels: ['Bug', 'Question', 'Incident', 'Feature request'],
  labels: [],
};

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const f1 = (x: number) => x.toFixed(1);
const f3 = (x: number) => x.toFixed(3);

interface FieldScore {
  field: LearnedField;
  n: number;
  accuracy: number;
  majority: number;
  ece: number;
  bins: Array<{ from: number; n: number; confidence: number; accuracy: number }>;
}

function score(model: WorkspaceModel, test: GeneratedTicket[]): FieldScore[] {
  const out: FieldScore[] = [];
  const predictions = test.map((e) => predict(model, e.text));
  for (const field of LEARNED) {
    if (!model.fields.some((f) => f.field === field)) continue;
    const bins = Array.from({ length: BINS }, (_v, i) => ({ from: i / BINS, n: 0, conf: 0, right: 0 }));
    const counts = new Map<string, number>();
    let right = 0;
    let n = 0;
    test.forEach((e, i) => {
      const y = e.labels[field];
      const p = predictions[i]![field];
      if (y === undefined || !p) return;
      counts.set(y, (counts.get(y) ?? 0) + 1);
      const c = p.p[p.best]!;
      const ok = p.classes[p.best] === y ? 1 : 0;
      const b = bins[Math.min(BINS - 1, Math.floor(c * BINS))]!;
      b.n++;
      b.conf += c;
      b.right += ok;
      right += ok;
      n++;
    });
    out.push({
      field,
      n,
      accuracy: right / n,
      majority: Math.max(...counts.values()) / n,
      ece: bins.reduce((s, b) => s + Math.abs(b.conf - b.right), 0) / n,
      bins: bins
        .filter((b) => b.n > 0)
        .map((b) => ({ from: b.from, n: b.n, confidence: b.conf / b.n, accuracy: b.right / b.n })),
    });
  }
  return out;
}

async function timedTraining(n: number, seed: number) {
  const examples = generateTickets(n, seed);
  const t0 = performance.now();
  const model = (await trainModel(examples))!;
  const ms = performance.now() - t0;
  return { model, ms, bytes: encodeModel(model).weights.byteLength };
}

const test = generateTickets(TEST, 2);
const big = await timedTraining(TRAIN, 1);
const small = await timedTraining(SMALL, 3);

// One ticket's triage in process, as the route's engine call runs it (the model already cached).
for (const e of test.slice(0, 200)) decisionsOf(big.model, e.text, OPTIONS); // warm-up
const latencies = test.map((e) => {
  const t0 = performance.now();
  decisionsOf(big.model, e.text, OPTIONS);
  return performance.now() - t0;
});

const bigScores = score(big.model, test);
const smallScores = score(small.model, test);
const lines: string[] = [];
lines.push(`Generated data set (bench/data/tickets.ts, 10% of labels flipped), held-out test set of ${TEST} tickets.`);
lines.push('');
lines.push(`| Field | Accuracy (${TRAIN} trained) | ECE | Accuracy (${SMALL} trained) | ECE | Most frequent class |`);
lines.push('|---|---|---|---|---|---|');
for (const s of bigScores) {
  const m = smallScores.find((x) => x.field === s.field);
  lines.push(
    `| ${s.field} | ${f3(s.accuracy)} | ${f3(s.ece)} | ${m ? f3(m.accuracy) : 'no signal'} | ${m ? f3(m.ece) : ''} | ${f3(s.majority)} |`,
  );
}
lines.push('');
lines.push(`Reliability of priority (${TRAIN} trained): tickets by confidence, and how often the decision was right.`);
lines.push('');
lines.push('| Confidence | Tickets | Mean confidence | Accuracy |');
lines.push('|---|---|---|---|');
for (const b of bigScores.find((s) => s.field === 'priority')!.bins)
  lines.push(
    `| ${b.from.toFixed(1)}-${(b.from + 0.1).toFixed(1)} | ${b.n} | ${f3(b.confidence)} | ${f3(b.accuracy)} |`,
  );
lines.push('');
lines.push('| Figure | Value |');
lines.push('|---|---|');
lines.push(`| Training, ${TRAIN} tickets | ${f1(big.ms / 1000)} s |`);
lines.push(`| Training, ${SMALL} tickets | ${Math.round(small.ms)} ms |`);
lines.push(
  `| Triage of one ticket, p50 / p99 / max (${TEST}) | ${f3(pct(latencies, 50))} / ${f3(pct(latencies, 99))} / ${f3(Math.max(...latencies))} ms |`,
);
lines.push(`| Stored weights, ${TRAIN} / ${SMALL} tickets | ${f1(big.bytes / 1e6)} MB / ${f1(small.bytes / 1e6)} MB |`);
console.log(lines.join('\n'));

mkdirSync('bench/results', { recursive: true });
const file = `bench/results/triage-engine-${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`;
writeFileSync(
  file,
  `${JSON.stringify({
    train: TRAIN,
    small: SMALL,
    test: TEST,
    train_ms: big.ms,
    small_train_ms: small.ms,
    triage_ms: { p50: pct(latencies, 50), p99: pct(latencies, 99), max: Math.max(...latencies) },
    bytes: { big: big.bytes, small: small.bytes },
    scores: { big: bigScores, small: smallScores },
  })}\n`,
);
console.error(`figures: ${file}`);
