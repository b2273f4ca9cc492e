// SQL fragments over the label tables for the lists of the records that carry labels (tickets,
// contacts, companies), so those modules embed them in their own queries without touching the
// tables themselves: a record's TagRefs as JSON, and "has this label".
import type { Static } from '@sinclair/typebox';
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { TagRef } from './schemas.js';

type TagRefView = Static<typeof TagRef>;

const JOIN = {
  ticket: { table: 'ticket_tags', column: 'ticket_id' },
  contact: { table: 'contact_tags', column: 'contact_id' },
  company: { table: 'company_tags', column: 'company_id' },
} as const;
type Entity = keyof typeof JOIN;

/**
 * The record's labels as a JSON array of TagRefs, ordered by name. `alias` is the record
 * table's alias in the outer query (its workspace_id and id are used).
 */
export function tagRefsJson(entity: Entity, alias: string): RawBuilder<TagRefView[]> {
  const j = JOIN[entity];
  return sql<TagRefView[]>`(
    SELECT coalesce(jsonb_agg(jsonb_build_object('id', tg.id, 'name', tg.name, 'color', tg.color, 'group_id', tg.group_id)
                              ORDER BY lower(tg.name), tg.name, tg.id), '[]'::jsonb)
      FROM ${sql.table(j.table)} x
      JOIN tags tg ON tg.workspace_id = x.workspace_id AND tg.id = x.tag_id
     WHERE x.workspace_id = ${sql.ref(`${alias}.workspace_id`)} AND x.${sql.ref(j.column)} = ${sql.ref(`${alias}.id`)})`;
}

/** The record carries the label `tagId` (null: a name no label has, so nothing matches). */
export function hasTag(entity: Entity, alias: string, tagId: string | null): RawBuilder<SqlBool> {
  if (tagId === null) return sql<SqlBool>`false`;
  const j = JOIN[entity];
  return sql<SqlBool>`EXISTS (SELECT 1 FROM ${sql.table(j.table)} x
     WHERE x.workspace_id = ${sql.ref(`${alias}.workspace_id`)} AND x.${sql.ref(j.column)} = ${sql.ref(`${alias}.id`)}
       AND x.tag_id = ${tagId})`;
}
