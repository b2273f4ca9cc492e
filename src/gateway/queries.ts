// The gateway's reads of the database (it writes nothing): tickets and people at a join or a
// typing push, and the event log for a widget's replay. Hubs read their workspace's seq (hub.ts)
// and visitors are checked at connect (visitors.ts).
import { sql } from 'kysely';
import type { Database } from '../platform/db/index.js';
import { pageLimit } from '../platform/db/keyset.js';

type Db = Database['db'];

/** A ticket as a join of its topic needs it: its contact, channel, team and whether that team is private. */
export const ticketForJoin = (db: Db, wid: string, ticketId: string) =>
  db
    .selectFrom('tickets as t')
    .leftJoin('teams as tm', (j) => j.onRef('tm.workspace_id', '=', 't.workspace_id').onRef('tm.id', '=', 't.team_id'))
    .select(['t.contact_id', 't.channel', 't.team_id', 'tm.private'])
    .where('t.workspace_id', '=', wid)
    .where('t.id', '=', ticketId)
    .executeTakeFirst();

/** A ticket's contact and channel (a widget's typing push names the ticket). */
export const ticketContact = (db: Db, wid: string, ticketId: string) =>
  db
    .selectFrom('tickets')
    .select(['contact_id', 'channel'])
    .where('workspace_id', '=', wid)
    .where('id', '=', ticketId)
    .executeTakeFirst();

/** A person's name and picture. */
export const userProfile = (db: Db, userId: string) =>
  db.selectFrom('users').select(['name', 'avatar_url']).where('id', '=', userId).executeTakeFirst();

/** The oldest seq of a workspace's events still kept (null: none). */
export async function oldestSeq(db: Db, wid: string): Promise<number | null> {
  const oldest = await db
    .selectFrom('events')
    .select((eb) => eb.fn.min('seq').as('seq'))
    .where('workspace_id', '=', wid)
    .executeTakeFirst();
  return oldest?.seq == null ? null : Number(oldest.seq);
}

/** A topic's public events after `since` up to `upTo`, in seq order, at most `limit`. */
export const publicEventsOf = (db: Db, wid: string, topic: string, since: number, upTo: number, limit: number) =>
  db
    .selectFrom('events')
    .selectAll()
    .where('workspace_id', '=', wid)
    .where('seq', '>', since)
    .where('seq', '<=', upTo)
    .where('visibility', '=', 'public')
    .where(sql<boolean>`topics @> ARRAY[${topic}]::text[]`)
    .orderBy('seq')
    .limit(pageLimit(limit))
    .execute();
