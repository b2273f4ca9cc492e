// Record builders: the one way test files make the tickets, contacts, companies and messages
// their tests need, through the API as a real client would. Each builder posts as `who` (a
// tenant's owner, a member, or request options as they are), fails unless the answer is 201 (the
// error names the route, the status and the answer), and returns the new record as the API
// answered it. `body` goes over the defaults, so a caller names only what its test is about.
// Members are made by addMember in helpers.ts (a new person, or one who already exists, joins the
// workspace with a role).
import type { Company, Contact, Message, Ticket } from './api-types.js';
import { type Api, type ReqOpts, unique } from './helpers.js';

type Body = Record<string, unknown>;

/** Who makes the record: a tenant (its owner) or a member, by its `as`; or request options. */
export type Who = { as: ReqOpts } | ReqOpts;

const optsOf = (who: Who): ReqOpts => ('as' in who ? who.as : who);

/** An address no other test uses. */
export const uniqueEmail = (prefix = 'c') => `${unique(prefix)}@example.com`;

async function created<T>(api: Api, who: Who, path: string, body: Body): Promise<T> {
  const r = await api.post<T>(path, body, optsOf(who));
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
  return r.body;
}

/** A ticket whose body gave a contact (`contact` or `contact_id`): the contact is there, with its email. */
export type TicketWithContact = Ticket & { contact: NonNullable<Ticket['contact']> & { email: string } };
type TicketFor<B> = B extends { contact: object } | { contact_id: string } ? TicketWithContact : Ticket;

/** A ticket with subject 'Printer on fire'; no contact, first message or team unless `body` gives them. */
export const makeTicket = <B extends Body = Body>(api: Api, who: Who, body?: B): Promise<TicketFor<B>> =>
  created<TicketFor<B>>(api, who, '/v1/tickets', { subject: 'Printer on fire', ...body });

/** A contact made with an email address (the default): the address is there. */
type ContactFor<B> = B extends { email: null } ? Contact : Contact & { email: string };

/** A contact with a unique email address and no name unless `body` gives one. */
export const makeContact = <B extends Body = Body>(api: Api, who: Who, body?: B): Promise<ContactFor<B>> =>
  created<ContactFor<B>>(api, who, '/v1/contacts', { email: uniqueEmail(), ...body });

/** A company named Initech, with no domain unless `body` gives one. */
export const makeCompany = (api: Api, who: Who, body: Body = {}): Promise<Company> =>
  created<Company>(api, who, '/v1/companies', { name: 'Initech', ...body });

/** A message on the ticket: a note unless `body` says `kind: 'reply'`. */
export const makeMessage = (api: Api, who: Who, ticketId: string, body: Body = {}): Promise<Message> =>
  created<Message>(api, who, `/v1/tickets/${ticketId}/messages`, { kind: 'note', body_html: '<p>A note</p>', ...body });
