// GET /v1/assistant/tips (interface.md "Assistant", Tips): what deserves the person's attention
// now, from counts over the tickets they may see (live, not spam, no private team they are not
// in), in one statement; no model, cost 0. Only tips whose count is above 0, most urgent first.
// "Open" means open, pending or on hold, as the inbox's counts mean it.
//
// - sla_breached: open tickets whose SLA is breached (sla.breached).
// - sla_due_soon: open tickets with an SLA clock not yet breached that is due within the hour
//   (tickets.sla_breach_at, the nearest such due date).
// - sla_at_risk: open tickets with a clock due within 4 hours whose stored sla_risk (triage's
//   decision in custom.ai_decisions.fields.sla_risk) is at least 0.6. The risk is the
//   probability that the ticket misses its SLA: the decision's probability when it said true,
//   1 minus it when it said false (a language model gives none: true is 1, false 0).
// - unassigned_old: open tickets without an assignee created more than 24 hours ago.
// - mine_waiting: open tickets assigned to the person whose last message is the customer's
//   (last_customer_message_at is the ticket's last_message_at: no reply or note since).
import type { Static } from '@sinclair/typebox';
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { RequestContext } from '../../platform/http/context.js';
import { hiddenTeamIds, notInHiddenTeams } from '../teams/access.js';
import { ACTIVE_STATUSES } from '../tickets/status.js';
import type { Tip } from './schemas.js';

type TipT = Static<typeof Tip>;

export const TIP_WINDOWS = { dueSoonMinutes: 60, atRiskHours: 4, atRiskMin: 0.6, unassignedHours: 24 };

const SLA_RISK = sql<number>`(
  CASE WHEN jsonb_typeof(t.custom #> '{ai_decisions,fields,sla_risk}') <> 'object' THEN NULL
       WHEN t.custom #> '{ai_decisions,fields,sla_risk,value}' IN ('true'::jsonb, '"true"'::jsonb)
         THEN coalesce((t.custom #>> '{ai_decisions,fields,sla_risk,probability}')::float8, 1)
       ELSE 1 - coalesce((t.custom #>> '{ai_decisions,fields,sla_risk,probability}')::float8, 1)
  END)`;

const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

export async function getTips(deps: Deps, ctx: RequestContext): Promise<TipT[]> {
  const db = deps.database.db;
  const hidden = notInHiddenTeams(await hiddenTeamIds(db, ctx));
  const me = ctx.actor.kind === 'member' ? ctx.actor.userId : null;
  const now = new Date();
  const dueSoon = new Date(now.getTime() + TIP_WINDOWS.dueSoonMinutes * 60_000);
  const atRisk = new Date(now.getTime() + TIP_WINDOWS.atRiskHours * 3_600_000);
  const old = new Date(now.getTime() - TIP_WINDOWS.unassignedHours * 3_600_000);
  const breached = sql`(t.sla->>'breached') = 'true'`;
  const row = await db
    .selectFrom('tickets as t')
    .select([
      sql<number>`count(*) FILTER (WHERE ${breached})::int`.as('sla_breached'),
      sql<number>`count(*) FILTER (WHERE NOT coalesce(${breached}, false)
                   AND t.sla_breach_at >= ${now} AND t.sla_breach_at <= ${dueSoon})::int`.as('sla_due_soon'),
      sql<number>`count(*) FILTER (WHERE NOT coalesce(${breached}, false)
                   AND t.sla_breach_at >= ${now} AND t.sla_breach_at <= ${atRisk}
                   AND ${SLA_RISK} >= ${TIP_WINDOWS.atRiskMin})::int`.as('sla_at_risk'),
      sql<number>`count(*) FILTER (WHERE t.assignee_id IS NULL AND t.created_at < ${old})::int`.as('unassigned_old'),
      sql<number>`count(*) FILTER (WHERE t.assignee_id = ${me} AND t.last_customer_message_at IS NOT NULL
                   AND t.last_customer_message_at >= t.last_message_at)::int`.as('mine_waiting'),
    ])
    .where('t.workspace_id', '=', ctx.workspaceId)
    .where('t.deleted_at', 'is', null)
    .where('t.spam', '=', false)
    .where('t.status', 'in', ACTIVE_STATUSES)
    .$if(hidden !== null, (q) => q.where(hidden!))
    .executeTakeFirstOrThrow();

  const tips: TipT[] = [
    {
      key: 'sla_breached',
      count: row.sla_breached,
      severity: 'critical',
      text: `${n(row.sla_breached, 'open ticket has', 'open tickets have')} breached the SLA.`,
      prompt: 'Show me the open tickets that breached their SLA, most urgent first.',
    },
    {
      key: 'sla_due_soon',
      count: row.sla_due_soon,
      severity: 'warning',
      text: `${n(row.sla_due_soon, 'ticket is', 'tickets are')} due within the hour.`,
      prompt: 'Which tickets are due within the next hour, and what do they need?',
    },
    {
      key: 'sla_at_risk',
      count: row.sla_at_risk,
      severity: 'warning',
      text: `${n(row.sla_at_risk, 'ticket due within 4 hours is', 'tickets due within 4 hours are')} likely to miss the SLA.`,
      prompt: 'Which tickets due in the next 4 hours are at risk of missing their SLA?',
    },
    {
      key: 'unassigned_old',
      count: row.unassigned_old,
      severity: 'warning',
      text: `${n(row.unassigned_old, 'open ticket has', 'open tickets have')} waited over a day without an assignee.`,
      prompt: 'Show me the unassigned tickets older than a day and suggest who could take them.',
    },
    {
      key: 'mine_waiting',
      count: row.mine_waiting,
      severity: 'info',
      text: `${n(row.mine_waiting, 'of your tickets is', 'of your tickets are')} waiting for your reply.`,
      prompt: 'Which of my tickets are waiting for my reply?',
    },
  ];
  return tips.filter((t) => t.count > 0);
}
