// The dedicated engine's database side: the examples a workspace's tickets give (what an agent
// left on them when solving: priority, severity, the Type label, the team; spam; an SLA breach
// recorded), the model stored per workspace (migration 0046), read into a per-process cache
// that a newer trained_at invalidates, and the training state GET /v1/triage reports.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../../platform/db/schema.js';
import { parseSla } from '../../sla/engine.js';
import { domainOf } from './features.js';
import { decodeModel, type Example, encodeModel, LEARNED, type ModelMeta, type WorkspaceModel } from './model.js';

/** Solved tickets before the engine decides. */
export const NEEDED = 40;
/** The most recent tickets a model learns from. */
export const MAX_EXAMPLES = 50_000;

const DONE = sql<boolean>`(t.status IN ('solved', 'closed') AND NOT t.spam)`;

/** The workspace's solved (and closed) tickets, spam aside: what it learns from. */
export async function countSolved(db: Kysely<DB>, workspaceId: string): Promise<number> {
  const r = await db
    .selectFrom('tickets as t')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('t.workspace_id', '=', workspaceId)
    .where('t.deleted_at', 'is', null)
    .where('t.merged_into_id', 'is', null)
    .where(DONE)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** interface.md AI rule 3's sentiments: only these are learned from custom.ai_sentiment. */
const SENTIMENTS = new Set(['positive', 'neutral', 'negative', 'frustrated']);

/**
 * The examples: solved and closed tickets (every field), and tickets marked spam (spam only),
 * the most recent first. A ticket's text is its subject and its first message from the
 * customer (else its first reply).
 */
export async function loadExamples(db: Kysely<DB>, workspaceId: string, limit = MAX_EXAMPLES): Promise<Example[]> {
  const rows = await db
    .selectFrom('tickets as t')
    .leftJoin('contacts as c', (j) =>
      j.onRef('c.workspace_id', '=', 't.workspace_id').onRef('c.id', '=', 't.contact_id'),
    )
    .select([
      't.subject',
      't.channel',
      't.mailbox_id',
      't.priority',
      't.severity',
      't.team_id',
      't.spam',
      't.sla',
      'c.email',
      sql<string | null>`(SELECT m.body_text FROM messages m
        WHERE m.workspace_id = t.workspace_id AND m.ticket_id = t.id AND m.kind = 'reply'
        ORDER BY (m.direction = 'inbound') DESC, m.created_at, m.id LIMIT 1)`.as('message'),
      sql<string | null>`(SELECT tg.name FROM ticket_tags tt
        JOIN tags tg ON tg.workspace_id = tt.workspace_id AND tg.id = tt.tag_id
        JOIN tag_groups g ON g.workspace_id = tg.workspace_id AND g.id = tg.group_id
        WHERE tt.workspace_id = t.workspace_id AND tt.ticket_id = t.id AND g.exclusive AND lower(trim(g.name)) = 'type'
        ORDER BY tg.name LIMIT 1)`.as('type_label'),
      // Needed a person: an agent (a user) replied after the ticket's first message (which an
      // agent may have written: a ticket opened through the API or the app).
      sql<boolean>`EXISTS (SELECT 1 FROM messages m
        WHERE m.workspace_id = t.workspace_id AND m.ticket_id = t.id AND m.kind = 'reply'
          AND m.direction = 'outbound' AND m.author_type = 'user'
          AND EXISTS (SELECT 1 FROM messages f WHERE f.workspace_id = m.workspace_id AND f.ticket_id = m.ticket_id
                        AND (f.created_at, f.id) < (m.created_at, m.id)))`.as('replied'),
      // What the language model (or a person) recorded on the ticket: the engine learns it where present.
      sql<string | null>`t.custom ->> 'ai_sentiment'`.as('sentiment'),
      sql<string | null>`left(nullif(trim(t.custom ->> 'ai_category'), ''), 100)`.as('category'),
    ])
    .where('t.workspace_id', '=', workspaceId)
    .where('t.deleted_at', 'is', null)
    .where('t.merged_into_id', 'is', null)
    .where(sql<boolean>`(t.status IN ('solved', 'closed') OR t.spam)`)
    .orderBy(sql`coalesce(t.solved_at, t.updated_at)`, 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    text: {
      subject: r.subject,
      message: r.message ?? '',
      domain: domainOf(r.email),
      channel: r.channel,
      mailboxId: r.mailbox_id,
    },
    labels: r.spam
      ? { spam: 'true' }
      : {
          priority: r.priority,
          severity: r.severity ?? '',
          type_label: r.type_label ?? '',
          team: r.team_id ?? '',
          spam: 'false',
          sla_risk: parseSla(r.sla)?.breached ? 'true' : 'false',
          needs_human: r.replied ? 'true' : 'false',
          ...(r.sentiment && SENTIMENTS.has(r.sentiment) ? { sentiment: r.sentiment } : {}),
          ...(r.category ? { category: r.category } : {}),
        },
  }));
}

/** Stores a trained model (or only the count when there is none yet). */
export async function saveModel(
  db: Kysely<DB>,
  workspaceId: string,
  solved: number,
  model: WorkspaceModel | null,
): Promise<void> {
  const now = new Date();
  const set = model
    ? (() => {
        const { meta, weights } = encodeModel(model);
        return {
          model: model.name,
          meta: JSON.stringify(meta),
          weights,
          trained_at: now,
          trained_on: model.trainedOn,
          solved,
          updated_at: now,
        };
      })()
    : { solved, updated_at: now };
  await db
    .insertInto('triage_models')
    .values({ workspace_id: workspaceId, ...set })
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet(set))
    .execute();
}

/**
 * Marks a training run queued for the workspace, `delaySeconds` from now, unless one is
 * queued already (one that never ran for five minutes counts as lost). Returns when it runs,
 * or null when one was queued already.
 */
export async function markQueued(db: Kysely<DB>, workspaceId: string, delaySeconds: number): Promise<Date | null> {
  const r = await sql<{ train_after: Date | string }>`
    INSERT INTO triage_models (workspace_id, train_after)
    VALUES (${workspaceId}, now() + make_interval(secs => ${delaySeconds}))
    ON CONFLICT (workspace_id) DO UPDATE SET train_after = EXCLUDED.train_after
      WHERE triage_models.train_after IS NULL OR triage_models.train_after < now() - interval '5 minutes'
    RETURNING train_after`.execute(db);
  const at = r.rows[0]?.train_after;
  return at === undefined ? null : new Date(at);
}

/** The queued run starts: a solve from now on queues the next one. */
export async function clearQueued(db: Kysely<DB>, workspaceId: string): Promise<void> {
  await db.updateTable('triage_models').set({ train_after: null }).where('workspace_id', '=', workspaceId).execute();
}

interface Cached {
  trainedAt: number;
  model: WorkspaceModel;
}

/** Workspaces whose models a process keeps (the least recently used goes first). */
const CACHED_MODELS = 256;

/** Per process: each workspace's model as last read, kept while its trained_at is the same. */
export class ModelCache {
  private readonly models = new Map<string, Cached>();

  /** The workspace's current model (one small read; the weights only when they changed), or null. */
  async current(db: Kysely<DB>, workspaceId: string): Promise<WorkspaceModel | null> {
    const head = await db
      .selectFrom('triage_models')
      .select('trained_at')
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    if (!head?.trained_at) {
      this.models.delete(workspaceId);
      return null;
    }
    const at = new Date(head.trained_at).getTime();
    const cached = this.models.get(workspaceId);
    if (cached && cached.trainedAt === at) {
      this.models.delete(workspaceId);
      this.models.set(workspaceId, cached);
      return cached.model;
    }
    const row = await db
      .selectFrom('triage_models')
      .select(['meta', 'weights', 'trained_at'])
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    if (!row?.meta || !row.weights || !row.trained_at) return null;
    const meta = (typeof row.meta === 'string' ? JSON.parse(row.meta) : row.meta) as unknown as ModelMeta;
    const model = decodeModel(meta, row.weights);
    model.version = new Date(row.trained_at).toISOString();
    this.models.delete(workspaceId);
    this.models.set(workspaceId, { trainedAt: new Date(row.trained_at).getTime(), model });
    if (this.models.size > CACHED_MODELS) this.models.delete(this.models.keys().next().value!);
    return model;
  }
}

export interface TrainingState {
  status: 'learning' | 'ready';
  solved: number;
  needed: number;
  trained_at: string | null;
  trained_on: number;
  accuracy: Record<string, number> | null;
}

/** What GET /v1/triage reports of the workspace's training. */
export async function trainingState(db: Kysely<DB>, workspaceId: string): Promise<TrainingState> {
  const row = await db
    .selectFrom('triage_models')
    .select(['meta', 'trained_at', 'trained_on'])
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  const solved = await countSolved(db, workspaceId);
  const trainedAt = row?.trained_at ? new Date(row.trained_at) : null;
  let accuracy: Record<string, number> | null = null;
  if (row?.meta && trainedAt) {
    const meta = (typeof row.meta === 'string' ? JSON.parse(row.meta) : row.meta) as unknown as ModelMeta;
    accuracy = {};
    for (const f of LEARNED) {
      const m = meta.fields.find((x) => x.field === f);
      if (m && m.accuracy !== null) accuracy[f] = Math.round(m.accuracy * 1000) / 1000;
    }
  }
  return {
    status: trainedAt ? 'ready' : 'learning',
    solved,
    needed: NEEDED,
    trained_at: trainedAt?.toISOString() ?? null,
    trained_on: trainedAt ? (row?.trained_on ?? 0) : 0,
    accuracy,
  };
}
