// GET /v1/audit-logs: who changed what, newest first (admins; keys settings:read).

import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { PageOf } from '../../platform/http/schemas.js';
import { AuditLog, ListAuditLogsQuery } from './schemas.js';
import { listAuditLogs } from './service.js';

export default async function auditRoutes(app: App, deps: Deps) {
  app.get(
    '/v1/audit-logs',
    {
      config: { access: access.member('admin', 'settings:read', 'settings:write') },
      schema: {
        tags: ['audit'],
        summary: 'The audit log, newest first, filtered by action, actor, entity type and time',
        querystring: ListAuditLogsQuery,
        response: { 200: PageOf(AuditLog) },
      },
    },
    async (req) => listAuditLogs(deps, req.ctx, req.query),
  );
}
