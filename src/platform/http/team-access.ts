// The one rule of private teams: a private team's records (its tickets, their messages and
// events) are seen by the team's members and by admins and owners; API keys are not team members
// and see no private team's records. Records of no team or of a team that is not private are seen
// by everyone the route lets in. Every place that decides this calls these two functions or the
// database forms built on them in modules/teams/access.ts (ticket lists, counts, search, reports,
// attachments, event replay and webhooks through events/visibility.ts, the gateway's joins,
// assignment and mention notifications).
import type { Role } from './context.js';

/** The roles that see every private team. */
export const ROLES_SEEING_EVERY_TEAM = ['admin', 'owner'] as const satisfies readonly Role[];

/** Does this role see every private team (admins and owners)? API keys have no role. */
export const seesEveryTeam = (role: Role | string | null): boolean => role === 'admin' || role === 'owner';

/**
 * May the caller see a record that belongs to this team? `teamId` is the record's *private*
 * team, or null when the record has no team or its team is not private (the convention of an
 * event's team_id). `teams`: the private teams the caller belongs to. Ids compare without case
 * (the database prints them lowercase; a caller may not).
 */
export function canSeeTeam(who: { role: Role | null; teams: readonly string[] }, teamId: string | null): boolean {
  if (teamId === null) return true;
  if (seesEveryTeam(who.role)) return true;
  if (who.teams.includes(teamId)) return true;
  const id = teamId.toLowerCase();
  return who.teams.some((t) => t.toLowerCase() === id);
}
