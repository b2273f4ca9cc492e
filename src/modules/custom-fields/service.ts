// Custom field definitions: entity, key and type are fixed at creation; name, options,
// required_on_solve, description, position and archived may change. The values live in the
// `fields` column of tickets, contacts and companies; this module owns that column's meaning
// (values.ts validates writes, filters.ts reads it for lists), so removing an option or a field
// clears the stored values here, in the same transaction.
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { uniqueOrConflict } from '../../platform/db/unique.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { recordAudit } from '../audit/service.js';
import type {
  CreateCustomFieldBody,
  CustomField,
  FieldEntity,
  FieldType,
  ListCustomFieldsQuery,
  PatchCustomFieldBody,
  ReorderCustomFieldsBody,
} from './schemas.js';

export type CustomFieldView = Static<typeof CustomField>;
type OptionInput = NonNullable<Static<typeof CreateCustomFieldBody>['options']>[number];
type Option = CustomFieldView['options'][number];

export const MAX_FIELDS_PER_ENTITY = 100;
const ENTITY_ORDER: FieldEntity[] = ['ticket', 'contact', 'company'];
/** The table whose `fields` column holds an entity's values. */
export const ENTITY_TABLE = { ticket: 'tickets', contact: 'contacts', company: 'companies' } as const;
const UNIQUE = { custom_fields_workspace_id_entity_key_key: 'A field with this key already exists for this entity.' };
const SELECT_TYPES: FieldType[] = ['select', 'multi_select'];

/** A definition as the value and filter code needs it. */
export interface FieldDef {
  id: string;
  key: string;
  type: FieldType;
  options: Option[];
  archived: boolean;
  required_on_solve: boolean;
  name: string;
}

/** Lower-case ASCII slug: letters and digits, `sep` between words. */
export function slugOf(text: string, sep: '_' | '-'): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, sep)
    .replace(new RegExp(`^\\${sep}+|\\${sep}+$`, 'g'), '');
}

function keyFromName(name: string): string {
  let key = slugOf(name, '_').slice(0, 40).replace(/_+$/, '');
  if (key !== '' && !/^[a-z]/.test(key)) key = `f_${key}`.slice(0, 40);
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(key)) throw invalid('body.key', 'cannot be made from the name; give a key');
  return key;
}

function cleanName(name: string): string {
  const n = name.trim();
  if (n === '') throw invalid('body.name', 'must not be blank');
  if (/[<>]/.test(n)) throw invalid('body.name', 'must not contain < or >');
  return n;
}

function cleanOptions(type: FieldType, input: OptionInput[] | undefined, location = 'body.options'): Option[] {
  if (!SELECT_TYPES.includes(type)) {
    if (input !== undefined && input.length > 0) throw invalid(location, `a ${type} field has no options`);
    return [];
  }
  const out: Option[] = [];
  input?.forEach((o, i) => {
    const label = o.label.trim();
    if (label === '') throw invalid(`${location}.${i}.label`, 'must not be blank');
    const id = o.id ?? slugOf(label, '-').slice(0, 40);
    if (id === '') throw invalid(`${location}.${i}.id`, 'cannot be made from the label; give an id');
    if (out.some((x) => x.id === id)) throw invalid(`${location}.${i}.id`, `repeats the option id ${id}`);
    out.push({ id, label, color: o.color ?? 'gray' });
  });
  return out;
}

function fieldQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('custom_fields')
    .select([
      'id',
      'entity',
      'key',
      'name',
      'type',
      'options',
      'required_on_solve',
      'description',
      'position',
      'archived',
      'created_at',
      'updated_at',
    ])
    .where('workspace_id', '=', workspaceId);
}
type FieldRow = Awaited<ReturnType<ReturnType<typeof fieldQuery>['executeTakeFirstOrThrow']>>;

const present = (r: FieldRow): CustomFieldView => ({
  id: r.id,
  entity: r.entity,
  key: r.key,
  name: r.name,
  type: r.type as FieldType,
  options: (r.options ?? []) as Option[],
  required_on_solve: r.required_on_solve,
  description: r.description,
  position: r.position,
  archived: r.archived,
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

/** Every definition of an entity (archived ones too), by key. */
export async function fieldDefs(
  db: Kysely<DB>,
  workspaceId: string,
  entity: FieldEntity,
): Promise<Map<string, FieldDef>> {
  const rows = await fieldQuery(db, workspaceId)
    .where('entity', '=', entity)
    .orderBy('position')
    .orderBy('created_at')
    .execute();
  return new Map(
    rows.map((r) => [
      r.key,
      {
        id: r.id,
        key: r.key,
        type: r.type as FieldType,
        options: (r.options ?? []) as Option[],
        archived: r.archived,
        required_on_solve: r.required_on_solve,
        name: r.name,
      },
    ]),
  );
}

const defsOfUnit = new WeakMap<Unit, Map<FieldEntity, Promise<Map<string, FieldDef>>>>();

/**
 * fieldDefs read once per write (a ticket's change, its automations and their set_field
 * actions share one read): definitions change only through their own routes' writes.
 */
export function unitFieldDefs(u: Unit, entity: FieldEntity): Promise<Map<string, FieldDef>> {
  let byEntity = defsOfUnit.get(u);
  if (!byEntity) {
    byEntity = new Map();
    defsOfUnit.set(u, byEntity);
  }
  let defs = byEntity.get(entity);
  if (!defs) {
    defs = fieldDefs(u.trx, u.workspaceId, entity);
    byEntity.set(entity, defs);
  }
  return defs;
}

export async function listCustomFields(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListCustomFieldsQuery>,
): Promise<{ data: CustomFieldView[] }> {
  let query = fieldQuery(deps.database.db, ctx.workspaceId);
  if (q.entity) query = query.where('entity', '=', q.entity);
  if (q.archived === 'true' || q.archived === 'false') query = query.where('archived', '=', q.archived === 'true');
  const rows = await query.orderBy('position').orderBy('created_at').orderBy('id').execute();
  rows.sort((a, b) => ENTITY_ORDER.indexOf(a.entity) - ENTITY_ORDER.indexOf(b.entity));
  return { data: rows.map(present) };
}

async function loadField(db: Kysely<DB>, workspaceId: string, id: string): Promise<CustomFieldView | null> {
  if (!isUuid(id)) return null;
  const row = await fieldQuery(db, workspaceId).where('id', '=', id.toLowerCase()).executeTakeFirst();
  return row ? present(row) : null;
}

export async function getCustomField(deps: Deps, ctx: RequestContext, id: string): Promise<CustomFieldView> {
  const f = await loadField(deps.database.db, ctx.workspaceId, id);
  if (!f) throw notFound('Custom field not found.');
  return f;
}

export async function createCustomField(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateCustomFieldBody>,
): Promise<CustomFieldView> {
  const name = cleanName(input.name);
  const key = input.key ?? keyFromName(name);
  const options = cleanOptions(input.type, input.options);
  if (input.required_on_solve && input.entity !== 'ticket') {
    throw invalid('body.required_on_solve', 'only ticket fields can be required to solve');
  }
  const id = newId();
  return uniqueOrConflict(UNIQUE, () =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      // One writer at a time per workspace and entity: the count and the end position hold.
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`custom_fields:${ctx.workspaceId}:${input.entity}`}, 0))`.execute(
        u.trx,
      );
      const { n, last } = await u.trx
        .selectFrom('custom_fields')
        .select([sql<number>`count(*)::int`.as('n'), sql<number>`coalesce(max(position), -1)::int`.as('last')])
        .where('workspace_id', '=', ctx.workspaceId)
        .where('entity', '=', input.entity)
        .executeTakeFirstOrThrow();
      if (n >= MAX_FIELDS_PER_ENTITY) {
        throw invalid('body.entity', `a workspace has at most ${MAX_FIELDS_PER_ENTITY} fields per entity`);
      }
      await u.trx
        .insertInto('custom_fields')
        .values({
          workspace_id: ctx.workspaceId,
          id,
          entity: input.entity,
          key,
          name,
          type: input.type,
          options: JSON.stringify(options),
          required_on_solve: input.required_on_solve ?? false,
          description: input.description?.trim() ?? '',
          position: input.position ?? last + 1,
        })
        .execute();
      const view = (await loadField(u.trx, ctx.workspaceId, id))!;
      u.emit({ type: 'custom_field.created', data: { custom_field: view } });
      await recordAudit(u.trx, ctx, {
        action: 'custom_field.created',
        entityType: 'custom_field',
        entityId: id,
        data: { entity: view.entity, key, type: view.type, name },
      });
      return view;
    }),
  );
}

async function lockField(u: Unit, id: string): Promise<CustomFieldView> {
  if (!isUuid(id)) throw notFound('Custom field not found.');
  const row = await fieldQuery(u.trx, u.workspaceId).where('id', '=', id.toLowerCase()).forUpdate().executeTakeFirst();
  if (!row) throw notFound('Custom field not found.');
  return present(row);
}

/** Removes option ids from the stored values of a select or multi-select field. */
async function clearOptions(u: Unit, f: CustomFieldView, removed: string[]): Promise<void> {
  if (removed.length === 0) return;
  const table = sql.table(ENTITY_TABLE[f.entity]);
  const ids = sql`${JSON.stringify(removed)}::jsonb`;
  if (f.type === 'select') {
    await sql`UPDATE ${table} SET fields = fields - ${f.key}
               WHERE workspace_id = ${u.workspaceId} AND ${ids} @> jsonb_build_array(fields -> ${f.key})`.execute(
      u.trx,
    );
    return;
  }
  await sql`UPDATE ${table} SET fields = CASE
               WHEN kept = '[]'::jsonb THEN fields - ${f.key}
               ELSE jsonb_set(fields, ARRAY[${f.key}], kept) END
             FROM (SELECT id AS rid, coalesce((SELECT jsonb_agg(v) FROM jsonb_array_elements(fields -> ${f.key}) v
                                                WHERE NOT ${ids} @> jsonb_build_array(v)), '[]'::jsonb) AS kept
                     FROM ${table}
                    WHERE workspace_id = ${u.workspaceId} AND jsonb_typeof(fields -> ${f.key}) = 'array') k
            WHERE workspace_id = ${u.workspaceId} AND id = k.rid
              AND jsonb_array_length(fields -> ${f.key}) <> jsonb_array_length(kept)`.execute(u.trx);
}

export async function updateCustomField(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  input: Static<typeof PatchCustomFieldBody>,
): Promise<CustomFieldView> {
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await lockField(u, id);
    const set: Record<string, unknown> = {};
    if (input.name !== undefined) {
      const name = cleanName(input.name);
      if (name !== before.name) set.name = name;
    }
    if (input.description !== undefined && input.description.trim() !== before.description) {
      set.description = input.description.trim();
    }
    if (input.position !== undefined && input.position !== before.position) set.position = input.position;
    if (input.archived !== undefined && input.archived !== before.archived) set.archived = input.archived;
    if (input.required_on_solve !== undefined && input.required_on_solve !== before.required_on_solve) {
      if (input.required_on_solve && before.entity !== 'ticket') {
        throw invalid('body.required_on_solve', 'only ticket fields can be required to solve');
      }
      set.required_on_solve = input.required_on_solve;
    }
    let removed: string[] = [];
    if (input.options !== undefined) {
      const options = cleanOptions(before.type, input.options);
      if (JSON.stringify(options) !== JSON.stringify(before.options)) {
        set.options = JSON.stringify(options);
        removed = before.options.filter((o) => !options.some((n) => n.id === o.id)).map((o) => o.id);
      }
    }
    if (Object.keys(set).length === 0) return before;
    await u.trx
      .updateTable('custom_fields')
      .set({ ...set, updated_at: new Date() })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', before.id)
      .execute();
    await clearOptions(u, before, removed);
    const view = (await loadField(u.trx, ctx.workspaceId, before.id))!;
    u.emit({ type: 'custom_field.updated', data: { custom_field: view } });
    await recordAudit(u.trx, ctx, {
      action: 'custom_field.updated',
      entityType: 'custom_field',
      entityId: before.id,
      data: { entity: view.entity, key: view.key, changes: Object.keys(set), removed_options: removed },
    });
    return view;
  });
}

export async function deleteCustomField(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const f = await lockField(u, id);
    await u.trx
      .deleteFrom('custom_fields')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', f.id)
      .execute();
    // Its values go from every record (no event per record: custom_field.deleted says it all).
    await sql`UPDATE ${sql.table(ENTITY_TABLE[f.entity])} SET fields = fields - ${f.key}
               WHERE workspace_id = ${ctx.workspaceId} AND fields ? ${f.key}`.execute(u.trx);
    u.emit({ type: 'custom_field.deleted', data: { custom_field_id: f.id, entity: f.entity, key: f.key } });
    await recordAudit(u.trx, ctx, {
      action: 'custom_field.deleted',
      entityType: 'custom_field',
      entityId: f.id,
      data: { entity: f.entity, key: f.key, name: f.name },
    });
  });
}

/** Positions of one entity's fields become their index in `ids` (every field of the entity, once). */
export async function reorderCustomFields(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof ReorderCustomFieldsBody>,
): Promise<{ data: CustomFieldView[] }> {
  const ids = input.ids.map((i) => i.toLowerCase());
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const rows = await u.trx
      .selectFrom('custom_fields')
      .select('id')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('entity', '=', input.entity)
      .forUpdate()
      .execute();
    const have = new Set(rows.map((r) => r.id));
    if (ids.length !== have.size || ids.some((i) => !have.has(i))) {
      throw invalid('body.ids', `must list every ${input.entity} field exactly once`);
    }
    const moved: string[] = [];
    for (const [position, id] of ids.entries()) {
      const r = await u.trx
        .updateTable('custom_fields')
        .set({ position, updated_at: new Date() })
        .where('workspace_id', '=', ctx.workspaceId)
        .where('id', '=', id)
        .where('position', '<>', position)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) > 0) moved.push(id);
    }
    if (moved.length === 0) return;
    const after = await fieldQuery(u.trx, ctx.workspaceId).where('id', 'in', moved).execute();
    for (const r of after) u.emit({ type: 'custom_field.updated', data: { custom_field: present(r) } });
    await recordAudit(u.trx, ctx, {
      action: 'custom_field.reordered',
      entityType: 'custom_field',
      entityId: null,
      data: { entity: input.entity, ids },
    });
  });
  return listCustomFields(deps, ctx, { entity: input.entity });
}
