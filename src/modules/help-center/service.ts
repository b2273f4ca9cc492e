// What the help center's pages show, read for one workspace: the workspace by its slug (only when
// its help center is on), its collections with their published articles, an article by its slug
// (current or old), search, and what the sitemap lists. Drafts never leave this file: every
// query here asks for published articles only.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { articleQuery, findArticleBySlug, type KbArticleView, presentArticle } from '../kb/articles.js';
import { searchPublished } from '../kb/list.js';
import { presentWorkspace } from '../workspace/service.js';

/** Slugs of workspaces, collections and articles: anything else names nothing (404, no query). */
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const isSlug = (s: string): boolean => s.length <= 100 && SLUG.test(s);

export interface HelpCenter {
  workspaceId: string;
  slug: string;
  /** The help center's title: help_center_title, or the workspace's name when that is empty. */
  title: string;
  brandColor: string;
  logo: string | null;
  favicon: string | null;
}

export interface CollectionSummary {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  /** Published articles only. */
  articleCount: number;
}

export interface ArticleSummary {
  title: string;
  slug: string;
  excerpt: string;
  updatedAt: Date;
}

/** An image address to put in a page: the service's uploads are http(s) URLs or paths. */
const imageUrl = (u: string | null): string | null => (u !== null && /^(?:https?:\/\/|\/(?!\/))/i.test(u) ? u : null);

/** The workspace's help center when the slug names a workspace whose help center is on. */
export async function findHelpCenter(deps: Deps, slug: string): Promise<HelpCenter | null> {
  if (!isSlug(slug)) return null;
  const row = await deps.database.db.selectFrom('workspaces').selectAll().where('slug', '=', slug).executeTakeFirst();
  return row ? helpCenterOf(row) : null;
}

/** The same, by the workspace's id (jobs that mail the help center's links). */
export async function findHelpCenterById(deps: Deps, workspaceId: string): Promise<HelpCenter | null> {
  const row = await deps.database.db
    .selectFrom('workspaces')
    .selectAll()
    .where('id', '=', workspaceId)
    .executeTakeFirst();
  return row ? helpCenterOf(row) : null;
}

function helpCenterOf(row: Parameters<typeof presentWorkspace>[0]): HelpCenter | null {
  const w = presentWorkspace(row);
  if (!w.settings.help_center_enabled) return null;
  return {
    workspaceId: w.id,
    slug: w.slug,
    title: w.settings.help_center_title.trim() || w.name,
    brandColor: w.settings.brand_color,
    logo: imageUrl(w.images.help_center_logo),
    favicon: imageUrl(w.images.help_center_favicon),
  };
}

/** The collections in position order, each with its count of published articles. */
export async function listCollections(deps: Deps, workspaceId: string): Promise<CollectionSummary[]> {
  const rows = await deps.database.db
    .selectFrom('kb_collections as c')
    .select(['c.id', 'c.name', 'c.slug', 'c.description'])
    .select(
      sql<number>`(SELECT count(*)::int FROM kb_articles a
        WHERE a.workspace_id = c.workspace_id AND a.collection_id = c.id AND a.status = 'published')`.as('n'),
    )
    .where('c.workspace_id', '=', workspaceId)
    .orderBy('c.position')
    .orderBy('c.id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    slug: r.slug,
    description: r.description,
    articleCount: Number(r.n),
  }));
}

export async function findCollection(deps: Deps, workspaceId: string, slug: string) {
  if (!isSlug(slug)) return null;
  const r = await deps.database.db
    .selectFrom('kb_collections')
    .select(['id', 'name', 'slug', 'description'])
    .where('workspace_id', '=', workspaceId)
    .where('slug', '=', slug)
    .executeTakeFirst();
  return r ?? null;
}

const summary = (a: KbArticleView): ArticleSummary => ({
  title: a.title,
  slug: a.slug,
  excerpt: a.excerpt,
  updatedAt: new Date(a.updated_at),
});

/** Published articles of a collection, by title. */
export async function collectionArticles(
  deps: Deps,
  workspaceId: string,
  collectionId: string,
): Promise<ArticleSummary[]> {
  const rows = await articleQuery(deps.database.db, workspaceId)
    .where('a.collection_id', '=', collectionId)
    .where('a.status', '=', 'published')
    .orderBy('a.title')
    .orderBy('a.id')
    .limit(1000)
    .execute();
  return rows.map((r) => summary(presentArticle(r)));
}

/** The newest published articles (by first publication). */
export async function latestArticles(deps: Deps, workspaceId: string, limit: number): Promise<ArticleSummary[]> {
  const rows = await articleQuery(deps.database.db, workspaceId)
    .where('a.status', '=', 'published')
    .orderBy('a.published_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => summary(presentArticle(r)));
}

export type ArticleLookup =
  | { kind: 'none' }
  | { kind: 'moved'; slug: string }
  | { kind: 'article'; article: KbArticleView; collection: { name: string; slug: string } | null };

/** A published article by its slug; an old slug of one answers where it is now. */
export async function findPublishedArticle(deps: Deps, workspaceId: string, slug: string): Promise<ArticleLookup> {
  if (!isSlug(slug)) return { kind: 'none' };
  const hit = await findArticleBySlug(deps, workspaceId, slug);
  if (hit?.article.status !== 'published') return { kind: 'none' };
  if (hit.old) return { kind: 'moved', slug: hit.article.slug };
  const c =
    hit.article.collection_id === null
      ? undefined
      : await deps.database.db
          .selectFrom('kb_collections')
          .select(['name', 'slug'])
          .where('workspace_id', '=', workspaceId)
          .where('id', '=', hit.article.collection_id)
          .executeTakeFirst();
  return { kind: 'article', article: hit.article, collection: c ?? null };
}

/**
 * A page of the published articles matching q, best first, each with its snippet (escaped
 * HTML, <mark>s), and how many match in all.
 */
export const search = (deps: Deps, workspaceId: string, q: string, offset: number, limit: number) =>
  searchPublished(deps, workspaceId, q, offset, limit);

/** What the sitemap lists: published articles and the collections holding some, with lastmod. */
export async function sitemapEntries(deps: Deps, workspaceId: string) {
  const db = deps.database.db;
  const articles = await db
    .selectFrom('kb_articles')
    .select(['slug', 'updated_at'])
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'published')
    .orderBy('slug')
    .limit(50_000)
    .execute();
  const collections = await db
    .selectFrom('kb_collections as c')
    .innerJoin('kb_articles as a', (j) =>
      j.onRef('a.workspace_id', '=', 'c.workspace_id').onRef('a.collection_id', '=', 'c.id'),
    )
    .select(['c.slug', sql<Date>`max(a.updated_at)`.as('lastmod')])
    .where('c.workspace_id', '=', workspaceId)
    .where('a.status', '=', 'published')
    .groupBy('c.slug')
    .orderBy('c.slug')
    .execute();
  return {
    articles: articles.map((a) => ({ slug: a.slug, lastmod: new Date(a.updated_at) })),
    collections: collections.map((c) => ({ slug: c.slug, lastmod: new Date(c.lastmod) })),
  };
}
