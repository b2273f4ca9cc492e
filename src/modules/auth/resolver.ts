// Access token → the signed-in user and, with SVC-Workspace, their membership: role and
// private teams. One indexed query per request; the session must still be live (not revoked,
// not past its end or idle limit), so a logout, a password change, a removal or the session's
// expiry takes effect on the next request, not when the access token's 15 minutes are over.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { CredentialResolver } from '../../platform/http/auth.js';
import type { Role } from '../../platform/http/context.js';
import { isLive } from './sessions.js';

export function userResolver(deps: Deps): CredentialResolver['accessToken'] {
  return async (token, workspaceId, ip) => {
    const claims = await deps.tokens.verify(token, 'access');
    if (!claims || typeof claims.sid !== 'string') return null;
    const db = deps.database.db;
    const row =
      workspaceId === null
        ? await db
            .selectFrom('sessions')
            .select([
              'user_id',
              'revoked_at',
              'expires_at',
              'last_used_at',
              sql<string | null>`null`.as('role'),
              sql<string[] | null>`null`.as('teams'),
            ])
            .where('id', '=', claims.sid)
            .executeTakeFirst()
        : await db
            .selectFrom('sessions as s')
            .leftJoin('members as m', (j) =>
              j.onRef('m.user_id', '=', 's.user_id').on('m.workspace_id', '=', workspaceId),
            )
            .select([
              's.user_id',
              's.revoked_at',
              's.expires_at',
              's.last_used_at',
              'm.role',
              (eb) =>
                eb
                  .selectFrom('team_members as tm')
                  .innerJoin('teams as t', (j) =>
                    j.onRef('t.workspace_id', '=', 'tm.workspace_id').onRef('t.id', '=', 'tm.team_id'),
                  )
                  .select(sql<string[]>`coalesce(array_agg(tm.team_id::text), '{}')`.as('ids'))
                  .where('tm.workspace_id', '=', workspaceId)
                  .whereRef('tm.user_id', '=', 's.user_id')
                  .where('t.private', '=', true)
                  .as('teams'),
            ])
            .where('s.id', '=', claims.sid)
            .executeTakeFirst();
    if (!row || !isLive(row) || row.user_id !== claims.sub) return null;
    const user = { userId: row.user_id, sessionId: claims.sid, ip };
    const role = (row.role as Role | null) ?? null;
    return {
      user,
      member:
        role && workspaceId
          ? {
              workspaceId,
              actor: { kind: 'member', userId: row.user_id, sessionId: claims.sid },
              role,
              scopes: null,
              teams: row.teams ?? [],
              ip,
            }
          : null,
    };
  };
}
