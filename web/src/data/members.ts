// The workspace's members: who can be assigned, mentioned and managed.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys } from './keys';
import { allPages, DEFINITIONS } from './pages';

export const useMembers = (ws: string) =>
  useQuery({
    queryKey: keys.members(ws),
    queryFn: () =>
      allPages((cursor) =>
        ok(api.GET('/v1/members', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } })),
      ),
    ...DEFINITIONS,
  });
