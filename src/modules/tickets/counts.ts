// GET /v1/tickets/counts: the inbox sidebar's numbers (unassigned, mine, open, …, and each view
// the caller can see), over the live tickets the caller may see, with the list's own filters.
import type { Static } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { RequestContext } from '../../platform/http/context.js';
import { fieldDefs } from '../custom-fields/service.js';
import { hiddenTeamIds } from '../teams/access.js';
import { visibleViews } from '../views/service.js';
import { baseFilters, criteria, notHidden } from './list.js';
import type { TicketCounts } from './schemas.js';
import { ACTIVE_STATUSES } from './status.js';

/** The counts of the inbox sidebar, over live tickets the caller may see. */
export async function ticketCounts(deps: Deps, ctx: RequestContext): Promise<Static<typeof TicketCounts>> {
  const db = deps.database.db;
  const hidden = await hiddenTeamIds(db, ctx);
  const me = ctx.actor.kind === 'member' ? ctx.actor.userId : null;
  const active = sql.join(ACTIVE_STATUSES.map((s) => sql`${s}`));
  const views = await viewCounts(deps, ctx, hidden);
  const row = await db
    .selectFrom('tickets as t')
    .select([
      sql<number>`count(*) FILTER (WHERE NOT t.spam AND t.assignee_id IS NULL AND t.status IN (${active}))::int`.as(
        'unassigned',
      ),
      sql<number>`count(*) FILTER (WHERE NOT t.spam AND t.assignee_id = ${me} AND t.status IN (${active}))::int`.as(
        'mine',
      ),
      sql<number>`count(*) FILTER (WHERE NOT t.spam AND t.status = 'open')::int`.as('open'),
      sql<number>`count(*) FILTER (WHERE NOT t.spam AND t.status = 'pending')::int`.as('pending'),
      sql<number>`count(*) FILTER (WHERE NOT t.spam AND t.status = 'on_hold')::int`.as('on_hold'),
      sql<number>`count(*) FILTER (WHERE NOT t.spam AND t.status = 'solved')::int`.as('solved'),
      sql<number>`count(*) FILTER (WHERE t.spam)::int`.as('spam'),
    ])
    .where('t.workspace_id', '=', ctx.workspaceId)
    .where('t.deleted_at', 'is', null)
    .$if(hidden.length > 0, (qb) =>
      qb.where((eb) => eb.or([eb('t.team_id', 'is', null), eb('t.team_id', 'not in', hidden)])),
    )
    .executeTakeFirstOrThrow();
  return { ...row, views };
}

/**
 * Tickets in each view the caller can see (a view that cannot be evaluated, say after its
 * field was deleted, counts 0 rather than failing the whole answer). One count per view.
 */
async function viewCounts(deps: Deps, ctx: RequestContext, hidden: string[]): Promise<Record<string, number>> {
  const db = deps.database.db;
  const views = await visibleViews(db, ctx);
  const out: Record<string, number> = {};
  if (views.length === 0) return out;
  const defs = await fieldDefs(db, ctx.workspaceId, 'ticket');
  for (const v of views) {
    try {
      const preds = await criteria(deps, ctx, { view_id: v.id }, defs);
      let query = db.selectFrom('tickets as t').select(sql<number>`count(*)::int`.as('n'));
      query = query.where('t.workspace_id', '=', ctx.workspaceId);
      for (const f of [...baseFilters({}, notHidden(hidden)), ...preds]) query = query.where(f as never);
      out[v.id] = (await query.executeTakeFirstOrThrow()).n;
    } catch (err) {
      if ((err as { status?: number }).status !== 422) throw err;
      out[v.id] = 0;
    }
  }
  return out;
}
