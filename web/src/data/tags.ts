// Labels (the API's tags) and their groups.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys } from './keys';
import { DEFINITIONS } from './pages';

export const useTags = (ws: string) =>
  useQuery({
    queryKey: keys.tags(ws),
    queryFn: async () => (await ok(api.GET('/v1/tags', { params: { query: { archived: 'false' } } }))).data,
    ...DEFINITIONS,
  });

export const useTagGroups = (ws: string) =>
  useQuery({
    queryKey: keys.tagGroups(ws),
    queryFn: async () => (await ok(api.GET('/v1/tag-groups'))).data,
    ...DEFINITIONS,
  });
