// What the knowledge base's screens share: the cache keys and the collections.
import { useQuery } from '@tanstack/react-query';
import { api, ok, type Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';

export type Collection = Schemas['KbCollection'];
export type Article = Schemas['KbArticle'];

export const kbKeys = {
  all: (ws: string) => ['kb', ws] as const,
  collections: (ws: string) => ['kb', ws, 'collections'] as const,
  articles: (ws: string, filter: object) => ['kb', ws, 'articles', filter] as const,
  article: (ws: string, id: string) => ['kb', ws, 'article', id] as const,
};

export function useCollections() {
  const ws = useWorkspace();
  return useQuery({
    queryKey: kbKeys.collections(ws),
    queryFn: async () => (await ok(api.GET('/v1/kb/collections', { params: { query: { limit: 100 } } }))).data,
  });
}
