// npm run bench:ai:search:quality (tsx bench/ai-search-quality.ts): how good the embedded
// embedding model is at what semantic search is for, finding tickets about what a person means
// when the words differ. TICKETS generated English tickets (bench/data/tickets.ts: subject and
// first message, each of a known topic) are embedded with the embedded model; each query below
// is a paraphrase of a topic in words its templates mostly do not use. The figure is precision
// at 10: the share of the ten nearest tickets that are of the query's topic, against what the
// words alone find (tickets ranked by the query words they contain, as a full-text search
// would; ties by order), on the same tickets. No network, no database.
import { unit } from '../src/modules/ai/embeddings/embedder.js';
import { LocalModel } from '../src/modules/ai/embeddings/local-model.js';
import { generateTickets } from './data/tickets.js';
import { envInt } from './lib.js';

const TICKETS = envInt('TICKETS', 1_500, 100, 20_000);
const QUERIES: Array<[string, string]> = [
  ['billing', 'money was taken from my bank account two times'],
  ['billing', 'I want my cash back for last month'],
  ['login', 'cannot get into my profile anymore'],
  ['login', 'the code from my phone app is rejected when I sign in'],
  ['outage', 'nothing works, your service is unreachable for everyone'],
  ['outage', 'complete downtime for all our staff right now'],
  ['bug', 'the application closes unexpectedly when I attach a file'],
  ['bug', 'the totals in the summary are incorrect'],
  ['howto', 'how can I invite a colleague to join us'],
  ['howto', 'steps to update the address I use to sign in'],
  ['feature', 'it would be nice to have a darker theme for the night'],
  ['feature', 'idea for improving your product'],
  ['shipping', 'my parcel has not shown up yet'],
  ['shipping', 'the courier brought me something I did not buy'],
  ['closure', 'remove all my information and end my membership'],
  ['closure', 'I no longer want to use your service, close everything'],
];

const tickets = generateTickets(TICKETS * 2, 5)
  .filter((t) => t.language === 'en' && t.topic !== 'spam')
  .slice(0, TICKETS);
const texts = tickets.map((t) => `${t.text.subject}\n${t.text.message}`);
const model = new LocalModel();
const t0 = performance.now();
const vectors: Float32Array[] = [];
for (let i = 0; i < texts.length; i += 64) vectors.push(...(await model.embed(texts.slice(i, i + 64))).map(unit));
const perText = (performance.now() - t0) / texts.length;
const queryVectors = (await model.embed(QUERIES.map((q) => q[1]))).map(unit);
await model.close();

const words = (s: string) => new Set(s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);
const ticketWords = texts.map(words);
const STOP = new Set([
  'the',
  'a',
  'i',
  'my',
  'to',
  'for',
  'of',
  'is',
  'was',
  'and',
  'in',
  'on',
  'me',
  'it',
  'be',
  'we',
  'our',
  'your',
  'us',
  'at',
  'from',
  'when',
  'not',
  'can',
  'how',
  'all',
  'have',
  'did',
  'has',
  'yet',
  'up',
  'no',
]);
let semanticSum = 0;
let lexicalSum = 0;
const rows: string[] = [];
for (const [qi, [topic, q]] of QUERIES.entries()) {
  const qv = queryVectors[qi]!;
  const sims = vectors.map((v, i) => {
    let d = 0;
    for (let k = 0; k < v.length; k++) d += v[k]! * qv[k]!;
    return [i, d] as const;
  });
  sims.sort((a, b) => b[1] - a[1]);
  const sem = sims.slice(0, 10).filter(([i]) => tickets[i]!.topic === topic).length / 10;
  const qw = [...words(q)].filter((w) => !STOP.has(w));
  const lex = ticketWords
    .map((tw, i) => [i, qw.filter((w) => tw.has(w)).length] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10);
  const lexP = lex.filter(([i]) => tickets[i]!.topic === topic).length / 10;
  semanticSum += sem;
  lexicalSum += lexP;
  rows.push(`| ${topic} | ${q} | ${sem.toFixed(1)} | ${lexP.toFixed(1)} |`);
}
console.log(`${tickets.length} tickets embedded, ${perText.toFixed(1)} ms a ticket on this machine\n`);
console.log('| topic | query | precision@10 by meaning | by words |');
console.log('| --- | --- | --- | --- |');
for (const r of rows) console.log(r);
console.log(
  `| **mean** | ${QUERIES.length} queries | **${(semanticSum / QUERIES.length).toFixed(2)}** | **${(lexicalSum / QUERIES.length).toFixed(2)}** |`,
);
