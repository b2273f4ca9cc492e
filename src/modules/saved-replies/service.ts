// Saved replies: canned answers agents insert into a reply, by title or by a short shortcut
// (unique in the workspace ignoring case). The body is sanitized HTML, stored as every reader
// gets it. Lists are newest first (the saved_replies_created_idx keyset); q finds by title or
// shortcut.
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import { createdBefore, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import { uniqueOrConflict } from '../../platform/db/unique.js';
import { htmlToText, sanitizeHtml } from '../../platform/html/index.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import { likePattern } from '../../platform/http/values.js';
import type { CreateSavedReplyBody, ListSavedRepliesQuery, PatchSavedReplyBody, SavedReply } from './schemas.js';

export type SavedReplyView = Static<typeof SavedReply>;

const UNIQUE_KEYS = { saved_replies_shortcut_key: 'A saved reply with this shortcut already exists.' };
const NOT_FOUND = 'Saved reply not found.';

function savedReplyQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('saved_replies as s')
    .select([
      's.id',
      's.title',
      's.shortcut',
      's.body_html',
      's.created_at',
      's.updated_at',
      microsOf('s.created_at').as('created_us'),
    ])
    .where('s.workspace_id', '=', workspaceId);
}

type SavedReplyRow = Awaited<ReturnType<ReturnType<typeof savedReplyQuery>['executeTakeFirstOrThrow']>>;

const present = (r: SavedReplyRow): SavedReplyView => ({
  id: r.id,
  title: r.title,
  shortcut: r.shortcut,
  body_html: r.body_html,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

async function loadSavedReply(db: Kysely<DB>, workspaceId: string, id: string): Promise<SavedReplyView | null> {
  const row = await savedReplyQuery(db, workspaceId).where('s.id', '=', id).executeTakeFirst();
  return row ? present(row) : null;
}

/** Newest first; q matches part of the title or the shortcut, ignoring case. */
export async function listSavedReplies(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListSavedRepliesQuery>,
): Promise<Page<SavedReplyView>> {
  const limit = q.limit ?? 50;
  const list = `saved-replies:${JSON.stringify([ctx.workspaceId, q.q ?? null])}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = savedReplyQuery(deps.database.db, ctx.workspaceId);
  if (q.q !== undefined) {
    const pattern = likePattern(q.q);
    query = query.where((eb) => eb.or([eb('s.title', 'ilike', pattern), eb('s.shortcut', 'ilike', pattern)]));
  }
  if (after) query = query.where(createdBefore('s', after));
  const rows = await query
    .orderBy('s.created_at', 'desc')
    .orderBy('s.id', 'desc')
    .limit(pageLimit(limit + 1))
    .execute();
  return deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], present);
}

export async function getSavedReply(deps: Deps, ctx: RequestContext, id: string): Promise<SavedReplyView> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const reply = await loadSavedReply(deps.database.db, ctx.workspaceId, id.toLowerCase());
  if (!reply) throw notFound(NOT_FOUND);
  return reply;
}

function cleanTitle(title: string): string {
  const t = title.trim();
  if (t === '') throw invalid('body.title', 'must not be blank');
  return t;
}

/** Sanitized HTML; 422 when nothing is left once unsafe content is removed. */
function cleanBody(html: string): string {
  const clean = sanitizeHtml(html);
  if (htmlToText(clean).trim() === '' && !/<img\b/i.test(clean)) {
    throw invalid('body.body_html', 'is empty once unsafe content is removed');
  }
  return clean;
}

export async function createSavedReply(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateSavedReplyBody>,
): Promise<SavedReplyView> {
  const title = cleanTitle(input.title);
  const bodyHtml = cleanBody(input.body_html);
  const id = newId();
  return uniqueOrConflict(UNIQUE_KEYS, () =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      await u.trx
        .insertInto('saved_replies')
        .values({ workspace_id: ctx.workspaceId, id, title, shortcut: input.shortcut ?? null, body_html: bodyHtml })
        .execute();
      const view = (await loadSavedReply(u.trx, ctx.workspaceId, id))!;
      u.emit({ type: 'saved_reply.created', data: { saved_reply: view } });
      return view;
    }),
  );
}

export async function updateSavedReply(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  input: Static<typeof PatchSavedReplyBody>,
): Promise<SavedReplyView> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const rowId = id.toLowerCase();
  return uniqueOrConflict(UNIQUE_KEYS, () =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      const before = await u.trx
        .selectFrom('saved_replies')
        .select(['title', 'shortcut', 'body_html'])
        .where('workspace_id', '=', ctx.workspaceId)
        .where('id', '=', rowId)
        .forUpdate()
        .executeTakeFirst();
      if (!before) throw notFound(NOT_FOUND);
      const set: { title?: string; shortcut?: string | null; body_html?: string } = {};
      if (input.title !== undefined) {
        const title = cleanTitle(input.title);
        if (title !== before.title) set.title = title;
      }
      if (input.shortcut !== undefined && input.shortcut !== before.shortcut) set.shortcut = input.shortcut;
      if (input.body_html !== undefined) {
        const bodyHtml = cleanBody(input.body_html);
        if (bodyHtml !== before.body_html) set.body_html = bodyHtml;
      }
      if (Object.keys(set).length === 0) return (await loadSavedReply(u.trx, ctx.workspaceId, rowId))!;
      await u.trx
        .updateTable('saved_replies')
        .set({ ...set, updated_at: sql<Date>`now()` })
        .where('workspace_id', '=', ctx.workspaceId)
        .where('id', '=', rowId)
        .execute();
      const view = (await loadSavedReply(u.trx, ctx.workspaceId, rowId))!;
      u.emit({ type: 'saved_reply.updated', data: { saved_reply: view } });
      return view;
    }),
  );
}

export async function deleteSavedReply(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const rowId = id.toLowerCase();
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const gone = await u.trx
      .deleteFrom('saved_replies')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', rowId)
      .returning('id')
      .executeTakeFirst();
    if (!gone) throw notFound(NOT_FOUND);
    u.emit({ type: 'saved_reply.deleted', data: { saved_reply_id: rowId } });
  });
}
