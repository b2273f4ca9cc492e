// The exact scan of semantic search (src/modules/ai/embeddings/vectors.ts) against a brute-force
// ranking of the same vectors: the same nearest tickets and articles, in the same order, with the
// same scores, whether one thread scans or several share the rows; rows written after the first search are seen by the next; a ticket scores as its
// nearest row; another workspace's vectors are never read.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unit } from '../../../src/modules/ai/embeddings/embedder.js';
import { vectorBytes } from '../../../src/modules/ai/embeddings/queue.js';
import { VectorIndex } from '../../../src/modules/ai/embeddings/vectors.js';
import { prng } from '../../../src/modules/triage/dedicated/linear.js';
import { newTenant, type Service, startService } from '../../support/helpers.js';

const DIMS = 64;
const MODEL = 'test-model';
let svc: Service;
const rand = prng(42);
const vector = () => unit(Float32Array.from({ length: DIMS }, () => rand() - 0.5));

interface Row {
  kind: 'ticket' | 'message' | 'article';
  object_id: string;
  ticket_id: string | null;
  v: Float32Array;
}

async function write(workspaceId: string, rows: Row[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    await svc.rt.deps.database.db
      .insertInto('embeddings')
      .values(
        rows.slice(i, i + 500).map((r) => ({
          workspace_id: workspaceId,
          kind: r.kind,
          object_id: r.object_id,
          ticket_id: r.ticket_id,
          model: MODEL,
          digest: 'x',
          vector: vectorBytes(r.v),
          seq: sql<number>`nextval('embeddings_seq')`,
        })),
      )
      .execute();
  }
}

function makeRows(tickets: number, messagesEach: number, articles: number): Row[] {
  const rows: Row[] = [];
  for (let t = 0; t < tickets; t++) {
    const id = randomUUID();
    rows.push({ kind: 'ticket', object_id: id, ticket_id: id, v: vector() });
    for (let m = 0; m < messagesEach; m++)
      rows.push({ kind: 'message', object_id: randomUUID(), ticket_id: id, v: vector() });
  }
  for (let a = 0; a < articles; a++)
    rows.push({ kind: 'article', object_id: randomUUID(), ticket_id: null, v: vector() });
  return rows;
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

/** The brute-force answer: best score per ticket and per article, best first. */
function bruteForce(rows: Row[], q: Float32Array, perKind: number) {
  const tickets = new Map<string, number>();
  const articles = new Map<string, number>();
  for (const r of rows) {
    const s = dot(r.v, q);
    if (r.kind === 'article') articles.set(r.object_id, Math.max(s, articles.get(r.object_id) ?? -Infinity));
    else tickets.set(r.ticket_id!, Math.max(s, tickets.get(r.ticket_id!) ?? -Infinity));
  }
  const top = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, perKind)
      .map(([id, score]) => ({ id, score }));
  return { tickets: top(tickets), articles: top(articles), all: tickets };
}

beforeAll(async () => {
  svc = await startService({}, { jobs: false });
});
const onTeardown: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const f of onTeardown) await f();
  await svc?.stop();
});

describe('the exact scan', () => {
  it('finds what a brute-force ranking finds, in order, and sees rows written after the first search', async () => {
    const t = await newTenant(svc.api);
    const other = await newTenant(svc.api, 'Other');
    const rows = makeRows(600, 4, 50);
    await write(t.workspaceId, rows);
    // Another workspace's vectors, some identical to the query: never found.
    const q = vector();
    await write(other.workspaceId, [{ kind: 'ticket', object_id: randomUUID(), ticket_id: null, v: q }]);
    // Its scan shared with two helper threads, as a large workspace's is.
    const index = new VectorIndex({ helpers: 2, parallelFrom: 0 });
    onTeardown.push(() => index.close());
    const db = svc.rt.deps.database.db;
    const lexical = rows
      .filter((r) => r.kind === 'ticket')
      .slice(0, 3)
      .map((r) => r.object_id);
    for (let round = 0; round < 2; round++) {
      const near = await index.nearest(db, t.workspaceId, MODEL, q, 25, { tickets: lexical, articles: [] });
      const want = bruteForce(rows, q, 25);
      const got = (kind: string) =>
        near.rows.filter((r) => r.kind === kind).map((r) => ({ id: r.objectId, score: r.score }));
      expect(got('ticket').map((r) => r.id)).toEqual(want.tickets.map((r) => r.id));
      expect(got('article').map((r) => r.id)).toEqual(want.articles.map((r) => r.id));
      for (const [i, r] of got('ticket').entries()) expect(r.score).toBeCloseTo(want.tickets[i]!.score, 5);
      // The full-text matches are scored too, as their nearest row.
      for (const id of lexical) expect(near.ticketScore.get(id)).toBeCloseTo(want.all.get(id)!, 5);
      // Rows written now reach the next search: a new ticket nearest of all.
      const id = randomUUID();
      const extra: Row = { kind: 'message', object_id: randomUUID(), ticket_id: id, v: q };
      rows.push(extra);
      await write(t.workspaceId, [extra]);
      if (round === 0) {
        const next = await index.nearest(db, t.workspaceId, MODEL, q, 25, { tickets: [], articles: [] });
        expect(next.rows[0]).toMatchObject({ kind: 'ticket', objectId: id });
        expect(next.rows[0]!.score).toBeCloseTo(1, 5);
      }
    }
  });

  it('still finds as many tickets when a few long threads hold all the nearest rows', async () => {
    const t = await newTenant(svc.api, 'Long threads');
    const q = vector();
    const near = (): Float32Array => unit(q.map((x) => x + (rand() - 0.5) * 0.05));
    const rows = makeRows(300, 1, 0);
    // Ten tickets of 120 messages each, all nearer q than anything else.
    for (let t2 = 0; t2 < 10; t2++) {
      const id = randomUUID();
      for (let m = 0; m < 120; m++) rows.push({ kind: 'message', object_id: randomUUID(), ticket_id: id, v: near() });
    }
    await write(t.workspaceId, rows);
    const got = await new VectorIndex().nearest(svc.rt.deps.database.db, t.workspaceId, MODEL, q, 25, {
      tickets: [],
      articles: [],
    });
    const want = bruteForce(rows, q, 25);
    expect(got.rows.map((r) => r.objectId)).toEqual(want.tickets.map((r) => r.id));
  });
});
