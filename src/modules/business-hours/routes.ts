// /v1/business-hours: read by any member (keys settings:read or settings:write), replaced whole
// by admins (keys settings:write).

import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { BusinessHours, PutBusinessHoursBody } from './schemas.js';
import { getBusinessHours, putBusinessHours } from './service.js';

export default async function businessHoursRoutes(app: App, deps: Deps) {
  const tags = ['business-hours'];

  app.get(
    '/v1/business-hours',
    {
      config: { access: access.member('viewer', 'settings:read', 'settings:write') },
      schema: {
        tags,
        summary: "The workspace's business hours (defaults when never saved: disabled, Mon-Fri 09:00-17:00)",
        response: { 200: BusinessHours },
      },
    },
    async (req) => getBusinessHours(deps, req.ctx),
  );

  app.put(
    '/v1/business-hours',
    {
      config: { access: access.member('admin', 'settings:write') },
      schema: {
        tags,
        summary: 'Replace the business hours (the full object; a weekday left out is closed)',
        body: PutBusinessHoursBody,
        response: { 200: BusinessHours },
      },
    },
    async (req) => putBusinessHours(deps, req.ctx, req.body),
  );
}
