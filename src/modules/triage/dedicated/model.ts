// One workspace's model: a calibrated softmax regression per field that the workspace's own
// tickets give a signal for (LEARNED), over the shared hashed features (features.ts). Trained on
// 80% of the examples (a seeded split), its temperature and its accuracy taken on the other 20%.
// Stored compactly: only the feature rows some field weighs (a small workspace uses a few
// thousand of the 262,144), as one binary blob and a JSON description (store.ts).
import { DIM, featurize, type SparseVector, type TicketText } from './features.js';
import {
  fitTemperature,
  logitsOf,
  newSoftmax,
  prng,
  type SoftmaxTraining,
  shuffled,
  softmaxInPlace,
  step,
  TRAIN_DEFAULTS,
  type TrainOptions,
} from './linear.js';

export const MODEL_NAME = 'dedicated-linear-v1';
/** The fields a workspace's tickets can teach (docs/ai.md "The dedicated engine"). */
export const LEARNED = [
  'priority',
  'severity',
  'type_label',
  'team',
  'spam',
  'sla_risk',
  'needs_human',
  'sentiment',
  'category',
] as const;
export type LearnedField = (typeof LEARNED)[number];
/** The class of "no value" (no severity, no Type label, no team). */
export const NONE = '';
/** A class needs this many examples to be learned; a field needs two such classes. */
export const MIN_CLASS = 3;
const HELD_OUT = 0.2;
const SEED = 35;

export interface Example {
  text: TicketText;
  /** The value per field (NONE: no value); absent: the ticket teaches nothing on the field. */
  labels: Partial<Record<LearnedField, string>>;
}

export interface FieldModel {
  field: LearnedField;
  classes: string[];
  temperature: number;
  /** Share of held-out tickets whose value it predicts (null: none held out). */
  accuracy: number | null;
  heldOut: number;
  trained: number;
  /** rows × classes, row-major. */
  w: Float32Array;
  b: Float32Array;
}

export interface WorkspaceModel {
  name: string;
  /** The feature buckets that have a weight row, ascending (row r weighs feature rows[r]). */
  rows: Int32Array;
  fields: FieldModel[];
  trainedOn: number;
  /** When it was trained (ISO 8601), once stored: AIDecisions' model_version. */
  version?: string;
}

export interface Prediction {
  classes: string[];
  p: Float64Array;
  best: number;
}

/** The classes a field can learn from the examples (sorted), or null when it has no signal. */
function classesOf(examples: Example[], field: LearnedField): string[] | null {
  const counts = new Map<string, number>();
  for (const e of examples) {
    const v = e.labels[field];
    if (v !== undefined) counts.set(v, (counts.get(v) ?? 0) + 1);
  }
  const classes = [...counts].filter(([, n]) => n >= MIN_CLASS).map(([c]) => c);
  return classes.length >= 2 ? classes.sort() : null;
}

interface Fitting {
  field: LearnedField;
  classes: string[];
  soft: SoftmaxTraining;
  /** Per example: its class index, -1 when it teaches nothing on the field. */
  y: Int32Array;
  /** Scratch logits. */
  z: Float64Array;
}

/** Lets the event loop run between chunks of training (it runs in the service's process). */
const CHUNK = 2_000;
const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Trains the workspace's model; null when no field has a signal. */
export async function trainModel(
  examples: Example[],
  opts: TrainOptions = TRAIN_DEFAULTS,
): Promise<WorkspaceModel | null> {
  const xs: SparseVector[] = [];
  for (let i = 0; i < examples.length; i++) {
    xs.push(featurize(examples[i]!.text));
    if (i % CHUNK === CHUNK - 1) await breathe();
  }
  const order = shuffled(examples.length, prng(SEED));
  const nHeld = Math.floor(examples.length * HELD_OUT);
  const held = order.subarray(0, nHeld);
  const train = order.slice(nHeld);
  const fits: Fitting[] = [];
  for (const field of LEARNED) {
    const classes = classesOf(examples, field);
    if (!classes) continue;
    const y = new Int32Array(examples.length).fill(-1);
    examples.forEach((e, i) => {
      const v = e.labels[field];
      if (v !== undefined) y[i] = classes.indexOf(v);
    });
    fits.push({ field, classes, soft: newSoftmax(DIM, classes.length), y, z: new Float64Array(classes.length) });
  }
  if (fits.length === 0) return null;
  const rand = prng(SEED + 1);
  for (let epoch = 0; epoch < opts.epochs; epoch++) {
    const perm = shuffled(train.length, rand);
    for (let i = 0; i < perm.length; i++) {
      const at = train[perm[i]!]!;
      for (const f of fits) if (f.y[at]! >= 0) step(f.soft, xs[at]!, f.y[at]!, opts, f.z);
      if (i % CHUNK === CHUNK - 1) await breathe();
    }
  }
  // The rows any field weighs, then each field's weights on those rows only.
  const used = new Uint8Array(DIM);
  for (const f of fits) {
    const { w, k } = f.soft;
    for (let j = 0; j < DIM; j++) {
      if (used[j]) continue;
      for (let c = 0; c < k; c++)
        if (w[j * k + c] !== 0) {
          used[j] = 1;
          break;
        }
    }
  }
  let n = 0;
  for (let j = 0; j < DIM; j++) n += used[j]!;
  const rows = new Int32Array(n);
  for (let j = 0, r = 0; j < DIM; j++) if (used[j]) rows[r++] = j;
  const fields: FieldModel[] = fits.map((f) => {
    const k = f.classes.length;
    const w = new Float32Array(n * k);
    for (let r = 0; r < n; r++) w.set(f.soft.w.subarray(rows[r]! * k, rows[r]! * k + k), r * k);
    const b = Float32Array.from(f.soft.b);
    // Held-out logits: the temperature and the accuracy.
    const mine = Array.from(held).filter((i) => f.y[i]! >= 0);
    const logits = new Float64Array(mine.length * k);
    const labels = new Int32Array(mine.length);
    let right = 0;
    const out = new Float64Array(k);
    mine.forEach((i, m) => {
      logitsOf(w, b, k, xs[i]!, out, rows);
      logits.set(out, m * k);
      labels[m] = f.y[i]!;
      if (argmax(out) === f.y[i]) right++;
    });
    return {
      field: f.field,
      classes: f.classes,
      temperature: fitTemperature(logits, labels, k),
      accuracy: mine.length > 0 ? right / mine.length : null,
      heldOut: mine.length,
      trained: Array.from(train).filter((i) => f.y[i]! >= 0).length,
      w,
      b,
    };
  });
  return { name: MODEL_NAME, rows, fields, trainedOn: train.length };
}

export function argmax(p: ArrayLike<number>): number {
  let best = 0;
  for (let c = 1; c < p.length; c++) if (p[c]! > p[best]!) best = c;
  return best;
}

/** The calibrated probabilities of every learned field for a ticket. */
export function predict(m: WorkspaceModel, text: TicketText): Partial<Record<LearnedField, Prediction>> {
  const x = featurize(text);
  const out: Partial<Record<LearnedField, Prediction>> = {};
  for (const f of m.fields) {
    const p = softmaxInPlace(
      logitsOf(f.w, f.b, f.classes.length, x, new Float64Array(f.classes.length), m.rows),
      f.temperature,
    );
    out[f.field] = { classes: f.classes, p, best: argmax(p) };
  }
  return out;
}

/** What the database keeps of a model besides its weights. */
export interface ModelMeta {
  name: string;
  rows: number;
  trained_on: number;
  fields: Array<{
    field: LearnedField;
    classes: string[];
    temperature: number;
    accuracy: number | null;
    held_out: number;
    trained: number;
  }>;
}

/** The model as a description and one blob: the rows, then per field its weights and biases (float32). */
export function encodeModel(m: WorkspaceModel): { meta: ModelMeta; weights: Uint8Array } {
  const parts: ArrayBufferView[] = [m.rows];
  for (const f of m.fields) parts.push(f.w, f.b);
  const size = parts.reduce((s, p) => s + p.byteLength, 0);
  const weights = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    weights.set(new Uint8Array(p.buffer, p.byteOffset, p.byteLength), at);
    at += p.byteLength;
  }
  return {
    meta: {
      name: m.name,
      rows: m.rows.length,
      trained_on: m.trainedOn,
      fields: m.fields.map((f) => ({
        field: f.field,
        classes: f.classes,
        temperature: f.temperature,
        accuracy: f.accuracy,
        held_out: f.heldOut,
        trained: f.trained,
      })),
    },
    weights,
  };
}

export function decodeModel(meta: ModelMeta, blob: Uint8Array): WorkspaceModel {
  const bytes = new Uint8Array(blob); // a copy: aligned, and not a view of a driver's buffer
  const n = meta.rows;
  const rows = new Int32Array(bytes.buffer, 0, n);
  let at = n * 4;
  const fields: FieldModel[] = meta.fields.map((f) => {
    const k = f.classes.length;
    const w = new Float32Array(bytes.buffer, at, n * k);
    at += n * k * 4;
    const b = new Float32Array(bytes.buffer, at, k);
    at += k * 4;
    return {
      field: f.field,
      classes: f.classes,
      temperature: f.temperature,
      accuracy: f.accuracy,
      heldOut: f.held_out,
      trained: f.trained,
      w,
      b,
    };
  });
  if (at !== bytes.byteLength) throw new Error(`triage model: ${bytes.byteLength} bytes, expected ${at}`);
  return { name: meta.name, rows, fields, trainedOn: meta.trained_on };
}
