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
  countedAt = Date.now();

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
   * The `perKind` nearest tickets and articles to `q` (a unit vector), best first, and every
   * ticket's and article's score (the full-text matches are scored too, near or not).
   */
  async nearest(
    db: Kysely<DB>,
    workspaceId: string,
    model: string,
    q: Float32Array,
    perKind: number,
  ): Promise<{ rows: Neighbour[]; ticketScore: Map<string, number>; articleScore: Map<string, number> }> {
    const w = await this.load(db, workspaceId, model);
    const d = w.dims;
    const ticketScore = new Map<string, number>();
    const articleScore = new Map<string, number>();
    if (d === 0 || q.length !== d) return { rows: [], ticketScore, articleScore };
    const { data, kinds, tickets, objects } = w;
    // Best score per ticket (its subject or any of its messages), and per article.
    const article = KINDS.indexOf('article');
    for (let s = 0; s < w.count; s++) {
      const base = s * d;
      let dot = 0;
      for (let i = 0; i < d; i++) dot += data[base + i]! * q[i]!;
      if (kinds[s] === article) {
        const id = objects[s]!;
        if (dot > (articleScore.get(id) ?? Number.NEGATIVE_INFINITY)) articleScore.set(id, dot);
      } else {
        const id = tickets[s];
        if (!id) continue;
        const had = ticketScore.get(id);
        if (had === undefined || dot > had) ticketScore.set(id, dot);
      }
    }
    const best = (m: Map<string, number>, kind: EmbeddedKind): Neighbour[] =>
      [...m]
        .sort((a, b) => b[1] - a[1])
        .slice(0, perKind)
        .map(([id, score]) => ({ kind, objectId: id, ticketId: kind === 'article' ? null : id, score }));
    return { rows: [...best(ticketScore, 'ticket'), ...best(articleScore, 'article')], ticketScore, articleScore };
  }
}
