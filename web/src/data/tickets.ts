// Tickets: the lists (the inbox's and the chats' pages), the sidebar's counts, one ticket, and the
// changes agents make to them (a property, a status, many at once, a merge). A change on the ticket
// page or from the inbox shows at once (optimistic) and is taken back when the API says no.
import {
  type InfiniteData,
  type QueryClient,
  useInfiniteQuery,
  useMutation,
  useQuery,
  useQueryClient,
} from '@tanstack/react-query';
import type { paths } from '../api.gen';
import { api, ok, type Ticket } from '../lib/api';
import { keys } from './keys';

export type TicketPatch = NonNullable<paths['/v1/tickets/{id}']['patch']['requestBody']>['content']['application/json'];
export type TicketQuery = NonNullable<paths['/v1/tickets']['get']['parameters']['query']>;
export type BulkPatch = NonNullable<
  paths['/v1/tickets/bulk']['post']['requestBody']
>['content']['application/json']['patch'];

export interface TicketPage {
  data: Ticket[];
  next_cursor: string | null;
}

/** The sidebar's numbers per view. */
export const useTicketCounts = (ws: string) =>
  useQuery({ queryKey: keys.counts(ws), queryFn: () => ok(api.GET('/v1/tickets/counts')) });

/**
 * A list of tickets, page by page (the inbox, the chats). `onPage` runs when a page has arrived,
 * before it is shown (the inbox's timing mark).
 */
export const useTicketList = (ws: string, query: TicketQuery, onPage?: () => void) =>
  useInfiniteQuery({
    queryKey: [...keys.tickets(ws), query],
    queryFn: async ({ pageParam }) => {
      const page = await ok(
        api.GET('/v1/tickets', { params: { query: { ...query, ...(pageParam ? { cursor: pageParam } : {}) } } }),
      );
      onPage?.();
      return page;
    },
    initialPageParam: null as string | null,
    getNextPageParam: (last: TicketPage) => last.next_cursor,
  });

/** One ticket by its number (the ticket page, a chat). */
export const useTicket = (ws: string, number: number, enabled = true) =>
  useQuery({
    queryKey: keys.ticket(ws, number),
    queryFn: () => ok(api.GET('/v1/tickets/{id}', { params: { path: { id: String(number) } } })),
    enabled,
  });

/** One ticket by its id (a link to a merged or linked ticket): its number does not change. */
export const useTicketById = (id: string) =>
  useQuery({
    queryKey: keys.ticketById(id),
    queryFn: () => ok(api.GET('/v1/tickets/{id}', { params: { path: { id } } })),
    staleTime: Number.POSITIVE_INFINITY,
  });

/** The tickets a closed ticket's customer opened later (GET /v1/tickets?follow_up_of=). */
export const useFollowUps = (ws: string, t: Ticket) =>
  useQuery({
    queryKey: keys.followUps(ws, t.id),
    queryFn: async () =>
      (await ok(api.GET('/v1/tickets', { params: { query: { follow_up_of: t.id, limit: 20, sort: 'created_at' } } })))
        .data,
    enabled: t.status === 'closed',
  });

/** Tickets found by number or subject to merge `t` into (never `t` itself). */
export const useMergeSearch = (ws: string, t: Ticket, q: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.mergeSearch(ws, q),
    queryFn: async () =>
      (await ok(api.GET('/v1/tickets', { params: { query: { q, limit: 8 } } }))).data.filter((x) => x.id !== t.id),
    enabled: enabled && q.length > 0,
  });

/** Every cached list page's copy of ticket `id`, changed by `change`. */
function changeInLists(qc: QueryClient, ws: string, id: string, change: (t: Ticket) => Ticket): void {
  qc.setQueriesData<InfiniteData<TicketPage>>({ queryKey: keys.tickets(ws) }, (old) =>
    old
      ? {
          ...old,
          pages: old.pages.map((p) => ({ ...p, data: p.data.map((x) => (x.id === id ? change(x) : x)) })),
        }
      : old,
  );
}

export interface TicketChange {
  ticket: Ticket;
  body: TicketPatch;
  /** What the ticket looks like meanwhile (the new status, priority, assignee...), shown at once. */
  shown?: Partial<Ticket>;
}

/**
 * PATCH /v1/tickets/{id}. The ticket shows `shown` at once and its old self again if the API says
 * no; the answer replaces the cached ticket and the counts are asked again (`lists`: the cached
 * lists too, where the ticket may leave its view).
 */
export function useUpdateTicket(ws: string, { lists = false }: { lists?: boolean } = {}) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ ticket, body }: TicketChange) =>
      ok(api.PATCH('/v1/tickets/{id}', { params: { path: { id: ticket.id } }, body })),
    onMutate: async ({ ticket, shown }: TicketChange) => {
      if (!shown) return { before: undefined };
      const key = keys.ticket(ws, ticket.number);
      await qc.cancelQueries({ queryKey: key, exact: true });
      const before = qc.getQueryData<Ticket>(key);
      if (before) qc.setQueryData<Ticket>(key, { ...before, ...shown });
      return { before };
    },
    onError: (_err, { ticket }, context) => {
      if (context?.before) qc.setQueryData(keys.ticket(ws, ticket.number), context.before);
    },
    onSuccess: (updated) => {
      qc.setQueryData(keys.ticket(ws, updated.number), updated);
      if (lists) void qc.invalidateQueries({ queryKey: keys.tickets(ws) });
      void qc.invalidateQueries({ queryKey: keys.counts(ws) });
    },
  });
}

/**
 * Solve a ticket from a list (the inbox's `e`): it shows as solved in the lists at once, and as it
 * was if the API says no; the lists and counts are asked again either way.
 */
export function useSolveFromList(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (t: Ticket) =>
      ok(api.PATCH('/v1/tickets/{id}', { params: { path: { id: t.id } }, body: { status: 'solved' } })),
    onMutate: async (t: Ticket) => {
      await qc.cancelQueries({ queryKey: keys.tickets(ws) });
      changeInLists(qc, ws, t.id, (x) => ({ ...x, status: 'solved' }));
    },
    onError: (_err, t) => changeInLists(qc, ws, t.id, (x) => ({ ...x, status: t.status })),
    onSettled: () => {
      void qc.invalidateQueries({ queryKey: keys.tickets(ws) });
      void qc.invalidateQueries({ queryKey: keys.counts(ws) });
    },
  });
}

/** How many tickets POST /v1/tickets/bulk takes at once. */
const BULK_CHUNK = 100;

/**
 * One change to many tickets, 100 at a time. `progress` is told how many are done before each
 * chunk (what is done stays done when a later chunk fails); the lists and counts are asked again
 * at the end, failed or not.
 */
export function useBulkUpdate(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async ({ ids, patch, progress }: { ids: string[]; patch: BulkPatch; progress(done: number): void }) => {
      let done = 0;
      for (let i = 0; i < ids.length; i += BULK_CHUNK) {
        progress(done);
        const chunk = ids.slice(i, i + BULK_CHUNK);
        await ok(api.POST('/v1/tickets/bulk', { body: { ids: chunk, patch } }));
        done += chunk.length;
      }
      return done;
    },
    onSettled: () => {
      void qc.invalidateQueries({ queryKey: keys.tickets(ws) });
      void qc.invalidateQueries({ queryKey: keys.counts(ws) });
    },
  });
}

/** Merge `ticket` into `into` (POST /v1/tickets/{id}/merge); both and the lists are asked again. */
export function useMergeTicket(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ ticket, into }: { ticket: Ticket; into: Ticket }) =>
      ok(api.POST('/v1/tickets/{id}/merge', { params: { path: { id: ticket.id } }, body: { into_id: into.id } })),
    onSuccess: (_answer, { ticket }) => {
      void qc.invalidateQueries({ queryKey: keys.ticket(ws, ticket.number) });
      void qc.invalidateQueries({ queryKey: keys.tickets(ws) });
      void qc.invalidateQueries({ queryKey: keys.counts(ws) });
    },
  });
}
