// Who sees a private team's tickets, in the database's terms: the rule itself is
// platform/http/team-access.ts (admins and owners every private team, people their own, API keys
// none); these are its forms for queries. Ticket lists, counts and search (tickets/list.ts,
// counts.ts), reports, the gateway's joins, assignment and notifications use them.
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/http/context.js';
import { ROLES_SEEING_EVERY_TEAM, seesEveryTeam } from '../../platform/http/team-access.js';

export { canSeeTeam, seesEveryTeam } from '../../platform/http/team-access.js';

/**
 * Private teams whose tickets the caller may not see: none for admins and owners, every
 * private team for API keys, the private teams a person is not in otherwise.
 */
export async function hiddenTeamIds(db: Kysely<DB>, ctx: RequestContext): Promise<string[]> {
  if (seesEveryTeam(ctx.role)) return [];
  let q = db.selectFrom('teams').select('id').where('workspace_id', '=', ctx.workspaceId).where('private', '=', true);
  if (ctx.teams.length > 0) q = q.where('id', 'not in', ctx.teams);
  return (await q.execute()).map((r) => r.id);
}

/** Tickets (alias `t`) of none of these hidden teams; null when nothing is hidden. */
export const notInHiddenTeams = (hidden: string[]): RawBuilder<SqlBool> | null =>
  hidden.length === 0 ? null : sql<SqlBool>`(t.team_id IS NULL OR t.team_id NOT IN (${sql.join(hidden)}))`;

/**
 * The same rule for a query that joins the ticket's team as `tm` (no extra statement): null
 * for admins and owners; else teams that are not private, and the caller's private teams.
 */
export function joinedTeamVisible(ctx: RequestContext): RawBuilder<SqlBool> | null {
  if (seesEveryTeam(ctx.role)) return null;
  const mine = ctx.teams;
  return mine.length === 0
    ? sql<SqlBool>`tm.private IS NOT TRUE`
    : sql<SqlBool>`(tm.private IS NOT TRUE OR tm.id IN (${sql.join(mine)}))`;
}

/** Members (alias `m`, a members row) who see this private team's tickets: admins, owners, its members. */
export const memberSeesTeam = (teamId: string): RawBuilder<SqlBool> =>
  sql<SqlBool>`(m.role IN (${sql.join(ROLES_SEEING_EVERY_TEAM.map((r) => sql.lit(r)))}) OR EXISTS (SELECT 1 FROM team_members tm
                 WHERE tm.workspace_id = m.workspace_id AND tm.team_id = ${teamId} AND tm.user_id = m.user_id))`;
