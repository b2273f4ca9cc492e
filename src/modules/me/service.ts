// The signed-in person's own profile: PATCH /v1/me. The user row is one for every workspace, and
// the person's member record in each of them shows it, so one change is one transaction with a
// member.updated event and an audit entry in every workspace they belong to.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { UserContext } from '../../platform/http/context.js';
import { invalid, notFound } from '../../platform/http/errors.js';
import { recordAudit } from '../audit/service.js';
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
        { action: 'user.updated', entityType: 'user', entityId: user.userId, data: { changes } },
      );
    }
  });
}
