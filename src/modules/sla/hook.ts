// The SLA clocks inside a ticket's transaction (src/modules/tickets/hooks.ts, order 30, nested so
// it follows a priority an automation sets). The rules are in ./engine.ts:
// - prepareCreated: the first enabled policy for the ticket's priority (or any) gives sla and its
//   columns to the new ticket's INSERT (so the created event carries it); no policy, sla stays null;
// - a priority change recomputes the clocks under the new priority's policy;
// - the first agent reply stops the first-response clock, solved/closed the resolution clock;
// - a customer's message on an answered ticket with no next-response clock running starts one
//   from that message (under the policy matching the ticket's priority then); the next agent
//   reply stops it, as does solved/closed (notes and automations' replies run no agent_replied);
// - reopening (solved/closed → open, pending, on_hold) starts a fresh resolution clock;
// - spam tickets do not breach (while spam).
// Changes after creation write tickets.sla, due_at and sla_breach_at, and emit ticket.updated
// with changes ['sla'] when the part the API shows changed.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import type { CalendarInput } from '../business-hours/calendar.js';
import { calendarOf } from '../business-hours/service.js';
import type { TicketChange, TicketHook } from '../tickets/hooks.js';
import { emitUpdated } from '../tickets/patch.js';
import { reload } from '../tickets/queries.js';
import {
  agentRepliedSla,
  type ClockState,
  customerWroteSla,
  type DueFn,
  type PolicyTargets,
  parseSla,
  recomputeSla,
  reopenSla,
  type StoredSla,
  shownSla,
  slaColumns,
  startSla,
  startsNextResponse,
  syncSla,
} from './engine.js';
import { dueFunction, dueIn, matchPolicy } from './service.js';

/** What the probe reads for a new ticket: the enabled policies in match order, the enabled hours. */
interface Configuration {
  policies: Array<PolicyTargets & { priority: string | null }>;
  hours: CalendarInput | null;
}

const isDone = (status: string) => status === 'solved' || status === 'closed';

/** What the clocks read of a ticket, with its indexed columns and what a notice names. */
export function clockQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('tickets')
    .select([
      'id',
      'number',
      'subject',
      'status',
      'priority',
      'assignee_id',
      'sla',
      'first_responded_at',
      'last_customer_message_at',
      'spam',
      'created_at',
      'due_at',
      'sla_breach_at',
      'deleted_at',
    ])
    .where('workspace_id', '=', workspaceId);
}

export type ClockRow = Awaited<ReturnType<ReturnType<typeof clockQuery>['executeTakeFirstOrThrow']>>;

export const clockOf = (r: {
  created_at: Date;
  status: string;
  first_responded_at: Date | null;
  spam: boolean;
}): ClockState => ({
  created_at: r.created_at,
  status: r.status,
  first_responded_at: r.first_responded_at,
  spam: r.spam,
});

const time = (d: Date | null) => (d === null ? null : d.getTime());

/**
 * Stores the SLA and its columns when they differ from the row's; returns whether it wrote and
 * whether the part the API shows changed (the caller emits ticket.updated then).
 */
export async function writeSla(
  u: Unit,
  row: Pick<ClockRow, 'id' | 'created_at' | 'status' | 'first_responded_at' | 'spam' | 'due_at' | 'sla_breach_at'>,
  next: StoredSla | null,
  prev: StoredSla | null,
) {
  const cols = slaColumns(next, clockOf(row));
  const stored = JSON.stringify(next) !== JSON.stringify(prev);
  const columns = time(cols.due_at) !== time(row.due_at) || time(cols.sla_breach_at) !== time(row.sla_breach_at);
  const shown = JSON.stringify(shownSla(next)) !== JSON.stringify(shownSla(prev));
  if (stored || columns) {
    await u.trx
      .updateTable('tickets')
      .set({
        sla: next === null ? null : JSON.stringify(next),
        due_at: cols.due_at,
        sla_breach_at: cols.sla_breach_at,
        ...(shown ? { updated_at: new Date() } : {}),
      })
      .where('workspace_id', '=', u.workspaceId)
      .where('id', '=', row.id)
      .execute();
  }
  return { wrote: stored || columns, shown };
}

/** Whether a change can move a clock (cheap: no query). */
function concerns(change: TicketChange): boolean {
  const c = change.changes;
  // Without clocks only a new priority can start some (a nested run of this hook that gave the
  // ticket clocks during this event saw the ticket as the event left it).
  if (change.ticket.sla === null && !(change.trigger === 'ticket_updated' && c.includes('priority'))) return false;
  switch (change.trigger) {
    case 'ticket_updated':
      return c.includes('priority') || c.includes('status') || c.includes('spam');
    case 'customer_replied': {
      // A reopening, or a message that may start a next-response clock (read fresh in run).
      const s = parseSla(change.ticket.sla);
      return c.includes('status') || (s !== null && startsNextResponse(s, clockOf(change.ticket)));
    }
    case 'agent_replied': {
      const s = parseSla(change.ticket.sla);
      return s !== null && (s.first_response_due_at !== null || s.next_response_from !== '');
    }
    default:
      return false;
  }
}

export const slaHook: TicketHook = {
  name: 'sla',
  order: 30,
  nested: true,

  // The enabled policies in match order and the enabled business hours, or null without a
  // policy (no clock to start on a new ticket), read with the other hooks' configuration.
  probe: (workspaceId) => ({
    prepare: sql<Configuration | null>`(
      SELECT json_build_object(
               'policies', json_agg(json_build_object('id', p.id, 'priority', p.priority,
                 'first_response_minutes', p.first_response_minutes,
                 'next_response_minutes', p.next_response_minutes, 'resolution_minutes', p.resolution_minutes,
                 'business_hours', p.business_hours) ORDER BY p.position, p.created_at, p.id),
               'hours', (SELECT json_build_object('timezone', b.timezone, 'schedule', b.schedule, 'holidays', b.holidays)
                           FROM business_hours b WHERE b.workspace_id = ${workspaceId} AND b.enabled))
        FROM sla_policies p WHERE p.workspace_id = ${workspaceId} AND p.enabled HAVING count(*) > 0)`,
  }),

  async prepareCreated(_deps, u, draft, probed) {
    let policy: PolicyTargets | null;
    let due: DueFn;
    if (probed && typeof probed === 'object') {
      const { policies, hours } = probed as Configuration;
      // As matchPolicy: the first for the ticket's priority or for any.
      policy = policies.find((p) => p.priority === draft.priority || p.priority === null) ?? null;
      due = dueIn(policy?.business_hours ? calendarOf(hours) : null);
    } else {
      policy = await matchPolicy(u.trx, u.workspaceId, draft.priority);
      due = await dueFunction(u.trx, u.workspaceId, policy);
    }
    if (!policy) return null;
    const sla = startSla(policy, clockOf(draft), due);
    return { sla: JSON.stringify(sla), ...slaColumns(sla, clockOf(draft)) };
  },

  async run(_deps, u, change) {
    if (!concerns(change)) return false;
    // Fresh: an earlier hook of this event may have changed the ticket since `change.ticket`.
    const row = await clockQuery(u.trx, u.workspaceId).where('id', '=', change.ticket.id).executeTakeFirst();
    if (!row || row.deleted_at !== null) return false;
    const prev = parseSla(row.sla);
    const t = clockOf(row);
    const priorityChanged = change.trigger === 'ticket_updated' && change.changes.includes('priority');
    const reopened = change.before !== null && isDone(change.before.status) && !isDone(row.status);
    if (prev === null && !priorityChanged) return false;
    const customerWrote = change.trigger === 'customer_replied' && prev !== null && startsNextResponse(prev, t);

    let next = prev;
    if (priorityChanged || (reopened && prev !== null) || customerWrote) {
      const policy = await matchPolicy(u.trx, u.workspaceId, row.priority);
      const due = await dueFunction(u.trx, u.workspaceId, policy);
      if (reopened && next !== null) {
        // The transaction's start: a nested and an outer run of one change agree on it.
        const { now } = await sql<{ now: Date }>`SELECT now() AS now`.execute(u.trx).then((r) => r.rows[0]!);
        next = reopenSla(next, policy, t, due, new Date(now));
      }
      if (customerWrote && next !== null) {
        // From the message: tickets.last_customer_message_at is its time.
        next = customerWroteSla(next, policy, t, due, row.last_customer_message_at ?? new Date());
      }
      if (priorityChanged) next = recomputeSla(next, policy, t, due);
    }
    if (next !== null && change.trigger === 'agent_replied') next = agentRepliedSla(next);
    if (next !== null) next = syncSla(next, t);
    const { wrote, shown } = await writeSla(u, row, next, prev);
    if (shown) emitUpdated(u, await reload(u, row.id), ['sla']);
    return wrote;
  },
};
