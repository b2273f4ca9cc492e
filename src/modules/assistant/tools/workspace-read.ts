// The workspace's setup and figures: list_views (the person's saved views with how many tickets
// each holds for them), list_automations (admins and owners, as the API allows) and get_report
// (the reports overview; agents and above, as the API allows). Each through its module's reads.
import { Type } from '@sinclair/typebox';
import { TRIGGERS } from '../../automations/schemas.js';
import { listAutomations } from '../../automations/service.js';
import { reportOverview } from '../../reports/service.js';
import { ticketCounts } from '../../tickets/counts.js';
import { listViews } from '../../views/service.js';
import { plural, refusalsAsToolErrors, requireRole } from './common.js';
import type { ReadTool } from './types.js';

const NoArgs = Type.Object({}, { additionalProperties: false });

export const listViewsTool: ReadTool<typeof NoArgs> = {
  kind: 'read',
  name: 'list_views',
  description:
    'The saved ticket views the user sees (shared ones and their own), with their filters and how many tickets each holds for them. ' +
    'search_tickets takes a view_id.',
  parameters: NoArgs,
  label: () => 'Listing saved views',
  async run(env) {
    const [{ data }, counts] = await Promise.all([listViews(env.deps, env.ctx), ticketCounts(env.deps, env.ctx)]);
    return {
      content: {
        views: data.map((v) => ({
          id: v.id,
          name: v.name,
          shared: v.shared,
          filters: v.filters,
          tickets: counts.views[v.id] ?? 0,
        })),
        inbox: {
          unassigned: counts.unassigned,
          mine: counts.mine,
          open: counts.open,
          pending: counts.pending,
          on_hold: counts.on_hold,
        },
      },
      summary: `${plural(data.length, 'view')}`,
      refs: data.map((v) => ({ kind: 'view' as const, id: v.id, label: v.name })),
    };
  },
};

const AutomationArgs = Type.Object(
  {
    trigger: Type.Optional(
      Type.Union(
        TRIGGERS.map((t) => Type.Literal(t)),
        { description: 'Only automations of this trigger.' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const listAutomationsTool: ReadTool<typeof AutomationArgs> = {
  kind: 'read',
  name: 'list_automations',
  description:
    'The workspace’s automations in run order: trigger, conditions, actions, whether enabled and how often they ran. Admins and owners only.',
  parameters: AutomationArgs,
  label: () => 'Listing automations',
  async run(env, args) {
    requireRole(env.ctx, 'admin', 'read automations');
    const page = await refusalsAsToolErrors(() =>
      listAutomations(env.deps, env.ctx, { limit: 100, ...(args.trigger ? { trigger: args.trigger } : {}) }),
    );
    return {
      content: {
        automations: page.data.map((a) => ({
          id: a.id,
          name: a.name,
          trigger: a.trigger,
          enabled: a.enabled,
          conditions: a.conditions,
          actions: a.actions,
          run_count: a.run_count,
        })),
        more: page.next_cursor !== null,
      },
      summary: `${plural(page.data.length, 'automation')}`,
      refs: page.data.map((a) => ({ kind: 'automation' as const, id: a.id, label: a.name })),
    };
  },
};

const BOUND = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
const ReportArgs = Type.Object(
  {
    from: Type.Optional(Type.String({ pattern: BOUND, description: 'First day, YYYY-MM-DD (default: 30 days ago).' })),
    to: Type.Optional(
      Type.String({ pattern: BOUND, description: 'Day after the last, YYYY-MM-DD (default: tomorrow).' }),
    ),
  },
  { additionalProperties: false },
);

export const getReport: ReadTool<typeof ReportArgs> = {
  kind: 'read',
  name: 'get_report',
  description:
    'The support overview for a date range, over the tickets the user can see: tickets created and solved, open now, median first ' +
    'response and resolution minutes, CSAT, SLA breaches, by channel, severity and agent. Agents and above.',
  parameters: ReportArgs,
  label: (args) => `Reading the report${args.from ? ` from ${args.from}` : ''}${args.to ? ` to ${args.to}` : ''}`,
  async run(env, args) {
    requireRole(env.ctx, 'agent', 'read reports');
    const r = await refusalsAsToolErrors(() =>
      reportOverview(env.deps, env.ctx, {
        ...(args.from ? { from: args.from } : {}),
        ...(args.to ? { to: args.to } : {}),
      }),
    );
    // By day only for a month or less: a year of days says little to a conversation.
    const { by_day, by_agent, ...totals } = r;
    return {
      content: {
        ...totals,
        by_agent: by_agent.map((a) => ({
          name: a.user.name,
          solved: a.solved,
          first_response_p50_minutes: a.first_response_p50_minutes,
        })),
        ...(by_day.length <= 31 ? { by_day } : {}),
      },
      summary: `${r.created} created, ${r.solved} solved, ${r.open_now} open now`,
      refs: [],
    };
  },
};
