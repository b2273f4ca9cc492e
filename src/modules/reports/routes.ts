// /v1/reports/overview: ticket figures over a range. Agents and above read it (viewers do not: a
// report shows each agent's performance), and API keys with tickets:read (a report is tickets data).

import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { OverviewQuery, ReportOverview } from './schemas.js';
import { reportOverview } from './service.js';

export default async function reportRoutes(app: App, deps: Deps) {
  app.get(
    '/v1/reports/overview',
    {
      config: { access: access.member('agent', 'tickets:read') },
      schema: {
        tags: ['reports'],
        summary: 'Ticket figures over a range: volumes, medians, CSAT, SLA breaches, per day, channel, severity, agent',
        description:
          '`from` and `to` are dates (midnight in the time zone) or RFC 3339 date-times; `to` is exclusive; ' +
          'default the last 30 days; at most one year. Medians in minutes, null without data.',
        querystring: OverviewQuery,
        response: { 200: ReportOverview },
      },
    },
    async (req) => reportOverview(deps, req.ctx, req.query),
  );
}
