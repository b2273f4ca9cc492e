// The dedicated engine's parts without the service: the hashed features, the softmax regression
// and its temperature, a workspace model (gaps.md's check at the model's level, only fields
// with a signal, a stored model deciding as the trained one), the decisions kept within what a
// ticket offers, the language detection, and calibration on a generated data set.
import { describe, expect, it } from 'vitest';
import { generateTickets } from '../../../bench/data/tickets.js';
import { decisionsOf } from '../../../src/modules/triage/dedicated/engine.js';
import { DIM, featurize, type TicketText } from '../../../src/modules/triage/dedicated/features.js';
import { detectLanguage } from '../../../src/modules/triage/dedicated/language.js';
import {
  fitTemperature,
  logitsOf,
  newSoftmax,
  softmaxInPlace,
  step,
  TRAIN_DEFAULTS,
} from '../../../src/modules/triage/dedicated/linear.js';
import {
  decodeModel,
  type Example,
  encodeModel,
  predict,
  trainModel,
} from '../../../src/modules/triage/dedicated/model.js';

const text = (subject: string, message = '', over: Partial<TicketText> = {}): TicketText => ({
  subject,
  message,
  domain: null,
  channel: 'email',
  mailboxId: null,
  ...over,
});

const OPTIONS = { teams: [], typeLabels: [], labels: [] };

describe('features', () => {
  it('hashes the same ticket to the same vector, each group at unit length', () => {
    const a = featurize(text('Printer on fire', 'It smokes', { domain: 'acme.co' }));
    const b = featurize(text('Printer on fire', 'It smokes', { domain: 'acme.co' }));
    expect(Array.from(a.idx)).toEqual(Array.from(b.idx));
    expect(Array.from(a.val)).toEqual(Array.from(b.val));
    for (const i of a.idx) expect(i >= 0 && i < DIM).toBe(true);
    // Four groups of unit length: the squared values sum to about 4 (collisions aside).
    const sq = Array.from(a.val).reduce((s, v) => s + v * v, 0);
    expect(sq).toBeGreaterThan(3.5);
    expect(sq).toBeLessThan(4.5);
  });

  it('tells the subject from the message and reads the sender domain', () => {
    const inSubject = featurize(text('refund', 'hello there'));
    const inMessage = featurize(text('hello there', 'refund'));
    expect(Array.from(inSubject.idx).sort()).not.toEqual(Array.from(inMessage.idx).sort());
    const other = featurize(text('refund', 'hello there', { domain: 'bigbank.com' }));
    expect(other.idx.length).toBeGreaterThan(inSubject.idx.length);
  });
});

describe('softmax regression', () => {
  it('learns a separable problem and gives the right class the highest probability', () => {
    const m = newSoftmax(DIM, 3);
    const data = [
      [featurize(text('alpha one')), 0],
      [featurize(text('beta two')), 1],
      [featurize(text('gamma three')), 2],
    ] as const;
    const z = new Float64Array(3);
    for (let e = 0; e < 20; e++) for (const [x, y] of data) step(m, x, y, TRAIN_DEFAULTS, z);
    for (const [x, y] of data) {
      const p = softmaxInPlace(logitsOf(m.w, m.b, 3, x, new Float64Array(3)));
      expect(p[y]).toBeGreaterThan(0.8);
      expect(p.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 9);
    }
  });

  it('fits a temperature above 1 for overconfident logits and below 1 for underconfident ones', () => {
    // Two classes; logits say 99.9% for class 0, and class 0 is right 60% of the time.
    const n = 100;
    const logits = new Float64Array(n * 2);
    const labels = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      logits[i * 2] = 7;
      labels[i] = i < 60 ? 0 : 1;
    }
    expect(fitTemperature(logits, labels, 2)).toBeGreaterThan(3);
    // Logits say 55%, and class 0 is always right.
    for (let i = 0; i < n; i++) {
      logits[i * 2] = 0.2;
      labels[i] = 0;
    }
    expect(fitTemperature(logits, labels, 2)).toBeLessThan(0.5);
    expect(fitTemperature(new Float64Array(0), new Int32Array(0), 2)).toBe(1);
  });
});

/** gaps.md's check: 20 solved urgent under one subject, 20 low under another. */
function gapsExamples(): Example[] {
  const out: Example[] = [];
  for (let i = 0; i < 20; i++) {
    out.push({
      text: text('Production database is down', `Case ${i}: all requests fail`),
      labels: { priority: 'urgent' },
    });
    out.push({
      text: text('Question about the invoice PDF layout', `Case ${i}: where is the VAT`),
      labels: { priority: 'low' },
    });
  }
  return out;
}

describe('a workspace model', () => {
  it('decides high or urgent for the first subject, low or normal for the second', async () => {
    const m = (await trainModel(gapsExamples()))!;
    expect(m.fields.map((f) => f.field)).toEqual(['priority']);
    const a = decisionsOf(m, text('Production database is down again'), OPTIONS);
    const b = decisionsOf(m, text('Another question about the invoice PDF layout'), OPTIONS);
    expect(['high', 'urgent']).toContain(a.priority?.value);
    expect(['low', 'normal']).toContain(b.priority?.value);
    expect(a.priority!.confidence).toBeGreaterThan(0.5);
    expect(a.priority!.probability).toBe(a.priority!.confidence);
    // Nothing else has a signal: no other field is decided (the language is detected, not learned).
    expect(Object.keys(a).sort()).toEqual(['language', 'priority']);
  });

  it('learns nothing from one value per field, or from a class under 3 tickets', async () => {
    const same = gapsExamples().map((e) => ({ ...e, labels: { priority: 'normal' } }));
    expect(await trainModel(same)).toBeNull();
    const rare = same.map((e, i) => ({ ...e, labels: { priority: i < 2 ? 'urgent' : 'normal' } }));
    expect(await trainModel(rare)).toBeNull();
  });

  it('decides the same once stored and read back', async () => {
    const m = (await trainModel(generateTickets(600, 3)))!;
    const { meta, weights } = encodeModel(m);
    // Only the rows some field weighs are kept.
    expect(meta.rows).toBeLessThan(DIM / 4);
    const back = decodeModel(JSON.parse(JSON.stringify(meta)), Buffer.from(weights));
    for (const e of generateTickets(50, 4)) {
      const p = predict(m, e.text);
      const q = predict(back, e.text);
      for (const f of Object.keys(p) as Array<keyof typeof p>) expect(Array.from(q[f]!.p)).toEqual(Array.from(p[f]!.p));
    }
  });

  it('keeps only values the ticket can take: a team of the workspace, a label of the Type group', async () => {
    const m = (await trainModel(generateTickets(600, 5)))!;
    const outage = text('Production outage', 'The API is down for all users since this morning, 500 error.');
    const none = decisionsOf(m, outage, OPTIONS);
    expect(none.team).toBeUndefined();
    expect(none.type_label).toBeUndefined();
    // The generated teams are named by id here; Type labels match whatever their case.
    const some = decisionsOf(m, outage, {
      teams: [{ id: 'Engineering', name: 'Engineering' }],
      typeLabels: ['incident'],
      labels: [],
    });
    expect(some.team?.value).toBe('Engineering');
    expect(some.type_label?.value).toBe('incident');
    expect(some.severity?.value).toBe('sev1');
    // Spam: its probability is the probability of spam.
    expect(some.spam).toMatchObject({ value: false });
    expect(some.spam!.probability).toBeLessThan(0.5);
    const spam = decisionsOf(m, text('Cheap backlinks for your site', 'limited offer, click here'), OPTIONS);
    expect(spam.spam).toMatchObject({ value: true });
    expect(spam.spam!.probability).toBeGreaterThan(0.8);
  });
});

describe('language', () => {
  it('detects the language as a BCP 47 tag, or nothing from too little text', () => {
    expect(detectLanguage('My invoice is wrong and I was charged twice this month')).toBe('en');
    expect(detectLanguage('Mi factura es incorrecta, me cobraron dos veces este mes')).toBe('es');
    expect(detectLanguage('Meine Rechnung ist falsch, ich wurde diesen Monat doppelt belastet')).toBe('de');
    expect(detectLanguage('hi')).toBeNull();
  });
});

describe('calibration on a generated data set', () => {
  it('is better than the most frequent class, and its confidence matches its accuracy', async () => {
    const m = (await trainModel(generateTickets(4000, 11)))!;
    const test = generateTickets(1500, 12);
    const f = 'priority' as const;
    let right = 0;
    let n = 0;
    let gap = 0;
    const counts = new Map<string, number>();
    // Expected calibration error over 10 bins of confidence.
    const bins = Array.from({ length: 10 }, () => ({ n: 0, conf: 0, right: 0 }));
    for (const e of test) {
      const y = e.labels[f];
      if (y === undefined) continue;
      counts.set(y, (counts.get(y) ?? 0) + 1);
      const p = predict(m, e.text)[f]!;
      const c = p.p[p.best]!;
      const ok = p.classes[p.best] === y ? 1 : 0;
      const bin = bins[Math.min(9, Math.floor(c * 10))]!;
      bin.n++;
      bin.conf += c;
      bin.right += ok;
      right += ok;
      n++;
    }
    for (const b of bins) gap += Math.abs(b.conf - b.right);
    const majority = Math.max(...counts.values()) / n;
    expect(right / n).toBeGreaterThan(majority + 0.05);
    expect(gap / n).toBeLessThan(0.06);
  });
});
