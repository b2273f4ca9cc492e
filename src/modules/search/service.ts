// GET /v1/search: up to five of each kind, best match first, each kind searched the way its
// own list searches it (tickets: full-text over subject, messages and contact, ranked;
// contacts: part of the name, email or phone, by similarity; knowledge base articles: full-text
// in each article's language, ranked, with a snippet). A key sees only the kinds its scopes can
// read; the others come back empty.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { RequestContext, Scope } from '../../platform/http/context.js';
import { searchContacts } from '../contacts/service.js';
import { searchArticles } from '../kb/list.js';
import { listTickets } from '../tickets/list.js';
import type { TicketView } from '../tickets/queries.js';
import type { SearchResult } from './schemas.js';

const PER_KIND = 5;

const mayRead = (ctx: RequestContext, area: 'tickets' | 'contacts' | 'kb') =>
  ctx.scopes === null || ctx.scopes.some((s: Scope) => s === `${area}:read` || s === `${area}:write`);

export async function search(deps: Deps, ctx: RequestContext, q: string): Promise<Static<typeof SearchResult>> {
  const [tickets, contacts, articles] = await Promise.all([
    mayRead(ctx, 'tickets')
      ? listTickets(deps, ctx, { q, limit: PER_KIND }).then(
          (p) => (JSON.parse(p.toString()) as { data: TicketView[] }).data,
        )
      : [],
    mayRead(ctx, 'contacts') ? searchContacts(deps, ctx, q, PER_KIND) : [],
    mayRead(ctx, 'kb') ? searchArticles(deps, ctx, q, PER_KIND) : [],
  ]);
  return { tickets, contacts, articles };
}
