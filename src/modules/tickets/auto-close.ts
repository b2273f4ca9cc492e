// Auto-close: a solved ticket closes once it
// has been solved for the workspace's `auto_close_days` (default 4; 0 = never) and the customer
// has not written for as long. Closing sets status closed (solved_at stays), adds a
// status_changed activity by the system (reason auto_close) and emits ticket.updated. Required
// fields are not enforced (status.ts), and the workflow hooks do not run: it
// is housekeeping like a snooze wake-up, and a closed ticket is final (docs/decisions.md).
//
// A job runs the sweep every 10 minutes. The candidates come from one indexed query (each
// workspace's solved tickets by solve time, tickets_auto_close_idx); each ticket then closes in
// its own short transaction that checks the conditions again on the locked row, so a customer
// reply that reopened it meanwhile wins. A ticket locked by a change in progress is skipped
// (SKIP LOCKED) and closed on a later run.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { SYSTEM_ACTOR } from '../../platform/http/context.js';
import { DEFAULT_SETTINGS } from '../workspace/service.js';
import { addActivity } from './activities.js';
import { emitUpdated } from './patch.js';
import { ticketQuery } from './queries.js';

export const AUTO_CLOSE_JOB = 'tickets.auto-close';

/** The workspace's setting in SQL (w = workspaces), with the default when unset. */
const closeDays = sql<number>`coalesce((w.settings ->> 'auto_close_days')::int, ${DEFAULT_SETTINGS.auto_close_days})`;

export interface AutoCloseOptions {
  /** Only these workspaces (default: every workspace). */
  workspaceIds?: string[];
  /** Candidates per query (default 500). */
  batch?: number;
  /** Queries per call at most (default 20); a later run goes on. */
  maxBatches?: number;
}

/**
 * Solved tickets due to close by `now`, each workspace's oldest solves first (one index range per
 * workspace on tickets_auto_close_idx). Exported for bench/reports.ts, which shows its plan.
 */
export function dueTickets(now: Date, batch: number, only?: string[]) {
  return sql<{ workspace_id: string; id: string; days: number }>`
      SELECT w.id AS workspace_id, c.id, c.days
        FROM workspaces w
        CROSS JOIN LATERAL (SELECT ${closeDays} AS days) s
        CROSS JOIN LATERAL (
          SELECT t.id, s.days
            FROM tickets t
           WHERE t.workspace_id = w.id AND t.status = 'solved' AND t.deleted_at IS NULL
             AND t.solved_at <= ${now}::timestamptz - make_interval(days => s.days)
             AND (t.last_customer_message_at IS NULL
                  OR t.last_customer_message_at <= ${now}::timestamptz - make_interval(days => s.days))
           ORDER BY t.solved_at
           LIMIT ${batch}
        ) c
       WHERE s.days > 0${only ? sql` AND w.id IN (${sql.join(only)})` : sql``}
       LIMIT ${batch}`;
}

/** Closes the solved tickets due by `now`; returns how many closed. */
export async function autoCloseSolved(deps: Deps, now = new Date(), opts: AutoCloseOptions = {}): Promise<number> {
  const batch = opts.batch ?? 500;
  const only = opts.workspaceIds;
  if (only && only.length === 0) return 0;
  let closed = 0;
  for (let round = 0; round < (opts.maxBatches ?? 20); round++) {
    const due = await dueTickets(now, batch, only).execute(deps.database.db);
    for (const d of due.rows) if (await closeOne(deps, d.workspace_id, d.id, Number(d.days), now)) closed++;
    if (due.rows.length < batch) break;
  }
  return closed;
}

async function closeOne(deps: Deps, workspaceId: string, id: string, days: number, now: Date): Promise<boolean> {
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  return deps.writer.run(workspaceId, async (u) => {
    const locked = await u.trx
      .selectFrom('tickets')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('status', '=', 'solved')
      .where('deleted_at', 'is', null)
      .where('solved_at', '<=', cutoff)
      .where((eb) => eb.or([eb('last_customer_message_at', 'is', null), eb('last_customer_message_at', '<=', cutoff)]))
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!locked) return false;
    await u.trx
      .updateTable('tickets')
      .set({ status: 'closed', updated_at: new Date() })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .execute();
    const row = await ticketQuery(u.trx, workspaceId).where('t.id', '=', id).executeTakeFirstOrThrow();
    await addActivity(u, SYSTEM_ACTOR, { id: row.id, privateTeamId: row.private_team_id }, 'status_changed', {
      from: 'solved',
      to: 'closed',
      reason: 'auto_close',
    });
    emitUpdated(u, row, ['status']);
    return true;
  });
}

export async function registerAutoCloseJob(deps: Deps): Promise<void> {
  await deps.jobs.work(AUTO_CLOSE_JOB, async () => {
    const n = await autoCloseSolved(deps);
    if (n > 0) deps.log.info({ tickets: n }, 'solved tickets closed automatically');
  });
  await deps.jobs.schedule(AUTO_CLOSE_JOB, '*/10 * * * *');
}
