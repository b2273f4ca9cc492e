// The workspace's teams (/v1/teams), public and private.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok, type Schemas } from '../lib/api';
import { type Body, useChange } from './change';
import { keys } from './keys';
import { allPages, DEFINITIONS } from './pages';

type Team = Schemas['Team'];

export const useTeams = (ws: string) =>
  useQuery({
    queryKey: keys.teams(ws),
    queryFn: () =>
      allPages((cursor) =>
        ok(api.GET('/v1/teams', { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } })),
      ),
    ...DEFINITIONS,
  });

/** Settings' pick lists: the first page of teams, as the API pages them. */
export const useConfigTeams = (ws: string) =>
  useQuery({
    queryKey: keys.configTeams(ws),
    queryFn: () => ok(api.GET('/v1/teams', { params: { query: { limit: 100 } } })),
  });

/** Assignment's rule targets: the first page of teams (its own key). */
export const useTeamsPage = (ws: string) =>
  useQuery({
    queryKey: keys.teamsPage(ws),
    queryFn: () => ok(api.GET('/v1/teams', { params: { query: { limit: 100 } } })),
  });

export const useCreateTeam = (ws: string) =>
  useChange((body: Body<'/v1/teams', 'post'>) => ok(api.POST('/v1/teams', { body })), [keys.teams(ws)]);

/**
 * Changes a team; the list holds the answer at once (no refetch). Private or public shows at once,
 * before the answer, and goes back to what it was when the change is refused.
 */
export function useUpdateTeam(ws: string) {
  const qc = useQueryClient();
  const put = (id: string, f: (t: Team) => Team) =>
    qc.setQueryData<Team[]>(keys.teams(ws), (list) => list?.map((t) => (t.id === id ? f(t) : t)));
  return useMutation({
    mutationFn: ({ id, body }: { id: string; body: Body<'/v1/teams/{id}', 'patch'> }) =>
      ok(api.PATCH('/v1/teams/{id}', { params: { path: { id } }, body })),
    onMutate: async ({ id, body }) => {
      // A refetch in flight would land after this and show the old value again.
      await qc.cancelQueries({ queryKey: keys.teams(ws), exact: true });
      const before = qc.getQueryData<Team[]>(keys.teams(ws))?.find((t) => t.id === id);
      const priv = body.private;
      if (priv !== undefined) put(id, (t) => ({ ...t, private: priv }));
      return { before };
    },
    onError: (_, { id }, context) => {
      const before = context?.before;
      if (before && before.private !== undefined) put(id, (t) => ({ ...t, private: before.private }));
    },
    onSuccess: (next) => put(next.id, () => next),
  });
}

export function useDeleteTeam(ws: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => ok(api.DELETE('/v1/teams/{id}', { params: { path: { id } } })),
    onSuccess: (_, id) => qc.setQueryData<Team[]>(keys.teams(ws), (list) => list?.filter((t) => t.id !== id)),
  });
}
