// The signed-in person's own profile: PATCH /v1/me. The user row is one for every workspace, and
// the person's member record in each of them shows it, so one change is one transaction with a
// member.updated event and an audit entry in every workspace they belong to.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { CrossUnit } from '../../platform/db/tx.js';
import type { UserContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import { recordAudit } from '../audit/service.js';
import { type PictureChange, swapPictures } from '../images/store.js';
import { getMemberView } from '../members/service.js';
import type { PatchMeBody } from './schemas.js';

/** One line, trimmed: a name is shown in headers (an email's From) and lists. */
const cleanName = (name: string) => name.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();

export async function updateMe(deps: Deps, user: UserContext, input: Static<typeof PatchMeBody>): Promise<void> {
  const name = input.name === undefined ? undefined : cleanName(input.name);
  if (name === '') throw invalid('body.name', 'must not be blank');
  await deps.writer.runAcross(async (u) => {
    const before = await u.trx
      .selectFrom('users')
      .select(['id', 'name'])
      .where('id', '=', user.userId)
      .forUpdate()
      .executeTakeFirst();
    if (!before) throw notFound();
    const changes: Record<string, { from: unknown; to: unknown }> = {};
    if (name !== undefined && name !== before.name) changes.name = { from: before.name, to: name };
    if (Object.keys(changes).length === 0) return;
    await u.trx.updateTable('users').set({ name, updated_at: new Date() }).where('id', '=', user.userId).execute();
    await inEachWorkspace(u, user, 'user.updated', { changes });
  });
}

/**
 * What follows a change of the person's own row, in every workspace they belong to (their member
 * record there shows it): member.updated, and an audit entry with this action and data.
 */
async function inEachWorkspace(u: CrossUnit, user: UserContext, action: string, data: Record<string, unknown>) {
  const workspaces = await u.trx
    .selectFrom('members')
    .select('workspace_id')
    .where('user_id', '=', user.userId)
    .orderBy('workspace_id')
    .execute();
  for (const { workspace_id: workspaceId } of workspaces) {
    const member = await getMemberView(u.trx, workspaceId, user.userId);
    if (!member) continue;
    u.emitIn(workspaceId, { type: 'member.updated', topics: [`user:${user.userId}`], data: { member } });
    await recordAudit(
      u.trx,
      { workspaceId, actor: { kind: 'member', userId: user.userId, sessionId: user.sessionId }, ip: user.ip },
      { action, entityType: 'user', entityId: user.userId, data },
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Pictures (src/modules/images: processing, storage): the signed-in person's avatar_url and
// avatar_source, shown on their member record in every workspace: member.updated and
// user.avatar_updated / user.avatar_removed in each of them.

/** Points the person at a stored picture, or at none (PUT and DELETE /v1/me/avatar, PATCH /v1/me). */
export async function setUserPicture(deps: Deps, user: UserContext, change: PictureChange): Promise<void> {
  await deps.writer.runAcross(async (u) => {
    const before = await u.trx
      .selectFrom('users')
      .select(['avatar_url'])
      .where('id', '=', user.userId)
      .forUpdate()
      .executeTakeFirst();
    if (!before) throw notFound();
    if (change.picture === null && before.avatar_url === null) return;
    await swapPictures(u.trx, change.picture?.id ?? null, before.avatar_url);
    await u.trx
      .updateTable('users')
      .set({
        avatar_url: change.picture?.url ?? null,
        avatar_source: change.picture?.source ?? null,
        updated_at: new Date(),
      })
      .where('id', '=', user.userId)
      .execute();
    await inEachWorkspace(
      u,
      user,
      change.picture ? 'user.avatar_updated' : 'user.avatar_removed',
      change.picture ? { source: change.picture.source } : {},
    );
  });
}
