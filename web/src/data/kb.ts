// The knowledge base: collections (ordered, renamed, deleted) and articles (listed by collection
// and status, written, deleted). Another agent's change, or one made through the API, asks
// everything of the knowledge base again (useKbLive). Changes to collections wait until the lists
// are current again before they resolve, so the screen shows the result when it says done.
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { paths } from '../api.gen';
import { api, ok, type Schemas } from '../lib/api';
import { useLiveRefresh } from './change';
import { keys } from './keys';

export type Collection = Schemas['KbCollection'];
export type Article = Schemas['KbArticle'];
export type ArticleQuery = NonNullable<paths['/v1/kb/articles']['get']['parameters']['query']>;
type ArticleBody = NonNullable<paths['/v1/kb/articles']['post']['requestBody']>['content']['application/json'];

export const useCollections = (ws: string) =>
  useQuery({
    queryKey: keys.kbCollections(ws),
    queryFn: async () => (await ok(api.GET('/v1/kb/collections', { params: { query: { limit: 100 } } }))).data,
  });

export const useArticles = (ws: string, query: ArticleQuery) =>
  useInfiniteQuery({
    queryKey: keys.kbArticles(ws, query),
    queryFn: ({ pageParam }) =>
      ok(api.GET('/v1/kb/articles', { params: { query: { ...query, ...(pageParam ? { cursor: pageParam } : {}) } } })),
    initialPageParam: null as string | null,
    getNextPageParam: (last: { next_cursor: string | null }) => last.next_cursor,
  });

/** One article (`id` null: a new one, nothing to ask). */
export const useArticle = (ws: string, id: string | null) =>
  useQuery({
    queryKey: keys.kbArticle(ws, id ?? ''),
    queryFn: () => ok(api.GET('/v1/kb/articles/{id}', { params: { path: { id: id ?? '' } } })),
    enabled: id !== null,
  });

/** Everything of the knowledge base asked again; resolves when it has arrived. */
export function useKbRefresh(ws: string) {
  const qc = useQueryClient();
  return () => qc.invalidateQueries({ queryKey: keys.kb(ws) });
}

/** Live: a change to an article or a collection elsewhere asks the knowledge base again. */
export const useKbLive = (ws: string) => useLiveRefresh(['kb_article.', 'kb_collection.'], keys.kb(ws));

export function useCreateCollection(ws: string) {
  const refresh = useKbRefresh(ws);
  return useMutation({
    mutationFn: (name: string) => ok(api.POST('/v1/kb/collections', { body: { name } })),
    onSuccess: () => refresh(),
  });
}

export function useUpdateCollection() {
  return useMutation({
    mutationFn: ({ id, name, description }: { id: string; name: string; description: string | null }) =>
      ok(api.PATCH('/v1/kb/collections/{id}', { params: { path: { id } }, body: { name, description } })),
  });
}

/** The collections in `order`: each whose place changed gets its new position; refreshed either way. */
export function useOrderCollections(ws: string) {
  const refresh = useKbRefresh(ws);
  return useMutation({
    mutationFn: async (order: Collection[]) => {
      for (const [i, x] of order.entries()) {
        if (x.position !== i) {
          await ok(api.PATCH('/v1/kb/collections/{id}', { params: { path: { id: x.id } }, body: { position: i } }));
        }
      }
    },
    onSettled: () => refresh(),
  });
}

export function useDeleteCollection(ws: string) {
  const refresh = useKbRefresh(ws);
  return useMutation({
    mutationFn: (id: string) => ok(api.DELETE('/v1/kb/collections/{id}', { params: { path: { id } } })),
    onSuccess: () => refresh(),
  });
}

/** Save an article: a change to `id`, or a new one (`id` null). Its copy is the answer. */
export function useSaveArticle(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: string | null; body: ArticleBody }) =>
      id
        ? ok(api.PATCH('/v1/kb/articles/{id}', { params: { path: { id } }, body }))
        : ok(api.POST('/v1/kb/articles', { body })),
    onSuccess: (saved) => {
      qc.setQueryData(keys.kbArticle(ws, saved.id), saved);
      void qc.invalidateQueries({ queryKey: ['kb', ws, 'articles'] });
      void qc.invalidateQueries({ queryKey: keys.kbCollections(ws) });
    },
  });
}

export function useDeleteArticle(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => ok(api.DELETE('/v1/kb/articles/{id}', { params: { path: { id } } })),
    onSuccess: (_answer, id) => {
      qc.removeQueries({ queryKey: keys.kbArticle(ws, id) });
      void qc.invalidateQueries({ queryKey: keys.kb(ws) });
    },
  });
}
