// Semantic search (GET /v1/ai/search; docs/app.md "Similar tickets and semantic matches"): the
// answer of /v1/search (tickets, contacts, articles) ranked by meaning as well as by words, with
// `semantic` naming the tickets and articles the words alone did not find. Offered only where
// the workspace has it (GET /v1/ai/config: `enabled` and `embeddings`); hidden otherwise.
import { useQuery } from '@tanstack/react-query';
import type { paths } from '../api.gen';
import { api, ok, type Ticket } from '../lib/api';
import { useAiConfig } from './ai';
import { keys } from './keys';

export type AiSearchResult = paths['/v1/ai/search']['get']['responses'][200]['content']['application/json'];
export type FoundTicket = AiSearchResult['tickets'][number];
export type FoundArticle = AiSearchResult['articles'][number];

/** Characters of q the route takes; a ticket's own text is cut to SIMILAR_CHARS before that. */
const Q_CHARS = 1000;
/** What a ticket asks for its similar tickets: subject and first message, up to this many characters. */
export const SIMILAR_CHARS = 500;
/** Similar tickets shown on a ticket's page. */
export const SIMILAR_SHOWN = 5;

/** Whether semantic search is there to offer: AI on in the workspace, with embeddings. */
export function useAiSearchOn(ws: string): boolean {
  const c = useAiConfig(ws).data;
  return c?.enabled === true && c.embeddings === true;
}

/** GET /v1/ai/search?q= (kept a minute: the same words are often asked again). */
export const useAiSearch = (ws: string, q: string, enabled: boolean) => {
  const query = q.trim().slice(0, Q_CHARS);
  return useQuery({
    queryKey: keys.aiSearch(ws, query),
    queryFn: () => ok(api.GET('/v1/ai/search', { params: { query: { q: query } } })),
    enabled: enabled && query !== '',
    staleTime: 60_000,
    retry: false,
  });
};

/** A ticket's question for its look-alikes: its subject and first message, spaces folded, cut to 500 characters. */
export function similarQuery(subject: string, firstMessage: string | null | undefined): string {
  const text = `${subject}\n${firstMessage ?? ''}`.replace(/\s+/g, ' ').trim();
  return text.slice(0, SIMILAR_CHARS).trim();
}

/** Up to five other tickets like `ticket` (never itself), best first; `on`: semantic search offered. */
export function useSimilarTickets(ws: string, ticket: Ticket, firstMessage: string | null | undefined, on: boolean) {
  const q = similarQuery(ticket.subject, firstMessage);
  const found = useAiSearch(ws, q, on && firstMessage !== undefined);
  const tickets = (found.data?.tickets ?? []).filter((t) => t.id !== ticket.id).slice(0, SIMILAR_SHOWN);
  return { ...found, tickets };
}

/**
 * The inbox's semantic matches for q: the tickets and articles found by meaning alone
 * (`semantic`) that the plain list does not show already.
 */
export function semanticMatches(
  r: AiSearchResult | undefined,
  shown: ReadonlySet<string>,
): { tickets: FoundTicket[]; articles: FoundArticle[] } {
  if (!r) return { tickets: [], articles: [] };
  const byMeaning = { tickets: new Set(r.semantic.tickets), articles: new Set(r.semantic.articles) };
  return {
    tickets: r.tickets.filter((t) => byMeaning.tickets.has(t.id) && !shown.has(t.id)),
    articles: r.articles.filter((a) => byMeaning.articles.has(a.id)),
  };
}
