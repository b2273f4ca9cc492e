// GET /v1/ai/search: /v1/search's answer, ranked by meaning as well as by words (docs/ai.md
// "Semantic search").
//
// Each kind is searched both ways at once: the words as GET /v1/search finds them (tickets:
// number, subject, messages, contact; articles: full-text, drafts included for kb readers), and
// q's vector against the workspace's (vectors.ts: a ticket scores as its nearest subject or
// message). Then one score per result:
//   similarity (the cosine, about 0.1 to 0.9)
//   + 0.5 for a full-text match, + up to 0.25 more by its place in the full-text order
//   + 2 for the ticket whose number q is;
// so an exact ticket number comes first, an error code or a rare word found in the text comes
// before anything found by meaning alone, and among full-text matches the nearer in meaning
// rise. A result found by meaning alone must reach the embedder's floor (0.35 for the embedded
// model): below it, "similar" is noise. Contacts are searched as /v1/search does (no vectors).
// Every result found by meaning is read again through the caller's eyes (live, not spam, no
// private team they are not in; articles published), so a vector never shows what the list
// would not.
import type { Static } from '@sinclair/typebox';
import { sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Deps } from '../../../deps.js';
import { escapeHtml } from '../../../platform/html/index.js';
import type { RequestContext, Scope } from '../../../platform/http/context.js';
import { ApiError } from '../../../platform/http/errors.js';
import { searchContacts } from '../../contacts/service.js';
import { excerptOf } from '../../kb/articles.js';
import { searchArticles } from '../../kb/list.js';
import { joinedTeamVisible } from '../../teams/access.js';
import { listTickets } from '../../tickets/list.js';
import { TICKET_JSON, type TicketView, ticketFrom } from '../../tickets/queries.js';
import type { AiSearchResult } from '../schemas.js';
import { requireAi } from '../service.js';
import type { Embedder } from './embedder.js';
import type { VectorIndex } from './vectors.js';

const PER_KIND = 5;
/** Full-text matches considered per kind (each also scored by meaning). */
const LEXICAL = 20;
/** Nearest results read per kind before the caller's visibility is applied. */
const NEAREST = 25;
const FULL_TEXT_BONUS = 0.5;
const ORDER_BONUS = 0.25;
const NUMBER_BONUS = 2;

const mayRead = (ctx: RequestContext, area: 'tickets' | 'contacts' | 'kb') =>
  ctx.scopes === null || ctx.scopes.some((s: Scope) => s === `${area}:read` || s === `${area}:write`);

/** What a search needs: the instance's embedder and this process's vectors (null: off). */
export interface Semantic {
  embedder: Embedder;
  vectors: VectorIndex;
  /** q's vector, kept a few minutes: the same words are often asked again (a page refresh). */
  queries: LRUCache<string, Float32Array>;
}

export function semanticOf(embedder: Embedder | null, vectors: VectorIndex): Semantic | null {
  return embedder ? { embedder, vectors, queries: new LRUCache({ max: 500, ttl: 300_000 }) } : null;
}

async function queryVector(s: Semantic, q: string): Promise<Float32Array> {
  const key = q.trim().toLowerCase();
  const hit = s.queries.get(key);
  if (hit) return hit;
  const [v] = await s.embedder.embed([q.trim()]);
  if (!v) throw new Error('no vector for the query');
  s.queries.set(key, v);
  return v;
}

interface Ranked {
  id: string;
  score: number;
  lexical: boolean;
}

/** The fused order of one kind: full-text matches (in their order) and nearest ones. */
function fuse(lexical: string[], nearest: Map<string, number>, floor: number, numberMatch: string | null): Ranked[] {
  const out = new Map<string, Ranked>();
  lexical.forEach((id, i) => {
    const sim = nearest.get(id) ?? 0;
    const bonus = FULL_TEXT_BONUS + ORDER_BONUS * (1 - i / lexical.length) + (id === numberMatch ? NUMBER_BONUS : 0);
    out.set(id, { id, score: sim + bonus, lexical: true });
  });
  for (const [id, sim] of nearest) {
    if (!out.has(id) && sim >= floor) out.set(id, { id, score: sim, lexical: false });
  }
  return [...out.values()].sort((a, b) => b.score - a.score);
}

/** Tickets by id as the caller may see them in a list (live, not spam, visible team). */
async function visibleTickets(deps: Deps, ctx: RequestContext, ids: string[]): Promise<Map<string, TicketView>> {
  if (ids.length === 0) return new Map();
  let q = ticketFrom(deps.database.db, ctx.workspaceId)
    .select(['t.id', TICKET_JSON.as('json')])
    .where('t.id', 'in', ids)
    .where('t.deleted_at', 'is', null)
    .where(sql<boolean>`NOT t.spam`);
  const team = joinedTeamVisible(ctx);
  if (team) q = q.where(team);
  const rows = await q.execute();
  return new Map(rows.map((r) => [r.id, JSON.parse(r.json) as TicketView]));
}

type ArticleHit = Static<typeof AiSearchResult>['articles'][number];

async function publishedArticles(deps: Deps, workspaceId: string, ids: string[]): Promise<Map<string, ArticleHit>> {
  if (ids.length === 0) return new Map();
  const rows = await deps.database.db
    .selectFrom('kb_articles')
    .select(['id', 'title', 'slug', 'excerpt', 'body_text', 'status'])
    .where('workspace_id', '=', workspaceId)
    .where('id', 'in', ids)
    .where('status', '=', 'published')
    .execute();
  return new Map(
    rows.map((r) => {
      const excerpt = excerptOf(r.excerpt, r.body_text);
      return [
        r.id,
        { id: r.id, title: r.title, slug: r.slug, excerpt, status: 'published' as const, snippet: escapeHtml(excerpt) },
      ];
    }),
  );
}

export async function semanticSearch(
  deps: Deps,
  semantic: Semantic | null,
  ctx: RequestContext,
  q: string,
): Promise<Static<typeof AiSearchResult>> {
  await requireAi(deps, ctx.workspaceId);
  if (!semantic) {
    throw new ApiError('ai_disabled', 'Semantic search is turned off on this instance (AI_EMBEDDINGS=off).');
  }
  const text = q.trim();
  const readsTickets = mayRead(ctx, 'tickets');
  const readsKb = mayRead(ctx, 'kb');
  const [vector, lexTickets, contacts, lexArticles, loaded] = await Promise.all([
    readsTickets || readsKb ? queryVector(semantic, text) : null,
    readsTickets
      ? listTickets(deps, ctx, { q: text, limit: LEXICAL }).then(
          (p) => (JSON.parse(p.toString()) as { data: TicketView[] }).data,
        )
      : [],
    mayRead(ctx, 'contacts') ? searchContacts(deps, ctx, text, PER_KIND) : [],
    readsKb ? searchArticles(deps, ctx, text, LEXICAL) : [],
    // The process's vectors brought up to date meanwhile (handed to nearest(), not read again).
    readsTickets || readsKb ? semantic.vectors.load(deps.database.db, ctx.workspaceId, semantic.embedder.model) : null,
  ]);
  const near = vector
    ? await semantic.vectors.nearest(
        deps.database.db,
        ctx.workspaceId,
        semantic.embedder.model,
        vector,
        NEAREST,
        {
          tickets: lexTickets.map((t) => t.id),
          articles: lexArticles.map((a) => a.id),
        },
        loaded ?? undefined,
      )
    : null;
  const floor = semantic.embedder.floor;

  // Tickets: the nearest ones the caller may see, fused with the full-text matches.
  const ticketOf = new Map(lexTickets.map((t) => [t.id, t]));
  let tickets: TicketView[] = [];
  const semanticIds: { tickets: string[]; articles: string[] } = { tickets: [], articles: [] };
  if (readsTickets && near) {
    const candidates = near.rows.filter((r) => r.kind === 'ticket' && r.score >= floor && !ticketOf.has(r.objectId));
    const seen = await visibleTickets(
      deps,
      ctx,
      candidates.map((c) => c.objectId),
    );
    const nearest = new Map<string, number>();
    for (const t of lexTickets) nearest.set(t.id, near.ticketScore.get(t.id) ?? 0);
    for (const c of candidates) if (seen.has(c.objectId)) nearest.set(c.objectId, c.score);
    const numberMatch = /^\s*#?([1-9][0-9]{0,14})\s*$/.exec(text);
    const numbered = numberMatch ? (lexTickets.find((t) => t.number === Number(numberMatch[1]))?.id ?? null) : null;
    for (const r of fuse(
      lexTickets.map((t) => t.id),
      nearest,
      floor,
      numbered,
    ).slice(0, PER_KIND)) {
      const t = ticketOf.get(r.id) ?? seen.get(r.id);
      if (!t) continue;
      tickets.push(t);
      if (!r.lexical) semanticIds.tickets.push(r.id);
    }
  } else tickets = lexTickets.slice(0, PER_KIND);

  // Articles: published ones found by meaning, fused with the full-text matches (drafts too).
  let articles: ArticleHit[] = [];
  const articleOf = new Map<string, ArticleHit>(lexArticles.map((a) => [a.id, a]));
  if (readsKb && near) {
    const candidates = near.rows.filter((r) => r.kind === 'article' && r.score >= floor && !articleOf.has(r.objectId));
    const published = await publishedArticles(
      deps,
      ctx.workspaceId,
      candidates.map((c) => c.objectId),
    );
    const nearest = new Map<string, number>();
    for (const a of lexArticles) nearest.set(a.id, near.articleScore.get(a.id) ?? 0);
    for (const c of candidates) if (published.has(c.objectId)) nearest.set(c.objectId, c.score);
    for (const r of fuse(
      lexArticles.map((a) => a.id),
      nearest,
      floor,
      null,
    ).slice(0, PER_KIND)) {
      const a = articleOf.get(r.id) ?? published.get(r.id);
      if (!a) continue;
      articles.push(a);
      if (!r.lexical) semanticIds.articles.push(r.id);
    }
  } else articles = lexArticles.slice(0, PER_KIND);

  return { tickets, contacts, articles, semantic: semanticIds };
}
