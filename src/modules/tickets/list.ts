// GET /v1/tickets: filters, sorts and keyset pages; GET /v1/tickets/counts.
//
// Every sort is a list of keys that all run in one direction and end in the id, so a page
// boundary is one row comparison `(k1, k2, id) < (v1, v2, id0)` that PostgreSQL answers from
// the matching index (migration 0007) without skipping or repeating rows when tickets are
// added meanwhile. Filters are plain predicates added to the same query: the custom field
// filters of the labels-and-fields issue plug in as more predicates (`FILTERS` below).
//
// Text search (`q`): PostgreSQL full-text search ('simple' configuration, every word of q as a
// prefix, all words required) over the subject and the message bodies, plus a case-insensitive
// substring of the contact's name or email, plus the ticket number when q is a number. With q
// and no explicit sort, results are ranked: number match, then subject rank, then message
// rank, then contact match.
import type { Static } from '@sinclair/typebox';
import {
  CompiledQuery,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type RawBuilder,
  type SelectExpression,
  type SelectQueryBuilder,
  type SqlBool,
  sql,
} from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Deps } from '../../deps.js';
import { fromMicros, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';
import type { KeyValue } from '../../platform/http/pagination.js';
import { fieldFilterPredicates, fieldParams, fieldSort } from '../custom-fields/filters.js';
import { type FieldDef, fieldDefs } from '../custom-fields/service.js';
import { tagIdsByName } from '../tags/records.js';
import { hasTag } from '../tags/sql.js';
import { joinedTeamVisible, notInHiddenTeams } from '../teams/access.js';
import { type ViewFilters, viewFiltersOf } from '../views/service.js';
import { TICKET_VERSION, withTicketJson } from './json-cache.js';
import { ticketFrom, ticketScope } from './queries.js';
import type { ListTicketsQuery } from './schemas.js';
import { anyMatch, type TextSearch, textSearch, tiers } from './search.js';

type Query = Static<typeof ListTicketsQuery>;
type EB = ExpressionBuilder<DB & { t: DB['tickets'] }, 't'>;

/** What a list reads per ticket: the Ticket's JSON and the values its cursor may need. */
interface ListRow {
  /** The Ticket's JSON, UTF-8 (absent only for a ticket removed while its page was read). */
  json: Buffer | undefined;
  /** The version of that JSON (TICKET_VERSION), which picks it from the cache. */
  v: string;
  id: string;
  last_message_us: number;
  created_us: number;
  due_us: number;
  priority_rank: number;
  severity_rank: number;
  rank?: number;
  sort_value?: KeyValue;
}

/** A sort key: its SQL, how its cursor value is read back, and where the row keeps it. */
interface Key {
  expr: RawBuilder<unknown>;
  kind: 'micros' | 'int' | 'due' | 'id' | 'text' | 'jsonb';
  of: (r: ListRow) => KeyValue;
}

const K = {
  lastMessage: { expr: sql`t.last_message_at`, kind: 'micros', of: (r) => r.last_message_us } as Key,
  created: { expr: sql`t.created_at`, kind: 'micros', of: (r) => r.created_us } as Key,
  priority: { expr: sql`t.priority_rank`, kind: 'int', of: (r) => r.priority_rank } as Key,
  severity: { expr: sql`t.severity_rank`, kind: 'int', of: (r) => r.severity_rank } as Key,
  // Infinity (no deadline) travels as null in the cursor.
  due: {
    expr: sql`coalesce(t.due_at, 'infinity'::timestamptz)`,
    kind: 'due',
    of: (r) => (Number.isFinite(r.due_us) ? r.due_us : null),
  } as Key,
  id: { expr: sql`t.id`, kind: 'id', of: (r) => r.id } as Key,
  // Relevance (q without a sort): the tier of the match, a constant of each tier's query.
  rank: { expr: sql`rank`, kind: 'int', of: (r) => r.rank ?? 0 } as Key,
};

/** Sort name → keys and default direction (the order parameter flips it). */
const SORTS: Record<string, { keys: Key[]; dir: 'asc' | 'desc' }> = {
  last_message_at: { keys: [K.lastMessage, K.id], dir: 'desc' },
  created_at: { keys: [K.created, K.id], dir: 'desc' },
  // desc: urgent first; severity desc: sev1 first, none last (severity_rank sev1 = 4, none = 0).
  priority: { keys: [K.priority, K.lastMessage, K.id], dir: 'desc' },
  severity: { keys: [K.severity, K.lastMessage, K.id], dir: 'desc' },
  // asc: the nearest deadline first, tickets without one last.
  due: { keys: [K.due, K.id], dir: 'asc' },
};

function cursorValue(k: Key, v: KeyValue): RawBuilder<unknown> {
  const bad = () => invalid('query.cursor', 'is not a cursor of this list; start again without one');
  switch (k.kind) {
    case 'micros':
      if (typeof v !== 'number') throw bad();
      return fromMicros(v);
    case 'due':
      if (v === null) return sql`'infinity'::timestamptz`;
      if (typeof v !== 'number') throw bad();
      return fromMicros(v);
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v)) throw bad();
      return sql`${v}::int4`;
    case 'id':
      if (typeof v !== 'string') throw bad();
      return sql`${v}::uuid`;
    case 'text':
      if (typeof v !== 'string') throw bad();
      return sql`${v}::text`;
    case 'jsonb':
      return sql`${JSON.stringify(v)}::jsonb`;
  }
}

const csv = (s: string | undefined) => (s === undefined ? null : [...new Set(s.split(','))]);

/** Predicates of the filters; each returns null when its parameter is absent. */
type Filter = (eb: EB) => Expression<SqlBool>;

/** What every list keeps to: live tickets, spam or not, and no private team the caller is not in. */
export function baseFilters(q: Query, teams: Filter | null): Filter[] {
  const out: Filter[] = [];
  out.push((eb) => eb('t.deleted_at', 'is', null));
  // A literal: a boolean parameter would make the prepared statement's generic plan expect half
  // the tickets to match (see pageLimit).
  out.push(() => (q.spam === true ? sql<SqlBool>`t.spam` : sql<SqlBool>`NOT t.spam`));
  if (teams) out.push(teams);
  return out;
}

/** Private teams' tickets the caller may see, given the private team ids they may not (teams/access.ts). */
export const notHidden = (hidden: string[]): Filter | null => asFilter(notInHiddenTeams(hidden));

/** The same rule inside ticketQuery, which joins the ticket's team as `tm`: no extra statement. */
const teamVisible = (ctx: RequestContext): Filter | null => asFilter(joinedTeamVisible(ctx));

const asFilter = (e: Expression<SqlBool> | null): Filter | null => (e === null ? null : () => e);

/**
 * The predicates of a query's filters (the list's own parameters, or a saved view's). `tagId` is
 * the label `q.tag` names (null: no such label, so nothing matches).
 */
function filters(ctx: RequestContext, q: Query, tagId: string | null, search: TextSearch | null, at = 'query') {
  const out: Filter[] = [];
  if (q.tag !== undefined) out.push(() => hasTag('ticket', 't', tagId));
  const statuses = csv(q.status);
  if (statuses) out.push((eb) => eb('t.status', 'in', statuses));
  const priorities = csv(q.priority);
  if (priorities) out.push((eb) => eb('t.priority', 'in', priorities));
  const severities = csv(q.severity);
  if (severities) {
    const named = severities.filter((s) => s !== 'none');
    const none = severities.includes('none');
    out.push((eb) =>
      eb.or([
        ...(named.length > 0 ? [eb('t.severity', 'in', named)] : []),
        ...(none ? [eb('t.severity', 'is', null)] : []),
      ]),
    );
  }
  const channels = csv(q.channel);
  if (channels) out.push((eb) => eb('t.channel', 'in', channels));
  if (q.assignee !== undefined) {
    if (q.assignee === 'none') out.push((eb) => eb('t.assignee_id', 'is', null));
    else if (q.assignee === 'me') {
      if (ctx.actor.kind !== 'member') throw invalid(`${at}.assignee`, 'me needs a signed-in person, not an API key');
      const me = ctx.actor.userId;
      out.push((eb) => eb('t.assignee_id', '=', me));
    } else {
      const id = q.assignee.toLowerCase();
      out.push((eb) => eb('t.assignee_id', '=', id));
    }
  }
  for (const col of ['team_id', 'mailbox_id', 'contact_id'] as const) {
    const v = q[col]?.toLowerCase();
    if (v !== undefined) out.push((eb) => eb(`t.${col}`, '=', v));
  }
  const followUpOf = q.follow_up_of?.toLowerCase();
  if (followUpOf !== undefined) {
    // The partial index tickets_follow_up_of (migration 0037) matches this expression.
    out.push(() => sql<SqlBool>`(t.custom ? 'follow_up_of' AND t.custom -> 'follow_up_of' ->> 'id' = ${followUpOf})`);
  }
  if (search) out.push(() => anyMatch(search));
  return out;
}

/** A saved view's filters as list parameters (lists become comma-separated, like the query string). */
function viewAsQuery(v: ViewFilters): Query {
  return {
    ...(v.status ? { status: v.status.join(',') } : {}),
    ...(v.priority ? { priority: v.priority.join(',') } : {}),
    ...(v.assignee ? { assignee: v.assignee } : {}),
    ...(v.team_id ? { team_id: v.team_id } : {}),
    ...(v.mailbox_id ? { mailbox_id: v.mailbox_id } : {}),
    ...(v.tag ? { tag: v.tag } : {}),
    ...(v.channel ? { channel: v.channel } : {}),
    ...(v.q ? { q: v.q } : {}),
  };
}

/**
 * Every predicate of the list's parameters, its field filters and, with view_id, the view's
 * filters too (both must hold). 422 at query.view_id for a view the caller cannot see.
 */
export async function criteria(
  deps: Deps,
  ctx: RequestContext,
  q: Query,
  defs: Map<string, FieldDef>,
  ownSearch: TextSearch | null = null,
): Promise<Filter[]> {
  const db = deps.database.db;
  const tagOf = async (name: string | undefined) =>
    name === undefined ? null : tagIdsByName(db, ctx.workspaceId, name);
  const searchOf = (text: string | undefined) =>
    text === undefined ? null : textSearch(db, ctx.workspaceId, text, deps.config.searchWalkAbove);
  // The list's own q: a filter, unless the caller ranks by it (ownSearch given).
  const out = filters(ctx, q, await tagOf(q.tag), ownSearch ? null : await searchOf(q.q));
  const own = await fieldFilterPredicates(db, ctx, 'ticket', sql`t.fields`, fieldParams(q), defs);
  out.push(...own.map((p) => () => p));
  if (q.view_id !== undefined) {
    const view = await viewFiltersOf(db, ctx, q.view_id);
    if (!view) throw invalid('query.view_id', 'no such view (or it is not yours)');
    const vq = viewAsQuery(view);
    const vdefs = defs.size > 0 || view.fields?.length ? await fieldDefs(db, ctx.workspaceId, 'ticket') : defs;
    out.push(...filters(ctx, vq, await tagOf(vq.tag), await searchOf(vq.q), 'view'));
    const viewFields = (view.fields ?? []).map((f, i) => ({
      key: f.key,
      op: f.op,
      value: f.value,
      location: `query.view_id (view filter fields.${i})`,
    }));
    const preds = await fieldFilterPredicates(db, ctx, 'ticket', sql`t.fields`, viewFields, vdefs);
    out.push(...preds.map((p) => () => p));
  }
  return out;
}

/** The sort, the list's identity (what its cursors are bound to) and the cursor's position. */
function plan(deps: Deps, ctx: RequestContext, q: Query, defs: Map<string, FieldDef>) {
  const relevance = q.q !== undefined && q.sort === undefined;
  const sortName = q.sort ?? 'last_message_at';
  let spec: { keys: Key[]; dir: 'asc' | 'desc' };
  if (relevance) {
    spec = { keys: [K.rank, K.lastMessage, K.id], dir: 'desc' };
  } else if (sortName.startsWith('field.')) {
    // A field sort runs ascending by default; records without a value sort lowest.
    const f = fieldSort(sql`t.fields`, defs.get(sortName.slice(6)), 'query.sort');
    spec = { keys: [{ expr: f.expr, kind: f.kind, of: (r) => r.sort_value ?? null }, K.id], dir: 'asc' };
  } else {
    spec = SORTS[sortName]!;
  }
  const dir = q.order ?? spec.dir;
  const { cursor: _c, limit: _l, ...shape } = q;
  const me = ctx.actor.kind === 'member' ? ctx.actor.userId : null;
  const list = `tickets:${JSON.stringify([ctx.workspaceId, me, relevance ? 'relevance' : sortName, dir, shape])}`;
  const after = deps.pager.decode(list, q.cursor, spec.keys.length);
  return { relevance, spec, dir, list, after };
}

/**
 * The ticket field definitions a list needs (none when it filters and sorts on no field; q reads
 * the text fields' definitions in its own statement).
 */
async function defsFor(deps: Deps, ctx: RequestContext, q: Query): Promise<Map<string, FieldDef>> {
  const needed = q.sort?.startsWith('field.') || fieldParams(q).length > 0;
  return needed ? fieldDefs(deps.database.db, ctx.workspaceId, 'ticket') : new Map();
}

/** Checks a cursor before anything else is looked up (a foreign cursor is a 422 whatever else). */
export function checkTicketCursor(deps: Deps, ctx: RequestContext, q: Query): void {
  plan(deps, ctx, q, new Map());
}

/** The values a ListRow carries besides the JSON (its cursor may need any of them). */
const KEY_COLUMNS = [
  't.id',
  microsOf('t.last_message_at').as('last_message_us'),
  microsOf('t.created_at').as('created_us'),
  sql<number>`(extract(epoch from coalesce(t.due_at, 'infinity'::timestamptz)) * 1000000)::float8`.as('due_us'),
  't.priority_rank',
  't.severity_rank',
] as const;

/** What a relevance-ranked list's tiers select: its cursor's values besides the rank. */
const RANKED_COLUMNS = ['t.id', microsOf('t.last_message_at').as('last_message_us')] as const;

/**
 * A page of tickets as JSON bytes, `{data, next_cursor}`, from each ticket's JSON (json-cache.ts).
 *
 * Sorts an index answers (recency, creation, priority, severity, due) read the page's rows in
 * order and build JSON for those only. Relevance (q) and field sorts are sorted after filtering:
 * their query first picks the page's ids with the sort keys alone and builds the JSON (contact,
 * assignee, labels) for those rows only, instead of for every match before sorting. The page's
 * SQL is built once per distinct request and kept (compiledPages).
 */
export async function listTickets(deps: Deps, ctx: RequestContext, q: Query): Promise<Buffer> {
  const limit = q.limit ?? 50;
  const defs = await defsFor(deps, ctx, q);
  const { relevance, spec, dir, list, after } = plan(deps, ctx, q, defs);
  // The ranked search runs on generic plans (its words are a parameter; search.ts says why).
  const db = relevance ? deps.database.search : deps.database.db;
  const search = relevance ? await textSearch(db, ctx.workspaceId, q.q!, deps.config.searchWalkAbove, true) : null;
  const page = (rows: ListRow[]) =>
    deps.pager.pageBytes(
      list,
      rows,
      limit,
      (r) => spec.keys.map((k) => k.of(r)),
      (r) => r.json,
    );
  const keyed = keyedSort(q, defs);
  if (keyed) {
    const filtered = await filteredFor(deps, ctx, q, defs, search, db, KEY_COLUMNS);
    return page(await keyedFieldPage(deps, ctx.workspaceId, filtered, keyed, dir, after, limit));
  }
  const memo = memoKey(ctx, q, search);
  const statements = compiledPages(deps);
  let compiled: CompiledQuery | null | undefined = memo === null ? undefined : statements.get(memo);
  if (compiled === undefined) {
    const query = await pageQuery(deps, ctx, q, defs, { spec, dir, after }, search, db, limit);
    const c = query?.compile();
    compiled = c === undefined ? null : CompiledQuery.raw(c.sql, [...c.parameters]);
    if (memo !== null && compiled !== null) statements.set(memo, compiled);
  }
  if (compiled === null) return page([]);
  const rows = (await db.executeQuery(compiled)).rows as ListRow[];
  return page(await withTicketJson(deps.database, ctx.workspaceId, rows));
}

/**
 * The page queries of lists, compiled, per database and by everything their SQL is made of: a
 * list asked for again (an inbox refreshed, the same search's first page, by every agent of a
 * team) runs its statement without building it again; the rows are read afresh each time. Only
 * lists whose SQL depends on nothing but the request are kept: not those naming a label, a view
 * or a custom field, whose SQL embeds what the database says of them now, nor q as a filter of a
 * sorted list (its estimate is looked up while building). The relevance-ranked search's SQL
 * depends on q's parse and estimates too: they are part of the key. Kept as text and
 * parameters (not Kysely's operation tree), at most 1,000 statements or 8 MB.
 */
const pageStatements = new WeakMap<object, LRUCache<string, CompiledQuery>>();
function compiledPages(deps: Deps): LRUCache<string, CompiledQuery> {
  let c = pageStatements.get(deps.database);
  if (!c) {
    c = new LRUCache<string, CompiledQuery>({
      max: 1_000,
      maxSize: 8 * 1024 * 1024,
      sizeCalculation: (v, key) =>
        key.length + v.sql.length + v.parameters.reduce<number>((n, p) => n + String(p).length, 0),
    });
    pageStatements.set(deps.database, c);
  }
  return c;
}

function memoKey(ctx: RequestContext, q: Query, search: TextSearch | null): string | null {
  const lookedUp =
    q.tag !== undefined ||
    q.view_id !== undefined ||
    q.sort?.startsWith('field.') === true ||
    fieldParams(q).length > 0 ||
    (q.q !== undefined && search === null);
  if (lookedUp) return null;
  const actor = ctx.actor.kind === 'member' ? `user:${ctx.actor.userId}` : 'key';
  return JSON.stringify([ctx.workspaceId, actor, ctx.role, ctx.teams, q, search]);
}

/** The tickets of the list's filters, the predicates looked up first; `columns` selected. */
async function filteredFor(
  deps: Deps,
  ctx: RequestContext,
  q: Query,
  defs: Map<string, FieldDef>,
  search: TextSearch | null,
  db: Kysely<DB>,
  columns: ReadonlyArray<SelectExpression<DB & { t: DB['tickets'] }, 't'>>,
  from: typeof ticketFrom | typeof ticketScope = ticketFrom,
) {
  const predicates = [...baseFilters(q, teamVisible(ctx)), ...(await criteria(deps, ctx, q, defs, search))];
  return () => {
    let query = from(db, ctx.workspaceId).select(columns);
    for (const f of predicates) query = query.where(f as never);
    return query;
  };
}

/**
 * The query of a page (null: no tier is left after the cursor), every row with its ticket's
 * JSON version (json-cache.ts).
 */
async function pageQuery(
  deps: Deps,
  ctx: RequestContext,
  q: Query,
  defs: Map<string, FieldDef>,
  p: { spec: { keys: Key[] }; dir: 'asc' | 'desc'; after: KeyValue[] | null },
  search: TextSearch | null,
  db: Kysely<DB>,
  limit: number,
) {
  const { spec, dir, after } = p;
  const after_ = (keys: Key[], values: KeyValue[] | null) => {
    if (!values) return null;
    const cols = sql.join(keys.map((k) => k.expr));
    const vals = sql.join(keys.map((k, i) => cursorValue(k, values[i]!)));
    return sql<SqlBool>`(${cols}) ${sql.raw(dir === 'desc' ? '<' : '>')} (${vals})`;
  };

  if (search) {
    // Relevance: one query per tier, each walking or collecting its own matches in recency
    // order up to a page, the tiers in the list's order; then the page, and the JSON of its rows.
    // The page is the first rows of the tiers one after the other (UNION ALL under a LIMIT, no
    // sort): PostgreSQL runs a UNION ALL's parts in the order written (its Append node, without
    // parallel workers, which the service turns off), and stops when the page is full. So a
    // word common in subjects fills the page from the subject tier and the message tier is
    // never run; sorting the tiers' rows first would run every tier to its end.
    // The tiers select the ranked cursor's values only.
    // No contact or assignee joined: the common-subject walk is then an index-only scan.
    const filtered = await filteredFor(deps, ctx, q, defs, search, db, RANKED_COLUMNS, ticketScope);
    const [, ...recency] = spec.keys;
    const cursorRank = after === null ? null : Number(after[0]);
    const ahead = (rank: number) => cursorRank === null || (dir === 'desc' ? rank <= cursorRank : rank >= cursorRank);
    const ordered = dir === 'desc' ? tiers(search) : tiers(search).reverse();
    const arms = ordered
      .filter((tier) => ahead(tier.rank))
      .map((tier) => {
        const walk = (match: RawBuilder<SqlBool>) => {
          let arm = filtered()
            .select(sql<number>`${sql.lit(tier.rank)}::int4`.as('rank'))
            .where(match as never);
          const cut = after !== null && tier.rank === cursorRank ? after_(recency, after.slice(1)) : null;
          if (cut) arm = arm.where(cut as never);
          for (const k of recency) arm = arm.orderBy(k.expr, dir);
          return arm.limit(pageLimit(limit + 1));
        };
        if (!tier.parts) return db.selectFrom(walk(tier.match).as(`tier${tier.rank}`)).selectAll();
        const merged = mergedWalks(db, tier.parts.map(walk), 'last_message_us', dir, limit);
        return db.selectFrom(merged.as(`tier${tier.rank}`)).selectAll();
      });
    if (arms.length === 0) return null;
    const union = arms.slice(1).reduce((u, arm) => u.unionAll(arm as never), arms[0]!);
    const page = db
      .selectFrom(union.as('p'))
      .selectAll()
      .limit(pageLimit(limit + 1));
    return withVersion(db, ctx.workspaceId, page, ['rank', 'last_message_us', 'id'], dir);
  }
  const filtered = await filteredFor(deps, ctx, q, defs, search, db, KEY_COLUMNS);
  let query = filtered();
  const cut = after_(spec.keys, after);
  if (cut) query = query.where(cut as never);
  const bySort = q.sort?.startsWith('field.') === true;
  if (bySort) query = query.select(spec.keys[0]!.expr.as('sort_value')) as typeof query;
  spec.keys.forEach((k, i) => {
    query = query.orderBy(k.expr, dir);
    if (bySort) query = query.select(k.expr.as(`k${i}`)) as typeof query;
  });
  query = query.limit(pageLimit(limit + 1));
  return bySort
    ? withVersion(
        db,
        ctx.workspaceId,
        query,
        spec.keys.map((_k, i) => `k${i}`),
        dir,
      )
    : query.select(TICKET_VERSION.as('v'));
}

/** The field of a sort=field.<key> that the sort-key table answers (number, date, checkbox), or null. */
function keyedSort(q: Query, defs: Map<string, FieldDef>): string | null {
  if (!q.sort?.startsWith('field.')) return null;
  const def = defs.get(q.sort.slice(6));
  return def && KEYED_TYPES.includes(def.type) ? def.key : null;
}
const KEYED_TYPES = ['number', 'date', 'checkbox'];

/**
 * A page sorted on a number, date or checkbox field (migration 0022). Two walks, each stopping
 * after a page of matches: tickets without a value in id order (they sort lowest), and the
 * field's sort keys in (value, id) order joined to their tickets. The cursor says which walks
 * are still ahead: ascending, the tickets without a value come first; descending, last.
 */
async function keyedFieldPage(
  deps: Deps,
  workspaceId: string,
  filtered: () => SelectQueryBuilder<DB & { t: DB['tickets'] }, 't', object>,
  key: string,
  dir: 'asc' | 'desc',
  after: KeyValue[] | null,
  limit: number,
): Promise<ListRow[]> {
  const db = deps.database.db;
  const op = sql.raw(dir === 'asc' ? '>' : '<');
  const cursorId = after === null ? null : (cursorValue(K.id, after[1]!) as RawBuilder<string>);
  const cursorValueIsNull = after !== null && after[0] === null;
  // Ascending: no value, then values. Descending: values, then no value.
  const wantEmpty = after === null || cursorValueIsNull || dir === 'desc';
  const wantValued = after === null || !cursorValueIsNull || dir === 'asc';
  const arms = [];
  if (wantEmpty) {
    let arm = filtered()
      .select(sql<KeyValue>`'null'::jsonb`.as('sort_value'))
      .where(sql<SqlBool>`NOT (t.fields ? ${key})`);
    if (cursorValueIsNull) arm = arm.where(sql<SqlBool>`t.id ${op} ${cursorId}`);
    arms.push(arm.orderBy('t.id', dir).limit(pageLimit(limit + 1)));
  }
  if (wantValued) {
    let arm = filtered()
      .innerJoin('ticket_field_sort_keys as s', (j) =>
        j.onRef('s.workspace_id', '=', 't.workspace_id').onRef('s.ticket_id', '=', 't.id').on('s.field_key', '=', key),
      )
      .select(sql<KeyValue>`s.value`.as('sort_value'));
    if (after !== null && !cursorValueIsNull) {
      arm = arm.where(
        sql<SqlBool>`(s.value, s.ticket_id) ${op} (${cursorValue({ ...K.id, kind: 'jsonb' }, after[0]!)}, ${cursorId})`,
      );
    }
    arms.push(
      arm
        .orderBy(sql`s.value`, dir)
        .orderBy(sql`s.ticket_id`, dir)
        .limit(pageLimit(limit + 1)),
    );
  }
  // 'null'::jsonb sorts below every value, so one order covers both walks.
  const page = mergedWalks(db, arms, 'sort_value', dir, limit);
  const outer = withVersion(db, workspaceId, page, ['sort_value', 'id'], dir);
  return withTicketJson(deps.database, workspaceId, (await outer.execute()) as unknown as ListRow[]);
}

/**
 * Walks merged: each is in (`key`, id) order and stops after a page; the merge is the first page
 * of their rows in that order.
 */
function mergedWalks(
  db: Kysely<DB>,
  // biome-ignore lint/suspicious/noExplicitAny: any walk: its columns are read back by name
  walks: SelectQueryBuilder<any, any, any>[],
  key: string,
  dir: 'asc' | 'desc',
  limit: number,
) {
  const [first, ...rest] = walks.map((w, i) => db.selectFrom(w.as(`walk${i}`)).selectAll());
  const union = rest.reduce((u, w) => u.unionAll(w as never), first!);
  return db
    .selectFrom(union.as('m'))
    .selectAll()
    .orderBy(sql.ref(`m.${key}`), dir)
    .orderBy(sql.ref('m.id'), dir)
    .limit(pageLimit(limit + 1));
}

/**
 * The rows of a page picked by `page` (ids and sort keys only, sorted and limited) with their
 * JSON version, read for those rows alone, in the page's order (`order`: its columns).
 */
function withVersion(
  db: Kysely<DB>,
  workspaceId: string,
  // biome-ignore lint/suspicious/noExplicitAny: any page query: its columns are read back by name
  page: SelectQueryBuilder<any, any, any>,
  order: string[],
  dir: 'asc' | 'desc',
) {
  let outer = db
    .selectFrom(page.as('p'))
    .innerJoin('tickets as t', (j) => j.on('t.workspace_id', '=', workspaceId).onRef('t.id', '=', 'p.id'))
    .leftJoin('contacts as c', (j) =>
      j.onRef('c.workspace_id', '=', 't.workspace_id').onRef('c.id', '=', 't.contact_id'),
    )
    .leftJoin('users as a', 'a.id', 't.assignee_id')
    .selectAll('p')
    .select(TICKET_VERSION.as('v'));
  for (const c of order) outer = outer.orderBy(sql.ref(`p.${c}`), dir);
  return outer;
}
