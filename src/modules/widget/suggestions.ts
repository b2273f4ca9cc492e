// GET /v1/widget/articles (docs/widget.md "Article suggestions"): the help center's published
// articles that may answer what the visitor is typing, only above a relevance bar.
//
// The help center's search box wants all of a query's words; a question's are rarely all in one
// article, so an article here needs any of them (found through the search index). But one shared
// common word is no answer: "Does the charger work on 110 V?" once suggested "Where is my
// order?", whose text says "working days". So an article is suggested only when it holds at least
// half of the question's words, counted as the article's language sees them (stemmed, stop words
// left out: "Does the charger work on 110 V?" is charger, work, 110, v). The best come first: more
// of the words, more of them in the title, then the search's own rank.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { EXCERPT_SOURCE, excerptOf } from '../kb/articles.js';
import { languagesOf } from '../kb/list.js';

/** A question's words: letters and digits only (nothing is read as search syntax), at most 16. */
export function wordsOf(text: string): string[] {
  return (text.match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 16);
}

export interface Suggestion {
  title: string;
  slug: string;
  excerpt: string;
}

/** The best `limit` published articles for the visitor's question that pass the bar. */
export async function suggestArticles(
  deps: Deps,
  workspaceId: string,
  question: string,
  limit: number,
): Promise<Suggestion[]> {
  const words = wordsOf(question);
  if (words.length === 0) return [];
  const languages = await languagesOf(deps, workspaceId);
  if (languages.length === 0) return [];
  // `wanted`: per language, the question's distinct lexemes (n of them) and a query matching any
  // (the search index finds the candidates); then, per candidate, how many of the lexemes its
  // vector holds, and how many its title (weight A) holds.
  const r = await sql<{ title: string; slug: string; excerpt: string | null; lead: string }>`
    WITH words AS (
      SELECT l.language, w.lexeme
        FROM unnest(${languages}::text[]) AS l (language)
        CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector(kb_search_config(l.language), ${words.join(' ')}))) AS w (lexeme)
    ), wanted AS (
      SELECT language, count(*)::int AS n,
             websearch_to_tsquery(kb_search_config(language), ${words.filter((w) => w.toLowerCase() !== 'or').join(' or ')}) AS q
        FROM words GROUP BY language
    )
    SELECT a.title, a.slug, a.excerpt, left(a.body_text, ${EXCERPT_SOURCE}) AS lead
      FROM wanted
      JOIN kb_articles a ON a.workspace_id = ${workspaceId} AND a.status = 'published'
                        AND a.language = wanted.language AND a.search @@ wanted.q
      CROSS JOIN LATERAL (
        SELECT tsvector_to_array(a.search) AS all_lexemes,
               tsvector_to_array(ts_filter(a.search, '{a}')) AS title_lexemes
      ) v
      CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE w.lexeme = ANY (v.all_lexemes))::int AS held,
               count(*) FILTER (WHERE w.lexeme = ANY (v.title_lexemes))::int AS titled
          FROM words w WHERE w.language = a.language
      ) m
     WHERE m.held * 2 >= wanted.n
     ORDER BY m.held::float8 / wanted.n DESC, m.titled DESC, ts_rank_cd(a.search, wanted.q) DESC, a.created_at DESC
     LIMIT ${limit}`.execute(deps.database.db);
  return r.rows.map((row) => ({ title: row.title, slug: row.slug, excerpt: excerptOf(row.excerpt, row.lead) }));
}
