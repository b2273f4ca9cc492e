// /v1/messages/{id}/...: a message by its own id. The messages of a ticket live under
// /v1/tickets/{id}/messages (src/modules/tickets/routes.ts); the code of both is in
// src/modules/tickets/messages.ts.

import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams } from '../../platform/http/schemas.js';
import { messageOriginal } from '../tickets/messages.js';
import { MessageOriginal } from '../tickets/schemas.js';

export default async function messageRoutes(app: App, deps: Deps) {
  app.get(
    '/v1/messages/:id/original',
    {
      config: { access: access.member('viewer', 'tickets:read', 'tickets:write') },
      schema: {
        tags: ['tickets'],
        summary: 'The whole original of a message (an email with its quoted history)',
        params: IdParams,
        response: { 200: MessageOriginal },
      },
    },
    async (req) => messageOriginal(deps, req.ctx, req.params.id),
  );
}
