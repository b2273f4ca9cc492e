// Invitations to the workspace (/v1/invitations): the pending ones, a new one (its answer carries
// the accept link), revoking one.
import { useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { type Body, useChange } from './change';
import { keys } from './keys';

export const useInvitations = (ws: string) =>
  useQuery({
    queryKey: keys.invitations(ws),
    queryFn: () => ok(api.GET('/v1/invitations', { params: { query: { limit: 100 } } })),
  });

/** Invites someone (again: a new link for the same address). */
export const useInvite = (ws: string) =>
  useChange(
    (body: Body<'/v1/invitations', 'post'>) => ok(api.POST('/v1/invitations', { body })),
    [keys.invitations(ws)],
  );

export const useRevokeInvitation = (ws: string) =>
  useChange(
    (id: string) => ok(api.DELETE('/v1/invitations/{id}', { params: { path: { id } } })),
    [keys.invitations(ws)],
  );
