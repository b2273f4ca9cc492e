// The workspace's published articles as sources of a draft or an answer. Found by the help
// center's own search (published only, this workspace only; kb/sources.ts reads them, their text
// and the workspace's help center address in one statement), with the words of the ticket's
// subject and the customer's latest message (or the agent's question) as alternatives, best match
// first, up to SOURCES of them. The model sees each as a numbered <kb_article> block and cites
// it as [n]; `sources` of the answer lists the articles it cited, in the order it first cited them
// (none cited: an empty list: the answer was written from the ticket alone).
import type { Deps } from '../../../deps.js';
import type { RequestContext } from '../../../platform/http/context.js';
import { linksOf } from '../../help-center/routes.js';
import { publishedSources } from '../../kb/sources.js';
import { dataBlock } from './prompts.js';

/** Articles offered to the model at most. */
export const SOURCES = 5;
/** Characters of an article's text the model sees. */
export const ARTICLE_CHARS = 4_000;
/** Search words taken from the ticket (the longest first). */
const WORDS = 24;

export interface SourceArticle {
  /** The number the model cites it by, from 1. */
  n: number;
  id: string;
  title: string;
  url: string;
  text: string;
}

export interface Source {
  article_id: string;
  title: string;
  url: string;
}

/**
 * A query for websearch_to_tsquery: the distinct words of the texts (3 letters or more), the
 * longest first, joined with `or` so that an article matching some of them is found.
 */
export function searchQuery(texts: Array<string | null | undefined>): string | null {
  const words = new Set<string>();
  for (const t of texts) {
    for (const m of (t ?? '').slice(0, 4000).matchAll(/[\p{L}\p{N}]{3,}/gu)) words.add(m[0].toLowerCase());
  }
  const picked = [...words].filter((w) => w.length <= 40).sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
  return picked.length === 0 ? null : picked.slice(0, WORDS).join(' or ');
}

/** The published articles matching the texts, numbered for citing. */
export async function findSources(
  deps: Deps,
  ctx: RequestContext,
  texts: Array<string | null | undefined>,
): Promise<{ articles: SourceArticle[]; helpCenterOn: boolean }> {
  const q = searchQuery(texts);
  if (q === null) return { articles: [], helpCenterOn: false };
  const { articles: rows, site } = await publishedSources(deps, ctx.workspaceId, q, SOURCES, ARTICLE_CHARS + 1);
  if (!site) return { articles: [], helpCenterOn: false };
  const links = linksOf(deps.config.publicUrl, site.slug);
  const articles = rows.map((a, i) => ({
    n: i + 1,
    id: a.id,
    title: a.title,
    url: links.absolute(links.article(a.slug)),
    text: a.text.length > ARTICLE_CHARS ? `${a.text.slice(0, ARTICLE_CHARS - 1)}…` : a.text,
  }));
  return { articles, helpCenterOn: site.helpCenterOn };
}

/**
 * The articles as numbered data blocks. Their addresses are given only while the help center is
 * on (a link in a reply must open); `sources` carries them either way.
 */
export function sourceBlocks(articles: SourceArticle[], withUrls: boolean): string {
  if (articles.length === 0) return '(No help center article matches this ticket.)';
  return articles
    .map((a) =>
      dataBlock(
        'kb_article',
        { n: a.n },
        [`Title: ${a.title}`, ...(withUrls ? [`Address: ${a.url}`] : []), '', a.text].join('\n'),
      ),
    )
    .join('\n\n');
}

const CITATION = /[ \t]?\[(\d{1,2}(?:\s*,\s*\d{1,2})*)\]/g;

/**
 * The articles a text cites ([1], [2, 3]), in the order first cited, and the text without those
 * markers (a customer does not see them). Numbers that name no article given are left as written
 * and cite nothing.
 */
export function citedSources(text: string, articles: SourceArticle[]): { text: string; sources: Source[] } {
  const cited: SourceArticle[] = [];
  const out = text.replace(CITATION, (marker, list: string) => {
    const found = list.split(',').map((s) => articles.find((a) => a.n === Number(s.trim())));
    if (found.some((a) => a === undefined)) return marker;
    for (const a of found) if (!cited.includes(a!)) cited.push(a!);
    return '';
  });
  return { text: out, sources: cited.map((a) => ({ article_id: a.id, title: a.title, url: a.url })) };
}
