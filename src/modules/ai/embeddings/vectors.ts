// The nearest-neighbour search: an exact scan over the workspace's vectors, kept in each
// process's memory (float32, one array per workspace) and brought up to date from the rows it
// has not seen (`seq`) before each search. Exact: every vector is compared, so the results are
// those a perfect index would give; 100,000 vectors of 512 dimensions take about 40 ms on this
// machine (docs/performance.md "Semantic search"). No pgvector: docs/decisions.md says why.
//
// Rows deleted since (a deleted ticket, an unpublished article) may linger until the next full
// read (when the row count drops, checked at most every RECOUNT_MS); the search checks every
// result against the live records anyway.
import type { Kysely } from 'kysely';
import type { DB, EmbeddedKind } from '../../../platform/db/schema.js';

const KINDS: EmbeddedKind[] = ['ticket', 'message', 'article'];
const RECOUNT_MS = 30_000;
const PAGE = 5_000;

class WorkspaceVectors {
  dims = 0;
  count = 0;
  seq = 0;
  data = new Float32Array(0);
  kinds = new Uint8Array(0);
  objects: string[] = [];
  tickets: Array<string | null> = [];
  readonly slotOf = new Map<string, number>();
  /** A ticket's rows: its subject and its messages. */
  readonly slotsOfTicket = new Map<string, number[]>();
  #scores = new Float32Array(0);
  countedAt = Date.now();

  /** Every row's dot product with `q` (valid until the next call). */
  scoreAll(q: Float32Array): Float32Array {
    const d = this.dims;
    const n = this.count;
    if (this.#scores.length < n) this.#scores = new Float32Array(Math.max(1024, n * 2));
    const out = this.#scores;
    const data = this.data;
    const qd = Float64Array.from(q);
    // Four sums at once: the loop the JIT makes of this runs about a third faster than one sum.
    for (let s = 0, b = 0; s < n; s++) {
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      for (let i = 0; i < d; i += 4, b += 4) {
        a0 += data[b]! * qd[i]!;
        a1 += data[b + 1]! * qd[i + 1]!;
        a2 += data[b + 2]! * qd[i + 2]!;
        a3 += data[b + 3]! * qd[i + 3]!;
      }
      out[s] = a0 + a1 + a2 + a3;
    }
    return out;
  }

  constructor(readonly model: string) {}

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
        const grown = new Float32Array(Math.max(1024, this.count * 2) * dims);
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

  constructor(private readonly maxWorkspaces = 64) {}

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
      w = new WorkspaceVectors(model);
      if (this.#workspaces.size >= this.maxWorkspaces) {
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
  ): Promise<{ rows: Neighbour[]; ticketScore: Map<string, number>; articleScore: Map<string, number> }> {
    const w = await this.load(db, workspaceId, model);
    const ticketScore = new Map<string, number>();
    const articleScore = new Map<string, number>();
    const d = w.dims;
    if (d === 0 || q.length !== d || d % 4 !== 0) return { rows: [], ticketScore, articleScore };
    const scores = w.scoreAll(q);
    // The best rows, enough to fill both lists with a few rows per ticket: a bounded min-heap.
    const keep = Math.min(w.count, perKind * 40);
    const heap = new TopRows(keep);
    for (let s = 0; s < w.count; s++) heap.offer(s, scores[s]!);
    const article = KINDS.indexOf('article');
    const best = { ticket: [] as Neighbour[], article: [] as Neighbour[] };
    const seen = new Set<string>();
    for (const s of heap.sorted()) {
      const isArticle = w.kinds[s] === article;
      const id = isArticle ? w.objects[s]! : w.tickets[s];
      if (!id || seen.has(id)) continue;
      seen.add(id);
      const list = isArticle ? best.article : best.ticket;
      if (list.length < perKind) {
        list.push({
          kind: isArticle ? 'article' : 'ticket',
          objectId: id,
          ticketId: isArticle ? null : id,
          score: scores[s]!,
        });
      }
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
  }

  /** The slots, highest score first. */
  sorted(): number[] {
    const idx = Array.from({ length: this.#n }, (_, i) => i);
    idx.sort((a, b) => this.#scores[b]! - this.#scores[a]!);
    return idx.map((i) => this.#slots[i]!);
  }
}
