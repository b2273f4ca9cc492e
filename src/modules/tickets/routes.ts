// /v1/tickets and everything under it (messages, activities, bulk, merge, counts): read by any
// member (keys tickets:read or tickets:write), written by agents and above (keys tickets:write).
// A ticket in a path is its id, its number, or %23 + number.
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { App } from '../../platform/http/app-type.js';
import { access } from '../../platform/http/context.js';
import { sendJson } from '../../platform/http/json.js';
import { PageOf } from '../../platform/http/schemas.js';
import { activitiesOf } from './activities.js';
import { ticketCounts } from './counts.js';
import { listTickets } from './list.js';
import { createMessage, listMessages } from './messages.js';
import {
  Activity,
  BulkBody,
  BulkResult,
  CreateMessageBody,
  CreateTicketBody,
  ListTicketsQuery,
  MergeBody,
  Message,
  PatchTicketBody,
  Ticket,
  TicketCounts,
  TicketParams,
} from './schemas.js';
import {
  bulkTickets,
  createTicket,
  deleteTicket,
  findVisibleTicket,
  getTicket,
  mergeTicket,
  updateTicket,
} from './service.js';

export default async function ticketRoutes(app: App, deps: Deps) {
  const read = access.member('viewer', 'tickets:read', 'tickets:write');
  const write = access.member('agent', 'tickets:write');
  const tags = ['tickets'];

  app.get(
    '/v1/tickets',
    {
      config: { access: read },
      schema: {
        tags,
        summary: 'List tickets (filters, sorts, text search q); spam only with spam=true',
        querystring: ListTicketsQuery,
        response: { 200: PageOf(Ticket) },
      },
    },
    async (req, reply) => sendJson(reply, 200, await listTickets(deps, req.ctx, req.query)),
  );

  app.get(
    '/v1/tickets/counts',
    {
      config: { access: read },
      schema: { tags, summary: 'Counts for the inbox sidebar', response: { 200: TicketCounts } },
    },
    async (req) => ticketCounts(deps, req.ctx),
  );

  app.post(
    '/v1/tickets',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Create a ticket (contact by id, or found or created by email; optional first message)',
        body: CreateTicketBody,
        response: { 201: Ticket },
      },
    },
    async (req, reply) => {
      const ticket = await createTicket(deps, req.ctx, req.body);
      reply.code(201).header('location', `/v1/tickets/${ticket.id}`);
      return ticket;
    },
  );

  app.post(
    '/v1/tickets/bulk',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change or delete up to 100 tickets at once (all or nothing)',
        body: BulkBody,
        response: { 200: BulkResult },
      },
    },
    async (req) => bulkTickets(deps, req.ctx, req.body),
  );

  app.get(
    '/v1/tickets/:id',
    {
      config: { access: read },
      schema: { tags, summary: 'A ticket', params: TicketParams, response: { 200: Ticket } },
    },
    async (req, reply) => sendJson(reply, 200, await getTicket(deps, req.ctx, req.params.id)),
  );

  app.patch(
    '/v1/tickets/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Change a ticket (severity null clears; custom is merged)',
        params: TicketParams,
        body: PatchTicketBody,
        response: { 200: Ticket },
      },
    },
    async (req) => updateTicket(deps, req.ctx, req.params.id, req.body),
  );

  app.delete(
    '/v1/tickets/:id',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Delete a ticket (gone from lists and reads; kept for audit)',
        params: TicketParams,
        response: { 204: Type.Null() },
      },
    },
    async (req, reply) => {
      await deleteTicket(deps, req.ctx, req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/tickets/:id/merge',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Merge this ticket into another: its messages move there and it is closed',
        params: TicketParams,
        body: MergeBody,
        response: { 200: Ticket },
      },
    },
    async (req) => mergeTicket(deps, req.ctx, req.params.id, req.body),
  );

  app.get(
    '/v1/tickets/:id/activities',
    {
      config: { access: read },
      schema: {
        tags,
        summary: "A ticket's activities, oldest first (the whole list)",
        params: TicketParams,
        response: { 200: Type.Object({ data: Type.Array(Activity) }) },
      },
    },
    async (req) => {
      const ticket = await findVisibleTicket(deps.database.db, req.ctx, req.params.id);
      return { data: await activitiesOf(deps.database.db, req.ctx.workspaceId, ticket.id) };
    },
  );

  app.get(
    '/v1/tickets/:id/messages',
    {
      config: { access: read },
      schema: {
        tags,
        summary: "A ticket's messages, oldest first (the whole conversation)",
        params: TicketParams,
        response: { 200: Type.Object({ data: Type.Array(Message) }) },
      },
    },
    async (req) => listMessages(deps, req.ctx, req.params.id),
  );

  app.post(
    '/v1/tickets/:id/messages',
    {
      config: { access: write },
      schema: {
        tags,
        summary: 'Reply or add a note; status changes the ticket in the same step',
        params: TicketParams,
        body: CreateMessageBody,
        response: { 201: Message },
      },
    },
    async (req, reply) => {
      const message = await createMessage(deps, req.ctx, req.params.id, req.body);
      reply.code(201);
      return message;
    },
  );
}
