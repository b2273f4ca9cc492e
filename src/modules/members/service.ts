// Members of a workspace: list, change a role, remove. Ownership never moves here (only
// through POST /v1/workspace/transfer), only an owner touches another owner, and the last
// owner can be neither demoted nor removed.
import type { Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid } from '../../platform/crypto/random.js';
import { fromMicros, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import type { RequestContext, Role } from '../../platform/http/context.js';
import { forbidden, invalid, notFound } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import { autoAwayMinutes, presenceOf } from '../assignment/presence.js';
import { recordAudit } from '../audit/service.js';
import { checkPlanLimit, seatsChanged } from '../billing/service.js';
import { seesEveryTeam } from '../teams/access.js';
import { detachMemberFromTeams } from '../teams/service.js';
import { openTicketsOfAssignees } from '../tickets/queries.js';
import { publishControl } from './control.js';
import type { AssignableRole, ListMembersQuery, Member } from './schemas.js';

export type MemberView = Static<typeof Member>;

function memberQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select([
      'm.user_id',
      'm.role',
      'm.availability',
      'm.max_open_tickets',
      'm.last_seen_at',
      'm.created_at',
      'u.name',
      'u.email',
      'u.avatar_url',
      'u.avatar_source',
      microsOf('m.created_at').as('created_us'),
    ])
    .where('m.workspace_id', '=', workspaceId);
}

type MemberRow = Awaited<ReturnType<ReturnType<typeof memberQuery>['executeTakeFirstOrThrow']>>;

function present(r: MemberRow, openTickets: Map<string, number>, awayMinutes: number): MemberView {
  return {
    user: { id: r.user_id, name: r.name, email: r.email, avatar_url: r.avatar_url, avatar_source: r.avatar_source },
    role: r.role as Role,
    availability: r.availability,
    // What the member set, or away when auto-away applies (src/modules/assignment/presence.ts).
    presence: presenceOf(r.availability, r.last_seen_at, awayMinutes),
    max_open_tickets: r.max_open_tickets,
    open_tickets: openTickets.get(r.user_id) ?? 0,
    last_seen_at: iso(r.last_seen_at),
    created_at: iso(r.created_at)!,
  };
}

/** One member as the API shows it (also inside a transaction), or null. */
export async function getMemberView(db: Kysely<DB>, workspaceId: string, userId: string): Promise<MemberView | null> {
  if (!isUuid(userId)) return null;
  const row = await memberQuery(db, workspaceId).where('m.user_id', '=', userId).executeTakeFirst();
  if (!row) return null;
  const [counts, away] = await Promise.all([
    openTicketsOfAssignees(db, workspaceId, [row.user_id]),
    autoAwayMinutes(db, workspaceId),
  ]);
  return present(row, counts, away);
}

/** Members in the order they joined (created_at, then user id): stable pages whatever is renamed. */
export async function listMembers(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListMembersQuery>,
): Promise<Page<MemberView>> {
  const limit = q.limit ?? 50;
  const list = `members:${ctx.workspaceId}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  const db = deps.database.db;
  let query = memberQuery(db, ctx.workspaceId);
  if (after) {
    const at = fromMicros(Number(after[0]));
    query = query.where((eb) =>
      eb.or([
        eb('m.created_at', '>', at),
        eb.and([eb('m.created_at', '=', at), eb('m.user_id', '>', String(after[1]))]),
      ]),
    );
  }
  const rows = await query
    .orderBy('m.created_at', 'asc')
    .orderBy('m.user_id', 'asc')
    .limit(pageLimit(limit + 1))
    .execute();
  const [counts, away] = await Promise.all([
    openTicketsOfAssignees(
      db,
      ctx.workspaceId,
      rows.slice(0, limit).map((r) => r.user_id),
    ),
    autoAwayMinutes(db, ctx.workspaceId),
  ]);
  return deps.pager.page(
    list,
    rows,
    limit,
    (r) => [r.created_us, r.user_id],
    (r) => present(r, counts, away),
  );
}

/** `me` means the caller (people only); anything that is not a UUID is simply not found. */
export function targetId(ctx: RequestContext, param: string): string {
  if (param === 'me' && ctx.actor.kind === 'member') return ctx.actor.userId;
  if (!isUuid(param)) throw notFound('Member not found.');
  return param.toLowerCase();
}

/**
 * Locks the workspace's owners (in a fixed order, so two owners demoting each other cannot
 * both succeed) and then the target. 404 when the target is not a member of this workspace.
 */
async function lockTarget(
  u: Unit,
  ctx: RequestContext,
  userId: string,
): Promise<{ role: Role; owners: number; callerIsOwner: boolean }> {
  const owners = await u.trx
    .selectFrom('members')
    .select('user_id')
    .where('workspace_id', '=', u.workspaceId)
    .where('role', '=', 'owner')
    .orderBy('user_id')
    .forUpdate()
    .execute();
  const target = await u.trx
    .selectFrom('members')
    .select('role')
    .where('workspace_id', '=', u.workspaceId)
    .where('user_id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
  if (!target) throw notFound('Member not found.');
  // The caller's ownership as of now, under the lock (not as of authentication).
  const me = ctx.actor.kind === 'member' ? ctx.actor.userId : null;
  return {
    role: target.role as Role,
    owners: owners.length,
    callerIsOwner: me !== null && owners.some((o) => o.user_id === me),
  };
}

/** Only an owner acts on an owner (API keys never do), and never on the last one. */
function guardOwner(target: { role: Role; owners: number; callerIsOwner: boolean }, location: string, what: string) {
  if (target.role !== 'owner') return;
  if (!target.callerIsOwner) throw forbidden(`Only an owner can ${what} an owner.`);
  if (target.owners <= 1) {
    throw invalid(location, `the last owner cannot be ${what}d; transfer ownership first`);
  }
}

export async function changeMemberRole(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  role: Static<typeof AssignableRole>,
): Promise<MemberView> {
  const userId = targetId(ctx, param);
  let crossedAdmin = false;
  const view = await deps.writer.run(ctx.workspaceId, async (u) => {
    const target = await lockTarget(u, ctx, userId);
    if (target.role === role) {
      return (await getMemberView(u.trx, ctx.workspaceId, userId))!;
    }
    guardOwner(target, 'body.role', 'demote');
    // A viewer made a seat counts against the plan (hosted offering: 402 plan_limit).
    if (target.role === 'viewer') await checkPlanLimit(deps, u.trx, ctx.workspaceId, 'members');
    await u.trx
      .updateTable('members')
      .set({ role, updated_at: new Date() })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('user_id', '=', userId)
      .execute();
    const member = (await getMemberView(u.trx, ctx.workspaceId, userId))!;
    u.emit({ type: 'member.updated', topics: [`user:${userId}`], data: { member } });
    await recordAudit(u.trx, ctx, {
      action: 'member.role_changed',
      entityType: 'member',
      entityId: userId,
      data: { from: target.role, to: role },
    });
    crossedAdmin = seesEveryTeam(target.role) !== seesEveryTeam(role);
    // To or from viewer: the billed seats changed (the provider syncs its quantity).
    if ((target.role === 'viewer') !== (role === 'viewer')) u.afterCommit(() => seatsChanged(deps, ctx.workspaceId));
    return member;
  });
  // Admins see every private team: gaining or losing that changes what the person's live
  // sockets may receive, so the gateway closes them (reconnect with a fresh token).
  if (crossedAdmin) {
    await publishControl(deps, { type: 'teams.changed', workspace_id: ctx.workspaceId, user_ids: [userId] });
  }
  return view;
}

export async function removeMember(deps: Deps, ctx: RequestContext, param: string): Promise<void> {
  const userId = targetId(ctx, param);
  await deps.writer.run(ctx.workspaceId, async (u) => {
    const target = await lockTarget(u, ctx, userId);
    guardOwner(target, 'path.user_id', 'remove');
    const user = await u.trx.selectFrom('users').select(['name', 'email']).where('id', '=', userId).executeTakeFirst();
    // Their team memberships go too (team.updated for each team they leave).
    await detachMemberFromTeams(u, userId);
    // Their tickets stay, unassigned (the foreign key does not clear it: Citus, 0054_citus_keys.sql).
    await u.trx
      .updateTable('tickets')
      .set({ assignee_id: null })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('assignee_id', '=', userId)
      .execute();
    await u.trx
      .deleteFrom('members')
      .where('workspace_id', '=', ctx.workspaceId)
      .where('user_id', '=', userId)
      .execute();
    u.emit({ type: 'member.removed', topics: [`user:${userId}`], data: { user_id: userId } });
    if (target.role !== 'viewer') u.afterCommit(() => seatsChanged(deps, ctx.workspaceId));
    await recordAudit(u.trx, ctx, {
      action: 'member.removed',
      entityType: 'member',
      entityId: userId,
      data: { role: target.role, name: user?.name ?? null, email: user?.email ?? null },
    });
  });
  // The gateway closes the person's sockets for this workspace.
  await publishControl(deps, { type: 'member.removed', workspace_id: ctx.workspaceId, user_id: userId });
}
