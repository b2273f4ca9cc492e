// /v1/mail/...: outgoing mail. The status (does the system mailer send, or keep mail in the
// outbox; whose replies are kept), and the outbox of mail kept while SMTP_URL is unset.
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import { ListOutboxQuery, MailStatus, OutboxMail, OutboxMailSummary } from './schemas.js';
import { getOutboxMail, listOutbox, mailStatus } from './service.js';

const tags = ['mail'];
// Bodies carry sign-in and invitation links: owners and admins, or a key that may already make
// keys and webhooks (settings:write); settings:read is not enough.
const outbox = access.member('admin', 'settings:write');

export default async function mailRoutes(app: App, deps: Deps) {
  app.get(
    '/v1/mail/status',
    {
      config: { access: access.member('viewer', 'settings:read', 'tickets:read') },
      schema: {
        tags,
        summary: 'Whether outgoing mail is set up: the system mailer sends, or keeps mail in the outbox',
        response: { 200: MailStatus },
      },
    },
    async (req) => mailStatus(deps, req.ctx),
  );

  app.get(
    '/v1/mail/outbox',
    {
      config: { access: outbox },
      schema: {
        tags,
        summary: 'Mail kept instead of sent while SMTP_URL is unset (newest first; 30 days, 1,000 at most)',
        querystring: ListOutboxQuery,
        response: { 200: PageOf(OutboxMailSummary) },
      },
    },
    async (req) => listOutbox(deps, req.ctx, req.query),
  );

  app.get(
    '/v1/mail/outbox/:id',
    {
      config: { access: outbox },
      schema: {
        tags,
        summary: 'One kept mail with its text, HTML, links and files',
        params: IdParams,
        response: { 200: OutboxMail },
      },
    },
    async (req, reply) => {
      // Its links sign people in: never kept by a cache.
      reply.header('cache-control', 'no-store');
      return getOutboxMail(deps, req.ctx, req.params.id);
    },
  );
}
