// /v1/messages/{id}/...: a message by its own id. The messages of a ticket live under
// /v1/tickets/{id}/messages (src/modules/tickets/routes.ts); the code of both is in
// src/modules/tickets/messages.ts; sending a reply again in src/modules/email/resend.ts.

import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams } from '../../platform/http/schemas.js';
import { resendMessage } from '../email/resend.js';
import { messageOriginal } from '../tickets/messages.js';
import { Message, MessageOriginal } from '../tickets/schemas.js';

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

  app.post(
    '/v1/messages/:id/resend',
    {
      config: { access: access.member('agent', 'tickets:write') },
      schema: {
        tags: ['tickets'],
        summary: 'Send a reply again whose delivery failed, or that was kept in the outbox',
        description:
          'For a reply with `delivery_status` failed, including one kept in the outbox while outgoing mail was ' +
          'not set up. It becomes pending again and goes through the same send job as a first send ' +
          '(`message.updated` now, and again when it is sent or fails); the answer is the message, pending. ' +
          "422 for a note, a customer's message or a reply whose channel sends no email; 409 for a reply " +
          'pending, sent or bounced, and while outgoing mail is still not set up for it.',
        params: IdParams,
        response: { 202: Message },
      },
    },
    async (req, reply) => {
      const m = await resendMessage(deps, req.ctx, req.params.id);
      reply.code(202);
      return m;
    },
  );
}
