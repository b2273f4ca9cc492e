// Label groups: a name, an optional colour, a position and the exclusive flag (a record holds
// at most one label of an exclusive group; applyTags enforces it when labels change, so turning
// a group exclusive leaves records as they are). Deleting a group keeps its labels, ungrouped.
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { uniqueOrConflict } from '../../platform/db/unique.js';
import type { RequestContext } from '../../platform/http/context.js';
import { conflict, invalid, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { recordAudit } from '../audit/service.js';
import type { LabelColorName } from '../tags/schemas.js';
import { checkPermutation, loadTag } from '../tags/service.js';
import type { CreateTagGroupBody, PatchTagGroupBody, TagGroup } from './schemas.js';

export type TagGroupView = Static<typeof TagGroup>;

/** Label groups per workspace (docs/api.md "Labels and label groups"). */
export const MAX_TAG_GROUPS = 50;
const GROUP_NOT_FOUND = 'Label group not found.';
const NAME_TAKEN = 'A label group with this name already exists (names are unique ignoring case).';

function groupRows(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('tag_groups as g')
    .select([
      'g.id',
      'g.name',
      'g.color',
      'g.exclusive',
      'g.position',
      'g.created_at',
      'g.updated_at',
      (eb) =>
        eb
          .selectFrom('tags as t')
          .select(sql<number>`count(*)::int`.as('n'))
          .whereRef('t.workspace_id', '=', 'g.workspace_id')
          .whereRef('t.group_id', '=', 'g.id')
          .as('tag_count'),
    ])
    .where('g.workspace_id', '=', workspaceId)
    .orderBy('g.position')
    .orderBy(sql`lower(g.name)`)
    .orderBy('g.id');
}

type GroupRow = Awaited<ReturnType<ReturnType<typeof groupRows>['executeTakeFirstOrThrow']>>;

const present = (r: GroupRow): TagGroupView => ({
  id: r.id,
  name: r.name,
  color: r.color as LabelColorName | null,
  exclusive: r.exclusive,
  position: r.position,
  tag_count: Number(r.tag_count ?? 0),
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

async function loadGroup(db: Kysely<DB>, workspaceId: string, id: string): Promise<TagGroupView | null> {
  const row = await groupRows(db, workspaceId).where('g.id', '=', id).executeTakeFirst();
  return row ? present(row) : null;
}

/** Every group, by position, then name. */
export async function listTagGroups(deps: Deps, ctx: RequestContext): Promise<{ data: TagGroupView[] }> {
  const rows = await groupRows(deps.database.db, ctx.workspaceId).execute();
  return { data: rows.map(present) };
}

export async function getTagGroup(deps: Deps, ctx: RequestContext, id: string): Promise<TagGroupView> {
  if (!isUuid(id)) throw notFound(GROUP_NOT_FOUND);
  const group = await loadGroup(deps.database.db, ctx.workspaceId, id.toLowerCase());
  if (!group) throw notFound(GROUP_NOT_FOUND);
  return group;
}

/** The workspace's group-set lock: creating groups (the limit, positions) and reordering them. */
async function lockGroupSet(u: Unit): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`tag_groups:${u.workspaceId}`}, 0))`.execute(u.trx);
}

function cleanName(name: string): string {
  const n = name.trim();
  if (n === '') throw invalid('body.name', 'must not be blank');
  return n;
}

const nameTaken = <T>(work: () => Promise<T>): Promise<T> =>
  uniqueOrConflict({ tag_groups_name_key: NAME_TAKEN }, work);

export async function createTagGroup(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateTagGroupBody>,
): Promise<TagGroupView> {
  const name = cleanName(input.name);
  const id = newId();
  return deps.writer.run(ctx.workspaceId, async (u) => {
    await lockGroupSet(u);
    const stats = await u.trx
      .selectFrom('tag_groups')
      .select([sql<number>`count(*)::int`.as('n'), sql<number>`coalesce(max(position), -1)::int + 1`.as('next')])
      .where('workspace_id', '=', u.workspaceId)
      .executeTakeFirstOrThrow();
    if (Number(stats.n) >= MAX_TAG_GROUPS) {
      throw invalid('body', `a workspace has at most ${MAX_TAG_GROUPS} label groups`);
    }
    const color = input.color ?? null;
    const exclusive = input.exclusive ?? false;
    const row = await u.trx
      .insertInto('tag_groups')
      .values({ workspace_id: u.workspaceId, id, name, color, exclusive, position: Number(stats.next) })
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!row) throw conflict(NAME_TAKEN);
    const view = (await loadGroup(u.trx, u.workspaceId, id))!;
    u.emit({ type: 'tag_group.created', data: { tag_group: view } });
    await recordAudit(u.trx, ctx, {
      action: 'tag_group.created',
      entityType: 'tag_group',
      entityId: id,
      data: { name, color, exclusive },
    });
    return view;
  });
}

/** The group, locked FOR UPDATE (404 when it is not in the workspace). */
async function lockGroup(u: Unit, id: string) {
  const row = await u.trx
    .selectFrom('tag_groups')
    .select(['id', 'name', 'color', 'exclusive', 'position'])
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw notFound(GROUP_NOT_FOUND);
  return row;
}

export async function updateTagGroup(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  input: Static<typeof PatchTagGroupBody>,
): Promise<TagGroupView> {
  if (!isUuid(param)) throw notFound(GROUP_NOT_FOUND);
  const id = param.toLowerCase();
  const name = input.name === undefined ? undefined : cleanName(input.name);
  return nameTaken(() =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      const before = await lockGroup(u, id);
      const set: Record<string, unknown> = {};
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      if (name !== undefined && name !== before.name) {
        set.name = name;
        changes.name = { from: before.name, to: name };
      }
      if (input.color !== undefined && input.color !== before.color) {
        set.color = input.color;
        changes.color = { from: before.color, to: input.color };
      }
      if (input.exclusive !== undefined && input.exclusive !== before.exclusive) {
        set.exclusive = input.exclusive;
        changes.exclusive = { from: before.exclusive, to: input.exclusive };
      }
      if (Object.keys(set).length === 0) return (await loadGroup(u.trx, u.workspaceId, id))!;
      await u.trx
        .updateTable('tag_groups')
        .set({ ...set, updated_at: new Date() })
        .where('workspace_id', '=', u.workspaceId)
        .where('id', '=', id)
        .execute();
      const view = (await loadGroup(u.trx, u.workspaceId, id))!;
      u.emit({ type: 'tag_group.updated', data: { tag_group: view } });
      await recordAudit(u.trx, ctx, {
        action: 'tag_group.updated',
        entityType: 'tag_group',
        entityId: id,
        data: changes,
      });
      return view;
    }),
  );
}

/**
 * Deletes the group; its labels stay, without a group, each with tag.updated (before
 * tag_group.deleted, so no label ever points at a group that is gone).
 */
export async function deleteTagGroup(deps: Deps, ctx: RequestContext, param: string): Promise<void> {
  if (!isUuid(param)) throw notFound(GROUP_NOT_FOUND);
  const id = param.toLowerCase();
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await lockGroup(u, id);
    const ungrouped = await u.trx
      .updateTable('tags')
      .set({ group_id: null, updated_at: new Date() })
      .where('workspace_id', '=', u.workspaceId)
      .where('group_id', '=', id)
      .returning('id')
      .execute();
    await u.trx.deleteFrom('tag_groups').where('workspace_id', '=', u.workspaceId).where('id', '=', id).execute();
    for (const { id: tagId } of ungrouped.sort((a, b) => (a.id < b.id ? -1 : 1))) {
      const tag = await loadTag(u.trx, u.workspaceId, tagId);
      if (tag) u.emit({ type: 'tag.updated', data: { tag } });
    }
    u.emit({ type: 'tag_group.deleted', data: { tag_group_id: id } });
    await recordAudit(u.trx, ctx, {
      action: 'tag_group.deleted',
      entityType: 'tag_group',
      entityId: id,
      data: { name: before.name, exclusive: before.exclusive, tag_ids: ungrouped.map((r) => r.id).sort() },
    });
  });
}

/** Positions become the index in `ids`, which must list every group of the workspace once. */
export async function reorderTagGroups(
  deps: Deps,
  ctx: RequestContext,
  ids: string[],
): Promise<{ data: TagGroupView[] }> {
  await deps.writer.run(ctx.workspaceId, async (u) => {
    await lockGroupSet(u);
    const existing = await u.trx
      .selectFrom('tag_groups')
      .select('id')
      .where('workspace_id', '=', u.workspaceId)
      .execute();
    const order = checkPermutation(
      ids,
      existing.map((r) => r.id),
      'label groups',
    );
    if (order.length === 0) return;
    const values = sql.join(order.map((id, i) => sql`(${id}::uuid, ${i}::int4)`));
    const changed = await sql<{ id: string }>`
      UPDATE tag_groups g SET position = v.position, updated_at = now()
        FROM (VALUES ${values}) AS v (id, position)
       WHERE g.workspace_id = ${u.workspaceId} AND g.id = v.id AND g.position <> v.position
      RETURNING g.id`.execute(u.trx);
    const rank = (id: string) => order.indexOf(id);
    for (const { id } of changed.rows.sort((a, b) => rank(a.id) - rank(b.id))) {
      const group = await loadGroup(u.trx, u.workspaceId, id);
      if (group) u.emit({ type: 'tag_group.updated', data: { tag_group: group } });
    }
    await recordAudit(u.trx, ctx, {
      action: 'tag_group.reordered',
      entityType: 'tag_group',
      entityId: null,
      data: { ids: order },
    });
  });
  return listTagGroups(deps, ctx);
}
