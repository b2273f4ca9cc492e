// Outgoing mail (/v1/mail): whether a mailer is set up, which mailboxes' replies are kept in the
// outbox (refetched when a mailbox changes: lib/queries.ts applyEvent), and the kept mail itself.
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys } from './keys';

export const useMailStatus = (ws: string) =>
  useQuery({ queryKey: keys.mailStatus(ws), queryFn: () => ok(api.GET('/v1/mail/status')) });

export type MailStatus = NonNullable<ReturnType<typeof useMailStatus>['data']>;

/** The outbox, newest first; read again every few seconds (mail is kept by jobs, with no live event). */
export const useOutbox = (ws: string) =>
  useInfiniteQuery({
    queryKey: keys.mailOutbox(ws),
    queryFn: ({ pageParam }) =>
      ok(api.GET('/v1/mail/outbox', { params: { query: { limit: 50, ...(pageParam ? { cursor: pageParam } : {}) } } })),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    refetchInterval: 5000,
  });

/** One kept mail (it never changes). */
export const useKeptMail = (ws: string, id: string) =>
  useQuery({
    queryKey: keys.mailOutboxItem(ws, id),
    queryFn: () => ok(api.GET('/v1/mail/outbox/{id}', { params: { path: { id } } })),
    staleTime: Number.POSITIVE_INFINITY,
  });
