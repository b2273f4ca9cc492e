// Snoozed tickets wake up (docs/api.md "Tickets"): when
// snoozed_until passes it is cleared, and a pending or on_hold ticket becomes open, with a
// status_changed activity by the system and ticket.updated. A job runs this every minute; each
// ticket is its own small transaction, and a ticket being changed meanwhile is skipped (SKIP
// LOCKED) and woken on the next run.
import type { Deps } from '../../deps.js';
import { pageLimit } from '../../platform/db/keyset.js';
import { SYSTEM_ACTOR } from '../../platform/http/context.js';
import { addActivity } from './activities.js';
import { emitUpdated } from './patch.js';
import { ticketQuery } from './queries.js';

export const WAKE_SNOOZED_JOB = 'tickets.wake-snoozed';

/** Wakes tickets whose snooze ended by `now`; returns how many woke. */
export async function wakeSnoozedTickets(deps: Deps, now = new Date(), batch = 500): Promise<number> {
  const due = await deps.database.db
    .selectFrom('tickets')
    .select(['workspace_id', 'id'])
    .where('snoozed_until', '<=', now)
    .where('deleted_at', 'is', null)
    .orderBy('snoozed_until')
    .limit(pageLimit(batch))
    .execute();
  let woke = 0;
  for (const d of due) {
    const done = await deps.writer.run(d.workspace_id, async (u) => {
      const locked = await u.trx
        .selectFrom('tickets')
        .select(['status'])
        .where('workspace_id', '=', d.workspace_id)
        .where('id', '=', d.id)
        .where('snoozed_until', '<=', now)
        .where('deleted_at', 'is', null)
        .forUpdate()
        .skipLocked()
        .executeTakeFirst();
      if (!locked) return false;
      const reopen = locked.status === 'pending' || locked.status === 'on_hold';
      await u.trx
        .updateTable('tickets')
        .set({ snoozed_until: null, ...(reopen ? { status: 'open' } : {}), updated_at: new Date() })
        .where('workspace_id', '=', d.workspace_id)
        .where('id', '=', d.id)
        .execute();
      const row = await ticketQuery(u.trx, d.workspace_id).where('t.id', '=', d.id).executeTakeFirstOrThrow();
      const target = { id: row.id, privateTeamId: row.private_team_id };
      if (reopen) await addActivity(u, SYSTEM_ACTOR, target, 'status_changed', { from: locked.status, to: 'open' });
      emitUpdated(u, row, reopen ? ['snoozed_until', 'status'] : ['snoozed_until']);
      return true;
    });
    if (done) woke++;
  }
  return woke;
}

export async function registerTicketJobs(deps: Deps): Promise<void> {
  await deps.jobs.work(WAKE_SNOOZED_JOB, async () => {
    const n = await wakeSnoozedTickets(deps);
    if (n > 0) deps.log.info({ tickets: n }, 'snoozed tickets woke up');
  });
  await deps.jobs.schedule(WAKE_SNOOZED_JOB, '* * * * *');
}
