// The workspace's published articles that best match a query, with the start of their text, in
// one statement: what the AI features offer the model as sources (src/modules/ai/features/
// sources.ts). The match and the rank are the help center search's (searchPublished in list.ts:
// each article searched in its own language, through the GIN index on the stored vectors, best
// first, then newest); the languages, the ranking, the articles' text and the workspace's help
// center address come from the same statement instead of the search's three and a read of each
// article and of the workspace.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';

export interface SourceArticleRow {
  id: string;
  title: string;
  slug: string;
  /** The start of the article's text (body_text, `textChars` characters). */
  text: string;
}

export interface PublishedSources {
  articles: SourceArticleRow[];
  /** The workspace's slug and whether its help center is on (null when no article matched). */
  site: { slug: string; helpCenterOn: boolean } | null;
}

/**
 * Up to `limit` published articles of the workspace matching q (websearch_to_tsquery syntax),
 * best first. Each language the workspace writes in is found by a skip scan of the (workspace_id,
 * language) index (as languagesOf does), and its matches are ranked apart (a lateral subquery
 * whose tsquery is a constant for the index), so that only the best `limit` rows have their text
 * read.
 */
export async function publishedSources(
  deps: Deps,
  workspaceId: string,
  q: string,
  limit: number,
  textChars: number,
): Promise<PublishedSources> {
  const r = await sql<SourceArticleRow & { workspace_slug: string; help_center: boolean | null }>`
    WITH RECURSIVE l (language) AS (
      SELECT min(language) FROM kb_articles WHERE workspace_id = ${workspaceId}
      UNION ALL
      SELECT (SELECT min(k.language) FROM kb_articles k WHERE k.workspace_id = ${workspaceId} AND k.language > l.language)
        FROM l WHERE l.language IS NOT NULL
    ),
    -- Materialized: each language's tsquery is parsed once; inlined, the lateral below would
    -- parse it again for every matching row (measured: 260 ms against 160 for 5,000 matches).
    lq AS MATERIALIZED (
      SELECT language, websearch_to_tsquery(kb_search_config(language), ${q}) AS tsq FROM l WHERE language IS NOT NULL
    ),
    top AS (
      SELECT h.id, h.rank, h.created_at FROM lq CROSS JOIN LATERAL (
        SELECT a.id, a.created_at, ts_rank_cd(a.search, lq.tsq)::float8 AS rank
          FROM kb_articles a
         WHERE a.workspace_id = ${workspaceId} AND a.language = lq.language AND a.status = 'published'
           AND a.search @@ lq.tsq
         ORDER BY rank DESC, a.created_at DESC, a.id DESC
         LIMIT ${limit}
      ) h
      ORDER BY h.rank DESC, h.created_at DESC, h.id DESC
      LIMIT ${limit}
    )
    SELECT a.id, a.title, a.slug, left(a.body_text, ${textChars}::int) AS text,
           w.slug AS workspace_slug, (w.settings->>'help_center_enabled')::boolean AS help_center
      FROM top
      JOIN kb_articles a ON a.workspace_id = ${workspaceId} AND a.id = top.id
      JOIN workspaces w ON w.id = ${workspaceId}
     ORDER BY top.rank DESC, top.created_at DESC, top.id DESC`.execute(deps.database.db);
  const first = r.rows[0];
  return {
    articles: r.rows.map((a) => ({ id: a.id, title: a.title, slug: a.slug, text: a.text })),
    site: first ? { slug: first.workspace_slug, helpCenterOn: first.help_center === true } : null,
  };
}
