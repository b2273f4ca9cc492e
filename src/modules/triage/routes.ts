// /v1/triage: what AI triage may do on its own. Read by any member (keys settings:read or
// settings:write), changed by admins (keys settings:write).

import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { PatchTriageBody, TriageSettings } from './schemas.js';
import { getTriage, updateTriage } from './service.js';

export default async function triageRoutes(app: App, deps: Deps) {
  const tags = ['triage'];

  app.get(
    '/v1/triage',
    {
      config: { access: access.member('viewer', 'settings:read', 'settings:write') },
      schema: {
        tags,
        summary: 'Triage settings, with the decision engine this instance has',
        response: { 200: TriageSettings },
      },
    },
    async (req) => getTriage(deps, req.ctx),
  );

  app.patch(
    '/v1/triage',
    {
      config: { access: access.member('admin', 'settings:write') },
      schema: {
        tags,
        summary: 'Change triage settings (any subset)',
        body: PatchTriageBody,
        response: { 200: TriageSettings },
      },
    },
    async (req) => updateTriage(deps, req.ctx, req.body),
  );
}
