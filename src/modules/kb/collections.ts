// Knowledge base collections: named groups of articles, in `position` order. article_count is
// counted when read (every article of the collection, drafts included), so concurrent creates,
// moves and deletes of articles can never leave it wrong. A collection holding articles cannot
// be deleted (409): its articles are moved or deleted first (docs/decisions.md).
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import { pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import type { RequestContext } from '../../platform/http/context.js';
import { conflict, invalid, notFound } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { recordAudit } from '../audit/service.js';
import type { CreateKbCollectionBody, KbCollection, ListKbCollectionsQuery, PatchKbCollectionBody } from './schemas.js';
import { freeSlug, RESERVED_COLLECTION_SLUGS, slugOf, withSlugRetry } from './slugs.js';

export type KbCollectionView = Static<typeof KbCollection>;

export const COLLECTION_NOT_FOUND = 'Collection not found.';

function collectionQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('kb_collections as c')
    .select([
      'c.id',
      'c.name',
      'c.slug',
      'c.description',
      'c.position',
      sql<number>`(SELECT count(*)::int FROM kb_articles a
                    WHERE a.workspace_id = c.workspace_id AND a.collection_id = c.id)`.as('article_count'),
    ])
    .where('c.workspace_id', '=', workspaceId);
}

type CollectionRow = Awaited<ReturnType<ReturnType<typeof collectionQuery>['executeTakeFirstOrThrow']>>;

const present = (r: CollectionRow): KbCollectionView => ({
  id: r.id,
  name: r.name,
  slug: r.slug,
  description: r.description,
  position: r.position,
  article_count: Number(r.article_count),
});

export async function loadCollection(
  db: Kysely<DB>,
  workspaceId: string,
  id: string,
): Promise<KbCollectionView | null> {
  const row = await collectionQuery(db, workspaceId).where('c.id', '=', id).executeTakeFirst();
  return row ? present(row) : null;
}

/** In position order (then by id). */
export async function listCollections(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListKbCollectionsQuery>,
): Promise<Page<KbCollectionView>> {
  const limit = q.limit ?? 50;
  const list = `kb-collections:${ctx.workspaceId}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = collectionQuery(deps.database.db, ctx.workspaceId);
  if (after) {
    const [position, id] = after;
    if (typeof position !== 'number' || typeof id !== 'string' || !isUuid(id)) {
      throw invalid('query.cursor', 'is not a cursor of this list; start again without one');
    }
    query = query.where(sql<boolean>`(c.position, c.id) > (${position}::int4, ${id}::uuid)`);
  }
  const rows = await query
    .orderBy('c.position')
    .orderBy('c.id')
    .limit(pageLimit(limit + 1))
    .execute();
  return deps.pager.page(list, rows, limit, (r) => [r.position, r.id], present);
}

export async function getCollection(deps: Deps, ctx: RequestContext, id: string): Promise<KbCollectionView> {
  if (!isUuid(id)) throw notFound(COLLECTION_NOT_FOUND);
  const c = await loadCollection(deps.database.db, ctx.workspaceId, id.toLowerCase());
  if (!c) throw notFound(COLLECTION_NOT_FOUND);
  return c;
}

/** A given collection slug must not be one the help center's pages use. */
function checkSlug(slug: string | undefined): void {
  if (slug !== undefined && RESERVED_COLLECTION_SLUGS.has(slug)) {
    throw invalid('body.slug', `"${slug}" is the address of one of the help center's own pages; choose another`);
  }
}

function cleanName(name: string): string {
  const n = name.trim();
  if (n === '') throw invalid('body.name', 'must not be blank');
  return n;
}

const cleanDescription = (d: string | null | undefined): string | null => {
  const t = d?.trim() ?? '';
  return t === '' ? null : t;
};

export async function createCollection(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateKbCollectionBody>,
): Promise<KbCollectionView> {
  const name = cleanName(input.name);
  checkSlug(input.slug);
  const description = cleanDescription(input.description);
  const id = newId();
  return withSlugRetry(
    'kb_collections',
    () => input.slug === undefined,
    () =>
      deps.writer.run(ctx.workspaceId, async (u) => {
        const slug =
          input.slug ?? (await freeSlug(u.trx, 'kb_collections', u.workspaceId, slugOf(name, 'collection'), null));
        const position =
          input.position ??
          Number(
            (
              await u.trx
                .selectFrom('kb_collections')
                .select(sql<number>`coalesce(max(position), -1)::int + 1`.as('next'))
                .where('workspace_id', '=', u.workspaceId)
                .executeTakeFirstOrThrow()
            ).next,
          );
        await u.trx
          .insertInto('kb_collections')
          .values({ workspace_id: u.workspaceId, id, name, slug, description, position })
          .execute();
        const view = (await loadCollection(u.trx, u.workspaceId, id))!;
        u.emit({ type: 'kb_collection.created', data: { kb_collection: view } });
        await recordAudit(u.trx, ctx, {
          action: 'kb_collection.created',
          entityType: 'kb_collection',
          entityId: id,
          data: { name, slug },
        });
        return view;
      }),
  );
}

async function lockCollection(u: Unit, id: string) {
  const row = await u.trx
    .selectFrom('kb_collections')
    .select(['name', 'slug', 'description', 'position'])
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw notFound(COLLECTION_NOT_FOUND);
  return row;
}

/** A name change keeps the slug (collection slugs change only when given). */
export async function updateCollection(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  input: Static<typeof PatchKbCollectionBody>,
): Promise<KbCollectionView> {
  if (!isUuid(param)) throw notFound(COLLECTION_NOT_FOUND);
  const id = param.toLowerCase();
  const name = input.name === undefined ? undefined : cleanName(input.name);
  checkSlug(input.slug);
  return withSlugRetry(
    'kb_collections',
    () => false,
    () =>
      deps.writer.run(ctx.workspaceId, async (u) => {
        const before = await lockCollection(u, id);
        const set: { name?: string; slug?: string; description?: string | null; position?: number } = {};
        const changes: Record<string, { from: unknown; to: unknown }> = {};
        const change = <K extends keyof typeof set>(key: K, to: (typeof set)[K], from: unknown) => {
          if (to === undefined || to === from) return;
          set[key] = to;
          changes[key] = { from, to };
        };
        change('name', name, before.name);
        change('slug', input.slug, before.slug);
        if (input.description !== undefined)
          change('description', cleanDescription(input.description), before.description);
        change('position', input.position, before.position);
        if (Object.keys(set).length === 0) return (await loadCollection(u.trx, u.workspaceId, id))!;
        await u.trx
          .updateTable('kb_collections')
          .set({ ...set, updated_at: sql<Date>`now()` })
          .where('workspace_id', '=', u.workspaceId)
          .where('id', '=', id)
          .execute();
        const view = (await loadCollection(u.trx, u.workspaceId, id))!;
        u.emit({ type: 'kb_collection.updated', data: { kb_collection: view } });
        await recordAudit(u.trx, ctx, {
          action: 'kb_collection.updated',
          entityType: 'kb_collection',
          entityId: id,
          data: changes,
        });
        return view;
      }),
  );
}

const NOT_EMPTY = 'The collection holds articles: move or delete them first.';

/** 409 while the collection holds articles (the foreign key settles a race with a move into it). */
export async function deleteCollection(deps: Deps, ctx: RequestContext, param: string): Promise<void> {
  if (!isUuid(param)) throw notFound(COLLECTION_NOT_FOUND);
  const id = param.toLowerCase();
  try {
    await deps.writer.run(ctx.workspaceId, async (u) => {
      const before = await lockCollection(u, id);
      const held = await u.trx
        .selectFrom('kb_articles')
        .select('id')
        .where('workspace_id', '=', u.workspaceId)
        .where('collection_id', '=', id)
        .limit(1)
        .executeTakeFirst();
      if (held) throw conflict(NOT_EMPTY);
      await u.trx.deleteFrom('kb_collections').where('workspace_id', '=', u.workspaceId).where('id', '=', id).execute();
      u.emit({ type: 'kb_collection.deleted', data: { kb_collection_id: id } });
      await recordAudit(u.trx, ctx, {
        action: 'kb_collection.deleted',
        entityType: 'kb_collection',
        entityId: id,
        data: { name: before.name, slug: before.slug },
      });
    });
  } catch (err) {
    // foreign_key_violation: an article moved in between the check and the delete.
    if ((err as { code?: unknown }).code === '23503') throw conflict(NOT_EMPTY);
    throw err;
  }
}
