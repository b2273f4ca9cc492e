// The durable SLA timer: a job every minute (and once at start) marks the clocks past their due
// date. It sweeps by time (tickets.sla_breach_at <= now, indexed), so a deadline that passed while
// no process was running is marked by the first sweep after the service comes back.
//
// Each ticket is its own small transaction: lock the row (SKIP LOCKED: a ticket being changed is
// left for the next sweep), re-check against its state (a clock stopped meanwhile does not breach),
// then sla.breached true, one sla_breached activity per clock (data.kind first_response,
// next_response or resolution), an sla_breached notification to the assignee (if any) per clock,
// and ticket.updated with changes ['sla']. A clock is marked once: a second sweep finds nothing
// to do (a next-response clock once per cycle).
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { pageLimit } from '../../platform/db/keyset.js';
import { SYSTEM_ACTOR } from '../../platform/http/context.js';
import { notify } from '../notifications/service.js';
import { addActivity } from '../tickets/activities.js';
import { emitUpdated } from '../tickets/patch.js';
import { reload } from '../tickets/queries.js';
import { breachSla, parseSla } from './engine.js';
import { clockOf, clockQuery, writeSla } from './hook.js';

export const SLA_SWEEP_JOB = 'sla.breach-sweep';

/** Tickets looked at per page, and pages per sweep (the rest waits for the next minute). */
const PAGE = 500;
const MAX_PAGES = 20;

/** Marks every clock past due at `now`; returns how many tickets breached. */
export async function sweepSlaBreaches(deps: Deps, now = new Date(), page = PAGE): Promise<number> {
  let breached = 0;
  let after: { at: Date; id: string } | null = null;
  for (let p = 0; p < MAX_PAGES; p++) {
    let q = deps.database.db
      .selectFrom('tickets')
      .select(['workspace_id', 'id', 'sla_breach_at'])
      .where('sla_breach_at', '<=', now)
      .where('deleted_at', 'is', null);
    if (after) {
      const cut: RawBuilder<SqlBool> = sql<SqlBool>`(sla_breach_at, id) > (${after.at}, ${after.id}::uuid)`;
      q = q.where(cut);
    }
    const due = await q.orderBy('sla_breach_at').orderBy('id').limit(pageLimit(page)).execute();
    for (const d of due) if (await breachOne(deps, d.workspace_id, d.id, now)) breached++;
    if (due.length < page) break;
    const last = due[due.length - 1]!;
    after = { at: last.sla_breach_at!, id: last.id };
  }
  return breached;
}

async function breachOne(deps: Deps, workspaceId: string, ticketId: string, now: Date): Promise<boolean> {
  return deps.writer.run(workspaceId, async (u) => {
    const row = await clockQuery(u.trx, workspaceId)
      .where('id', '=', ticketId)
      .where('sla_breach_at', '<=', now)
      .where('deleted_at', 'is', null)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!row) return false;
    const prev = parseSla(row.sla);
    const { sla, kinds } = prev === null ? { sla: null, kinds: [] } : breachSla(prev, clockOf(row), now);
    const { shown } = await writeSla(u, row, sla, prev);
    if (!shown && kinds.length === 0) return false;
    const ticket = await reload(u, row.id);
    const target = { id: row.id, privateTeamId: ticket.private_team_id };
    for (const kind of kinds) {
      await addActivity(u, SYSTEM_ACTOR, target, 'sla_breached', { kind });
      if (row.assignee_id !== null) {
        await notify(u, {
          userId: row.assignee_id,
          type: 'sla_breached',
          ticket: { id: row.id, number: row.number, subject: row.subject },
          data: { kind },
        });
      }
    }
    if (shown) emitUpdated(u, ticket, ['sla']);
    return kinds.length > 0;
  });
}

export async function registerSlaJobs(deps: Deps): Promise<void> {
  await deps.jobs.work(SLA_SWEEP_JOB, async () => {
    const n = await sweepSlaBreaches(deps);
    if (n > 0) deps.log.info({ tickets: n }, 'SLA breaches marked');
  });
  await deps.jobs.schedule(SLA_SWEEP_JOB, '* * * * *');
  // Deadlines that passed while the service was down: marked now, not at the next minute.
  await deps.jobs.send(SLA_SWEEP_JOB, {}, { retryLimit: 0 });
}
