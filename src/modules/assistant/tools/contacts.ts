// Reading contacts: search_contacts and get_contact, through the contacts module's reads (every
// member reads the workspace's contacts; another workspace's contact is "not found"). A contact's
// tickets are those the person's ticket list shows (private teams they are not in left out).
import { Type } from '@sinclair/typebox';
import { type ContactView, getContact, listContactTickets, searchContacts } from '../../contacts/service.js';
import type { TicketView } from '../../tickets/queries.js';
import { bounded, plural, refusalsAsToolErrors, ticketRefOf } from './common.js';
import { UUID_PATTERN } from './ticket-filters.js';
import { type ReadTool, type RefT, ToolError } from './types.js';

const contactRef = (c: ContactView): RefT => ({
  kind: 'contact',
  id: c.id,
  label: c.name ?? c.email ?? c.phone ?? c.id,
});

function contactFacts(c: ContactView) {
  return {
    id: c.id,
    name: c.name,
    email: c.email,
    phone: c.phone,
    company: c.company ? { id: c.company.id, name: c.company.name } : null,
    labels: c.tags.map((t) => t.name),
    blocked: c.blocked,
    ticket_count: c.ticket_count,
    created_at: c.created_at,
  };
}

const SearchArgs = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 200, description: 'Part of the name, email or phone.' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 25, description: 'At most this many (default 10).' })),
  },
  { additionalProperties: false },
);

export const searchContactsTool: ReadTool<typeof SearchArgs> = {
  kind: 'read',
  name: 'search_contacts',
  description: 'Find contacts (customers) by part of their name, email or phone; best match first.',
  parameters: SearchArgs,
  label: (args) => `Searching contacts for “${args.query}”`,
  async run(env, args) {
    const query = args.query.trim();
    if (query === '') throw new ToolError('query must not be blank.');
    const found = await searchContacts(env.deps, env.ctx, query, Math.min(args.limit ?? 10, 25));
    return {
      content: { contacts: found.map(contactFacts) },
      summary: `${plural(found.length, 'contact')} found`,
      refs: found.map(contactRef),
    };
  },
};

const GetArgs = Type.Object(
  { contact: Type.String({ minLength: 1, maxLength: 254, description: 'The contact’s id or email address.' }) },
  { additionalProperties: false },
);

const UUID_RE = new RegExp(UUID_PATTERN);

export const getContactTool: ReadTool<typeof GetArgs> = {
  kind: 'read',
  name: 'get_contact',
  description:
    'Read one contact (by id or email) with their notes and their latest tickets the user can see (up to 10, newest first).',
  parameters: GetArgs,
  label: (args) => `Reading contact ${args.contact}`,
  async run(env, args) {
    const key = args.contact.trim();
    let contact: ContactView;
    if (UUID_RE.test(key)) {
      contact = await refusalsAsToolErrors(() => getContact(env.deps, env.ctx, key.toLowerCase()));
    } else {
      const exact = (await searchContacts(env.deps, env.ctx, key, 10)).find(
        (c) => c.email !== null && c.email.toLowerCase() === key.toLowerCase(),
      );
      if (!exact) throw new ToolError('Contact not found.');
      contact = exact;
    }
    const bytes = await refusalsAsToolErrors(() => listContactTickets(env.deps, env.ctx, contact.id, { limit: 10 }));
    const tickets = (JSON.parse(bytes.toString('utf8')) as { data: TicketView[] }).data;
    return {
      content: {
        contact: { ...contactFacts(contact), notes: contact.notes === null ? null : bounded(contact.notes, 2000) },
        tickets: tickets.map((t) => ({
          id: t.id,
          number: t.number,
          subject: t.subject,
          status: t.status,
          created_at: t.created_at,
        })),
      },
      summary: `${contact.name ?? contact.email ?? 'Contact'} (${plural(tickets.length, 'ticket')} shown)`,
      refs: [contactRef(contact), ...tickets.map(ticketRefOf)],
    };
  },
};
