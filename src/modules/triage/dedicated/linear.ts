// Multinomial logistic regression on sparse vectors, written here (docs/decisions.md "The
// dedicated engine (issue 35, item 1)": no maintained JavaScript library trains it on sparse
// hashed features in process; the model is a weight matrix and a softmax). Trained by stochastic
// gradient descent with AdaGrad step sizes and an L2 penalty on the weights a step touches, in a
// seeded order (the same tickets give the same model). Calibrated afterwards by temperature
// scaling: one temperature T per field, fitted on held-out tickets by minimising their negative
// log-likelihood (a small penalty on ln T keeps T near 1 when there are few of them); the
// probabilities are softmax(logits / T). The argmax, so the accuracy, does not change.
import type { SparseVector } from './features.js';

export interface SoftmaxTraining {
  /** Feature space size (the weights are dim × k while training). */
  dim: number;
  k: number;
  /** The weights, row-major: feature j's k weights at j*k. */
  w: Float32Array;
  b: Float64Array;
  /** AdaGrad's sums of squared gradients. */
  gw: Float32Array;
  gb: Float64Array;
}

export interface TrainOptions {
  epochs: number;
  /** AdaGrad's base step. */
  rate: number;
  l2: number;
}

export const TRAIN_DEFAULTS: TrainOptions = { epochs: 6, rate: 0.3, l2: 1e-5 };

export function newSoftmax(dim: number, k: number): SoftmaxTraining {
  return {
    dim,
    k,
    w: new Float32Array(dim * k),
    b: new Float64Array(k),
    gw: new Float32Array(dim * k),
    gb: new Float64Array(k),
  };
}

/** Writes softmax(z / t) over z in place. */
export function softmaxInPlace(z: Float64Array, t = 1): Float64Array {
  let max = Number.NEGATIVE_INFINITY;
  for (let c = 0; c < z.length; c++) {
    z[c] = z[c]! / t;
    if (z[c]! > max) max = z[c]!;
  }
  let sum = 0;
  for (let c = 0; c < z.length; c++) {
    z[c] = Math.exp(z[c]! - max);
    sum += z[c]!;
  }
  for (let c = 0; c < z.length; c++) z[c] = z[c]! / sum;
  return z;
}

/** The position of `v` in the ascending `sorted`, or -1. */
export function rowOf(sorted: Int32Array, v: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const m = sorted[mid]!;
    if (m === v) return mid;
    if (m < v) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * The logits of x. With `rows` (the ascending features that have weight rows), feature f's
 * weights are at row rowOf(rows, f), and a feature without a row weighs nothing; without, at f.
 */
export function logitsOf(
  w: Float32Array,
  b: ArrayLike<number>,
  k: number,
  x: SparseVector,
  out: Float64Array,
  rows?: Int32Array,
): Float64Array {
  for (let c = 0; c < k; c++) out[c] = b[c]!;
  for (let i = 0; i < x.idx.length; i++) {
    const r = rows ? rowOf(rows, x.idx[i]!) : x.idx[i]!;
    if (r < 0) continue;
    const v = x.val[i]!;
    const at = r * k;
    for (let c = 0; c < k; c++) out[c] = out[c]! + w[at + c]! * v;
  }
  return out;
}

const EPS = 1e-8;

/** One gradient step on (x, y). */
export function step(m: SoftmaxTraining, x: SparseVector, y: number, o: TrainOptions, z: Float64Array): void {
  const { k, w, b, gw, gb } = m;
  softmaxInPlace(logitsOf(w, b, k, x, z));
  for (let c = 0; c < k; c++) {
    const g = z[c]! - (c === y ? 1 : 0);
    gb[c] = gb[c]! + g * g;
    b[c] = b[c]! - (o.rate * g) / Math.sqrt(gb[c]! + EPS);
  }
  for (let i = 0; i < x.idx.length; i++) {
    const at = x.idx[i]! * k;
    const v = x.val[i]!;
    for (let c = 0; c < k; c++) {
      const g = (z[c]! - (c === y ? 1 : 0)) * v + o.l2 * w[at + c]!;
      if (g === 0) continue;
      const s = gw[at + c]! + g * g;
      gw[at + c] = s;
      w[at + c] = w[at + c]! - (o.rate * g) / Math.sqrt(s + EPS);
    }
  }
}

/** A deterministic PRNG (mulberry32) for the training order and the held-out split. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher-Yates shuffle of 0..n-1. */
export function shuffled(n: number, rand: () => number): Int32Array {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  }
  return a;
}

/** Pull of the penalty on ln T towards 1 (per held-out set, whatever its size). */
const T_PRIOR = 1;
const T_GRID = Array.from({ length: 81 }, (_v, i) => Math.exp(Math.log(0.2) + (i / 80) * Math.log(30 / 0.2)));

/**
 * The temperature minimising the held-out negative log-likelihood (+ T_PRIOR · (ln T)²), from
 * the held-out logits (n × k, row-major) and labels; 1 with no held-out tickets.
 */
export function fitTemperature(logits: Float64Array, labels: Int32Array, k: number): number {
  const n = labels.length;
  if (n === 0) return 1;
  let best = 1;
  let bestLoss = Number.POSITIVE_INFINITY;
  const z = new Float64Array(k);
  for (const t of T_GRID) {
    let loss = T_PRIOR * Math.log(t) ** 2;
    for (let i = 0; i < n; i++) {
      for (let c = 0; c < k; c++) z[c] = logits[i * k + c]!;
      softmaxInPlace(z, t);
      loss -= Math.log(Math.max(z[labels[i]!]!, 1e-12));
    }
    if (loss < bestLoss) {
      bestLoss = loss;
      best = t;
    }
  }
  return best;
}
