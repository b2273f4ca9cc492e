// The Ticket JSON of lists, kept per process and checked against the database on every read.
//
// Building a Ticket's JSON (json_build_object, seven timestamps, the contact, the assignee, the
// labels) was four fifths of PostgreSQL's time for a page of 50 tickets. A list now reads, per
// ticket, a version of everything that JSON is made of instead: the row versions (`xmin`) of the
// ticket, its contact and its assignee, and of each of its labels with the label's link. Any
// committed change to one of them gives a new version, so a kept JSON whose version still
// matches is exactly what PostgreSQL would build now; the others are built in one more statement
// and kept. Nothing is invalidated by events, so several processes need no coordination.
//
// Entries live at most ten minutes (far less than it takes transaction ids to wrap around, so a
// version cannot come back) and the whole cache is bounded in bytes, least recently read first out.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../platform/db/index.js';
import type { DB } from '../../platform/db/schema.js';
import type { JsonText } from '../../platform/http/json.js';
import { TICKET_JSON, ticketFrom } from './queries.js';

/**
 * The version of a ticket's JSON over `tickets t`, `contacts c` and `users a` (joined as in
 * ticketFrom): the row versions of the ticket, contact and assignee, then each label link's
 * label with the label's row version (a link added or removed, or a label renamed, recoloured,
 * regrouped or merged, changes it).
 */
export const TICKET_VERSION = sql<string>`concat(t.xmin, ':', c.xmin, ':', a.xmin, ':', (
    SELECT string_agg(x.tag_id::text || '.' || tg.xmin::text, ',' ORDER BY x.tag_id)
      FROM ticket_tags x
      JOIN tags tg ON tg.workspace_id = x.workspace_id AND tg.id = x.tag_id
     WHERE x.workspace_id = t.workspace_id AND x.ticket_id = t.id))`;

interface Entry {
  workspaceId: string;
  version: string;
  /** The JSON, UTF-8 encoded: pages are assembled from bytes (a page of strings with one non-Latin-1
   * character is re-encoded whole on every write, measured at 40 % of the throughput). */
  json: Buffer;
  at: number;
}

export class TicketJsonCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(
    readonly maxBytes = 32 * 1024 * 1024,
    readonly ttlMs = 10 * 60_000,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  get(workspaceId: string, id: string, version: string, now: number): Buffer | undefined {
    const e = this.#entries.get(id);
    if (!e) return undefined;
    if (e.version !== version || e.workspaceId !== workspaceId || now - e.at > this.ttlMs) {
      this.#drop(id, e);
      return undefined;
    }
    // Most recently read last: Map keeps insertion order, so the first entries are evicted first.
    this.#entries.delete(id);
    this.#entries.set(id, e);
    return e.json;
  }

  set(workspaceId: string, id: string, version: string, json: Buffer, now: number): void {
    const old = this.#entries.get(id);
    if (old) this.#drop(id, old);
    const e = { workspaceId, version, json, at: now };
    this.#entries.set(id, e);
    this.#bytes += sizeOf(e);
    for (const [k, v] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#drop(k, v);
    }
  }

  #drop(id: string, e: Entry): void {
    this.#entries.delete(id);
    this.#bytes -= sizeOf(e);
  }
}

// The bytes, plus the key, the version, the entry and the map's slot.
const sizeOf = (e: Entry) => e.json.length + 2 * e.version.length + 300;

const caches = new WeakMap<Database, TicketJsonCache>();

/** The cache of one service instance (one database handle). */
export function ticketJsonCache(database: Database): TicketJsonCache {
  let c = caches.get(database);
  if (!c) {
    c = new TicketJsonCache();
    caches.set(database, c);
  }
  return c;
}

/**
 * Rows of a page with their ticket's version (`v`, TICKET_VERSION) → the same rows with the
 * Ticket JSON, from the cache where the version matches and from one statement for the rest. A
 * ticket whose row changed between the two statements shows its newer state; one that is no
 * longer there (removed in between) keeps no JSON, and the page leaves it out (its position
 * still counts for the cursor).
 */
export async function withTicketJson<R extends { id: string; v: string }>(
  database: Database,
  workspaceId: string,
  rows: R[],
): Promise<Array<R & { json: Buffer | undefined }>> {
  const cache = ticketJsonCache(database);
  const now = Date.now();
  const out = rows as Array<R & { json: Buffer | undefined }>;
  const missing: string[] = [];
  for (const r of out) {
    r.json = cache.get(workspaceId, r.id, r.v, now);
    if (r.json === undefined) missing.push(r.id);
  }
  if (missing.length === 0) return out;
  const built = await buildTicketJson(database.db, workspaceId, missing);
  const byId = new Map<string, Buffer>();
  for (const b of built) {
    const bytes = Buffer.from(b.json);
    cache.set(workspaceId, b.id, b.v, bytes, now);
    byId.set(b.id, bytes);
  }
  for (const r of out) if (r.json === undefined) r.json = byId.get(r.id);
  return out;
}

async function buildTicketJson(db: Kysely<DB>, workspaceId: string, ids: string[]) {
  const rows = await ticketFrom(db, workspaceId)
    .select(['t.id', TICKET_VERSION.as('v'), TICKET_JSON.as('json')])
    // One array parameter, not one per id: a single statement text whatever the number missing
    // (an IN list of n ids is a text per n, each of which would take a prepared statement's name).
    .where(sql<boolean>`t.id = ANY(${ids}::uuid[])`)
    .execute();
  return rows as Array<{ id: string; v: string; json: JsonText }>;
}
