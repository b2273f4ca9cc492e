// Knowledge base articles. The body is sanitized HTML (the sanitizer of messages) with its plain
// text kept beside it for search and the excerpt; the excerpt is the one given or the start of
// that text. Publishing sets published_at the first time only: unpublishing and publishing again
// keep it. The author is the member who created the article (null for an API key).
//
// Slugs follow the title: a title change without a slug gives the article the title's slug, and
// its slug before stays resolvable (slugs.ts findArticleBySlug). A slug given is kept as given.
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import { microsOf } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { htmlToText, preview, sanitizeHtml } from '../../platform/html/index.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { recordAudit } from '../audit/service.js';
import type { CreateKbArticleBody, KbArticle, Language, PatchKbArticleBody } from './schemas.js';
import { findArticleBySlug as findSlug, freeSlug, slugOf, withSlugRetry } from './slugs.js';

export type KbArticleView = Static<typeof KbArticle>;

export const ARTICLE_NOT_FOUND = 'Article not found.';
/** Length of a derived excerpt, in code points, the "…" included. */
const EXCERPT_LENGTH = 200;
/**
 * Enough of an article's text to derive its excerpt from when the rest is not wanted (search
 * results): preview reads max * 8 + 64 code units, more only when those collapse to almost
 * nothing (a text that is 95 % whitespace would give a shorter excerpt from this start).
 */
export const EXCERPT_SOURCE = 8000;

export function articleQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('kb_articles as a')
    .leftJoin('users as u', 'u.id', 'a.author_id')
    .select([
      'a.id',
      'a.collection_id',
      'a.title',
      'a.slug',
      'a.excerpt',
      'a.body_html',
      'a.body_text',
      'a.status',
      'a.language',
      'a.views',
      'a.published_at',
      'a.updated_at',
      'u.id as author_id',
      'u.name as author_name',
      'u.email as author_email',
      'u.avatar_url as author_avatar_url',
      microsOf('a.created_at').as('created_us'),
    ])
    .where('a.workspace_id', '=', workspaceId);
}

export type ArticleRow = Awaited<ReturnType<ReturnType<typeof articleQuery>['executeTakeFirstOrThrow']>>;

export const excerptOf = (given: string | null, bodyText: string): string => given ?? preview(bodyText, EXCERPT_LENGTH);

export const presentArticle = (r: ArticleRow): KbArticleView => ({
  id: r.id,
  collection_id: r.collection_id,
  title: r.title,
  slug: r.slug,
  excerpt: excerptOf(r.excerpt, r.body_text),
  body_html: r.body_html,
  status: r.status as KbArticleView['status'],
  language: r.language as Language,
  author:
    r.author_id === null
      ? null
      : { id: r.author_id, name: r.author_name!, email: r.author_email!, avatar_url: r.author_avatar_url ?? null },
  views: r.views,
  published_at: iso(r.published_at),
  updated_at: iso(r.updated_at)!,
});

export async function loadArticle(db: Kysely<DB>, workspaceId: string, id: string): Promise<KbArticleView | null> {
  const row = await articleQuery(db, workspaceId).where('a.id', '=', id).executeTakeFirst();
  return row ? presentArticle(row) : null;
}

export async function getArticle(deps: Deps, ctx: RequestContext, id: string): Promise<KbArticleView> {
  if (!isUuid(id)) throw notFound(ARTICLE_NOT_FOUND);
  const a = await loadArticle(deps.database.db, ctx.workspaceId, id.toLowerCase());
  if (!a) throw notFound(ARTICLE_NOT_FOUND);
  return a;
}

/**
 * The article a slug names in the workspace, drafts included (the help center shows published
 * ones only): `old` when the slug is one it had before, to redirect to its current slug.
 */
export async function findArticleBySlug(
  deps: Deps,
  workspaceId: string,
  slug: string,
): Promise<{ article: KbArticleView; old: boolean } | null> {
  const hit = await findSlug(deps.database.db, workspaceId, slug);
  if (!hit) return null;
  const article = await loadArticle(deps.database.db, workspaceId, hit.articleId);
  return article ? { article, old: hit.old } : null;
}

function cleanTitle(title: string): string {
  const t = title.trim();
  if (t === '') throw invalid('body.title', 'must not be blank');
  return t;
}

/** The excerpt given, as one line of plain text; null (derive it) when blank. */
const cleanExcerpt = (e: string | null | undefined): string | null => {
  const t = e?.replace(/\s+/g, ' ').trim() ?? '';
  return t === '' ? null : t;
};

function cleanBody(html: string): { body_html: string; body_text: string } {
  const body_html = sanitizeHtml(html);
  return { body_html, body_text: htmlToText(body_html) };
}

/** The collection id given, checked to be one of the workspace's (422 otherwise). */
async function checkCollection(u: Unit, given: string | null | undefined): Promise<string | null | undefined> {
  if (given === undefined || given === null) return given;
  const bad = () => invalid('body.collection_id', 'is not a collection of this workspace');
  if (!isUuid(given)) throw bad();
  const id = given.toLowerCase();
  // FOR KEY SHARE: a delete of the collection waits for this transaction (and then finds the article).
  const row = await u.trx
    .selectFrom('kb_collections')
    .select('id')
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', id)
    .forKeyShare()
    .executeTakeFirst();
  if (!row) throw bad();
  return id;
}

/** An article's old slug, kept so that links to it still find the article. */
async function keepOldSlug(u: Unit, articleId: string, oldSlug: string, newSlug: string): Promise<void> {
  await u.trx
    .insertInto('kb_article_slugs')
    .values({ workspace_id: u.workspaceId, slug: oldSlug, article_id: articleId })
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'slug']).doUpdateSet({ article_id: articleId, created_at: sql`now()` }),
    )
    .execute();
  // The new slug is an article's own now: it no longer resolves to whoever had it before.
  await u.trx
    .deleteFrom('kb_article_slugs')
    .where('workspace_id', '=', u.workspaceId)
    .where('slug', '=', newSlug)
    .execute();
}

export async function createArticle(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateKbArticleBody>,
): Promise<KbArticleView> {
  const title = cleanTitle(input.title);
  const body = cleanBody(input.body_html ?? '');
  const excerpt = cleanExcerpt(input.excerpt);
  const status = input.status ?? 'draft';
  const id = newId();
  return withSlugRetry(
    'kb_articles',
    () => input.slug === undefined,
    () =>
      deps.writer.run(ctx.workspaceId, async (u) => {
        const collectionId = (await checkCollection(u, input.collection_id)) ?? null;
        const slug =
          input.slug ?? (await freeSlug(u.trx, 'kb_articles', u.workspaceId, slugOf(title, 'article'), null));
        await u.trx
          .insertInto('kb_articles')
          .values({
            workspace_id: u.workspaceId,
            id,
            collection_id: collectionId,
            title,
            slug,
            excerpt,
            ...body,
            status,
            language: input.language ?? 'en',
            author_id: ctx.actor.kind === 'member' ? ctx.actor.userId : null,
            published_at: status === 'published' ? sql<Date>`now()` : null,
          })
          .execute();
        if (input.slug !== undefined) {
          await u.trx
            .deleteFrom('kb_article_slugs')
            .where('workspace_id', '=', u.workspaceId)
            .where('slug', '=', slug)
            .execute();
        }
        const view = (await loadArticle(u.trx, u.workspaceId, id))!;
        u.emit({ type: 'kb_article.created', data: { kb_article: view } });
        await recordAudit(u.trx, ctx, {
          action: 'kb_article.created',
          entityType: 'kb_article',
          entityId: id,
          data: { title, slug, status, collection_id: collectionId },
        });
        return view;
      }),
  );
}

export async function updateArticle(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  input: Static<typeof PatchKbArticleBody>,
): Promise<KbArticleView> {
  if (!isUuid(param)) throw notFound(ARTICLE_NOT_FOUND);
  const id = param.toLowerCase();
  const title = input.title === undefined ? undefined : cleanTitle(input.title);
  const body = input.body_html === undefined ? undefined : cleanBody(input.body_html);
  let generated = false;
  return withSlugRetry(
    'kb_articles',
    () => generated,
    () =>
      deps.writer.run(ctx.workspaceId, async (u) => {
        const before = await u.trx
          .selectFrom('kb_articles')
          .select(['collection_id', 'title', 'slug', 'excerpt', 'body_html', 'status', 'language', 'published_at'])
          .where('workspace_id', '=', u.workspaceId)
          .where('id', '=', id)
          .forUpdate()
          .executeTakeFirst();
        if (!before) throw notFound(ARTICLE_NOT_FOUND);
        const set: Record<string, unknown> = {};
        const changes: Record<string, unknown> = {};
        const change = (key: string, to: unknown, from: unknown) => {
          if (to === undefined || to === from) return;
          set[key] = to;
          changes[key] = { from, to };
        };
        change('collection_id', await checkCollection(u, input.collection_id), before.collection_id);
        change('title', title, before.title);
        let slug = input.slug;
        generated = slug === undefined && set.title !== undefined;
        if (generated) slug = await freeSlug(u.trx, 'kb_articles', u.workspaceId, slugOf(title!, 'article'), id);
        change('slug', slug, before.slug);
        if (input.excerpt !== undefined) change('excerpt', cleanExcerpt(input.excerpt), before.excerpt);
        if (body && body.body_html !== before.body_html) {
          set.body_html = body.body_html;
          set.body_text = body.body_text;
          changes.body_html = 'changed';
        }
        change('status', input.status, before.status);
        change('language', input.language, before.language);
        if (Object.keys(set).length === 0) return (await loadArticle(u.trx, u.workspaceId, id))!;
        // published_at: the first publication only.
        const publishedAt = set.status === 'published' && before.published_at === null ? sql<Date>`now()` : undefined;
        await u.trx
          .updateTable('kb_articles')
          .set({ ...set, ...(publishedAt ? { published_at: publishedAt } : {}), updated_at: sql<Date>`now()` })
          .where('workspace_id', '=', u.workspaceId)
          .where('id', '=', id)
          .execute();
        if (set.slug !== undefined) await keepOldSlug(u, id, before.slug, set.slug as string);
        const view = (await loadArticle(u.trx, u.workspaceId, id))!;
        u.emit({ type: 'kb_article.updated', data: { kb_article: view } });
        await recordAudit(u.trx, ctx, {
          action: 'kb_article.updated',
          entityType: 'kb_article',
          entityId: id,
          data: changes,
        });
        return view;
      }),
  );
}

export async function deleteArticle(deps: Deps, ctx: RequestContext, param: string): Promise<void> {
  if (!isUuid(param)) throw notFound(ARTICLE_NOT_FOUND);
  const id = param.toLowerCase();
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const gone = await u.trx
      .deleteFrom('kb_articles')
      .where('workspace_id', '=', u.workspaceId)
      .where('id', '=', id)
      .returning(['title', 'slug', 'status'])
      .executeTakeFirst();
    if (!gone) throw notFound(ARTICLE_NOT_FOUND);
    u.emit({ type: 'kb_article.deleted', data: { kb_article_id: id } });
    await recordAudit(u.trx, ctx, {
      action: 'kb_article.deleted',
      entityType: 'kb_article',
      entityId: id,
      data: { title: gone.title, slug: gone.slug, status: gone.status },
    });
  });
}

/** Onboarding's publish_article: a published article exists in the workspace. */
export async function hasPublishedArticle(db: Kysely<DB>, workspaceId: string): Promise<boolean> {
  const row = await db
    .selectFrom('kb_articles')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', 'published')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
