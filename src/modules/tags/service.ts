// Labels (the API's tags): definitions (name, colour, group, which records they apply to,
// archived) and labels on tickets, contacts and companies (ticket_tags, contact_tags,
// company_tags; deleting a label removes its rows through their foreign keys).
//
// Lock order, so that concurrent writers queue instead of deadlocking:
//   the workspace's label-set lock (an advisory lock: creating labels, reorder)
//   → label rows (in id order: FOR SHARE when applying, FOR UPDATE when changing or merging)
//   → join rows.
// applyTags locks the record first (FOR NO KEY UPDATE, which foreign-key checks do not wait on).
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
import { likePattern } from '../../platform/http/values.js';
import { recordAudit } from '../audit/service.js';
import { KINDS } from './kinds.js';
import {
  type CreateTagBody,
  LABEL_COLORS,
  type LabelColorName,
  type ListTagsQuery,
  type MergeTagBody,
  type PatchTagBody,
  TAG_KINDS,
  TAG_NAME_PATTERN,
  type Tag,
  type TagKind,
  type TagRef,
} from './schemas.js';

export type TagView = Static<typeof Tag>;
export type TagRefView = Static<typeof TagRef>;

/** Labels per workspace, labels per record, at most. */
export const MAX_TAGS = 1000;
export const MAX_TAGS_PER_RECORD = 50;
const NAME_MAX = 50;
const TAG_NOT_FOUND = 'Label not found.';

// ---------------------------------------------------------------------------------------------
// Names and colours.

const NAME_RE = new RegExp(TAG_NAME_PATTERN, 'u');
/** A label name as error messages quote it. */
export const shown = (name: string) => JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}…` : name);

/**
 * A label name as stored: NFC, trimmed, 1 to 50 characters of letters (any script, with their
 * marks), digits, spaces and `- _ . / : & + #`. 422 at `location` otherwise; `quote` names the
 * offending name in the message (lists of names).
 */
export function cleanTagName(name: string, location: string, quote = false): string {
  const n = name.normalize('NFC').trim();
  const which = quote ? `label name ${shown(name)}` : 'the name';
  if (n === '') throw invalid(location, `${which} must not be blank`);
  if ([...n].length > NAME_MAX) throw invalid(location, `${which} must be at most ${NAME_MAX} characters`);
  if (!NAME_RE.test(n)) {
    throw invalid(location, `${which} may contain only letters, digits, spaces and - _ . / : & + #`);
  }
  return n;
}

/**
 * The default colour of a label: FNV-1a (32 bits) of the UTF-8 bytes of the lower-cased name,
 * modulo the 15 palette colours. The same name gets the same colour in every workspace.
 */
export function defaultTagColor(name: string): LabelColorName {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(name.normalize('NFC').toLowerCase(), 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return LABEL_COLORS[h % LABEL_COLORS.length]!;
}

/** applies_to in the canonical order, without repeats. */
const canonicalKinds = (kinds: readonly string[]): TagKind[] => TAG_KINDS.filter((k) => kinds.includes(k));

// ---------------------------------------------------------------------------------------------
// Reading.

function tagRows(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('tags as t')
    .leftJoin('tag_groups as g', (j) =>
      j.onRef('g.workspace_id', '=', 't.workspace_id').onRef('g.id', '=', 't.group_id'),
    )
    .select([
      't.id',
      't.name',
      't.description',
      't.color',
      't.group_id',
      't.position',
      't.archived',
      't.applies_to',
      't.created_at',
      't.updated_at',
    ])
    .where('t.workspace_id', '=', workspaceId);
}

type TagRow = Awaited<ReturnType<ReturnType<typeof tagRows>['executeTakeFirstOrThrow']>>;
type Usage = TagView['usage'];

/**
 * How many records carry each label, in one grouped query (all labels of the workspace when
 * `ids` is null). Deleted tickets are not counted.
 */
async function usageOf(db: Kysely<DB>, workspaceId: string, ids: string[] | null): Promise<Map<string, Usage>> {
  const out = new Map<string, Usage>();
  if (ids !== null && ids.length === 0) return out;
  const only = (col: string) => (ids === null ? sql`` : sql`AND ${sql.ref(col)} IN (${sql.join(ids)})`);
  const rows = await sql<{ tag_id: string; tickets: number; contacts: number; companies: number }>`
    SELECT tag_id, sum(tickets)::int AS tickets, sum(contacts)::int AS contacts, sum(companies)::int AS companies
      FROM (
        SELECT x.tag_id, count(*) AS tickets, 0 AS contacts, 0 AS companies
          FROM ticket_tags x
          JOIN tickets r ON r.workspace_id = x.workspace_id AND r.id = x.ticket_id
         WHERE x.workspace_id = ${workspaceId} AND r.deleted_at IS NULL ${only('x.tag_id')}
         GROUP BY x.tag_id
        UNION ALL
        SELECT x.tag_id, 0, count(*), 0 FROM contact_tags x
         WHERE x.workspace_id = ${workspaceId} ${only('x.tag_id')}
         GROUP BY x.tag_id
        UNION ALL
        SELECT x.tag_id, 0, 0, count(*) FROM company_tags x
         WHERE x.workspace_id = ${workspaceId} ${only('x.tag_id')}
         GROUP BY x.tag_id
      ) u
     GROUP BY tag_id`.execute(db);
  for (const r of rows.rows) {
    out.set(r.tag_id, { tickets: Number(r.tickets), contacts: Number(r.contacts), companies: Number(r.companies) });
  }
  return out;
}

const present =
  (usage: Map<string, Usage>) =>
  (r: TagRow): TagView => ({
    id: r.id,
    name: r.name,
    description: r.description,
    color: r.color as LabelColorName,
    group_id: r.group_id,
    position: r.position,
    archived: r.archived,
    applies_to: canonicalKinds(r.applies_to ?? []),
    usage: usage.get(r.id) ?? { tickets: 0, contacts: 0, companies: 0 },
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  });

/** Labels with their usage, in list order. */
async function tagViews(db: Kysely<DB>, workspaceId: string, ids: string[]): Promise<TagView[]> {
  if (ids.length === 0) return [];
  const rows = await ordered(tagRows(db, workspaceId).where('t.id', 'in', ids)).execute();
  return rows.map(present(await usageOf(db, workspaceId, ids)));
}

export async function loadTag(db: Kysely<DB>, workspaceId: string, id: string): Promise<TagView | null> {
  return (await tagViews(db, workspaceId, [id]))[0] ?? null;
}

/** Group position (labels without a group after grouped ones), then position, then name. */
function ordered(q: ReturnType<typeof tagRows>) {
  return q
    .orderBy(sql`g.position ASC NULLS LAST`)
    .orderBy(sql`lower(g.name) ASC NULLS LAST`)
    .orderBy(sql`g.id ASC NULLS LAST`)
    .orderBy('t.position', 'asc')
    .orderBy(sql`lower(t.name)`)
    .orderBy('t.name')
    .orderBy('t.id');
}

/** The complete list (no pages), filtered. */
export async function listTags(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListTagsQuery>,
): Promise<{ data: TagView[] }> {
  const db = deps.database.db;
  let query = tagRows(db, ctx.workspaceId);
  let filtered = false;
  if (q.q !== undefined) {
    query = query.where('t.name', 'ilike', likePattern(q.q.normalize('NFC')));
    filtered = true;
  }
  if (q.group_id === 'none') {
    query = query.where('t.group_id', 'is', null);
    filtered = true;
  } else if (q.group_id !== undefined) {
    query = query.where('t.group_id', '=', q.group_id.toLowerCase());
    filtered = true;
  }
  if (q.archived === 'true' || q.archived === 'false') {
    query = query.where('t.archived', '=', q.archived === 'true');
    filtered = true;
  }
  if (q.applies_to !== undefined) {
    query = query.where(sql<boolean>`${q.applies_to} = ANY (t.applies_to)`);
    filtered = true;
  }
  const rows = await ordered(query).execute();
  if (rows.length === 0) return { data: [] };
  const usage = await usageOf(db, ctx.workspaceId, filtered ? rows.map((r) => r.id) : null);
  return { data: rows.map(present(usage)) };
}

export async function getTag(deps: Deps, ctx: RequestContext, id: string): Promise<TagView> {
  if (!isUuid(id)) throw notFound(TAG_NOT_FOUND);
  const tag = await loadTag(deps.database.db, ctx.workspaceId, id.toLowerCase());
  if (!tag) throw notFound(TAG_NOT_FOUND);
  return tag;
}

// ---------------------------------------------------------------------------------------------
// Writing definitions.

/**
 * The workspace's label-set lock: held by whoever creates labels (the 1000 limit, positions)
 * or reorders them, until COMMIT.
 */
export async function lockTagSet(u: Unit): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`tags:${u.workspaceId}`}, 0))`.execute(u.trx);
}

/** 422 at `location` when `adding` more labels would pass the workspace's limit. */
export async function checkTagLimit(u: Unit, adding: number, location: string): Promise<void> {
  const row = await u.trx
    .selectFrom('tags')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('workspace_id', '=', u.workspaceId)
    .executeTakeFirstOrThrow();
  if (Number(row.n) + adding > MAX_TAGS) {
    throw invalid(location, `a workspace has at most ${MAX_TAGS} labels; archive or delete some first`);
  }
}

/** The position after the last label. */
export async function nextTagPosition(u: Unit): Promise<number> {
  const row = await u.trx
    .selectFrom('tags')
    .select(sql<number>`coalesce(max(position), -1)::int + 1`.as('p'))
    .where('workspace_id', '=', u.workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.p);
}

/** A group of this workspace, held (FOR KEY SHARE) so it cannot vanish before COMMIT; 422 otherwise. */
async function checkGroup(u: Unit, groupId: string, location: string): Promise<string> {
  const id = groupId.toLowerCase();
  const row = await u.trx
    .selectFrom('tag_groups')
    .select('id')
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', id)
    .forKeyShare()
    .executeTakeFirst();
  if (!row) throw invalid(location, 'no such label group in this workspace');
  return row.id;
}

const NAME_TAKEN = 'A label with this name already exists (names are unique ignoring case).';

const nameTaken = <T>(work: () => Promise<T>): Promise<T> => uniqueOrConflict({ tags_name_key: NAME_TAKEN }, work);

export async function createTag(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateTagBody>,
): Promise<TagView> {
  const name = cleanTagName(input.name, 'body.name');
  const appliesTo = canonicalKinds(input.applies_to ?? TAG_KINDS);
  const id = newId();
  return deps.writer.run(ctx.workspaceId, async (u) => {
    await lockTagSet(u);
    await checkTagLimit(u, 1, 'body');
    const groupId =
      input.group_id === undefined || input.group_id === null
        ? null
        : await checkGroup(u, input.group_id, 'body.group_id');
    const position = input.position ?? (await nextTagPosition(u));
    const color = input.color ?? defaultTagColor(name);
    const row = await u.trx
      .insertInto('tags')
      .values({
        workspace_id: u.workspaceId,
        id,
        name,
        color,
        description: input.description ?? '',
        group_id: groupId,
        position,
        applies_to: appliesTo,
      })
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!row) throw conflict(NAME_TAKEN);
    const view = (await loadTag(u.trx, u.workspaceId, id))!;
    u.emit({ type: 'tag.created', data: { tag: view } });
    await recordAudit(u.trx, ctx, {
      action: 'tag.created',
      entityType: 'tag',
      entityId: id,
      data: { name, color, group_id: groupId, applies_to: appliesTo },
    });
    return view;
  });
}

interface LockedTag {
  id: string;
  name: string;
  color: string;
  description: string;
  group_id: string | null;
  position: number;
  archived: boolean;
  applies_to: string[];
}

/** Labels of this workspace locked FOR UPDATE, in id order. */
async function lockTags(u: Unit, ids: string[]): Promise<LockedTag[]> {
  return u.trx
    .selectFrom('tags')
    .select(['id', 'name', 'color', 'description', 'group_id', 'position', 'archived', 'applies_to'])
    .where('workspace_id', '=', u.workspaceId)
    .where('id', 'in', ids)
    .orderBy('id')
    .forUpdate()
    .execute();
}

export async function updateTag(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  input: Static<typeof PatchTagBody>,
): Promise<TagView> {
  if (!isUuid(param)) throw notFound(TAG_NOT_FOUND);
  const id = param.toLowerCase();
  const name = input.name === undefined ? undefined : cleanTagName(input.name, 'body.name');
  return nameTaken(() =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      const [before] = await lockTags(u, [id]);
      if (!before) throw notFound(TAG_NOT_FOUND);
      const set: Record<string, unknown> = {};
      const changes: Record<string, { from: unknown; to: unknown }> = {};
      const change = (key: keyof LockedTag, to: unknown, stored: unknown = to) => {
        changes[key] = { from: before[key], to };
        set[key] = stored;
      };
      if (name !== undefined && name !== before.name) change('name', name);
      if (input.color !== undefined && input.color !== before.color) change('color', input.color);
      if (input.description !== undefined && input.description !== before.description) {
        change('description', input.description);
      }
      if (input.position !== undefined && input.position !== before.position) change('position', input.position);
      if (input.archived !== undefined && input.archived !== before.archived) change('archived', input.archived);
      if (input.group_id !== undefined) {
        const to = input.group_id === null ? null : input.group_id.toLowerCase();
        if (to !== before.group_id) change('group_id', to === null ? null : await checkGroup(u, to, 'body.group_id'));
      }
      if (input.applies_to !== undefined) {
        const to = canonicalKinds(input.applies_to);
        if (to.join() !== canonicalKinds(before.applies_to).join()) change('applies_to', to);
      }
      if (Object.keys(set).length === 0) return (await loadTag(u.trx, u.workspaceId, id))!;
      await u.trx
        .updateTable('tags')
        .set({ ...set, updated_at: new Date() })
        .where('workspace_id', '=', u.workspaceId)
        .where('id', '=', id)
        .execute();
      // Rule 1: a rename updates the views and automations that name the label.
      if (changes.name) await renameTagRefs(deps, u, before.name, name!);
      const view = (await loadTag(u.trx, u.workspaceId, id))!;
      u.emit({ type: 'tag.updated', data: { tag: view } });
      await recordAudit(u.trx, ctx, { action: 'tag.updated', entityType: 'tag', entityId: id, data: changes });
      return view;
    }),
  );
}

/**
 * The label is known as `to` now, not `from`: the modules that store label names by name (views,
 * automations) rewrite theirs, in the caller's transaction, through the hooks runtime.ts gives
 * Deps (so this module does not import them).
 */
async function renameTagRefs(deps: Deps, u: Unit, from: string, to: string): Promise<void> {
  for (const hook of deps.tagRenameHooks) await hook(deps, u, from, to);
}

/** Deletes a label; the join tables' foreign keys take it off every record. */
export async function deleteTag(deps: Deps, ctx: RequestContext, param: string): Promise<void> {
  if (!isUuid(param)) throw notFound(TAG_NOT_FOUND);
  const id = param.toLowerCase();
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const [before] = await lockTags(u, [id]);
    if (!before) throw notFound(TAG_NOT_FOUND);
    const usage = (await usageOf(u.trx, u.workspaceId, [id])).get(id) ?? { tickets: 0, contacts: 0, companies: 0 };
    await u.trx.deleteFrom('tags').where('workspace_id', '=', u.workspaceId).where('id', '=', id).execute();
    u.emit({ type: 'tag.deleted', data: { tag_id: id } });
    await recordAudit(u.trx, ctx, {
      action: 'tag.deleted',
      entityType: 'tag',
      entityId: id,
      data: { name: before.name, color: before.color, group_id: before.group_id, usage },
    });
  });
}

/**
 * Merge (rule 3): every record of the source gets `into` (records that already have it keep
 * one), then, when `into` is in an exclusive group, those records lose the group's other labels;
 * `into` gains the source's applies_to kinds, so no record carries a label that does not apply to
 * it; the source is deleted. Records change without their own events (tag.merged says it all).
 */
export async function mergeTag(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  input: Static<typeof MergeTagBody>,
): Promise<TagView> {
  if (!isUuid(param)) throw notFound(TAG_NOT_FOUND);
  const id = param.toLowerCase();
  const intoId = input.into.toLowerCase();
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const locked = await lockTags(u, [...new Set([id, intoId])]);
    const source = locked.find((t) => t.id === id);
    if (!source) throw notFound(TAG_NOT_FOUND);
    if (intoId === id) throw invalid('body.into', 'a label cannot be merged into itself');
    const into = locked.find((t) => t.id === intoId);
    if (!into) throw invalid('body.into', 'no such label in this workspace');

    const group = into.group_id
      ? await u.trx
          .selectFrom('tag_groups')
          .select(['id', 'exclusive'])
          .where('workspace_id', '=', u.workspaceId)
          .where('id', '=', into.group_id)
          .executeTakeFirst()
      : undefined;
    const moved: Record<string, number> = {};
    for (const k of Object.values(KINDS)) {
      const col = sql.ref(k.column);
      const table = sql.table(k.table);
      const count = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM ${table} WHERE workspace_id = ${u.workspaceId} AND tag_id = ${id}`.execute(
        u.trx,
      );
      moved[k.records] = Number(count.rows[0]?.n ?? 0);
      if (moved[k.records] === 0) continue;
      await sql`
        INSERT INTO ${table} (workspace_id, ${col}, tag_id)
        SELECT workspace_id, ${col}, ${intoId}::uuid FROM ${table}
         WHERE workspace_id = ${u.workspaceId} AND tag_id = ${id}
        ON CONFLICT DO NOTHING`.execute(u.trx);
      if (group?.exclusive) {
        await sql`
          DELETE FROM ${table} x
           USING tags t
           WHERE x.workspace_id = ${u.workspaceId}
             AND t.workspace_id = x.workspace_id AND t.id = x.tag_id
             AND t.group_id = ${group.id} AND x.tag_id <> ${intoId} AND x.tag_id <> ${id}
             AND x.${col} IN (SELECT s.${col} FROM ${table} s WHERE s.workspace_id = ${u.workspaceId} AND s.tag_id = ${id})`.execute(
          u.trx,
        );
      }
    }
    const appliesTo = canonicalKinds([...into.applies_to, ...source.applies_to]);
    const widened = appliesTo.join() !== canonicalKinds(into.applies_to).join();
    if (widened) {
      await u.trx
        .updateTable('tags')
        .set({ applies_to: appliesTo, updated_at: new Date() })
        .where('workspace_id', '=', u.workspaceId)
        .where('id', '=', intoId)
        .execute();
    }
    await u.trx.deleteFrom('tags').where('workspace_id', '=', u.workspaceId).where('id', '=', id).execute();
    // Rule 3: views and automations that named the source name `into` now.
    await renameTagRefs(deps, u, source.name, into.name);
    const view = (await loadTag(u.trx, u.workspaceId, intoId))!;
    if (widened) u.emit({ type: 'tag.updated', data: { tag: view } });
    u.emit({ type: 'tag.merged', data: { tag_id: id, into: intoId } });
    await recordAudit(u.trx, ctx, {
      action: 'tag.merged',
      entityType: 'tag',
      entityId: id,
      data: { name: source.name, into: intoId, into_name: into.name, records: moved },
    });
    return view;
  });
}

/** 422 at body.ids unless `ids` names every id of `existing` exactly once. */
export function checkPermutation(ids: string[], existing: string[], what: string): string[] {
  const wanted = ids.map((i) => i.toLowerCase());
  const have = new Set(existing);
  const seen = new Set<string>();
  for (const id of wanted) {
    if (seen.has(id)) throw invalid('body.ids', `lists ${id} twice`);
    seen.add(id);
    if (!have.has(id)) throw invalid('body.ids', `${id} is not one of this workspace's ${what}`);
  }
  if (seen.size !== have.size) {
    throw invalid('body.ids', `must list every one of the workspace's ${have.size} ${what} (${seen.size} given)`);
  }
  return wanted;
}

/** Positions become the index in `ids`, which must list every label of the workspace once. */
export async function reorderTags(deps: Deps, ctx: RequestContext, ids: string[]): Promise<{ data: TagView[] }> {
  await deps.writer.run(ctx.workspaceId, async (u) => {
    await lockTagSet(u);
    const existing = await u.trx.selectFrom('tags').select('id').where('workspace_id', '=', u.workspaceId).execute();
    const order = checkPermutation(
      ids,
      existing.map((r) => r.id),
      'labels',
    );
    if (order.length === 0) return;
    const values = sql.join(order.map((id, i) => sql`(${id}::uuid, ${i}::int4)`));
    const changed = await sql<{ id: string }>`
      UPDATE tags t SET position = v.position, updated_at = now()
        FROM (VALUES ${values}) AS v (id, position)
       WHERE t.workspace_id = ${u.workspaceId} AND t.id = v.id AND t.position <> v.position
      RETURNING t.id`.execute(u.trx);
    const changedIds = changed.rows.map((r) => r.id);
    for (const tag of await tagViews(u.trx, u.workspaceId, changedIds)) {
      u.emit({ type: 'tag.updated', data: { tag } });
    }
    await recordAudit(u.trx, ctx, { action: 'tag.reordered', entityType: 'tag', entityId: null, data: { ids: order } });
  });
  return listTags(deps, ctx, {});
}
