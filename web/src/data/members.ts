// The workspace's members (/v1/members): who can be assigned, mentioned and managed.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { type Body, useChange } from './change';
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

/** Settings' pick lists: the first page of members, as the API pages them. */
export const useConfigMembers = (ws: string) =>
  useQuery({
    queryKey: keys.configMembers(ws),
    queryFn: () => ok(api.GET('/v1/members', { params: { query: { limit: 100 } } })),
  });

export const useChangeRole = (ws: string) =>
  useChange(
    ({ userId, role }: { userId: string; role: Body<'/v1/members/{user_id}', 'patch'>['role'] }) =>
      ok(api.PATCH('/v1/members/{user_id}', { params: { path: { user_id: userId } }, body: { role } })),
    [keys.members(ws)],
  );

export const useRemoveMember = (ws: string) =>
  useChange(
    (userId: string) => ok(api.DELETE('/v1/members/{user_id}', { params: { path: { user_id: userId } } })),
    [keys.members(ws)],
  );

/** Someone's availability and cap of open tickets ('me' for one's own). */
export const useSetAvailability = (ws: string) =>
  useChange(
    ({ userId, body }: { userId: string; body: Body<'/v1/members/{user_id}/availability', 'patch'> }) =>
      ok(api.PATCH('/v1/members/{user_id}/availability', { params: { path: { user_id: userId } }, body })),
    [keys.members(ws)],
  );
