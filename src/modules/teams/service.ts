// Teams: a name, members, and a private flag. A private team's tickets are visible only to
// its members and to admins and owners (canSeeTeam). Changing who is in a private team
// closes the sockets of the people whose private teams changed (ControlMessage teams.changed).
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid, newId } from '../../platform/crypto/random.js';
import { fromMicros, microsOf, pageLimit } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { uniqueOrConflict } from '../../platform/db/unique.js';
import type { RequestContext } from '../../platform/http/context.js';
import { conflict, invalid, notFound } from '../../platform/http/errors.js';
import type { Page } from '../../platform/http/pagination.js';
import { iso } from '../../platform/http/schemas.js';
import { recordAudit } from '../audit/service.js';
import { publishControl } from '../members/control.js';
import type { CreateTeamBody, ListTeamsQuery, PatchTeamBody, Team } from './schemas.js';

export type TeamView = Static<typeof Team>;

/** The private teams' rule (team-access.ts), where callers of this service look for it. */
export { canSeeTeam } from './access.js';

/** A team with its member_ids (in ascending id order). */
function teamQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('teams as t')
    .select([
      't.id',
      't.name',
      't.private',
      't.created_at',
      microsOf('t.created_at').as('created_us'),
      (eb) =>
        eb
          .selectFrom('team_members as tm')
          .select(sql<string[]>`coalesce(array_agg(tm.user_id::text order by tm.user_id), '{}')`.as('ids'))
          .whereRef('tm.workspace_id', '=', 't.workspace_id')
          .whereRef('tm.team_id', '=', 't.id')
          .as('member_ids'),
    ])
    .where('t.workspace_id', '=', workspaceId);
}

type TeamRow = Awaited<ReturnType<ReturnType<typeof teamQuery>['executeTakeFirstOrThrow']>>;

const present = (r: TeamRow): TeamView => ({
  id: r.id,
  name: r.name,
  private: r.private,
  member_ids: r.member_ids ?? [],
  created_at: iso(r.created_at)!,
});

async function loadTeam(db: Kysely<DB>, workspaceId: string, id: string): Promise<TeamView | null> {
  const row = await teamQuery(db, workspaceId).where('t.id', '=', id).executeTakeFirst();
  return row ? present(row) : null;
}

/** Teams in the order they were created: stable pages whatever is renamed. Every member sees every team. */
export async function listTeams(
  deps: Deps,
  ctx: RequestContext,
  q: Static<typeof ListTeamsQuery>,
): Promise<Page<TeamView>> {
  const limit = q.limit ?? 50;
  const list = `teams:${ctx.workspaceId}`;
  const after = deps.pager.decode(list, q.cursor, 2);
  let query = teamQuery(deps.database.db, ctx.workspaceId);
  if (after) {
    const at = fromMicros(Number(after[0]));
    query = query.where((eb) =>
      eb.or([eb('t.created_at', '>', at), eb.and([eb('t.created_at', '=', at), eb('t.id', '>', String(after[1]))])]),
    );
  }
  const rows = await query
    .orderBy('t.created_at', 'asc')
    .orderBy('t.id', 'asc')
    .limit(pageLimit(limit + 1))
    .execute();
  return deps.pager.page(list, rows, limit, (r) => [r.created_us, r.id], present);
}

export async function getTeam(deps: Deps, ctx: RequestContext, id: string): Promise<TeamView> {
  if (!isUuid(id)) throw notFound('Team not found.');
  const team = await loadTeam(deps.database.db, ctx.workspaceId, id);
  if (!team) throw notFound('Team not found.');
  return team;
}

function cleanName(name: string): string {
  const n = name.trim();
  if (n === '') throw invalid('body.name', 'must not be blank');
  return n;
}

/** Lower-cased, de-duplicated ids, every one a member of the workspace (422 otherwise). */
async function checkMembers(u: Unit, ids: string[]): Promise<string[]> {
  const wanted = [...new Set(ids.map((i) => i.toLowerCase()))];
  if (wanted.length === 0) return wanted;
  const found = await u.trx
    .selectFrom('members')
    .select('user_id')
    .where('workspace_id', '=', u.workspaceId)
    .where('user_id', 'in', wanted)
    .forShare()
    .execute();
  const known = new Set(found.map((r) => r.user_id));
  const missing = wanted.filter((i) => !known.has(i));
  if (missing.length > 0) {
    throw invalid('body.member_ids', `not members of this workspace: ${missing.join(', ')}`);
  }
  return wanted;
}

/** People whose set of private teams differs between two states of one team. */
function privateTeamsChanged(
  before: { private: boolean; member_ids: string[] } | null,
  after: { private: boolean; member_ids: string[] } | null,
): string[] {
  const b = new Set(before?.private ? before.member_ids : []);
  const a = new Set(after?.private ? after.member_ids : []);
  return [...new Set([...b, ...a])].filter((id) => b.has(id) !== a.has(id)).sort();
}

const nameTaken = <T>(work: () => Promise<T>): Promise<T> =>
  uniqueOrConflict({ teams_name_key: 'A team with this name already exists.' }, work);

async function teamsChanged(deps: Deps, workspaceId: string, userIds: string[]): Promise<void> {
  if (userIds.length === 0) return;
  await publishControl(deps, { type: 'teams.changed', workspace_id: workspaceId, user_ids: userIds });
}

export async function createTeam(
  deps: Deps,
  ctx: RequestContext,
  input: Static<typeof CreateTeamBody>,
): Promise<TeamView> {
  const name = cleanName(input.name);
  const isPrivate = input.private ?? false;
  const id = newId();
  const team = await nameTaken(() =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      const memberIds = await checkMembers(u, input.member_ids ?? []);
      const row = await u.trx
        .insertInto('teams')
        .values({ workspace_id: ctx.workspaceId, id, name, private: isPrivate })
        .onConflict((oc) => oc.doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!row) throw conflict('A team with this name already exists.');
      if (memberIds.length > 0) {
        await u.trx
          .insertInto('team_members')
          .values(memberIds.map((user_id) => ({ workspace_id: ctx.workspaceId, team_id: id, user_id })))
          .execute();
      }
      const view = (await loadTeam(u.trx, ctx.workspaceId, id))!;
      u.emit({ type: 'team.created', data: { team: view } });
      await recordAudit(u.trx, ctx, {
        action: 'team.created',
        entityType: 'team',
        entityId: id,
        data: { name, private: isPrivate, member_ids: view.member_ids },
      });
      return view;
    }),
  );
  await teamsChanged(deps, ctx.workspaceId, privateTeamsChanged(null, team));
  return team;
}

export async function updateTeam(
  deps: Deps,
  ctx: RequestContext,
  id: string,
  input: Static<typeof PatchTeamBody>,
): Promise<TeamView> {
  if (!isUuid(id)) throw notFound('Team not found.');
  const name = input.name === undefined ? undefined : cleanName(input.name);
  const { before, after } = await nameTaken(() =>
    deps.writer.run(ctx.workspaceId, async (u) => {
      const before = await lockTeam(u.trx, ctx.workspaceId, id);
      const memberIds = input.member_ids === undefined ? undefined : await checkMembers(u, input.member_ids);

      const changes: Record<string, unknown> = {};
      if (name !== undefined && name !== before.name) changes.name = { from: before.name, to: name };
      if (input.private !== undefined && input.private !== before.private) {
        changes.private = { from: before.private, to: input.private };
      }
      const added = memberIds?.filter((m) => !before.member_ids.includes(m)) ?? [];
      const removed = memberIds ? before.member_ids.filter((m) => !memberIds.includes(m)) : [];
      if (added.length > 0) changes.added_member_ids = added;
      if (removed.length > 0) changes.removed_member_ids = removed;
      if (Object.keys(changes).length === 0) return { before, after: before };

      if (changes.name !== undefined || changes.private !== undefined) {
        await u.trx
          .updateTable('teams')
          .set({
            ...(changes.name !== undefined ? { name } : {}),
            ...(changes.private !== undefined ? { private: input.private } : {}),
            updated_at: new Date(),
          })
          .where('workspace_id', '=', ctx.workspaceId)
          .where('id', '=', id)
          .execute();
      }
      if (removed.length > 0) {
        await u.trx
          .deleteFrom('team_members')
          .where('workspace_id', '=', ctx.workspaceId)
          .where('team_id', '=', id)
          .where('user_id', 'in', removed)
          .execute();
      }
      if (added.length > 0) {
        await u.trx
          .insertInto('team_members')
          .values(added.map((user_id) => ({ workspace_id: ctx.workspaceId, team_id: id, user_id })))
          .execute();
      }
      const after = (await loadTeam(u.trx, ctx.workspaceId, id))!;
      u.emit({ type: 'team.updated', data: { team: after } });
      await recordAudit(u.trx, ctx, { action: 'team.updated', entityType: 'team', entityId: id, data: changes });
      return { before, after };
    }),
  );
  await teamsChanged(deps, ctx.workspaceId, privateTeamsChanged(before, after));
  return after;
}

/** The team, locked for this transaction (404 when it is not in the workspace). */
async function lockTeam(trx: Kysely<DB>, workspaceId: string, id: string): Promise<TeamView> {
  const locked = await trx
    .selectFrom('teams')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  if (!locked) throw notFound('Team not found.');
  return (await loadTeam(trx, workspaceId, id))!;
}

export async function deleteTeam(deps: Deps, ctx: RequestContext, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('Team not found.');
  const before = await deps.writer.run(ctx.workspaceId, async (u) => {
    const before = await lockTeam(u.trx, ctx.workspaceId, id);
    // Its tickets and mailboxes stay, without a team (the foreign keys do not clear it: Citus, 0054_citus_keys.sql).
    for (const table of ['tickets', 'mailboxes'] as const) {
      await u.trx
        .updateTable(table)
        .set({ team_id: null })
        .where('workspace_id', '=', ctx.workspaceId)
        .where('team_id', '=', id)
        .execute();
    }
    await u.trx.deleteFrom('teams').where('workspace_id', '=', ctx.workspaceId).where('id', '=', id).execute();
    u.emit({ type: 'team.deleted', data: { team_id: id } });
    await recordAudit(u.trx, ctx, {
      action: 'team.deleted',
      entityType: 'team',
      entityId: id,
      data: { name: before.name, private: before.private, member_ids: before.member_ids },
    });
    return before;
  });
  await teamsChanged(deps, ctx.workspaceId, privateTeamsChanged(before, null));
}

/**
 * Inside a member's removal: takes the person out of every team of the workspace, with a
 * team.updated event for each team they leave. (Their sockets close through member.removed.)
 */
export async function detachMemberFromTeams(u: Unit, userId: string): Promise<void> {
  const left = await u.trx
    .deleteFrom('team_members')
    .where('workspace_id', '=', u.workspaceId)
    .where('user_id', '=', userId)
    .returning('team_id')
    .execute();
  for (const { team_id } of left) {
    const team = await loadTeam(u.trx, u.workspaceId, team_id);
    if (team) u.emit({ type: 'team.updated', data: { team } });
  }
}
