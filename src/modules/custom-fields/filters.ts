// Reading custom field values in lists: `field.<key>=v` and `field.<key>[op]=v` filters with
// exactly the operators of the spec's table per type, and `sort=field.<key>`. Equality tests
// are written as `fields @> {...}` so the GIN (jsonb_path_ops) index answers them; comparisons
// compare jsonb values (never casts, which could fail on another workspace's value of another
// type). "Not" operators (ne, none, not_contains) include records without a value.
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';
import type { FieldEntity, FieldType } from './schemas.js';
import { type FieldDef, fieldDefs } from './service.js';
import { isRealDate } from './values.js';

/** Operators per type; the first is the default (`field.<key>=v`). */
export const OPS_BY_TYPE: Record<FieldType, string[]> = {
  text: ['eq', 'ne', 'contains', 'not_contains', 'set', 'not_set'],
  long_text: ['eq', 'ne', 'contains', 'not_contains', 'set', 'not_set'],
  url: ['eq', 'ne', 'contains', 'not_contains', 'set', 'not_set'],
  email: ['eq', 'ne', 'contains', 'not_contains', 'set', 'not_set'],
  number: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'set', 'not_set'],
  date: ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'set', 'not_set'],
  checkbox: ['eq', 'ne', 'set', 'not_set'],
  select: ['any', 'eq', 'ne', 'none', 'set', 'not_set'],
  user: ['any', 'eq', 'ne', 'none', 'set', 'not_set'],
  multi_select: ['any', 'all', 'none', 'eq', 'ne', 'set', 'not_set'],
};
const SORTABLE: FieldType[] = ['text', 'number', 'date', 'checkbox', 'select'];

export interface FieldFilter {
  key: string;
  op: string | undefined;
  value: unknown;
  /** Where an error points: the query parameter, or the view's filter entry. */
  location: string;
}

/** The field filters among a list's query parameters. */
export function fieldParams(query: Record<string, unknown>): FieldFilter[] {
  const out: FieldFilter[] = [];
  for (const [name, value] of Object.entries(query)) {
    const m = /^field\.([a-z][a-z0-9_]{0,39})(?:\[([a-z_]+)\])?$/.exec(name);
    if (m) out.push({ key: m[1]!, op: m[2], value, location: `query.${name}` });
  }
  return out;
}

const lit = (v: unknown) => sql`${JSON.stringify(v)}::jsonb`;
const listOf = (v: unknown): string[] =>
  (Array.isArray(v) ? v.map(String) : String(v ?? '').split(',')).map((s) => s.trim()).filter((s) => s !== '');

/**
 * The predicate of one filter on `col` (a record's fields column), or a 422 at the filter. Also
 * checks and evaluates automations' field conditions (src/modules/automations).
 */
export function predicate(
  col: RawBuilder<unknown>,
  def: FieldDef,
  f: FieldFilter,
  me: string | null,
): RawBuilder<SqlBool> {
  const allowed = OPS_BY_TYPE[def.type];
  const op = f.op ?? allowed[0]!;
  if (!allowed.includes(op)) {
    throw invalid(f.location, `a ${def.type} field takes ${allowed.join(', ')}, not ${op}`);
  }
  const k = def.key;
  const has = (v: unknown) => sql<SqlBool>`${col} @> ${lit({ [k]: v })}`;
  if (op === 'set') return sql<SqlBool>`(${col} -> ${k}) IS NOT NULL`;
  if (op === 'not_set') return sql<SqlBool>`(${col} -> ${k}) IS NULL`;
  const text = typeof f.value === 'string' ? f.value : f.value === undefined ? '' : String(f.value);
  const bad = (why: string) => invalid(f.location, why);

  switch (def.type) {
    case 'text':
    case 'long_text':
    case 'url':
    case 'email': {
      const v = text.trim();
      if (v === '') throw bad('needs a value');
      const pattern = `%${v.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const val = sql`(${col} ->> ${k})`;
      if (op === 'eq') return sql<SqlBool>`lower(${val}) = lower(${v})`;
      if (op === 'ne') return sql<SqlBool>`(${val} IS NULL OR lower(${val}) <> lower(${v}))`;
      if (op === 'contains') return sql<SqlBool>`${val} ILIKE ${pattern}`;
      return sql<SqlBool>`(${val} IS NULL OR ${val} NOT ILIKE ${pattern})`;
    }
    case 'number':
    case 'date': {
      let v: number | string;
      if (def.type === 'number') {
        v = typeof f.value === 'number' ? f.value : Number(text);
        if (text.trim() === '' || !Number.isFinite(v)) throw bad('must be a number');
      } else {
        v = text.trim();
        if (!isRealDate(v)) throw bad('must be a date written YYYY-MM-DD');
      }
      if (op === 'eq') return has(v);
      if (op === 'ne') return sql<SqlBool>`NOT (${has(v)})`;
      const cmp = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op as 'gt']!;
      const kind = def.type === 'number' ? 'number' : 'string';
      return sql<SqlBool>`(jsonb_typeof(${col} -> ${k}) = ${kind} AND (${col} -> ${k}) ${sql.raw(cmp)} ${lit(v)})`;
    }
    case 'checkbox': {
      const v = typeof f.value === 'boolean' ? f.value : text === 'true' ? true : text === 'false' ? false : null;
      if (v === null) throw bad('must be true or false');
      return op === 'eq' ? has(v) : sql<SqlBool>`NOT (${has(v)})`;
    }
    case 'select':
    case 'user': {
      let ids = listOf(f.value);
      if (ids.length === 0) throw bad('needs a value');
      if (def.type === 'user') {
        ids = ids.map((id) => {
          if (id === 'me') {
            if (me === null) throw bad('me needs a signed-in person, not an API key');
            return me;
          }
          if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id))
            throw bad(`${id} is not a user id`);
          return id.toLowerCase();
        });
      } else {
        const unknown = ids.find((id) => !def.options.some((o) => o.id === id));
        if (unknown !== undefined) throw bad(`has no option ${unknown}`);
      }
      if ((op === 'eq' || op === 'ne') && ids.length !== 1) throw bad(`${op} takes one value`);
      const any = sql<SqlBool>`(${sql.join(
        ids.map((id) => has(id)),
        sql` OR `,
      )})`;
      return op === 'any' || op === 'eq' ? any : sql<SqlBool>`NOT ${any}`;
    }
    case 'multi_select': {
      const ids = [...new Set(listOf(f.value))];
      if (ids.length === 0) throw bad('needs a value');
      const unknown = ids.find((id) => !def.options.some((o) => o.id === id));
      if (unknown !== undefined) throw bad(`has no option ${unknown}`);
      const any = sql<SqlBool>`(${sql.join(
        ids.map((id) => has([id])),
        sql` OR `,
      )})`;
      const all = has(ids);
      const exactly = sql<SqlBool>`(${all} AND jsonb_array_length(${col} -> ${k}) = ${ids.length})`;
      if (op === 'any') return any;
      if (op === 'none') return sql<SqlBool>`NOT ${any}`;
      if (op === 'all') return all;
      if (op === 'eq') return exactly;
      return sql<SqlBool>`NOT ${exactly}`;
    }
  }
}

/** Predicates for a list's field filters; 422 naming the parameter for an unknown key or op. */
export async function fieldFilterPredicates(
  db: Kysely<DB>,
  ctx: RequestContext,
  entity: FieldEntity,
  col: RawBuilder<unknown>,
  filters: FieldFilter[],
  defs?: Map<string, FieldDef>,
): Promise<RawBuilder<SqlBool>[]> {
  if (filters.length === 0) return [];
  const known = defs ?? (await fieldDefs(db, ctx.workspaceId, entity));
  const me = ctx.actor.kind === 'member' ? ctx.actor.userId : null;
  return filters.map((f) => {
    const def = known.get(f.key);
    if (!def) throw invalid(f.location, `${f.key} is not a ${entity} field of this workspace`);
    return predicate(col, def, f, me);
  });
}

/** For saved views: the same checks, without a query (`me` is allowed for user fields). */
export async function checkFieldFilters(
  db: Kysely<DB>,
  workspaceId: string,
  entity: FieldEntity,
  filters: Array<{ key: string; op: string; value: unknown }>,
  location: string,
): Promise<void> {
  if (filters.length === 0) return;
  const defs = await fieldDefs(db, workspaceId, entity);
  filters.forEach((f, i) => {
    const loc = `${location}.${i}`;
    const def = defs.get(f.key);
    if (!def) throw invalid(`${loc}.key`, `${f.key} is not a ${entity} field of this workspace`);
    predicate(sql`'{}'::jsonb`, def, { key: f.key, op: f.op, value: f.value, location: loc }, 'me-placeholder');
  });
}

/** A sort on a field: its expression and how a cursor carries its value. Records without a value sort lowest. */
export function fieldSort(
  col: RawBuilder<unknown>,
  def: FieldDef | undefined,
  location: string,
): { expr: RawBuilder<unknown>; kind: 'text' | 'jsonb' | 'int' } {
  if (!def) throw invalid(location, 'is not a field of this workspace');
  if (!SORTABLE.includes(def.type)) throw invalid(location, `a ${def.type} field cannot be sorted on`);
  const k = def.key;
  if (def.type === 'text') return { expr: sql`coalesce(lower(${col} ->> ${k}), '')`, kind: 'text' };
  if (def.type === 'select') {
    const cases = def.options.map((o, i) => sql`WHEN ${o.id} THEN ${i + 1}`);
    return {
      expr: cases.length === 0 ? sql`0` : sql`(CASE ${col} ->> ${k} ${sql.join(cases, sql` `)} ELSE 0 END)::int4`,
      kind: 'int',
    };
  }
  return { expr: sql`coalesce(${col} -> ${k}, 'null'::jsonb)`, kind: 'jsonb' };
}

/**
 * Text fields' values for `q` (a part of any text, long text, URL or email field's value
 * matches). The statement reads the workspace's definitions itself, so its SQL is the same
 * whatever fields the workspace has (and q needs no read of them first).
 */
export function textFieldMatch(col: RawBuilder<unknown>, workspaceId: string, entity: string, pattern: string) {
  return sql<SqlBool>`EXISTS (SELECT 1 FROM custom_fields d
      WHERE d.workspace_id = ${workspaceId} AND d.entity = ${entity}
        AND d.type IN ('text', 'long_text', 'url', 'email') AND (${col} ->> d.key) ILIKE ${pattern})`;
}
