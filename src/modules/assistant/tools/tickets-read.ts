// Reading tickets: search_tickets (the ticket list's filters and text search) and get_ticket (a
// ticket with its conversation). Both run the tickets module's own reads with the person's
// context: another workspace's ticket, a deleted one or one of a private team they are not in is
// "not found", exactly as GET /v1/tickets/{id} answers them.
import { Type } from '@sinclair/typebox';
import { listMessagesOfTicket, type MessageView } from '../../tickets/messages.js';
import { bounded, plural, rowView, TicketArg, ticketFacts, ticketLabel, ticketRefOf, visibleTicket } from './common.js';
import { describeFilters, findTickets, ticketFilterProperties } from './ticket-filters.js';
import type { ReadTool } from './types.js';

const SearchArgs = Type.Object(
  {
    ...ticketFilterProperties,
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 25, description: 'At most this many tickets (default 10).' }),
    ),
  },
  { additionalProperties: false },
);

export const searchTickets: ReadTool<typeof SearchArgs> = {
  kind: 'read',
  name: 'search_tickets',
  description:
    'Find tickets the user can see: text search and the ticket list’s filters (status, priority, assignee, label, team, saved view). ' +
    'Newest activity first, or best match first with a query. Spam and deleted tickets are left out.',
  parameters: SearchArgs,
  label: (args) => {
    const what = describeFilters(args);
    return what ? `Searching tickets: ${what}` : 'Listing tickets';
  },
  async run(env, args) {
    const limit = Math.min(args.limit ?? 10, 25);
    const { tickets, more } = await findTickets(env, args, limit);
    return {
      content: { tickets: tickets.map(ticketFacts), more_match: more },
      summary: `${plural(tickets.length, 'ticket')} found${more ? ' (more match)' : ''}`,
      refs: tickets.map(ticketRefOf),
    };
  },
};

/** How much of a conversation the model reads: the first message and the latest ones, each cut. */
export const THREAD_LIMITS = { messages: 30, bodyChars: 4000 };

function messageFacts(m: MessageView) {
  return {
    id: m.id,
    kind: m.kind,
    direction: m.direction,
    author: {
      type: m.author.type,
      name: m.author.user?.name ?? m.author.contact?.name ?? m.from_name ?? null,
      email: m.author.contact?.email ?? null,
    },
    created_at: m.created_at,
    body_text: bounded(m.body_text, THREAD_LIMITS.bodyChars),
    attachments: m.attachments.map((a) => a.filename),
    ...(m.kind === 'reply' && m.direction === 'outbound' ? { delivery_status: m.delivery_status } : {}),
  };
}

/** The first message (what the ticket is about) and the latest ones, when a thread is long. */
function boundedThread(messages: MessageView[]) {
  const max = THREAD_LIMITS.messages;
  if (messages.length <= max) return { shown: messages, omitted: 0 };
  return { shown: [messages[0]!, ...messages.slice(messages.length - (max - 1))], omitted: messages.length - max };
}

const GetArgs = Type.Object({ ticket: TicketArg }, { additionalProperties: false });

export const getTicket: ReadTool<typeof GetArgs> = {
  kind: 'read',
  name: 'get_ticket',
  description:
    'Read one ticket the user can see, with its conversation oldest first: customer messages, replies and internal notes ' +
    '(kind note), bodies as plain text. Long conversations show the first message and the latest ones.',
  parameters: GetArgs,
  label: (args) => `Reading ${ticketLabel(args.ticket)}`,
  async run(env, args) {
    const row = await visibleTicket(env, args.ticket);
    const ticket = rowView(row);
    const all = await listMessagesOfTicket(env.deps, env.deps.database.db, env.ctx.workspaceId, row.id);
    const { shown, omitted } = boundedThread(all);
    const messages = shown.map(messageFacts);
    return {
      content: {
        ticket: ticketFacts(ticket),
        messages,
        ...(omitted > 0
          ? { messages_omitted: omitted, note: `${omitted} older messages after the first are not shown.` }
          : {}),
      },
      summary: `#${ticket.number} ${ticket.subject} (${plural(all.length, 'message')})`,
      refs: [ticketRefOf(ticket)],
    };
  },
};
