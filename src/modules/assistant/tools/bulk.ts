// bulk_update_tickets: the same changes on many tickets, named by a list or by the ticket list's
// filters (at most 100, as POST /v1/tickets/bulk allows). The preview lists every ticket that
// would change (tickets the change leaves as they are are not targets) and their total; on
// approval the tickets module's bulk write runs them all or none, with the person's context as
// it is then (a ticket they can no longer see fails the whole change: nothing happens).
import { Type } from '@sinclair/typebox';
import type { PatchInput } from '../../tickets/patch.js';
import type { TicketView } from '../../tickets/queries.js';
import { bulkTickets } from '../../tickets/service.js';
import {
  plural,
  refusalsAsToolErrors,
  requireRole,
  rowView,
  TicketArg,
  ticketRefOf,
  visibleTicket,
  writerContext,
} from './common.js';
import {
  changeProperties,
  changesFor,
  checkChanges,
  checkStatusRules,
  describeChanges,
  namesAChange,
  patchOf,
} from './ticket-changes.js';
import { describeFilters, findTickets, ticketFilterProperties } from './ticket-filters.js';
import { type PreviewT, ToolError, type WriteTool } from './types.js';

export const BULK_MAX = 100;

const BulkArgs = Type.Object(
  {
    tickets: Type.Optional(
      Type.Array(TicketArg, {
        minItems: 1,
        maxItems: BULK_MAX,
        uniqueItems: true,
        description: 'The tickets by id or number. Give this or filters.',
      }),
    ),
    filters: Type.Optional(
      Type.Object(ticketFilterProperties, {
        additionalProperties: false,
        description: 'Every ticket search_tickets finds with these filters (at most 100). Give this or tickets.',
      }),
    ),
    ...changeProperties,
  },
  { additionalProperties: false },
);

interface BulkPlan {
  ids: string[];
  patch: PatchInput;
}

/** Each distinct value of a field among the targets: one value, or the list of them. */
function fromOf(values: unknown[]): unknown {
  const distinct: unknown[] = [];
  for (const v of values) if (!distinct.some((d) => JSON.stringify(d) === JSON.stringify(v))) distinct.push(v);
  return distinct.length === 1 ? distinct[0] : distinct;
}

export const bulkUpdateTickets: WriteTool<typeof BulkArgs, BulkPlan> = {
  kind: 'write',
  name: 'bulk_update_tickets',
  description:
    'Propose the same changes (status, priority, severity, assignee, labels) on many tickets, named by a list or by search filters (at most 100). ' +
    'The preview lists every ticket that would change; nothing changes until the user approves.',
  parameters: BulkArgs,
  label: (args) =>
    args.tickets
      ? `Updating ${plural(args.tickets.length, 'ticket')}`
      : `Updating tickets: ${describeFilters(args.filters ?? {}) || 'all'}`,
  async prepare(env, args) {
    requireRole(env.ctx, 'agent', 'change tickets');
    if ((args.tickets === undefined) === (args.filters === undefined)) {
      throw new ToolError('Give either tickets (a list) or filters, not both and not neither.');
    }
    const checked = await checkChanges(env, args);
    if (!namesAChange(checked)) {
      throw new ToolError(
        'Name at least one change (status, priority, severity, assignee_id, add_labels, remove_labels).',
      );
    }
    let found: TicketView[];
    if (args.tickets) {
      found = [];
      for (const ref of args.tickets) {
        let t: TicketView;
        try {
          t = rowView(await visibleTicket(env, ref));
        } catch (err) {
          if (err instanceof ToolError) throw new ToolError(`Ticket ${ref} not found.`);
          throw err;
        }
        if (!found.some((x) => x.id === t.id)) found.push(t);
      }
    } else {
      const page = await findTickets(env, args.filters!, BULK_MAX);
      if (page.more) throw new ToolError(`More than ${BULK_MAX} tickets match: narrow the filters.`);
      found = page.tickets;
    }
    const targets = found.filter((t) => changesFor(t, checked).length > 0);
    if (targets.length === 0) {
      throw new ToolError(
        found.length === 0 ? 'No tickets match.' : 'Nothing would change: every ticket already has these values.',
      );
    }
    for (const t of targets) await checkStatusRules(env, t, checked);
    const perTicket = targets.map((t) => changesFor(t, checked));
    const fields = [...new Set(perTicket.flat().map((c) => c.field))];
    const changes: PreviewT['changes'] = fields.map((field) => {
      const of = perTicket.flat().filter((c) => c.field === field);
      return { field, from: fromOf(of.map((c) => c.from)), to: fromOf(of.map((c) => c.to)) };
    });
    const unchanged = found.length - targets.length;
    const preview: PreviewT = {
      title: `Update ${plural(targets.length, 'ticket')}`,
      summary: `${describeChanges(checked)} on ${plural(targets.length, 'ticket')}${
        unchanged > 0 ? ` (${plural(unchanged, 'other ticket')} already so, left out)` : ''
      }.`,
      changes,
      targets: targets.map(ticketRefOf),
      external: false,
      total: targets.length,
    };
    return {
      preview,
      plan: { ids: targets.map((t) => t.id), patch: patchOf(checked) },
      refs: targets.map(ticketRefOf),
    };
  },
  async execute(env, plan) {
    requireRole(env.ctx, 'agent', 'change tickets');
    const result = await refusalsAsToolErrors(() =>
      bulkTickets(env.deps, writerContext(env), { ids: plan.ids, patch: plan.patch }),
    );
    return {
      content: {
        updated: result.data.map((t) => ({ id: t.id, number: t.number, status: t.status, priority: t.priority })),
      },
      summary: `${plural(result.data.length, 'ticket')} updated`,
      refs: result.data.map(ticketRefOf),
    };
  },
};
