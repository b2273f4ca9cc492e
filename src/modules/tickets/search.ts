// `q` on the ticket list: what matches, and the SQL that finds it fast for rare and common words.
//
// A ticket matches q by its number (q is a number), its subject (full-text, every word of q as a
// prefix), or otherwise by a message body (full-text), its contact's name or email (substring)
// or a text field's value (substring). Ranked by relevance, those are three tiers (3, 2, 1),
// newest activity first within a tier.
//
// How PostgreSQL finds them depends on how common the words are, which only its statistics
// know. So the word query is first parsed by PostgreSQL itself (to_tsquery over the words of
// to_tsvector: the same tokens as the stored vectors) and then written into the list's SQL as a
// constant, where the planner sees it and estimates its matches from the column statistics:
// - rare words: the matching ids come from the GIN indexes (a few hundred at most) and only
//   those tickets are read and sorted;
// - common words (PostgreSQL expects more than SEARCH_WALK_ABOVE matching messages): walking the
//   tickets in list order and checking each one (its messages through their ticket index)
//   finds a page after a few hundred tickets, where collecting every match first would read
//   tens of thousands of messages.
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { likePattern } from '../../platform/http/values.js';
import { textFieldMatch } from '../custom-fields/filters.js';
import type { FieldDef } from '../custom-fields/service.js';

export interface TextSearch {
  workspaceId: string;
  /** The ticket number q names (`123` or `#123`), if it is one. */
  number: number | null;
  /** PostgreSQL's text of the word query ('' when q has no words). */
  tsq: string;
  /** q as a case-insensitive substring pattern (ILIKE). */
  pattern: string;
  /** The workspace's text fields match too. */
  defs: Map<string, FieldDef>;
  /** Common words: walk the list rather than collect every match. */
  common: boolean;
}

const ticketNumberOf = (q: string): number | null => {
  const m = /^\s*#?([1-9][0-9]{0,14})\s*$/.exec(q);
  return m ? Number(m[1]) : null;
};

/** Parses q with PostgreSQL and asks its planner how many messages the words would match. */
export async function textSearch(
  db: Kysely<DB>,
  workspaceId: string,
  text: string,
  defs: Map<string, FieldDef>,
  walkAbove: number,
): Promise<TextSearch> {
  const parsed = await sql<{ tsq: string }>`SELECT coalesce(to_tsquery('simple', array_to_string(array(
        SELECT '''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || ''':*'
          FROM unnest(to_tsvector('simple', ${text}))), ' & '))::text, '') AS tsq`.execute(db);
  const tsq = parsed.rows[0]?.tsq ?? '';
  let common = false;
  if (tsq !== '') {
    const plan = await sql<{ 'QUERY PLAN': unknown }>`EXPLAIN (FORMAT JSON)
        SELECT 1 FROM messages m WHERE m.workspace_id = ${workspaceId} AND m.search @@ ${sql.lit(tsq)}::tsquery`.execute(
      db,
    );
    common = expectedRows(plan.rows[0]?.['QUERY PLAN']) > walkAbove;
  }
  return { workspaceId, number: ticketNumberOf(text), tsq, pattern: likePattern(text.trim()), defs, common };
}

/** The planner's row estimate of an EXPLAIN (FORMAT JSON) answer (text on some drivers). */
function expectedRows(plan: unknown): number {
  const doc = typeof plan === 'string' ? JSON.parse(plan) : plan;
  const rows = (doc as Array<{ Plan?: { 'Plan Rows'?: number } }>)?.[0]?.Plan?.['Plan Rows'];
  return typeof rows === 'number' ? rows : 0;
}

const words = (s: TextSearch) => sql`${sql.lit(s.tsq)}::tsquery`;

/** Tier 3: the ticket whose number q is. */
export function numberMatch(s: TextSearch): RawBuilder<SqlBool> {
  return s.number === null ? sql<SqlBool>`false` : sql<SqlBool>`t.number = ${s.number}`;
}

/** Tier 2: the subject has every word. */
export function subjectMatch(s: TextSearch): RawBuilder<SqlBool> {
  return s.tsq === '' ? sql<SqlBool>`false` : sql<SqlBool>`t.search @@ ${words(s)}`;
}

/**
 * Tier 1's sources: a message body, the contact, a text field (`all`: the number and the
 * subject too, for the any-tier filter).
 */
function matchOf(s: TextSearch, all: boolean): RawBuilder<SqlBool> {
  const w = s.workspaceId;
  const contact = sql`SELECT c.id FROM contacts c
       WHERE c.workspace_id = ${w} AND (c.name ILIKE ${s.pattern} OR c.email ILIKE ${s.pattern})`;
  if (s.common) {
    // Checked per ticket while walking the list: each source through the ticket's own row or
    // index. OFFSET 0 keeps the messages check per ticket: without it PostgreSQL may hash every
    // matching message of the workspace first (it plans the walk as if it read every ticket).
    const inFields = textFieldMatch(sql`t.fields`, s.defs, s.pattern);
    return sql<SqlBool>`(${all ? sql`${numberMatch(s)} OR ${subjectMatch(s)} OR` : sql``}
        EXISTS (SELECT 1 FROM messages m
          WHERE m.workspace_id = t.workspace_id AND m.ticket_id = t.id AND m.search @@ ${words(s)} OFFSET 0)
        OR t.contact_id IN (${contact})
        ${inFields ? sql`OR (field_text(t.fields) ILIKE ${s.pattern} AND ${inFields})` : sql``})`;
  }
  // The few matching ids, each source from its own index and computed once (no reference to
  // the outer row). UNION ALL: IN needs no duplicates removed first.
  const inFields = textFieldMatch(sql`f.fields`, s.defs, s.pattern);
  const hasWords = s.tsq !== '';
  return sql<SqlBool>`t.id IN (
      SELECT k.id FROM tickets k WHERE k.workspace_id = ${w} AND k.contact_id IN (${contact})
      ${hasWords ? sql`UNION ALL SELECT m.ticket_id FROM messages m WHERE m.workspace_id = ${w} AND m.search @@ ${words(s)}` : sql``}
      ${inFields ? sql`UNION ALL SELECT f.id FROM tickets f WHERE f.workspace_id = ${w} AND f.deleted_at IS NULL AND field_text(f.fields) ILIKE ${s.pattern} AND ${inFields}` : sql``}
      ${all && hasWords ? sql`UNION ALL SELECT s.id FROM tickets s WHERE s.workspace_id = ${w} AND s.deleted_at IS NULL AND s.search @@ ${words(s)}` : sql``}
      ${all && s.number !== null ? sql`UNION ALL SELECT n.id FROM tickets n WHERE n.workspace_id = ${w} AND n.number = ${s.number}` : sql``})`;
}

/** Any tier: the filter q is when the list has its own sort (or in a view and its count). */
export function anyMatch(s: TextSearch): RawBuilder<SqlBool> {
  return matchOf(s, true);
}

/** The tiers, highest first: each is its own match without the matches of the tiers above. */
export function tiers(s: TextSearch): Array<{ rank: number; match: RawBuilder<SqlBool> }> {
  const out: Array<{ rank: number; match: RawBuilder<SqlBool> }> = [];
  if (s.number !== null) out.push({ rank: 3, match: numberMatch(s) });
  const notNumber = s.number === null ? sql`true` : sql`t.number <> ${s.number}`;
  if (s.tsq !== '') out.push({ rank: 2, match: sql<SqlBool>`(${subjectMatch(s)} AND ${notNumber})` });
  out.push({
    rank: 1,
    match: sql<SqlBool>`(${matchOf(s, false)} AND NOT ${subjectMatch(s)} AND ${notNumber})`,
  });
  return out;
}
