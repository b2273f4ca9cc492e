// Presence: what a member set (availability), or away when auto-away is on and they have not
// been seen (POST /v1/me/heartbeat) within auto_away_minutes. No imports from other modules,
// so members/ can use it without a cycle.
import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';

export type Availability = 'online' | 'away' | 'offline';

/** The workspace's auto-away setting in minutes (0 = off). */
export async function autoAwayMinutes(db: Kysely<DB>, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('assignment_settings')
    .select('auto_away_minutes')
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return row?.auto_away_minutes ?? 0;
}

/**
 * Presence: what the member set; a member who set `online` shows `away` when auto-away is on
 * and their last heartbeat is older than auto_away_minutes (or they were never seen).
 */
export function presenceOf(
  availability: Availability,
  lastSeenAt: Date | null,
  awayMinutes: number,
  now = Date.now(),
): Availability {
  if (availability !== 'online' || awayMinutes <= 0) return availability;
  if (lastSeenAt === null || now - lastSeenAt.getTime() > awayMinutes * 60_000) return 'away';
  return 'online';
}
