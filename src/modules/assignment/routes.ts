// /v1/assignment: how new tickets find an agent. Read by any member (keys settings:read or
// settings:write), changed by admins (keys settings:write).

import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { Assignment, PatchAssignmentBody } from './schemas.js';
import { getAssignment, updateAssignment } from './service.js';

export default async function assignmentRoutes(app: App, deps: Deps) {
  const tags = ['assignment'];

  app.get(
    '/v1/assignment',
    {
      config: { access: access.member('viewer', 'settings:read', 'settings:write') },
      schema: {
        tags,
        summary: 'Assignment settings: mode (= settings.auto_assign), rules per mailbox or team, auto-away',
        response: { 200: Assignment },
      },
    },
    async (req) => getAssignment(deps, req.ctx),
  );

  app.patch(
    '/v1/assignment',
    {
      config: { access: access.member('admin', 'settings:write') },
      schema: {
        tags,
        summary: 'Change assignment settings (any subset; rules replace the whole list)',
        body: PatchAssignmentBody,
        response: { 200: Assignment },
      },
    },
    async (req) => updateAssignment(deps, req.ctx, req.body),
  );
}
