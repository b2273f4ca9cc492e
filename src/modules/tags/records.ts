// Applying labels to records (tickets, contacts and companies), inside the record's own
// transaction: by name (created when the caller may create labels), replacing the record's
// labels or adding and removing some, with exclusive groups and the per-record limit; and
// reading a record's labels. The labels' definitions are service.ts.
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import { isUuid, newId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { type ActingContext, isCaller, type RequestContext } from '../../platform/http/context.js';
import { ApiError, conflict, invalid, notFound } from '../../platform/http/errors.js';
import { recordAudit } from '../audit/service.js';
import { KINDS, type TagEntity } from './kinds.js';
import { type LabelColorName, TAG_KINDS, type TagRef } from './schemas.js';
import {
  checkTagLimit,
  cleanTagName,
  defaultTagColor,
  loadTag,
  lockTagSet,
  MAX_TAGS_PER_RECORD,
  nextTagPosition,
  shown,
} from './service.js';

type TagRefView = Static<typeof TagRef>;

interface Resolved {
  id: string;
  name: string;
  color: string;
  group_id: string | null;
  archived: boolean;
  applies_to: string[];
  exclusive: boolean;
}

const refOf = (t: { id: string; name: string; color: string; group_id: string | null }): TagRefView => ({
  id: t.id,
  name: t.name,
  color: t.color as LabelColorName,
  group_id: t.group_id,
});

/** The ids of labels named (case-insensitively, as the unique index compares), by position in `names`. */
async function idsByNames(u: Unit, names: string[]): Promise<Array<string | null>> {
  if (names.length === 0) return [];
  const values = sql.join(names.map((n, i) => sql`(${n}::text, ${i}::int4)`));
  const rows = await sql<{ ord: number; id: string }>`
    SELECT n.ord, t.id FROM (VALUES ${values}) AS n (name, ord)
      JOIN tags t ON t.workspace_id = ${u.workspaceId} AND lower(t.name) = lower(n.name)`.execute(u.trx);
  const out: Array<string | null> = names.map(() => null);
  for (const r of rows.rows) out[Number(r.ord)] = r.id;
  return out;
}

/** May this caller create labels by naming them? (workspace setting label_creation) */
async function mayCreateLabels(u: Unit, ctx: RequestContext): Promise<boolean> {
  if (ctx.role === 'admin' || ctx.role === 'owner') return true;
  if (ctx.scopes?.includes('settings:write')) return true;
  const row = await u.trx
    .selectFrom('workspaces')
    .select(sql<string | null>`settings->>'label_creation'`.as('mode'))
    .where('id', '=', u.workspaceId)
    .executeTakeFirst();
  return (row?.mode ?? 'all') !== 'admins';
}

/**
 * Creates the labels named that do not exist yet (palette colour, applies to all, at the end),
 * each with tag.created and an audit entry.
 */
async function createNamed(
  u: Unit,
  ctx: RequestContext,
  entity: TagEntity,
  names: string[],
  location: string,
): Promise<void> {
  await lockTagSet(u);
  // Under the lock: labels another writer created meanwhile are visible now.
  const known = await idsByNames(u, names);
  const create = names.filter((_, i) => known[i] === null);
  if (create.length === 0) return;
  await checkTagLimit(u, new Set(create.map((n) => n.toLowerCase())).size, location);
  let position = await nextTagPosition(u);
  for (const name of create) {
    const id = newId();
    const color = defaultTagColor(name);
    const row = await u.trx
      .insertInto('tags')
      .values({ workspace_id: u.workspaceId, id, name, color, position, applies_to: [...TAG_KINDS] })
      .onConflict((oc) => oc.doNothing())
      .returning('id')
      .executeTakeFirst();
    // A repeat of a name created just before (the unique index decides what is the same name).
    if (!row) continue;
    position++;
    u.emit({ type: 'tag.created', data: { tag: (await loadTag(u.trx, u.workspaceId, id))! } });
    await recordAudit(u.trx, ctx, {
      action: 'tag.created',
      entityType: 'tag',
      entityId: id,
      data: { name, color, group_id: null, applies_to: [...TAG_KINDS], created_for: entity },
    });
  }
}

/** Labels locked FOR SHARE (in id order) with their group's exclusive flag. */
/** The labels of these names (ignoring case), share-locked in id order; null where none has the name. */
async function shareTagsByName(u: Unit, names: string[]): Promise<Array<Resolved | null>> {
  if (names.length === 0) return [];
  const values = sql.join(names.map((n, i) => sql`(${n}::text, ${i}::int4)`));
  const rows = await sql<Resolved & { ord: number }>`
    SELECT n.ord, t.id, t.name, t.color, t.group_id, t.archived, t.applies_to, coalesce(g.exclusive, false) AS exclusive
      FROM (VALUES ${values}) AS n (name, ord)
      JOIN tags t ON t.workspace_id = ${u.workspaceId} AND lower(t.name) = lower(n.name)
      LEFT JOIN tag_groups g ON g.workspace_id = t.workspace_id AND g.id = t.group_id
     ORDER BY t.id
       FOR SHARE OF t`.execute(u.trx);
  const out: Array<Resolved | null> = names.map(() => null);
  for (const { ord, ...t } of rows.rows) out[Number(ord)] = t;
  return out;
}

/**
 * In an exclusive group a record holds at most one label: of several named from one group, the
 * last named wins. Repeats collapse to one (in the order first named).
 */
function collapse(list: Resolved[]): Resolved[] {
  const keptGroups = new Set<string>();
  const keptIds = new Set<string>();
  const out: Resolved[] = [];
  for (let i = list.length - 1; i >= 0; i--) {
    const t = list[i]!;
    if (keptIds.has(t.id)) continue;
    if (t.exclusive && t.group_id !== null) {
      if (keptGroups.has(t.group_id)) continue;
      keptGroups.add(t.group_id);
    }
    keptIds.add(t.id);
    out.push(t);
  }
  return out.reverse();
}

/**
 * Changes a record's labels inside the caller's transaction: `tags` replaces them, `add_tags`
 * adds, `remove_tags` removes, all by name (trimmed, case-insensitive). Unknown names create
 * the label (tag.created) unless label_creation is `admins` and the caller is not an admin or a
 * key with settings:write (422 unknown_label). Errors are located at `${at}.tags`,
 * `${at}.add_tags` or `${at}.remove_tags`. Returns the labels added (in the order named) and
 * removed (by name).
 */
export interface ApplyTagsOptions {
  /** Where errors point: `body` (a record's PATCH or POST), `body.patch` (bulk). */
  at?: string;
  /** The caller holds the record's row lock already (a ticket it locked or inserted). */
  locked?: boolean;
  /** The record's labels as the caller read them under that lock (saves reading them again). */
  current?: Array<{ id: string; name: string; color: string; group_id: string | null }>;
}

export async function applyTags(
  u: Unit,
  ctx: ActingContext,
  record: { entity: TagEntity; id: string },
  input: { tags?: string[]; add_tags?: string[]; remove_tags?: string[] },
  known: ApplyTagsOptions = {},
): Promise<{ added: TagRefView[]; removed: TagRefView[] }> {
  const { entity, id: recordId } = record;
  const at = known.at ?? 'body';
  const k = KINDS[entity];
  const replace = input.tags !== undefined;
  if (replace && (input.add_tags !== undefined || input.remove_tags !== undefined)) {
    throw invalid(`${at}.tags`, 'send tags (replaces the labels), or add_tags and remove_tags, not both');
  }
  if (!replace && input.add_tags === undefined && input.remove_tags === undefined) return { added: [], removed: [] };
  const field = replace ? 'tags' : 'add_tags';
  const location = `${at}.${field}`;
  const clean = (names: string[] | undefined, f: string) =>
    (names ?? []).map((n) => cleanTagName(n, `${at}.${f}`, true));
  const named = clean(replace ? input.tags : input.add_tags, field);
  const removeNamed = clean(input.remove_tags, 'remove_tags');

  // The record, locked: concurrent changes of one record's labels queue here.
  if (!isUuid(recordId)) throw notFound(`${k.noun} not found.`);
  if (!known.locked) {
    const record = await sql`
      SELECT 1 FROM ${sql.table(k.records)} WHERE workspace_id = ${u.workspaceId} AND id = ${recordId}
         FOR NO KEY UPDATE`.execute(u.trx);
    if (record.rows.length === 0) throw notFound(`${k.noun} not found.`);
  }

  // Names → labels, share-locked (a label deleted meanwhile is not applied); names nobody has
  // yet become labels (when the caller may create them).
  let found = await shareTagsByName(u, named);
  const missing = named.filter((_, i) => found[i] === null);
  if (missing.length > 0) {
    // Only people and keys create labels by naming them; an automation or the system names
    // labels that exist (a label deleted since is refused here and skipped by the caller).
    if (!isCaller(ctx) || !(await mayCreateLabels(u, ctx))) {
      const message = `no label named ${shown(missing[0]!)}; only admins may create labels in this workspace`;
      throw new ApiError('unknown_label', `${location}: ${message}`, [{ location, message }]);
    }
    await createNamed(u, ctx, entity, missing, location);
    found = await shareTagsByName(u, named);
  }
  const removeIds = (await idsByNames(u, removeNamed)).filter((id): id is string => id !== null);

  const list: Resolved[] = named.map((name, i) => {
    const t = found[i];
    if (!t) throw conflict(`The label ${shown(name)} was deleted meanwhile; try again.`);
    return t;
  });
  if (!replace) {
    const clash = list.find((t) => removeIds.includes(t.id));
    if (clash) throw invalid(`${at}.remove_tags`, `label ${shown(clash.name)} is also in add_tags`);
  }

  const current =
    known.current ??
    (
      await sql<{ id: string; name: string; color: string; group_id: string | null }>`
      SELECT t.id, t.name, t.color, t.group_id
        FROM ${sql.table(k.table)} x
        JOIN tags t ON t.workspace_id = x.workspace_id AND t.id = x.tag_id
       WHERE x.workspace_id = ${u.workspaceId} AND x.${sql.ref(k.column)} = ${recordId}`.execute(u.trx)
    ).rows;
  const currentIds = new Set(current.map((t) => t.id));

  type Held = { id: string; name: string; color: string; group_id: string | null };
  let next: Held[];
  const wanted = collapse(list);
  if (replace) {
    next = wanted;
  } else {
    next = current.filter((t) => !removeIds.includes(t.id));
    for (const t of wanted) {
      if (t.exclusive && t.group_id !== null) next = next.filter((x) => x.group_id !== t.group_id || x.id === t.id);
      if (!next.some((x) => x.id === t.id)) next.push(t);
    }
  }
  const added = wanted.filter((t) => !currentIds.has(t.id) && next.some((x) => x.id === t.id));
  const nextIds = new Set(next.map((t) => t.id));
  const removed = current.filter((t) => !nextIds.has(t.id));

  for (const t of added) {
    if (!t.applies_to.includes(k.kind)) {
      throw invalid(location, `label ${shown(t.name)} does not apply to ${k.kind}`);
    }
    if (t.archived) throw invalid(location, `label ${shown(t.name)} is archived and cannot be applied`);
  }
  if (next.length > MAX_TAGS_PER_RECORD) {
    throw invalid(location, `a record carries at most ${MAX_TAGS_PER_RECORD} labels`);
  }

  const table = sql.table(k.table);
  const col = sql.ref(k.column);
  if (removed.length > 0) {
    await sql`
      DELETE FROM ${table} WHERE workspace_id = ${u.workspaceId} AND ${col} = ${recordId}
         AND tag_id IN (${sql.join(removed.map((t) => t.id))})`.execute(u.trx);
  }
  if (added.length > 0) {
    const rows = sql.join(added.map((t) => sql`(${u.workspaceId}::uuid, ${recordId}::uuid, ${t.id}::uuid)`));
    await sql`INSERT INTO ${table} (workspace_id, ${col}, tag_id) VALUES ${rows} ON CONFLICT DO NOTHING`.execute(u.trx);
  }
  const byName = (a: Held, b: Held) =>
    a.name.toLowerCase().localeCompare(b.name.toLowerCase()) || (a.id < b.id ? -1 : 1);
  return { added: added.map(refOf), removed: [...removed].sort(byName).map(refOf) };
}

/** Each record's labels (TagRefs ordered by name), in one query; every id asked for is in the map. */
export async function tagRefsOf(
  db: Kysely<DB>,
  workspaceId: string,
  entity: TagEntity,
  recordIds: string[],
): Promise<Map<string, TagRefView[]>> {
  const out = new Map<string, TagRefView[]>(recordIds.map((id) => [id.toLowerCase(), []]));
  const ids = [...out.keys()].filter(isUuid);
  if (ids.length === 0) return out;
  const k = KINDS[entity];
  const rows = await sql<{ record_id: string; id: string; name: string; color: string; group_id: string | null }>`
    SELECT x.${sql.ref(k.column)} AS record_id, t.id, t.name, t.color, t.group_id
      FROM ${sql.table(k.table)} x
      JOIN tags t ON t.workspace_id = x.workspace_id AND t.id = x.tag_id
     WHERE x.workspace_id = ${workspaceId} AND x.${sql.ref(k.column)} IN (${sql.join(ids)})
     ORDER BY x.${sql.ref(k.column)}, lower(t.name), t.name, t.id`.execute(db);
  for (const r of rows.rows) {
    const list = out.get(r.record_id) ?? [];
    list.push(refOf(r));
    out.set(r.record_id, list);
  }
  return out;
}

/** The id of the label with this name (trimmed, case-insensitive), for the `tag` list filters. */
export async function tagIdsByName(db: Kysely<DB>, workspaceId: string, name: string): Promise<string | null> {
  const n = name.normalize('NFC').trim();
  if (n === '') return null;
  const row = await db
    .selectFrom('tags')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where(sql<boolean>`lower(name) = lower(${n})`)
    .executeTakeFirst();
  return row?.id ?? null;
}
