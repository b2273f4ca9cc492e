// Embedding after writes, never on the request path: the bus's events (after commit) put what
// changed in embedding_queue, and one job per workspace (sent a second after the first change:
// the changes meanwhile ride on it) embeds it in batches of BATCH texts. A ticket's
// vector is its subject, a message's its text (replies and notes), a published article's its
// title and text; an unpublished or deleted article's vector is dropped, as are a deleted
// ticket's. Vectors are stored with the embedder's model: a backfill (at start and hourly)
// queues whatever has no vector of the current model, so a model change embeds everything
// again and a lost event costs an hour at most. Only workspaces whose AI is on are embedded
// (semantic search answers 404 ai_disabled otherwise); their queue is emptied.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Deps } from '../../../deps.js';
import type { EmbeddedKind } from '../../../platform/db/schema.js';
import type { EventEnvelope } from '../../../platform/events/envelope.js';
import { resolveAi } from '../service.js';
import type { Embedder } from './embedder.js';

export const EMBED_JOB = 'ai-embed';
export const BACKFILL_JOB = 'ai-embed-backfill';
export const BATCH = 64;
const DEBOUNCE_MS = 1_000;

interface EmbedJob {
  w: string;
}

interface Queued {
  workspace_id: string;
  kind: EmbeddedKind;
  object_id: string;
}

/** What an event asks to embed (or drop). */
function changed(e: EventEnvelope): { queue: Queued[]; dropTicket: string | null } {
  const w = e.workspace_id;
  const d = e.data as Record<string, { id?: string; status?: string } | string | string[] | undefined>;
  const idOf = (k: string) => {
    const v = d[k];
    return v && typeof v === 'object' && !Array.isArray(v) && typeof v.id === 'string' ? v.id : null;
  };
  const out: Queued[] = [];
  switch (e.type) {
    case 'ticket.created': {
      const id = idOf('ticket');
      if (id) out.push({ workspace_id: w, kind: 'ticket', object_id: id });
      break;
    }
    case 'ticket.updated': {
      const id = idOf('ticket');
      const changes = Array.isArray(d.changes) ? d.changes : [];
      if (id && changes.includes('subject')) out.push({ workspace_id: w, kind: 'ticket', object_id: id });
      break;
    }
    case 'message.created': {
      const id = idOf('message');
      if (id) out.push({ workspace_id: w, kind: 'message', object_id: id });
      break;
    }
    case 'kb_article.created':
    case 'kb_article.updated': {
      const id = idOf('kb_article') ?? idOf('article');
      if (id) out.push({ workspace_id: w, kind: 'article', object_id: id });
      break;
    }
    case 'kb_article.deleted': {
      const id = typeof d.kb_article_id === 'string' ? d.kb_article_id : null;
      if (id) out.push({ workspace_id: w, kind: 'article', object_id: id });
      break;
    }
    case 'ticket.deleted':
      return { queue: [], dropTicket: typeof d.ticket_id === 'string' ? d.ticket_id : null };
  }
  return { queue: out, dropTicket: null };
}

/**
 * Whether the workspace's AI is on, kept 30 seconds per process: most events come from
 * workspaces without AI, which must not pay a write per event for it.
 */
const aiOn = new LRUCache<string, boolean>({ max: 10_000, ttl: 30_000 });
async function isAiOn(deps: Deps, workspaceId: string): Promise<boolean> {
  const known = aiOn.get(workspaceId);
  if (known !== undefined) return known;
  const ai = await resolveAi(deps, workspaceId);
  const on = ai.target !== null && ai.switchedOn;
  aiOn.set(workspaceId, on);
  return on;
}

/** Queues an event's changes and the workspace's job (the bus subscription). */
export async function onEvent(deps: Deps, e: EventEnvelope): Promise<void> {
  const { queue, dropTicket } = changed(e);
  if ((queue.length === 0 && !dropTicket) || !(await isAiOn(deps, e.workspace_id))) return;
  const db = deps.database.db;
  if (dropTicket) {
    await db
      .deleteFrom('embeddings')
      .where('workspace_id', '=', e.workspace_id)
      .where('ticket_id', '=', dropTicket)
      .execute();
    return;
  }
  if (queue.length === 0) return;
  await db
    .insertInto('embedding_queue')
    .values(queue)
    .onConflict((oc) => oc.columns(['workspace_id', 'kind', 'object_id']).doUpdateSet({ queued_at: sql`now()` }))
    .execute();
  soon(deps, e.workspace_id);
}

/**
 * One job a second at most per workspace and process, sent a second after the first change
 * that found none on its way (a trailing debounce: a change always has a job after it, which
 * reads every row queued before it was sent).
 */
const timers = new Map<string, NodeJS.Timeout>();
function soon(deps: Deps, workspaceId: string): void {
  if (timers.has(workspaceId)) return;
  const t = setTimeout(() => {
    timers.delete(workspaceId);
    queueJob(deps, workspaceId).catch((err) =>
      deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'embedding job not queued'),
    );
  }, DEBOUNCE_MS);
  t.unref();
  timers.set(workspaceId, t);
}

export async function queueJob(deps: Deps, workspaceId: string): Promise<void> {
  await deps.jobs.send<EmbedJob>(EMBED_JOB, { w: workspaceId }, { retryLimit: 5, retryDelaySeconds: 10 });
}

/** The text whose vector stands for each object (null: nothing to embed, drop its vector). */
async function textsOf(
  deps: Deps,
  workspaceId: string,
  batch: Queued[],
): Promise<Map<string, { text: string; ticketId: string | null } | null>> {
  const db = deps.database.db;
  const ids = (kind: EmbeddedKind) => batch.filter((b) => b.kind === kind).map((b) => b.object_id);
  const out = new Map<string, { text: string; ticketId: string | null } | null>();
  for (const b of batch) out.set(`${b.kind}:${b.object_id}`, null);
  const tickets = ids('ticket');
  if (tickets.length > 0) {
    const rows = await db
      .selectFrom('tickets')
      .select(['id', 'subject'])
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', tickets)
      .where('deleted_at', 'is', null)
      .execute();
    for (const r of rows) if (r.subject.trim()) out.set(`ticket:${r.id}`, { text: r.subject.trim(), ticketId: r.id });
  }
  const messages = ids('message');
  if (messages.length > 0) {
    const rows = await db
      .selectFrom('messages')
      .select(['id', 'ticket_id', 'body_text'])
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', messages)
      .execute();
    for (const r of rows) {
      if (r.body_text.trim()) out.set(`message:${r.id}`, { text: r.body_text.trim(), ticketId: r.ticket_id });
    }
  }
  const articles = ids('article');
  if (articles.length > 0) {
    const rows = await db
      .selectFrom('kb_articles')
      .select(['id', 'title', 'body_text'])
      .where('workspace_id', '=', workspaceId)
      .where('id', 'in', articles)
      .where('status', '=', 'published')
      .execute();
    for (const r of rows) out.set(`article:${r.id}`, { text: `${r.title}\n${r.body_text}`.trim(), ticketId: null });
  }
  return out;
}

const digestOf = (text: string) => createHash('sha256').update(text).digest('base64url');

/** Little-endian float32 bytes of a vector, as stored. */
export function vectorBytes(v: Float32Array): Uint8Array {
  const out = new Uint8Array(v.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < v.length; i++) view.setFloat32(i * 4, v[i]!, true);
  return out;
}

/** Embeds the workspace's queue, a batch at a time, until it is empty. */
export async function runEmbedJob(deps: Deps, embedder: Embedder, workspaceId: string): Promise<number> {
  const db = deps.database.db;
  const ai = await resolveAi(deps, workspaceId);
  if (!ai.target || !ai.switchedOn) {
    await db.deleteFrom('embedding_queue').where('workspace_id', '=', workspaceId).execute();
    return 0;
  }
  let embedded = 0;
  for (;;) {
    const batch = await db
      .selectFrom('embedding_queue')
      // The time as PostgreSQL's text: a JavaScript Date would drop its microseconds.
      .select(['workspace_id', 'kind', 'object_id', sql<string>`queued_at::text`.as('at')])
      .where('workspace_id', '=', workspaceId)
      .orderBy('queued_at')
      .limit(BATCH)
      .execute();
    if (batch.length === 0) return embedded;
    const texts = await textsOf(deps, workspaceId, batch);
    // The same text under the same model is not embedded again (a ticket.updated of another field).
    const known = new Map(
      (
        await db
          .selectFrom('embeddings')
          .select(['kind', 'object_id', 'digest'])
          .where('workspace_id', '=', workspaceId)
          .where('model', '=', embedder.model)
          .where(
            'object_id',
            'in',
            batch.map((b) => b.object_id),
          )
          .execute()
      ).map((r) => [`${r.kind}:${r.object_id}`, r.digest]),
    );
    const toEmbed: Array<{ b: Queued; text: string; ticketId: string | null; digest: string }> = [];
    const drop: Queued[] = [];
    for (const b of batch) {
      const t = texts.get(`${b.kind}:${b.object_id}`);
      if (!t) {
        drop.push(b);
        continue;
      }
      const digest = digestOf(t.text);
      if (known.get(`${b.kind}:${b.object_id}`) !== digest)
        toEmbed.push({ b, text: t.text, ticketId: t.ticketId, digest });
    }
    const vectors = await embedder.embed(toEmbed.map((t) => t.text));
    const taken = await db.transaction().execute(async (trx) => {
      for (const d of drop) {
        await trx
          .deleteFrom('embeddings')
          .where('workspace_id', '=', workspaceId)
          .where('kind', '=', d.kind)
          .where('object_id', '=', d.object_id)
          .execute();
      }
      if (toEmbed.length > 0) {
        await trx
          .insertInto('embeddings')
          .values(
            toEmbed.map((t, i) => ({
              workspace_id: workspaceId,
              kind: t.b.kind,
              object_id: t.b.object_id,
              ticket_id: t.ticketId,
              model: embedder.model,
              digest: t.digest,
              vector: vectorBytes(vectors[i]!),
              seq: sql<number>`nextval('embeddings_seq')`,
            })),
          )
          .onConflict((oc) =>
            oc.columns(['workspace_id', 'kind', 'object_id']).doUpdateSet((eb) => ({
              ticket_id: eb.ref('excluded.ticket_id'),
              model: eb.ref('excluded.model'),
              digest: eb.ref('excluded.digest'),
              vector: eb.ref('excluded.vector'),
              seq: eb.ref('excluded.seq'),
            })),
          )
          .execute();
      }
      // Only what was read: a change queued again meanwhile stays for the next batch.
      let done = 0;
      for (const b of batch) {
        const r = await trx
          .deleteFrom('embedding_queue')
          .where('workspace_id', '=', workspaceId)
          .where('kind', '=', b.kind)
          .where('object_id', '=', b.object_id)
          .where('queued_at', '<=', sql<Date>`${b.at}::timestamptz`)
          .executeTakeFirst();
        done += Number(r.numDeletedRows);
      }
      return done;
    });
    // Nothing taken off the queue (every row queued again meanwhile): the next job goes on.
    if (taken === 0) return embedded;
    embedded += toEmbed.length;
  }
}

/**
 * Queues what has no vector of the current model in the workspaces whose AI is on (a new
 * model, AI switched on, an event lost with a process). One statement per kind.
 */
export async function backfill(deps: Deps, embedder: Embedder, only?: string): Promise<number> {
  const db = deps.database.db;
  let q = db.selectFrom('workspaces').select('id');
  if (only) q = q.where('id', '=', only);
  let queued = 0;
  for (const { id } of await q.execute()) {
    const ai = await resolveAi(deps, id);
    if (!ai.target || !ai.switchedOn) continue;
    const missing = (kind: EmbeddedKind) =>
      sql`NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.workspace_id = ${id} AND e.kind = ${kind}
                        AND e.object_id = x.id AND e.model = ${embedder.model})`;
    const r = await sql<{ n: number }>`
      WITH q AS (
        INSERT INTO embedding_queue (workspace_id, kind, object_id)
        SELECT ${id}::uuid, 'ticket', x.id FROM tickets x
         WHERE x.workspace_id = ${id} AND x.deleted_at IS NULL AND ${missing('ticket')}
        UNION ALL
        SELECT ${id}::uuid, 'message', x.id FROM messages x
         WHERE x.workspace_id = ${id} AND ${missing('message')}
        UNION ALL
        SELECT ${id}::uuid, 'article', x.id FROM kb_articles x
         WHERE x.workspace_id = ${id} AND x.status = 'published' AND ${missing('article')}
        ON CONFLICT DO NOTHING
        RETURNING 1)
      SELECT count(*)::int AS n FROM q`.execute(db);
    const n = Number(r.rows[0]?.n ?? 0);
    // Vectors of another model are of no use to this one's queries.
    await db.deleteFrom('embeddings').where('workspace_id', '=', id).where('model', '<>', embedder.model).execute();
    queued += n;
    const waiting = await db
      .selectFrom('embedding_queue')
      .select('object_id')
      .where('workspace_id', '=', id)
      .limit(1)
      .executeTakeFirst();
    if (waiting) await queueJob(deps, id);
  }
  return queued;
}

/** The embedding worker, the backfill (at start and hourly) and the bus subscription. */
export async function registerEmbeddingJobs(
  deps: Deps,
  embedder: Embedder,
  withBackfill: boolean,
): Promise<{ stop(): void }> {
  await deps.jobs.work<EmbedJob>(EMBED_JOB, async (job) => {
    const n = await runEmbedJob(deps, embedder, job.w);
    if (n > 0) deps.log.debug({ workspace_id: job.w, embedded: n, model: embedder.model }, 'embedded');
  });
  await deps.jobs.work(BACKFILL_JOB, async () => {
    const n = await backfill(deps, embedder);
    if (n > 0) deps.log.info({ queued: n, model: embedder.model }, 'embedding backfill queued');
  });
  if (withBackfill) {
    await deps.jobs.schedule(BACKFILL_JOB, '41 * * * *');
    await deps.jobs.send(BACKFILL_JOB, {}, { retryLimit: 1 });
  }
  const unsubscribe = deps.bus.subscribe((e) => {
    onEvent(deps, e).catch((err) =>
      deps.log.warn({ err: err instanceof Error ? err.message : String(err), type: e.type }, 'embedding not queued'),
    );
  });
  return {
    stop() {
      unsubscribe();
      for (const t of timers.values()) clearTimeout(t);
      timers.clear();
    },
  };
}
