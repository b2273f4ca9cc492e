// Mailboxes (/v1/mailboxes): the addresses customers write to, their connection check and the
// sign-in with Google or Microsoft.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { type Body, useChange } from './change';
import { keys } from './keys';

/** The first page of mailboxes, as the API pages them. */
export const useMailboxes = (ws: string, enabled = true) =>
  useQuery({
    queryKey: keys.mailboxes(ws),
    queryFn: () => ok(api.GET('/v1/mailboxes', { params: { query: { limit: 100 } } })),
    enabled,
  });

/** Settings' pick lists (views' filters): the same page under the settings' key. */
export const useConfigMailboxes = (ws: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.configMailboxes(ws),
    queryFn: () => ok(api.GET('/v1/mailboxes', { params: { query: { limit: 100 } } })),
    enabled,
  });

/** Assignment's rule targets (its own key). */
export const useMailboxesPage = (ws: string, enabled: boolean) =>
  useQuery({
    queryKey: keys.mailboxesPage(ws),
    queryFn: () => ok(api.GET('/v1/mailboxes', { params: { query: { limit: 100 } } })),
    enabled,
  });

export const useMailbox = (ws: string, id: string) =>
  useQuery({
    queryKey: keys.mailbox(ws, id),
    queryFn: () => ok(api.GET('/v1/mailboxes/{id}', { params: { path: { id } } })),
  });

/** The list and the mailbox's own page, read again after a change. */
const changed = (ws: string, id?: string) => [keys.mailboxes(ws), ...(id ? [keys.mailbox(ws, id)] : [])];

export const useCreateMailbox = (ws: string) =>
  useChange((body: Body<'/v1/mailboxes', 'post'>) => ok(api.POST('/v1/mailboxes', { body })), changed(ws));

export const useUpdateMailbox = (ws: string, id: string) =>
  useChange(
    (body: Body<'/v1/mailboxes/{id}', 'patch'>) =>
      ok(api.PATCH('/v1/mailboxes/{id}', { params: { path: { id } }, body })),
    changed(ws, id),
    'background',
  );

export const useDeleteMailbox = (ws: string) =>
  useChange((id: string) => ok(api.DELETE('/v1/mailboxes/{id}', { params: { path: { id } } })), changed(ws));

/**
 * The connection check (its result on screen first); the list, and on the mailbox's own page
 * (`id`) that page, are read again after.
 */
export const useCheckMailbox = (ws: string, id?: string) =>
  useChange(
    (mailbox: string) => ok(api.POST('/v1/mailboxes/{id}/test', { params: { path: { id: mailbox } } })),
    changed(ws, id),
    'background',
  );

/** The provider's sign-in address for a new mailbox, or to reconnect one (mailbox_id). */
export const useStartOAuth = () =>
  useChange(
    ({
      provider,
      body,
    }: {
      provider: 'google' | 'microsoft';
      body: Body<'/v1/mailboxes/oauth/{provider}/start', 'post'>;
    }) => ok(api.POST('/v1/mailboxes/oauth/{provider}/start', { params: { path: { provider } }, body })),
    [],
  );
