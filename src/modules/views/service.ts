// Saved views: a name and a set of ticket list filters (GET /v1/tickets?view_id=…). A shared
// view is seen by every member and by API keys; a personal view only by the person who made
// it: to anyone else it does not exist (404). Shared views are settings (an admin user or a
// key with settings:write); a personal view belongs to its owner, whatever their role. API keys
// are no person: they read and manage shared views only.
//
// Shared views have no owner_id (the owner_id foreign key removes a member's personal views
// when they leave; a shared view must survive its creator). Events of a personal view carry
// the owner's user:<id> topic so they can be routed to that person only.
import type { Static } from '@sinclair/typebox';
import { type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import type { EventDraft } from '../../platform/events/envelope.js';
import type { RequestContext } from '../../platform/http/context.js';
import { forbidden, invalid, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { checkFieldFilters } from '../custom-fields/filters.js';
import type { CreateViewBody, PatchViewBody, View, ViewFiltersSchema } from './schemas.js';

export { ViewFiltersSchema } from './schemas.js';
export type ViewFilters = Static<typeof ViewFiltersSchema>;
export type ViewView = Static<typeof View>;

/** At most this many shared views per workspace, and personal views per person. */
export const MAX_SHARED_VIEWS = 100;
export const MAX_PERSONAL_VIEWS = 100;

const NOT_FOUND = 'View not found.';

type ViewsEB = ExpressionBuilder<DB & { v: DB['views'] }, 'v'>;

/** The views the caller may see: shared ones, plus their own personal ones (people only). */
const visibleTo = (ctx: RequestContext) => (eb: ViewsEB) =>
  ctx.actor.kind === 'member'
    ? eb.or([eb('v.shared', '=', true), eb('v.owner_id', '=', ctx.actor.userId)])
    : eb('v.shared', '=', true);

function viewQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('views as v')
    .select(['v.id', 'v.name', 'v.shared', 'v.owner_id', 'v.position', 'v.filters', 'v.created_at', 'v.updated_at'])
    .where('v.workspace_id', '=', workspaceId);
}

type ViewRow = Awaited<ReturnType<ReturnType<typeof viewQuery>['executeTakeFirstOrThrow']>>;

const present = (r: ViewRow): ViewView => ({
  id: r.id,
  name: r.name,
  shared: r.shared,
  position: r.position,
  filters: (r.filters ?? {}) as ViewFilters,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

/** Extra topics of a view's events: a personal view's go to its owner only. */
const topicsOf = (r: { shared: boolean; owner_id: string | null }): Pick<EventDraft, 'topics'> =>
  !r.shared && r.owner_id ? { topics: [`user:${r.owner_id}`] } : {};

const mayManageShared = (ctx: RequestContext) =>
  ctx.actor.kind === 'api_key' || ctx.role === 'admin' || ctx.role === 'owner';

const sharedForbidden = () => forbidden('Only admins and keys with settings:write create or change shared views.');

/** The caller's views: shared ones and their own personal ones, by position then creation. */
export async function listViews(deps: Deps, ctx: RequestContext): Promise<{ data: ViewView[] }> {
  const rows = await viewQuery(deps.database.db, ctx.workspaceId)
    .where(visibleTo(ctx))
    .orderBy('v.position', 'asc')
    .orderBy('v.created_at', 'asc')
    .orderBy('v.id', 'asc')
    .execute();
  return { data: rows.map(present) };
}

export async function getView(deps: Deps, ctx: RequestContext, id: string): Promise<ViewView> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const row = await viewQuery(deps.database.db, ctx.workspaceId)
    .where('v.id', '=', id.toLowerCase())
    .where(visibleTo(ctx))
    .executeTakeFirst();
  if (!row) throw notFound(NOT_FOUND);
  return present(row);
}

/**
 * The filters of a view the caller may see, or null (no such view, another workspace's,
 * someone else's personal view). For GET /v1/tickets?view_id=.
 */
export async function viewFiltersOf(db: Kysely<DB>, ctx: RequestContext, viewId: string): Promise<ViewFilters | null> {
  if (!isUuid(viewId)) return null;
  const row = await db
    .selectFrom('views as v')
    .select('v.filters')
    .where('v.workspace_id', '=', ctx.workspaceId)
    .where('v.id', '=', viewId.toLowerCase())
    .where(visibleTo(ctx))
    .executeTakeFirst();
  return row ? ((row.filters ?? {}) as ViewFilters) : null;
}

/** Every view the caller may see with its filters, in list order. For GET /v1/tickets/counts. */
export async function visibleViews(
  db: Kysely<DB>,
  ctx: RequestContext,
): Promise<Array<{ id: string; filters: ViewFilters }>> {
  const rows = await db
    .selectFrom('views as v')
    .select(['v.id', 'v.filters'])
    .where('v.workspace_id', '=', ctx.workspaceId)
    .where(visibleTo(ctx))
    .orderBy('v.position', 'asc')
    .orderBy('v.created_at', 'asc')
    .orderBy('v.id', 'asc')
    .execute();
  return rows.map((r) => ({ id: r.id, filters: (r.filters ?? {}) as ViewFilters }));
}

/**
 * Inside a label's rename or merge (through deps.tagRenameHooks, registered in runtime.ts):
 * every view of the workspace whose `tag` filter names `from` (ignoring case) names `to`
 * instead, with a view.updated event per changed view.
 */
export async function renameTagInViews(u: Unit, from: string, to: string): Promise<void> {
  const changed = await u.trx
    .updateTable('views')
    .set({ filters: sql`jsonb_set(filters, '{tag}', to_jsonb(${to}::text))`, updated_at: sql`now()` })
    .where('workspace_id', '=', u.workspaceId)
    .where(sql`lower(filters->>'tag')`, '=', sql`lower(${from}::text)`)
    .where(sql`filters->>'tag'`, 'is distinct from', to)
    .returning('id')
    .execute();
  if (changed.length === 0) return;
  const rows = await viewQuery(u.trx, u.workspaceId)
    .where(
      'v.id',
      'in',
      changed.map((r) => r.id),
    )
    .orderBy('v.id')
    .execute();
  for (const r of rows) u.emit({ type: 'view.updated', data: { view: present(r) }, ...topicsOf(r) });
}

function cleanName(name: string): string {
  const n = name.trim();
  if (n === '') throw invalid('body.name', 'must not be blank');
  return n;
}

/** Every operator but set and not_set compares with a value (its shape per field type is checkFieldFilters'). */
function checkFieldValue(op: string, value: unknown, location: string): void {
  if (op !== 'set' && op !== 'not_set' && value === undefined) throw invalid(location, `is required with op ${op}`);
}

/**
 * The filters as stored: ids lower-cased, the label name and q trimmed, set and not_set
 * without a value. Field keys and operators are checked against the workspace's ticket fields.
 */
async function cleanFilters(db: Kysely<DB>, workspaceId: string, f: ViewFilters): Promise<ViewFilters> {
  const out: ViewFilters = {};
  if (f.status !== undefined) out.status = f.status;
  if (f.priority !== undefined) out.priority = f.priority;
  if (f.assignee !== undefined) out.assignee = f.assignee.toLowerCase();
  if (f.team_id !== undefined) out.team_id = f.team_id.toLowerCase();
  if (f.mailbox_id !== undefined) out.mailbox_id = f.mailbox_id.toLowerCase();
  if (f.tag !== undefined) {
    const tag = f.tag.trim();
    if (tag === '') throw invalid('body.filters.tag', 'must not be blank');
    out.tag = tag;
  }
  if (f.channel !== undefined) out.channel = f.channel;
  if (f.q !== undefined) {
    const q = f.q.trim();
    if (q === '') throw invalid('body.filters.q', 'must not be blank');
    out.q = q;
  }
  if (f.fields !== undefined) {
    out.fields = f.fields.map((c, i) => {
      checkFieldValue(c.op, c.value, `body.filters.fields.${i}.value`);
      return c.op === 'set' || c.op === 'not_set' ? { key: c.key, op: c.op } : { key: c.key, op: c.op, value: c.value };
    });
    const checks = out.fields.map((c) => ({ key: c.key, op: c.op, value: c.value }));
    if (checks.length > 0) await checkFieldFilters(db, workspaceId, 'ticket', checks, 'body.filters.fields');
  }
  return out;
}

/** One writer of views at a time per workspace: the counts and the end position hold. */
async function lockViews(u: Unit): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`views:${u.workspaceId}`}, 0))`.execute(u.trx);
}

/** 422 when one more shared view (ownerId null) or personal view of ownerId would pass the limit. */
async function checkRoom(u: Unit, ownerId: string | null): Promise<void> {
  const { n } = await u.trx
    .selectFrom('views')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('workspace_id', '=', u.workspaceId)
    .where((eb) => (ownerId === null ? eb('shared', '=', true) : eb('owner_id', '=', ownerId)))
    .executeTakeFirstOrThrow();
  if (ownerId === null && n >= MAX_SHARED_VIEWS) {
    throw invalid('body.shared', `a workspace has at most ${MAX_SHARED_VIEWS} shared views`);
  }
  if (ownerId !== null && n >= MAX_PERSONAL_VIEWS) {
    throw invalid('body.shared', `a person has at most ${MAX_PERSONAL_VIEWS} personal views`);
  }
}

const keysAreNoPerson = () => invalid('body.shared', 'an API key is no person: it manages shared views only');

export async function createView(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateViewBody>,
): Promise<ViewView> {
  const name = cleanName(input.name);
  const shared = input.shared ?? ctx.actor.kind === 'api_key';
  if (!shared && ctx.actor.kind !== 'member') throw keysAreNoPerson();
  if (shared && !mayManageShared(ctx)) throw sharedForbidden();
  const ownerId = shared || ctx.actor.kind !== 'member' ? null : ctx.actor.userId;
  const id = newId();
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const filters = await cleanFilters(u.trx, ctx.workspaceId, input.filters ?? {});
    await lockViews(u);
    await checkRoom(u, ownerId);
    let position = input.position;
    if (position === undefined) {
      const { last } = await u.trx
        .selectFrom('views')
        .select(sql<number>`coalesce(max(position), -1)::int`.as('last'))
        .where('workspace_id', '=', ctx.workspaceId)
        .executeTakeFirstOrThrow();
      position = last + 1;
    }
    await u.trx
      .insertInto('views')
      .values({
        workspace_id: ctx.workspaceId,
        id,
        name,
        shared,
        owner_id: ownerId,
        position,
        filters: JSON.stringify(filters),
      })
      .execute();
    const row = (await viewQuery(u.trx, ctx.workspaceId).where('v.id', '=', id).executeTakeFirst())!;
    const view = present(row);
    u.emit({ type: 'view.created', data: { view }, ...topicsOf(row) });
    return view;
  });
}

/** The view, locked for this transaction, if the caller may see it (404 otherwise). */
async function lockView(u: Unit, ctx: RequestContext, id: string): Promise<ViewRow> {
  const row = await viewQuery(u.trx, ctx.workspaceId)
    .where('v.id', '=', id)
    .where(visibleTo(ctx))
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw notFound(NOT_FOUND);
  return row;
}

export async function updateView(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  input: Static<typeof PatchViewBody>,
): Promise<ViewView> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const rowId = id.toLowerCase();
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await lockView(u, ctx, rowId);
    if (before.shared && !mayManageShared(ctx)) throw sharedForbidden();
    const shared = input.shared ?? before.shared;
    let ownerId = before.owner_id;
    if (shared !== before.shared) {
      if (shared) {
        if (!mayManageShared(ctx)) throw sharedForbidden();
        ownerId = null;
      } else {
        // Unsharing makes the view the caller's own (callers here may manage shared views).
        if (ctx.actor.kind !== 'member') throw keysAreNoPerson();
        ownerId = ctx.actor.userId;
      }
    }
    const set: Record<string, unknown> = {};
    if (input.name !== undefined) {
      const name = cleanName(input.name);
      if (name !== before.name) set.name = name;
    }
    if (input.position !== undefined && input.position !== before.position) set.position = input.position;
    if (input.filters !== undefined) {
      const filters = await cleanFilters(u.trx, ctx.workspaceId, input.filters);
      if (JSON.stringify(filters) !== JSON.stringify(before.filters ?? {})) set.filters = JSON.stringify(filters);
    }
    if (shared !== before.shared) {
      await lockViews(u);
      await checkRoom(u, ownerId);
      set.shared = shared;
      set.owner_id = ownerId;
    }
    if (Object.keys(set).length === 0) return present(before);
    await u.trx
      .updateTable('views')
      .set({ ...set, updated_at: sql`now()` })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', rowId)
      .execute();
    const after = (await viewQuery(u.trx, ctx.workspaceId).where('v.id', '=', rowId).executeTakeFirst())!;
    const view = present(after);
    // A shared view made personal leaves everyone else's list: they get view.deleted.
    if (before.shared && !after.shared) u.emit({ type: 'view.deleted', data: { view_id: rowId } });
    u.emit({ type: 'view.updated', data: { view }, ...topicsOf(after) });
    return view;
  });
}

export async function deleteView(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound(NOT_FOUND);
  const rowId = id.toLowerCase();
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await lockView(u, ctx, rowId);
    if (before.shared && !mayManageShared(ctx)) throw sharedForbidden();
    await u.trx.deleteFrom('views').where('workspace_id', '=', ctx.workspaceId).where('id', '=', rowId).execute();
    u.emit({ type: 'view.deleted', data: { view_id: rowId }, ...topicsOf(before) });
  });
}
