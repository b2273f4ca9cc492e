// The references a ticket write names, checked in its transaction: assignee, team, contact, and
// a snooze time. Each refusal points at the field (422).
import type { Unit } from '../../platform/db/tx.js';
import { type Role, roleAtLeast } from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';

/** An assignee must be a member who can work tickets (agent or above). */
export async function checkAssignee(u: Unit, userId: string, location: string): Promise<void> {
  const m = await u.trx
    .selectFrom('members')
    .select('role')
    .where('workspace_id', '=', u.workspaceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!m) throw invalid(location, 'is not a member of this workspace');
  if (!roleAtLeast(m.role as Role, 'agent')) throw invalid(location, 'is a viewer; viewers cannot be assigned tickets');
}

/** A team of this workspace; its private flag. */
export async function checkTeam(u: Unit, teamId: string, location: string): Promise<{ private: boolean }> {
  const t = await u.trx
    .selectFrom('teams')
    .select('private')
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', teamId)
    .forShare()
    .executeTakeFirst();
  if (!t) throw invalid(location, 'no such team in this workspace');
  return t;
}

/** A contact of this workspace (share-locked: it cannot be deleted before the COMMIT). */
export async function checkContact(u: Unit, contactId: string, location: string): Promise<void> {
  const c = await u.trx
    .selectFrom('contacts')
    .select('id')
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', contactId)
    .forShare()
    .executeTakeFirst();
  if (!c) throw invalid(location, 'no such contact in this workspace');
}

/** A snooze time: in the future, or null (wake the ticket). */
export function checkSnooze(value: string | null, location: string): Date | null {
  if (value === null) return null;
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw invalid(location, 'must be a date-time');
  if (at.getTime() <= Date.now()) throw invalid(location, 'must be in the future (null wakes the ticket)');
  return at;
}
