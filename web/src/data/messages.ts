// A ticket's messages: the thread, sending (the composer, a chat's reply), sending a failed one
// again, the original of an email, attachments, and the saved replies the composer inserts. What
// is sent is added to the thread's cache from the answer (the live event brings the same message:
// it replaces it, lib/queries.ts applyEvent).
import { type QueryClient, queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { paths } from '../api.gen';
import { api, type Message, ok, type Ticket } from '../lib/api';
import { keys } from './keys';

export type NewMessage = NonNullable<
  paths['/v1/tickets/{id}/messages']['post']['requestBody']
>['content']['application/json'];

/** The thread's query, for a reader that selects from it (the composer's last sent message). */
export const messagesQuery = (ws: string, ticketId: string) =>
  queryOptions({
    queryKey: keys.messages(ws, ticketId),
    queryFn: async () => (await ok(api.GET('/v1/tickets/{id}/messages', { params: { path: { id: ticketId } } }))).data,
  });

/** A ticket's messages (`enabled` false while the ticket is not known yet). */
export const useMessages = (ws: string, ticketId: string, enabled = true) =>
  useQuery({ ...messagesQuery(ws, ticketId), enabled });

/** One message of the thread as the cache has it now (kept live): the composer's last sent one. */
export const useMessageInThread = (ws: string, ticketId: string, id: string | null) =>
  useQuery({
    ...messagesQuery(ws, ticketId),
    select: (list) => list.find((x) => x.id === id),
    enabled: id !== null,
  });

/** The message in the thread's cache, added or in place of its older copy. */
function putMessage(qc: QueryClient, ws: string, ticketId: string, m: Message, replace = false): void {
  qc.setQueryData<Message[]>(keys.messages(ws, ticketId), (old) =>
    replace ? old?.map((x) => (x.id === m.id ? m : x)) : old && !old.some((x) => x.id === m.id) ? [...old, m] : old,
  );
}

/** POST /v1/tickets/{id}/messages: a reply or a note; with a status, the ticket is asked again. */
export function useSendMessage(ws: string, ticket: Ticket) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: NewMessage) =>
      ok(api.POST('/v1/tickets/{id}/messages', { params: { path: { id: ticket.id } }, body })),
    onSuccess: (m, body) => {
      putMessage(qc, ws, ticket.id, m);
      if (body.status) void qc.invalidateQueries({ queryKey: keys.ticket(ws, ticket.number) });
    },
  });
}

/** A reply that failed to leave, sent again (POST /v1/messages/{id}/resend). */
export function useResendMessage(ws: string, ticket: Ticket) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (m: Message) => ok(api.POST('/v1/messages/{id}/resend', { params: { path: { id: m.id } } })),
    onSuccess: (updated) => putMessage(qc, ws, ticket.id, updated, true),
  });
}

/** The whole email as it arrived, quoted history included (fetched when `enabled`, once). */
export const useMessageOriginal = (id: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.messageOriginal(id),
    queryFn: () => ok(api.GET('/v1/messages/{id}/original', { params: { path: { id } } })),
    enabled,
    staleTime: Number.POSITIVE_INFINITY,
  });

/** A file uploaded for a message to come (POST /v1/attachments, multipart). */
export const useUploadAttachment = () =>
  useMutation({
    mutationFn: (file: File) =>
      ok(
        api.POST('/v1/attachments', {
          body: { file: file as unknown as string },
          bodySerializer: () => {
            const fd = new FormData();
            fd.append('file', file, file.name);
            return fd;
          },
        }),
      ),
  });

/**
 * The saved replies the composer offers, found by `q` (empty: the first 20). Saved replies are
 * settings' resource; this search is the composer's, kept here until the settings' file has it.
 */
export const useSavedReplySearch = (ws: string, q: string, enabled: boolean) =>
  useQuery({
    queryKey: [...keys.savedReplies(ws), q],
    queryFn: async () =>
      (await ok(api.GET('/v1/saved-replies', { params: { query: { limit: 20, ...(q ? { q } : {}) } } }))).data,
    enabled,
  });
