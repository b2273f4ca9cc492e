// /v1/contacts: read by any member (keys contacts:read or contacts:write), written by agents
// and above (keys contacts:write).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { type Access, access } from '../../platform/http/context.js';
import { sendJson } from '../../platform/http/json.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import { PICTURE_RULES, pictureBody, withMultipart } from '../images/http.js';
import { pictureFromUpload } from '../images/service.js';
import { queuePictureLookup } from '../images/sources.js';
import { Ticket } from '../tickets/schemas.js';
import { Contact, CreateContactBody, ListContactsQuery, ListContactTicketsQuery, PatchContactBody } from './schemas.js';
import {
  createContact,
  deleteContact,
  getContact,
  listContacts,
  listContactTickets,
  setContactPicture,
  updateContact,
} from './service.js';

export default async function contactRoutes(app: App, deps: Deps) {
  const read = access.member('viewer', 'contacts:read', 'contacts:write');
  const write = access.member('agent', 'contacts:write');

  app.get(
    '/v1/contacts',
    {
      config: { access: read },
      schema: {
        tags: ['contacts'],
        summary: 'List contacts, newest first (q: part of the name, email or phone; company_id)',
        querystring: ListContactsQuery,
        response: { 200: PageOf(Contact) },
      },
    },
    async (req) => listContacts(deps, req.ctx, req.query),
  );

  app.post(
    '/v1/contacts',
    {
      config: { access: write },
      schema: { tags: ['contacts'], summary: 'Create a contact', body: CreateContactBody, response: { 201: Contact } },
    },
    async (req, reply) => {
      const contact = await createContact(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/contacts/${contact.id}`);
      return contact;
    },
  );

  app.get(
    '/v1/contacts/:id',
    {
      config: { access: read },
      schema: { tags: ['contacts'], summary: 'A contact', params: IdParams, response: { 200: Contact } },
    },
    async (req) => getContact(deps, req.ctx, req.params.id),
  );

  app.patch(
    '/v1/contacts/:id',
    {
      config: { access: write },
      schema: {
        tags: ['contacts'],
        summary: 'Change a contact (custom is merged; a null value removes its key)',
        params: IdParams,
        body: PatchContactBody,
        response: { 200: Contact },
      },
    },
    async (req) => updateContact(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/contacts/:id',
    {
      config: { access: write },
      schema: {
        tags: ['contacts'],
        summary: 'Delete a contact for good',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await deleteContact(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/contacts/:id/tickets',
    {
      config: { access: read },
      schema: {
        tags: ['contacts'],
        summary: "A contact's tickets, newest first",
        params: IdParams,
        querystring: ListContactTicketsQuery,
        response: { 200: PageOf(Ticket) },
      },
    },
    async (req, reply) => sendJson(reply, 200, await listContactTickets(deps, req.ctx, req.params.id, req.query)),
  );

  await contactPictureRoutes(app, deps, write);
}

// ---------------------------------------------------------------------------------------------
// Pictures (src/modules/images): the contact's picture: PUT and DELETE, and a new automatic lookup.

async function contactPictureRoutes(app: App, deps: Deps, write: Access) {
  await withMultipart(app, (scope) => {
    scope.put(
      '/v1/contacts/:id/avatar',
      {
        config: { access: write, idempotent: false, swaggerTransform: pictureBody },
        schema: {
          tags: ['contacts'],
          summary: "Upload the contact's picture (multipart/form-data, one field named file)",
          description: PICTURE_RULES,
          consumes: ['multipart/form-data'],
          params: IdParams,
          response: { 200: Contact },
        },
      },
      async (req) => {
        const { id } = req.params;
        await getContact(deps, req.ctx, id); // 404 before the body is read
        const owner = { kind: 'contact' as const, id, workspaceId: req.ctx.workspaceId };
        const picture = await pictureFromUpload(deps, req, owner, 'crop');
        return (await setContactPicture(deps, req.ctx.workspaceId, req.ctx, id, { picture }))!;
      },
    );
  });

  app.delete(
    '/v1/contacts/:id/avatar',
    {
      config: { access: write },
      schema: {
        tags: ['contacts'],
        summary: "Remove the contact's picture (avatar_url becomes null)",
        params: IdParams,
        response: { 200: Contact },
      },
    },
    async (req) => (await setContactPicture(deps, req.ctx.workspaceId, req.ctx, req.params.id, { picture: null }))!,
  );

  app.post(
    '/v1/contacts/:id/avatar/refresh',
    {
      config: { access: write },
      schema: {
        tags: ['contacts'],
        summary: 'Look the gravatar up again (when the workspace setting gravatar is on)',
        description:
          '202: a job looks the automatic source up. It changes nothing when it finds no picture, and never ' +
          'replaces an uploaded one; a new picture comes as contact.updated.',
        params: IdParams,
        response: { 202: Type.Null() },
      },
    },
    async (req, reply) => {
      await getContact(deps, req.ctx, req.params.id);
      await queuePictureLookup(deps, { kind: 'contact', workspace_id: req.ctx.workspaceId, id: req.params.id });
      return reply.code(202).send(null);
    },
  );
}
