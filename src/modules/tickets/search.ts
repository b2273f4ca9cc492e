// `q` on the ticket list: what matches, and the SQL that finds it fast for rare and common words.
//
// A ticket matches q by its number (q is a number), its subject (full-text, every word of q as a
// prefix), or otherwise by a message body (full-text), its contact's name or email (substring)
// or a text field's value (substring). Ranked by relevance, those are three tiers (3, 2, 1),
// newest activity first within a tier.
//
// How PostgreSQL finds them depends on how common the words are, which only its statistics
// know. So q is first parsed by PostgreSQL itself (to_tsquery over the words of to_tsvector: the
// same tokens as the stored vectors) and, in the same statement, the planner estimates how many
// messages and subjects of the workspace match (search_estimates, migration 0025). Each tier's
// SQL is then written for its case:
// - rare words: the matching ids come from the GIN indexes (a few hundred at most) and only
//   those tickets are read and sorted;
// - common words (more than SEARCH_WALK_ABOVE matching messages expected; for the subject tier,
//   more than one ticket in a hundred): walking the tickets in list order and checking each one
//   finds a page after a few hundred tickets, where collecting every match first would read
//   tens of thousands of rows.
// Because the SQL itself says which way each tier goes, the ranked list takes the words as a
// parameter and runs on connections that always use a prepared statement's generic plan
// (Database.search): one plan per shape of search, made once per connection, whatever the words.
// Filters (q with a sort, a view's q) keep the words as a constant and the planner's custom plans.
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { DB } from '../../platform/db/schema.js';
import { likePattern } from '../../platform/http/values.js';
import { textFieldMatch } from '../custom-fields/filters.js';

export interface TextSearch {
  workspaceId: string;
  /** The ticket number q names (`123` or `#123`), if it is one. */
  number: number | null;
  /** PostgreSQL's text of the word query ('' when q has no words). */
  tsq: string;
  /** q as a case-insensitive substring pattern (ILIKE). */
  pattern: string;
  /** Common words in messages: tier 1 walks the list rather than collecting every match. */
  common: boolean;
  /** Common words in subjects: tier 2 walks the list too. */
  commonSubjects: boolean;
  /**
   * Rare words in every workspace (at most SEARCH_WALK_ABOVE matching messages expected in
   * all): their messages are looked up by the words alone, then kept to the workspace.
   */
  rareEverywhere: boolean;
  /**
   * The words travel as a parameter (the ranked list, on Database.search's generic plans) rather
   * than as a constant the planner reads (filters, on custom plans).
   */
  param: boolean;
}

const ticketNumberOf = (q: string): number | null => {
  const m = /^\s*#?([1-9][0-9]{0,14})\s*$/.exec(q);
  return m ? Number(m[1]) : null;
};

interface Parsed {
  tsq: string;
  messages: number | null;
  subjects: number | null;
  tickets: number | null;
  everywhere: number | null;
}

/**
 * q parsed by PostgreSQL, with the planner's estimates of how many messages and subjects of the
 * workspace its words match, out of how many tickets (search_estimates, migration 0025).
 */
const parseAndEstimate = (workspaceId: string, text: string) => sql<Parsed>`
    SELECT s.tsq, e.messages, e.subjects, e.tickets, e.everywhere
      FROM (SELECT coalesce(to_tsquery('simple', array_to_string(array(
              SELECT '''' || replace(replace(lexeme, '\\', '\\\\'), '''', '''''') || ''':*'
                FROM unnest(to_tsvector('simple', ${text}))), ' & '))::text, '') AS tsq) s
      LEFT JOIN LATERAL search_estimates(${workspaceId}::uuid, nullif(s.tsq, '')::tsquery) e ON true`;

function searchOf(
  row: Parsed | undefined,
  workspaceId: string,
  text: string,
  walkAbove: number,
  param: boolean,
): TextSearch {
  const tsq = row?.tsq ?? '';
  const subjects = Number(row?.subjects ?? 0);
  return {
    workspaceId,
    number: ticketNumberOf(text),
    tsq,
    pattern: likePattern(text.trim()),
    common: tsq !== '' && Number(row?.messages ?? 0) > walkAbove,
    // Walking pays when a page is found within a hundred tickets per match or so.
    commonSubjects: tsq !== '' && subjects * 100 > Number(row?.tickets ?? 0) && subjects > walkAbove / 10,
    rareEverywhere: tsq !== '' && Number(row?.everywhere ?? Number.POSITIVE_INFINITY) <= walkAbove,
    param,
  };
}

/**
 * Parses and estimates kept per process, by workspace and q, for a minute: the parse depends on
 * q alone, and the estimates change only when PostgreSQL's statistics do (ANALYZE), so a search
 * repeated (a page after the first, a view refreshed, the same words again) asks for neither.
 */
const parsed = new LRUCache<string, Parsed>({ max: 2_000, ttl: 60_000 });

/**
 * q parsed and estimated (kept a minute). `param`: the words go into the SQL as a parameter,
 * for the ranked list on Database.search's generic plans; otherwise (q as a filter: a list with
 * its own sort, a view's q) as a constant the planner reads.
 */
export async function textSearch(
  db: Kysely<DB>,
  workspaceId: string,
  text: string,
  walkAbove: number,
  param = false,
): Promise<TextSearch> {
  const key = `${workspaceId}\n${text}`;
  let row = parsed.get(key);
  if (row === undefined) {
    row = (await parseAndEstimate(workspaceId, text).execute(db)).rows[0];
    if (row) parsed.set(key, row);
  }
  return searchOf(row, workspaceId, text, walkAbove, param);
}

const words = (s: TextSearch) => (s.param ? sql`${s.tsq}::tsquery` : sql`${sql.lit(s.tsq)}::tsquery`);

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
    const inFields = textFieldMatch(sql`t.fields`, w, 'ticket', s.pattern);
    return sql<SqlBool>`(${all ? sql`${numberMatch(s)} OR ${subjectMatch(s)} OR` : sql``}
        EXISTS (SELECT 1 FROM messages m
          WHERE m.workspace_id = t.workspace_id AND m.ticket_id = t.id AND m.search @@ ${words(s)} OFFSET 0)
        OR t.contact_id IN (${contact})
        OR (field_text(t.fields) ILIKE ${s.pattern} AND ${inFields}))`;
  }
  // The few matching ids, each source from its own index and computed once (no reference to
  // the outer row). UNION ALL: IN needs no duplicates removed first.
  const inFields = textFieldMatch(sql`f.fields`, w, 'ticket', s.pattern);
  const hasWords = s.tsq !== '';
  return sql<SqlBool>`t.id IN (
      SELECT k.id FROM tickets k WHERE k.workspace_id = ${w} AND k.contact_id IN (${contact})
      ${hasWords ? sql`UNION ALL SELECT m.ticket_id FROM messages m WHERE ${inWorkspace(s)} AND m.search @@ ${words(s)}` : sql``}
      UNION ALL SELECT f.id FROM tickets f WHERE f.workspace_id = ${w} AND f.deleted_at IS NULL AND field_text(f.fields) ILIKE ${s.pattern} AND ${inFields}
      ${all && hasWords ? sql`UNION ALL SELECT s.id FROM tickets s WHERE s.workspace_id = ${w} AND s.deleted_at IS NULL AND s.search @@ ${words(s)}` : sql``}
      ${all && s.number !== null ? sql`UNION ALL SELECT n.id FROM tickets n WHERE n.workspace_id = ${w} AND n.number = ${s.number}` : sql``})`;
}

/**
 * A message's workspace, as the collecting sub-select tests it. For words rare everywhere, in a
 * form no index answers: the GIN index then looks up the words alone, and the workspace is
 * checked on the few rows found. With the workspace in the index condition, the index walks
 * the workspace's own entry (every message of it) to intersect: 1.0 ms against 0.1 ms for a
 * word in 97 of 300,000 messages (docs/performance.md).
 */
const inWorkspace = (s: TextSearch) =>
  s.rareEverywhere
    ? sql<SqlBool>`(m.workspace_id = ${s.workspaceId}) IS TRUE`
    : sql<SqlBool>`m.workspace_id = ${s.workspaceId}`;

/** Any tier: the filter q is when the list has its own sort (or in a view and its count). */
export function anyMatch(s: TextSearch): RawBuilder<SqlBool> {
  return matchOf(s, true);
}

/**
 * Subjects up to this many bytes have their words in tickets_subject_walk_idx (migration 0026),
 * so that the subject tier's walk reads the index alone; longer ones are walked apart.
 */
const WALK_SUBJECT_BYTES = sql.raw('400');

export interface Tier {
  rank: number;
  match: RawBuilder<SqlBool>;
  /**
   * Walks whose rows together are the tier's (each in recency order up to a page, then merged):
   * the common-subject tier walks short subjects on the index that holds their words and long
   * ones on their own index.
   */
  parts?: RawBuilder<SqlBool>[];
}

/** The tiers, highest first: each is its own match without the matches of the tiers above. */
export function tiers(s: TextSearch): Tier[] {
  const out: Tier[] = [];
  if (s.number !== null) out.push({ rank: 3, match: numberMatch(s) });
  const notNumber = s.number === null ? sql`true` : sql`t.number <> ${s.number}`;
  if (s.tsq !== '') {
    if (s.commonSubjects) {
      // Walking: the subject test in a form no index answers, so that even a generic plan walks
      // the list in order and stops after a page instead of collecting every subject match.
      const subject = sql<SqlBool>`(${subjectMatch(s)}) IS TRUE`;
      const match = sql<SqlBool>`(${subject} AND ${notNumber})`;
      out.push({
        rank: 2,
        match,
        parts: [
          sql<SqlBool>`(octet_length(t.subject) <= ${WALK_SUBJECT_BYTES} AND ${match})`,
          sql<SqlBool>`(octet_length(t.subject) > ${WALK_SUBJECT_BYTES} AND ${match})`,
        ],
      });
    } else {
      out.push({ rank: 2, match: sql<SqlBool>`(${subjectMatch(s)} AND ${notNumber})` });
    }
  }
  out.push({
    rank: 1,
    match: sql<SqlBool>`(${matchOf(s, false)} AND NOT ${subjectMatch(s)} AND ${notNumber})`,
  });
  return out;
}
