// The workspace's teams, public and private.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { keys } from './keys';
import { allPages, DEFINITIONS } from './pages';

export const useTeams = (ws: string) =>
  useQuery({
    queryKey: keys.teams(ws),
    queryFn: () =>
      allPages((cursor) =>
        ok(api.GET('/v1/teams', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } })),
      ),
    ...DEFINITIONS,
  });
