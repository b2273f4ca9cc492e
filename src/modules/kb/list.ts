// GET /v1/kb/articles: newest first, filtered by collection and status; with q, the articles
// whose title or body holds q's words, each article searched in its own language (its stemmer:
// "Rechnungen" finds "Rechnung" in a German article), best match first (ts_rank_cd, the title
// weighing more than the body), each with a snippet: the passages of its text where the words
// are, HTML-escaped, the words in <mark>.
//
// The words are parsed once per language the workspace writes in (a workspace has one or a few):
// one constant query per language, matched through the GIN index on the stored vectors and ranked
// with the query of the article's language; the snippets are made for the page's rows only.
import type { Static } from '@sinclair/typebox';
import { type RawBuilder, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid } from '../../platform/crypto/random.js';
import { createdBefore, fromMicros, pageLimit } from '../../platform/db/keyset.js';
import { escapeHtml } from '../../platform/html/index.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import {
  type ArticleRow,
  articleQuery,
  EXCERPT_SOURCE,
  excerptOf,
  type KbArticleView,
  presentArticle,
} from './articles.js';
import type { KbArticleHit, ListKbArticlesQuery } from './schemas.js';

export type KbArticleHitView = Static<typeof KbArticleHit>;

// Marks around the matched words in ts_headline's output: private-use characters, removed from
// the text first, so that the text can be escaped and the marks then become <mark> tags.
const START = '\uE000';
const STOP = '\uE001';
const HEADLINE_OPTIONS = `StartSel=${START}, StopSel=${STOP}, MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter=" … "`;

/** ts_headline's text as safe HTML: escaped, the marked words in <mark>. */
export const snippetHtml = (headline: string): string =>
  escapeHtml(headline).replaceAll(START, '<mark>').replaceAll(STOP, '</mark>');

/** q parsed for each language: the match (any language's), the rank and the snippet's query. */
interface Search {
  match: RawBuilder<boolean>;
  rank: RawBuilder<number>;
  query: RawBuilder<unknown>;
}

/**
 * The languages the workspace's articles are written in: a skip scan of the (workspace_id,
 * language) index, one probe per language, whatever the number of articles.
 */
export async function languagesOf(deps: Deps, workspaceId: string): Promise<string[]> {
  const r = await sql<{ language: string }>`
    WITH RECURSIVE l (language) AS (
      SELECT min(language) FROM kb_articles WHERE workspace_id = ${workspaceId}
      UNION ALL
      SELECT (SELECT min(k.language) FROM kb_articles k WHERE k.workspace_id = ${workspaceId} AND k.language > l.language)
        FROM l WHERE l.language IS NOT NULL
    )
    SELECT language FROM l WHERE language IS NOT NULL`.execute(deps.database.db);
  return r.rows.map((x) => x.language);
}

function searchOf(q: string, languages: string[]): Search {
  const tsq = (language: string) => sql`websearch_to_tsquery(kb_search_config(${language}), ${q})`;
  const byLanguage = (each: (language: string) => RawBuilder<unknown>) =>
    sql`CASE a.language ${sql.join(
      languages.map((l) => sql`WHEN ${l} THEN ${each(l)}`),
      sql` `,
    )} END`;
  return {
    match: sql<boolean>`(${sql.join(
      languages.map((l) => sql`(a.language = ${l} AND a.search @@ ${tsq(l)})`),
      sql` OR `,
    )})`,
    rank: sql<number>`(${byLanguage((l) => sql`ts_rank_cd(a.search, ${tsq(l)})`)})::float8`,
    query: byLanguage(tsq),
  };
}

interface Filters {
  collection_id?: string | undefined;
  status?: 'draft' | 'published' | undefined;
}

function filtered(deps: Deps, workspaceId: string, f: Filters) {
  let query = articleQuery(deps.database.db, workspaceId);
  if (f.collection_id !== undefined) {
    if (f.collection_id === 'none') query = query.where('a.collection_id', 'is', null);
    else if (isUuid(f.collection_id)) query = query.where('a.collection_id', '=', f.collection_id.toLowerCase());
    else throw invalid('query.collection_id', 'must be a collection id or none');
  }
  if (f.status !== undefined) query = query.where('a.status', '=', f.status);
  return query;
}

/** Up to `rows` articles matching q, best first; `after`: the position [rank, created_us, id] of a cursor. */
async function matching(deps: Deps, workspaceId: string, f: Filters, q: string, rows: number, after: unknown[] | null) {
  const languages = await languagesOf(deps, workspaceId);
  if (languages.length === 0) return [];
  const search = searchOf(q, languages);
  let query = filtered(deps, workspaceId, f).select(search.rank.as('rank')).where(search.match);
  if (after) {
    const [rank, us, id] = after;
    if (typeof rank !== 'number' || typeof us !== 'number' || typeof id !== 'string' || !isUuid(id)) {
      throw invalid('query.cursor', 'is not a cursor of this list; start again without one');
    }
    query = query.where(
      sql<boolean>`(${search.rank}, a.created_at, a.id) < (${rank}::float8, ${fromMicros(us)}, ${id}::uuid)`,
    );
  }
  const found = await query
    .orderBy(sql`${search.rank}`, 'desc')
    .orderBy('a.created_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(pageLimit(rows))
    .execute();
  if (found.length === 0) return [];
  // The snippets of these rows only (ts_headline reads the whole text: the costly part).
  const headlines = await deps.database.db
    .selectFrom('kb_articles as a')
    .select([
      'a.id',
      sql<string>`ts_headline(kb_search_config(a.language), translate(left(a.body_text, 20000), ${`${START}${STOP}`}, ''),
                              ${search.query}::tsquery, ${HEADLINE_OPTIONS})`.as('headline'),
    ])
    .where('a.workspace_id', '=', workspaceId)
    .where(
      'a.id',
      'in',
      found.map((r) => r.id),
    )
    .execute();
  const headlineOf = new Map(headlines.map((h) => [h.id, h.headline]));
  return found.map((r) => ({ ...r, headline: headlineOf.get(r.id) ?? '' }));
}

export async function listArticles(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListKbArticlesQuery>,
): Promise<Page<KbArticleHitView>> {
  const limit = q.limit ?? 50;
  const f: Filters = { collection_id: q.collection_id, status: q.status };
  const list = `kb-articles:${JSON.stringify([ctx.workspaceId, q.collection_id ?? null, q.status ?? null, q.q ?? null])}`;
  if (q.q !== undefined) {
    const after = deps.pager.decode(list, q.cursor, 3);
    const rows = await matching(deps, ctx.workspaceId, f, q.q, limit + 1, after);
    return deps.pager.page(
      list,
      rows,
      limit,
      (r) => [Number(r.rank), r.created_us, r.id],
      (r) => ({ ...presentArticle(r), snippet: snippetHtml(r.headline) }),
    );
  }
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = filtered(deps, ctx.workspaceId, f);
  if (after) query = query.where(createdBefore('a', after));
  const rows = await query
    .orderBy('a.created_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(pageLimit(limit + 1))
    .execute();
  return deps.pager.page(list, rows, limit, (r: ArticleRow) => [Number(r.created_us), r.id], presentArticle);
}

/** GET /v1/search's articles: the best `limit` matches of q, drafts included (kb:read sees them). */
export async function searchArticles(
  deps: Deps,
  ctx: RequestContext,
  q: string,
  limit: number,
): Promise<Array<Pick<KbArticleView, 'id' | 'title' | 'slug' | 'excerpt' | 'status'> & { snippet: string }>> {
  const rows = await matching(deps, ctx.workspaceId, {}, q, limit, null);
  return rows.map((r) => ({
    id: r.id,
    title: r.title,
    slug: r.slug,
    excerpt: excerptOf(r.excerpt, r.body_text),
    status: r.status as KbArticleView['status'],
    snippet: snippetHtml(r.headline),
  }));
}

/** A page of the help center's search results: a published article with its snippet. */
export interface PublishedHit {
  title: string;
  slug: string;
  excerpt: string;
  updatedAt: Date;
  snippet: string;
}

/**
 * The help center's search: the published articles matching q, best first, `limit` of them
 * from `offset`, with how many match in all. Two statements: the ranking reads only the stored
 * vectors (kept in the rows: migration 0034) and counts the matches in the same pass; then the
 * page's own articles are read, with their snippets (ts_headline parses each text again: the
 * costly part, so only for the page).
 */
export async function searchPublished(
  deps: Deps,
  workspaceId: string,
  q: string,
  offset: number,
  limit: number,
): Promise<{ total: number; hits: PublishedHit[] }> {
  const languages = await languagesOf(deps, workspaceId);
  if (languages.length === 0) return { total: 0, hits: [] };
  const search = searchOf(q, languages);
  const db = deps.database.db;
  // Ranked in a subquery kept apart from the count (OFFSET 0 keeps the planner from merging
  // them): the count's window then holds ids and ranks, not each match's stored vector (2.8 KB
  // apiece, copied for all 775 matches of a common word: 2.5 ms of 6).
  const matches = db
    .selectFrom('kb_articles as a')
    .select(['a.id', 'a.created_at', search.rank.as('rank')])
    .where('a.workspace_id', '=', workspaceId)
    .where('a.status', '=', 'published')
    .where(search.match)
    .offset(0)
    .as('m');
  const ranked = await db
    .selectFrom(matches)
    .select(['m.id', sql<number>`count(*) OVER ()`.as('total')])
    .orderBy('m.rank', 'desc')
    .orderBy('m.created_at', 'desc')
    .orderBy('m.id', 'desc')
    .limit(pageLimit(limit))
    .offset(offset)
    .execute();
  if (ranked.length === 0) {
    if (offset === 0) return { total: 0, hits: [] };
    // Past the last page: how many there are, for the way back.
    const c = await db
      .selectFrom('kb_articles as a')
      .select(sql<number>`count(*)`.as('n'))
      .where('a.workspace_id', '=', workspaceId)
      .where('a.status', '=', 'published')
      .where(search.match)
      .executeTakeFirstOrThrow();
    return { total: Number(c.n), hits: [] };
  }
  const rows = await db
    .selectFrom('kb_articles as a')
    .select([
      'a.id',
      'a.title',
      'a.slug',
      'a.excerpt',
      'a.updated_at',
      // The derived excerpt is the start of the text: no more of it is read.
      sql<string>`left(a.body_text, ${EXCERPT_SOURCE})`.as('lead'),
      sql<string>`ts_headline(kb_search_config(a.language), translate(left(a.body_text, 20000), ${`${START}${STOP}`}, ''),
                              ${search.query}::tsquery, ${HEADLINE_OPTIONS})`.as('headline'),
    ])
    .where('a.workspace_id', '=', workspaceId)
    .where(
      'a.id',
      'in',
      ranked.map((r) => r.id),
    )
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const hits = ranked.flatMap((x) => {
    const r = byId.get(x.id);
    if (!r) return []; // deleted between the two statements
    return [
      {
        title: r.title,
        slug: r.slug,
        excerpt: excerptOf(r.excerpt, r.lead),
        updatedAt: new Date(r.updated_at),
        snippet: snippetHtml(r.headline),
      },
    ];
  });
  return { total: Number(ranked[0]!.total), hits };
}
