// Slugs of the knowledge base: made from a title or name (transliterated to lower-case ASCII
// letters, digits and hyphens by @sindresorhus/slugify: "Größe" → "groesse", "Счёт" → "schyot"),
// unique per workspace (collections and articles apart). A generated slug that is taken gets
// -2, -3, …; a given one that is taken is a 409. Writers that generate a slug take turns per
// workspace (a transaction-scoped advisory lock, held until COMMIT), so many creates of one
// title at once get -2, -3, … in turn; a generated slug that loses to a given one at the unique
// index runs its transaction again and finds the next free suffix.
//
// An article's slugs before its current one stay in kb_article_slugs, each resolving to the
// article that had it last (findArticleBySlug), so a link to an old slug still finds it.
import slugify from '@sindresorhus/slugify';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { isUniqueViolation } from '../../platform/db/unique.js';
import { conflict } from '../../platform/http/errors.js';

/**
 * Collection slugs the help center's own pages use at /hc/{workspace}/{slug}: a collection there
 * could never be reached. Refused when given; a generated one takes the next suffix ("search-2").
 */
export const RESERVED_COLLECTION_SLUGS = new Set(['articles', 'assets', 'new', 'requests', 'search']);

/** Generated slugs are at most this long before a suffix, cut at a hyphen where one is near. */
const BASE_MAX = 80;

/** The slug of a title or name; `fallback` when nothing of it transliterates (emoji, CJK). */
export function slugOf(text: string, fallback: string): string {
  let s = slugify(text);
  if (s.length > BASE_MAX) {
    s = s.slice(0, BASE_MAX);
    const cut = s.lastIndexOf('-');
    s = cut >= BASE_MAX / 2 ? s.slice(0, cut) : s.replace(/-+$/, '');
  }
  return s === '' ? fallback : s;
}

type Table = 'kb_articles' | 'kb_collections';

/**
 * The first of `base`, `base-2`, `base-3`, … that no other record of the table uses (for
 * articles, nor holds as an old slug), read in the writer's transaction once it has the
 * workspace's turn to generate one.
 */
export async function freeSlug(
  trx: Transaction<DB>,
  table: Table,
  workspaceId: string,
  base: string,
  exceptId: string | null,
): Promise<string> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${table}_slugs:${workspaceId}`}, 0))`.execute(trx);
  const like = `${base.replace(/[\\%_]/g, (c) => `\\${c}`)}-%`;
  let current = trx
    .selectFrom(table)
    .select('slug')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', like)]));
  if (exceptId !== null) current = current.where('id', '<>', exceptId);
  const taken = new Set((await current.execute()).map((r) => r.slug));
  if (table === 'kb_articles') {
    let old = trx
      .selectFrom('kb_article_slugs')
      .select('slug')
      .where('workspace_id', '=', workspaceId)
      .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', like)]));
    if (exceptId !== null) old = old.where('article_id', '<>', exceptId);
    for (const r of await old.execute()) taken.add(r.slug);
  }
  if (table === 'kb_collections') for (const r of RESERVED_COLLECTION_SLUGS) taken.add(r);
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!taken.has(candidate)) return candidate;
  }
}

const SLUG_KEYS: Record<Table, string> = {
  kb_articles: 'kb_articles_slug_key',
  kb_collections: 'kb_collections_slug_key',
};

/**
 * Runs a write that may take a slug. When its slug was generated and another writer took it
 * first (the unique index refuses it), the write runs again and picks the next free one; a
 * given slug that is taken is a 409.
 */
export async function withSlugRetry<T>(table: Table, generated: () => boolean, work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      const e = err as { constraint?: unknown; message?: unknown };
      const onSlug =
        isUniqueViolation(err) && `${String(e.constraint ?? '')} ${String(e.message ?? '')}`.includes(SLUG_KEYS[table]);
      if (!onSlug) throw err;
      if (!generated() || attempt >= 10) {
        throw conflict(`${table === 'kb_articles' ? 'An article' : 'A collection'} with this slug already exists.`);
      }
    }
  }
}

/**
 * The article a slug names in the workspace: the article whose slug it is, else the article that
 * had it last (`old: true`, for a permanent redirect to its current slug). Null when none.
 */
export async function findArticleBySlug(
  db: Kysely<DB>,
  workspaceId: string,
  slug: string,
): Promise<{ articleId: string; slug: string; old: boolean } | null> {
  const current = await db
    .selectFrom('kb_articles')
    .select(['id', 'slug'])
    .where('workspace_id', '=', workspaceId)
    .where('slug', '=', slug)
    .executeTakeFirst();
  if (current) return { articleId: current.id, slug: current.slug, old: false };
  const old = await db
    .selectFrom('kb_article_slugs as h')
    .innerJoin('kb_articles as a', (j) =>
      j.onRef('a.workspace_id', '=', 'h.workspace_id').onRef('a.id', '=', 'h.article_id'),
    )
    .select(['a.id', 'a.slug'])
    .where('h.workspace_id', '=', workspaceId)
    .where('h.slug', '=', slug)
    .executeTakeFirst();
  return old ? { articleId: old.id, slug: old.slug, old: true } : null;
}
