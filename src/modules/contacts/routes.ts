// /v1/contacts: read by any member (keys contacts:read or contacts:write), written by agents
// and above (keys contacts:write).
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { sendJson } from '../../platform/http/json.js';
import { IdParams, PageOf } from '../../platform/http/schemas.js';
import { Ticket } from '../tickets/schemas.js';
import { Contact, CreateContactBody, ListContactsQuery, ListContactTicketsQuery, PatchContactBody } from './schemas.js';
import {
  createContact,
  deleteContact,
  getContact,
  listContacts,
  listContactTickets,
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
}
