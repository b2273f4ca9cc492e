// /v1/invitations: list, create and revoke (admins; keys settings:write), look up what a
// token is for (public), accept (a signed-in person, no workspace).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import {
  AcceptedInvitation,
  AcceptInvitationBody,
  CreatedInvitation,
  CreateInvitationBody,
  Invitation,
  InvitationLookup,
  ListInvitationsQuery,
  LookupQuery,
} from './schemas.js';
import { acceptInvitation, createInvitation, listInvitations, lookupInvitation, revokeInvitation } from './service.js';

export default async function invitationRoutes(app: App, deps: Deps) {
  const admin = access.member('admin', 'settings:write');

  app.get(
    '/v1/invitations',
    {
      config: { access: admin },
      schema: {
        tags: ['invitations'],
        summary: 'List pending invitations (newest first)',
        querystring: ListInvitationsQuery,
        response: { 200: PageOf(Invitation) },
      },
    },
    async (req) => listInvitations(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/invitations',
    {
      config: { access: admin },
      schema: {
        tags: ['invitations'],
        summary: 'Invite someone by email (`token` and `url` are in this response only)',
        body: CreateInvitationBody,
        response: { 201: CreatedInvitation },
      },
    },
    async (req, reply) => {
      const inv = await createInvitation(deps, req.ctx, req.body);
      reply.code(201).header('cache-control', 'no-store');
      return inv;
    },
  );

  app.delete(
    '/v1/invitations/:id',
    {
      config: { access: admin },
      schema: {
        tags: ['invitations'],
        summary: 'Revoke a pending invitation',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await revokeInvitation(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/invitations/lookup',
    {
      config: { access: access.public() },
      schema: {
        tags: ['invitations'],
        summary: 'What an invitation token is for (workspace name, email, role, expiry)',
        querystring: LookupQuery,
        response: { 200: InvitationLookup },
      },
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return lookupInvitation(deps, req.query.token);
    },
  );

  app.post(
    '/v1/invitations/accept',
    {
      config: { access: access.user() },
      schema: {
        tags: ['invitations'],
        summary: 'Accept an invitation as the signed-in person (email must match)',
        body: AcceptInvitationBody,
        response: { 200: AcceptedInvitation },
      },
    },
    async (req) => acceptInvitation(deps, req.user, req.body.token),
  );
}
