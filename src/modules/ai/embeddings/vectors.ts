// The nearest-neighbour search: an exact scan over the workspace's vectors, kept in each
// process's memory (float32, one array per workspace) and brought up to date from the rows it
// has not seen (`seq`) before each search. Exact: every vector is compared, so the results are
// those a perfect index would give; 100,000 vectors of 512 dimensions take about 30 ms on this
// machine (docs/performance.md "Semantic search"). No pgvector: docs/decisions.md says why.
//
// Rows deleted since (a deleted ticket, an unpublished article) may linger until the next full
// read (when the row count drops, checked at most every RECOUNT_MS); the search checks every
// result against the live records anyway.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Kysely } from 'kysely';
import type { DB, EmbeddedKind } from '../../../platform/db/schema.js';

const KINDS: EmbeddedKind[] = ['ticket', 'message', 'article'];
/** Below this many floats (about 4,000 vectors of 512) one thread scans faster than several start. */
const PARALLEL_FROM = 2_000_000;

const floats = (n: number, shared: boolean) =>
  shared ? new Float32Array(new SharedArrayBuffer(n * 4)) : new Float32Array(n);

/**
 * The dot products of rows [from, to) with `q` into `out`. Four sums at once: the loop the JIT
 * makes of this runs about a third faster than one sum. Also the scan helpers' code (its source).
 */
function scan(data: Float32Array, d: number, from: number, to: number, q: Float64Array, out: Float32Array): void {
  for (let s = from, b = from * d; s < to; s++) {
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    for (let i = 0; i < d; i += 4, b += 4) {
      a0 += data[b]! * q[i]!;
      a1 += data[b + 1]! * q[i + 1]!;
      a2 += data[b + 2]! * q[i + 2]!;
      a3 += data[b + 3]! * q[i + 3]!;
    }
    out[s] = a0 + a1 + a2 + a3;
  }
}

const HELPER_SOURCE = `
'use strict';
const { parentPort } = require('node:worker_threads');
const scan = ${scan.toString()};
parentPort.on('message', (m) => {
  scan(new Float32Array(m.data), m.dims, m.from, m.to, m.q, new Float32Array(m.out));
  parentPort.postMessage(m.id);
});
`;

/**
 * Threads that scan a share of the rows while the request's thread scans its own (one per core
 * but one, at most three): the rows and the scores are in shared memory, so a share costs a
 * message each way. Started on the first large scan.
 */
export class ScanHelpers {
  readonly size: number;
  #workers: Worker[] = [];
  #next = 1;
  readonly #waiting = new Map<number, () => void>();

  constructor(
    size = Math.min(3, Math.max(0, availableParallelism() - 1)),
    /** Floats from which a scan is shared (tests share small ones). */
    readonly from = PARALLEL_FROM,
  ) {
    this.size = size;
  }

  scan(data: Float32Array, dims: number, from: number, to: number, q: Float64Array, out: Float32Array, which: number) {
    if (this.#workers.length === 0) {
      for (let i = 0; i < this.size; i++) {
        const w = new Worker(HELPER_SOURCE, { eval: true });
        w.unref();
        w.on('message', (id: number) => {
          const done = this.#waiting.get(id);
          this.#waiting.delete(id);
          done?.();
        });
        this.#workers.push(w);
      }
    }
    const id = this.#next++;
    return new Promise<void>((resolve, reject) => {
      const w = this.#workers[which % this.#workers.length]!;
      const failed = (err: Error) => {
        this.#waiting.delete(id);
        reject(err);
      };
      w.once('error', failed);
      this.#waiting.set(id, () => {
        w.off('error', failed);
        resolve();
      });
      w.postMessage({ id, data: data.buffer, dims, from, to, q, out: out.buffer });
    });
  }

  async close(): Promise<void> {
    const ws = this.#workers.splice(0);
    await Promise.all(ws.map((w) => w.terminate().catch(() => 0)));
  }
}
const RECOUNT_MS = 30_000;
const PAGE = 5_000;

export class WorkspaceVectors {
  dims = 0;
  count = 0;
  seq = 0;
  data: Float32Array<ArrayBufferLike> = new Float32Array(0);
  kinds = new Uint8Array(0);
  objects: string[] = [];
  tickets: Array<string | null> = [];
  readonly slotOf = new Map<string, number>();
  /** A ticket's rows: its subject and its messages. */
  readonly slotsOfTicket = new Map<string, number[]>();
  countedAt = Date.now();

  /** Every row's dot product with `q`, the rows shared between this thread and the scan helpers. */
  async scoreAll(q: Float32Array, helpers: ScanHelpers): Promise<Float32Array> {
    const n = this.count;
    const out = helpers.size > 0 ? new Float32Array(new SharedArrayBuffer(Math.max(4, n * 4))) : new Float32Array(n);
    const qd = Float64Array.from(q);
    const parts = n * this.dims >= helpers.from ? helpers.size + 1 : 1;
    const per = Math.ceil(n / parts);
    const others: Array<Promise<void>> = [];
    for (let p = 1; p < parts; p++) {
      others.push(helpers.scan(this.data, this.dims, p * per, Math.min(n, (p + 1) * per), qd, out, p - 1));
    }
    scan(this.data, this.dims, 0, Math.min(n, per), qd, out);
    await Promise.all(others);
    return out;
  }

  constructor(
    readonly model: string,
    /** The rows live in shared memory, for the scan helpers. */
    readonly shared: boolean,
  ) {}

  put(kind: EmbeddedKind, objectId: string, ticketId: string | null, bytes: Uint8Array): void {
    const dims = bytes.byteLength / 4;
    if (this.dims === 0) this.dims = dims;
    if (dims !== this.dims) return;
    const key = `${kind}:${objectId}`;
    let slot = this.slotOf.get(key);
    if (slot === undefined) {
      slot = this.count++;
      this.slotOf.set(key, slot);
      if (this.count * dims > this.data.length) {
        const grown = floats(Math.max(1024, this.count * 2) * dims, this.shared);
        grown.set(this.data);
        this.data = grown;
        const k = new Uint8Array(Math.max(1024, this.count * 2));
        k.set(this.kinds);
        this.kinds = k;
      }
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const base = slot * dims;
    for (let i = 0; i < dims; i++) this.data[base + i] = view.getFloat32(i * 4, true);
    this.kinds[slot] = KINDS.indexOf(kind);
    this.objects[slot] = objectId;
    if (ticketId && this.tickets[slot] !== ticketId) {
      const slots = this.slotsOfTicket.get(ticketId);
      if (slots) slots.push(slot);
      else this.slotsOfTicket.set(ticketId, [slot]);
    }
    this.tickets[slot] = ticketId;
  }
}

export interface Neighbour {
  kind: EmbeddedKind;
  objectId: string;
  ticketId: string | null;
  score: number;
}

export class VectorIndex {
  readonly #workspaces = new Map<string, WorkspaceVectors>();
  readonly #loading = new Map<string, Promise<WorkspaceVectors>>();

  readonly #helpers: ScanHelpers;

  readonly #maxWorkspaces: number;

  constructor(opts: { maxWorkspaces?: number; helpers?: number; parallelFrom?: number } = {}) {
    this.#maxWorkspaces = opts.maxWorkspaces ?? 64;
    this.#helpers = new ScanHelpers(opts.helpers, opts.parallelFrom);
  }

  close(): Promise<void> {
    return this.#helpers.close();
  }

  async #fresh(db: Kysely<DB>, workspaceId: string, model: string): Promise<WorkspaceVectors> {
    let w = this.#workspaces.get(workspaceId);
    if (w && w.model !== model) w = undefined;
    if (w && Date.now() - w.countedAt > RECOUNT_MS) {
      const r = await db
        .selectFrom('embeddings')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('workspace_id', '=', workspaceId)
        .where('model', '=', model)
        .executeTakeFirst();
      w.countedAt = Date.now();
      if (Number(r?.n ?? 0) < w.count) w = undefined;
    }
    if (!w) {
      w = new WorkspaceVectors(model, this.#helpers.size > 0);
      if (this.#workspaces.size >= this.#maxWorkspaces) {
        const oldest = this.#workspaces.keys().next().value;
        if (oldest !== undefined) this.#workspaces.delete(oldest);
      }
    }
    // Most recently used last (the first is dropped when there are too many).
    this.#workspaces.delete(workspaceId);
    this.#workspaces.set(workspaceId, w);
    for (;;) {
      const rows = await db
        .selectFrom('embeddings')
        .select(['kind', 'object_id', 'ticket_id', 'vector', 'seq'])
        .where('workspace_id', '=', workspaceId)
        .where('model', '=', model)
        .where('seq', '>', w.seq)
        .orderBy('seq')
        .limit(PAGE)
        .execute();
      for (const r of rows) {
        w.put(r.kind, r.object_id, r.ticket_id, r.vector);
        w.seq = Math.max(w.seq, Number(r.seq));
      }
      if (rows.length < PAGE) return w;
    }
  }

  /** The workspace's vectors, up to date (one read at a time per workspace). */
  async load(db: Kysely<DB>, workspaceId: string, model: string): Promise<WorkspaceVectors> {
    const busy = this.#loading.get(workspaceId);
    if (busy) return busy;
    const p = this.#fresh(db, workspaceId, model).finally(() => this.#loading.delete(workspaceId));
    this.#loading.set(workspaceId, p);
    return p;
  }

  /**
   * The `perKind` nearest tickets (a ticket scores as its nearest subject or message) and
   * articles to `q` (a unit vector), best first, and the scores of `also` (the full-text
   * matches, scored whether near or not).
   */
  async nearest(
    db: Kysely<DB>,
    workspaceId: string,
    model: string,
    q: Float32Array,
    perKind: number,
    also: { tickets: string[]; articles: string[] },
    /** The vectors as load() just brought them up to date (not read again). */
    loaded?: WorkspaceVectors,
  ): Promise<{ rows: Neighbour[]; ticketScore: Map<string, number>; articleScore: Map<string, number> }> {
    const w = loaded?.model === model ? loaded : await this.load(db, workspaceId, model);
    const ticketScore = new Map<string, number>();
    const articleScore = new Map<string, number>();
    const d = w.dims;
    if (d === 0 || q.length !== d || d % 4 !== 0) return { rows: [], ticketScore, articleScore };
    const scores = await w.scoreAll(q, this.#helpers);
    const article = KINDS.indexOf('article');
    // Articles have one row each: their best `perKind` rows are the answer.
    const articles = new TopRows(perKind);
    for (let s = 0; s < w.count; s++) {
      const score = scores[s]!;
      if (w.kinds[s] === article && score > articles.cut) articles.offer(s, score);
    }
    const best = {
      article: articles
        .sorted()
        .map((s): Neighbour => ({ kind: 'article', objectId: w.objects[s]!, ticketId: null, score: scores[s]! })),
      ticket: [] as Neighbour[],
    };
    // A ticket has many rows (its subject, its messages): the best rows until `perKind` distinct
    // tickets are among them, more rows kept when a few long threads fill the first try.
    for (let keep = perKind * 40; ; keep *= 4) {
      const rows = new TopRows(keep);
      let eligible = 0;
      for (let s = 0; s < w.count; s++) {
        if (w.kinds[s] === article || !w.tickets[s]) continue;
        eligible++;
        const score = scores[s]!;
        if (score > rows.cut) rows.offer(s, score);
      }
      const seen = new Set<string>();
      best.ticket = [];
      for (const s of rows.sorted()) {
        const id = w.tickets[s]!;
        if (seen.has(id)) continue;
        seen.add(id);
        if (best.ticket.length < perKind)
          best.ticket.push({ kind: 'ticket', objectId: id, ticketId: id, score: scores[s]! });
      }
      if (best.ticket.length >= perKind || eligible <= keep) break;
    }
    for (const n of best.ticket) ticketScore.set(n.objectId, n.score);
    for (const n of best.article) articleScore.set(n.objectId, n.score);
    for (const id of also.tickets) {
      let top = Number.NEGATIVE_INFINITY;
      for (const s of w.slotsOfTicket.get(id) ?? []) top = Math.max(top, scores[s]!);
      if (top > Number.NEGATIVE_INFINITY) ticketScore.set(id, top);
    }
    for (const id of also.articles) {
      const s = w.slotOf.get(`article:${id}`);
      if (s !== undefined) articleScore.set(id, scores[s]!);
    }
    return { rows: [...best.ticket, ...best.article], ticketScore, articleScore };
  }
}

/** The `size` highest scores offered, as slots (a min-heap on the score). */
class TopRows {
  readonly #slots: Int32Array;
  readonly #scores: Float64Array;
  #n = 0;
  /** What a score must beat to enter: the lowest kept once full. */
  cut = Number.NEGATIVE_INFINITY;
  constructor(private readonly size: number) {
    this.#slots = new Int32Array(size);
    this.#scores = new Float64Array(size);
  }

  offer(slot: number, score: number): void {
    if (this.size === 0) return;
    const h = this.#scores;
    const sl = this.#slots;
    if (this.#n < this.size) {
      let i = this.#n++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (h[p]! <= score) break;
        h[i] = h[p]!;
        sl[i] = sl[p]!;
        i = p;
      }
      h[i] = score;
      sl[i] = slot;
      if (this.#n === this.size) this.cut = h[0]!;
      return;
    }
    if (score <= h[0]!) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.#n) break;
      const r = l + 1;
      const c = r < this.#n && h[r]! < h[l]! ? r : l;
      if (h[c]! >= score) break;
      h[i] = h[c]!;
      sl[i] = sl[c]!;
      i = c;
    }
    h[i] = score;
    sl[i] = slot;
    this.cut = h[0]!;
  }

  /** The slots, highest score first. */
  sorted(): number[] {
    const idx = Array.from({ length: this.#n }, (_, i) => i);
    idx.sort((a, b) => this.#scores[b]! - this.#scores[a]!);
    return idx.map((i) => this.#slots[i]!);
  }
}
