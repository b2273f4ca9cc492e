// /v1/mailboxes: the workspace's email addresses (admin users, or keys with settings:read /
// settings:write). `password` and `smtp_password` are write-only.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import { testMailbox } from './connection-test.js';
import mailboxOAuthRoutes from './oauth-routes.js';
import { CreateMailboxBody, ListMailboxesQuery, Mailbox, MailboxTestResult, PatchMailboxBody } from './schemas.js';
import { createMailbox, deleteMailbox, getMailbox, listMailboxes, updateMailbox } from './service.js';

export default async function mailboxRoutes(app: App, deps: Deps) {
  const read = access.member('admin', 'settings:read', 'settings:write');
  const write = access.member('admin', 'settings:write');
  const tags = ['mailboxes'];

  app.get(
    '/v1/mailboxes',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List mailboxes (newest first)',
        querystring: ListMailboxesQuery,
        response: { 200: PageOf(Mailbox) },
      },
    },
    async (req) => listMailboxes(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/mailboxes',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Create a mailbox (password and smtp_password are stored encrypted and never returned)',
        body: CreateMailboxBody,
        response: { 201: Mailbox },
      },
    },
    async (req, reply) => {
      const m = await createMailbox(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/mailboxes/${m.id}`);
      return m;
    },
  );

  app.get(
    '/v1/mailboxes/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'A mailbox', params: IdParams, response: { 200: Mailbox } },
    },
    async (req) => getMailbox(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/mailboxes/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change a mailbox (config merges key by key, null removes a key; a password null removes it)',
        params: IdParams,
        body: PatchMailboxBody,
        response: { 200: Mailbox },
      },
    },
    async (req) => updateMailbox(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/mailboxes/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Delete a mailbox (its tickets and audit entries stay)',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await deleteMailbox(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/mailboxes/:id/test',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Connect to the mailbox’s servers now: inbound and outbound, each ok with an error when not',
        params: IdParams,
        response: { 200: MailboxTestResult },
      },
    },
    async (req) => testMailbox(deps, req.ctx, req.params.id),
  );

  await mailboxOAuthRoutes(app, deps); // Google and Microsoft: /v1/mailboxes/oauth/{provider}/start, /callback
}
