// Saved replies (/v1/saved-replies) as settings lists them: searched, newest first, paged.
import { useInfiniteQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { type Body, useChange } from './change';
import { keys } from './keys';

/** Every saved reply matching `search` (title or shortcut), 50 a page. */
export const useConfigSavedReplies = (ws: string, search: string) =>
  useInfiniteQuery({
    queryKey: [...keys.configSavedReplies(ws), search],
    initialPageParam: '',
    queryFn: ({ pageParam }) =>
      ok(
        api.GET('/v1/saved-replies', {
          params: {
            query: { limit: 50, ...(search ? { q: search } : {}), ...(pageParam ? { cursor: pageParam } : {}) },
          },
        }),
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    placeholderData: (prev) => prev,
  });

/** Creates a saved reply (no id) or changes one. */
export const useSaveSavedReply = (ws: string) =>
  useChange(
    ({ id, body }: { id: string | null; body: Body<'/v1/saved-replies', 'post'> }) =>
      id
        ? ok(api.PATCH('/v1/saved-replies/{id}', { params: { path: { id } }, body }))
        : ok(api.POST('/v1/saved-replies', { body })),
    [keys.configSavedReplies(ws)],
  );

export const useDeleteSavedReply = (ws: string) =>
  useChange(
    (id: string) => ok(api.DELETE('/v1/saved-replies/{id}', { params: { path: { id } } })),
    [keys.configSavedReplies(ws)],
  );
