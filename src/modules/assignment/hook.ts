// Auto-assignment of new tickets (workflow hook, order 20, after automations). A new ticket
// that nobody was assigned to (not by its creator, not by an automation) gets an agent when
// the mode that applies is not `none`: the first rule matching its mailbox or team, else the
// workspace mode. Eligible: agents, admins and owners who are online (availability online and,
// with auto-away on, seen within auto_away_minutes), under their max_open_tickets, members of
// the rule's team for a team rule, and able to see the ticket (a private team's members or
// admins). round_robin: the next eligible member after the one picked last (in user id
// order); load_balanced: the fewest open tickets, ties in the same turn order. The turn is a
// row locked FOR UPDATE in the ticket's transaction, so it is fair across processes, restarts
// and concurrent creates. Nobody eligible: the ticket stays unassigned.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Unit } from '../../platform/db/tx.js';
import { SYSTEM } from '../../platform/http/context.js';
import { memberSeesTeam } from '../teams/access.js';
import type { TicketChange, TicketHook } from '../tickets/hooks.js';
import { applyPatch } from '../tickets/patch.js';
import type { TicketRow } from '../tickets/queries.js';
import { loadAssignmentConfig, type Mode } from './service.js';

const OPEN_STATUSES = ['open', 'pending', 'on_hold'];

interface Plan {
  mode: Mode;
  /** The round-robin turn this assignment takes ('workspace', 'mailbox:<id>', 'team:<id>'). */
  scope: string;
  /** Candidates must be members of this team (team rules). */
  teamId: string | null;
}

async function planFor(u: Unit, row: TicketRow): Promise<{ plan: Plan; autoAway: number }> {
  const config = await loadAssignmentConfig(u.trx, u.workspaceId);
  const rule = config.rules.find(
    (r) =>
      (r.target_type === 'mailbox' && row.mailbox_id !== null && r.mailbox_id === row.mailbox_id) ||
      (r.target_type === 'team' && row.team_id !== null && r.team_id === row.team_id),
  );
  if (rule) {
    const scope = rule.target_type === 'mailbox' ? `mailbox:${rule.mailbox_id}` : `team:${rule.team_id}`;
    return { plan: { mode: rule.mode, scope, teamId: rule.team_id }, autoAway: config.autoAway };
  }
  return { plan: { mode: config.mode, scope: 'workspace', teamId: null }, autoAway: config.autoAway };
}

interface Candidate {
  user_id: string;
  open: number;
}

/** Eligible members in user id order, with their open tickets (caps applied). */
async function candidates(u: Unit, row: TicketRow, plan: Plan, autoAway: number): Promise<Candidate[]> {
  const inTeam = (teamId: string) =>
    sql`EXISTS (SELECT 1 FROM team_members tm
                 WHERE tm.workspace_id = m.workspace_id AND tm.team_id = ${teamId} AND tm.user_id = m.user_id)`;
  // A private team's ticket goes to someone who sees it (teams/access.ts).
  const rows = await sql<{ user_id: string; max_open_tickets: number | null; open: number }>`
    SELECT m.user_id, m.max_open_tickets,
           (SELECT count(*)::int FROM tickets t
             WHERE t.workspace_id = m.workspace_id AND t.assignee_id = m.user_id
               AND t.status IN ('open', 'pending', 'on_hold') AND t.deleted_at IS NULL AND t.spam = false) AS open
      FROM members m
     WHERE m.workspace_id = ${u.workspaceId}
       AND m.role IN ('agent', 'admin', 'owner')
       AND m.availability = 'online'
       ${autoAway > 0 ? sql`AND m.last_seen_at >= now() - make_interval(mins => ${autoAway}::int)` : sql``}
       ${plan.teamId ? sql`AND ${inTeam(plan.teamId)}` : sql``}
       ${row.private_team_id ? sql`AND ${memberSeesTeam(row.private_team_id)}` : sql``}
     ORDER BY m.user_id`.execute(u.trx);
  return rows.rows
    .map((r) => ({ user_id: r.user_id, open: Number(r.open), max: r.max_open_tickets }))
    .filter((r) => r.max === null || r.open < r.max)
    .map(({ user_id, open }) => ({ user_id, open }));
}

/** The first id after `last` in id order, wrapping around. */
function nextInTurn(ids: string[], last: string | null): string | undefined {
  return (last === null ? undefined : ids.find((id) => id > last)) ?? ids[0];
}

/** Picks the assignee under the scope's turn lock and moves the turn. */
async function pick(u: Unit, row: TicketRow, plan: Plan, autoAway: number): Promise<string | null> {
  await u.trx
    .insertInto('assignment_pointers')
    .values({ workspace_id: u.workspaceId, scope: plan.scope })
    .onConflict((oc) => oc.columns(['workspace_id', 'scope']).doNothing())
    .execute();
  // The lock comes before the counts: a concurrent create waits here until this one commits,
  // then sees its assignment.
  const turn = await u.trx
    .selectFrom('assignment_pointers')
    .select('last_user_id')
    .where('workspace_id', '=', u.workspaceId)
    .where('scope', '=', plan.scope)
    .forUpdate()
    .executeTakeFirstOrThrow();
  const list = await candidates(u, row, plan, autoAway);
  if (list.length === 0) return null;
  let pool = list;
  if (plan.mode === 'load_balanced') {
    const least = Math.min(...list.map((c) => c.open));
    pool = list.filter((c) => c.open === least);
  }
  const chosen = nextInTurn(
    pool.map((c) => c.user_id),
    turn.last_user_id,
  )!;
  await u.trx
    .updateTable('assignment_pointers')
    .set({ last_user_id: chosen, updated_at: new Date() })
    .where('workspace_id', '=', u.workspaceId)
    .where('scope', '=', plan.scope)
    .execute();
  return chosen;
}

export const assignmentHook: TicketHook = {
  name: 'assignment',
  order: 20,
  // Mode none everywhere (the workspace's and every rule's): nothing to assign.
  probe: (workspaceId) => ({
    ticket_created: sql<boolean>`coalesce((SELECT w.settings->>'auto_assign' FROM workspaces w WHERE w.id = ${workspaceId}), 'none') <> 'none'
      OR EXISTS (SELECT 1 FROM assignment_rules r WHERE r.workspace_id = ${workspaceId} AND r.mode <> 'none')`,
  }),
  async run(deps: Deps, u: Unit, change: TicketChange): Promise<TicketRow | false> {
    if (change.trigger !== 'ticket_created') return false;
    // As the automations left it.
    const row = change.ticket;
    if (row.assignee_id !== null || row.deleted_at !== null || row.spam || row.merged_into_id !== null) return false;
    if (!OPEN_STATUSES.includes(row.status)) return false;
    const { plan, autoAway } = await planFor(u, row);
    if (plan.mode === 'none') return false;
    const chosen = await pick(u, row, plan, autoAway);
    if (chosen === null) return false;
    return (await applyPatch(deps, u, SYSTEM, row, { assignee_id: chosen })).row;
  },
};
