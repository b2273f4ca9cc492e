// Signing in and what comes with it: the accounts of this browser, an invitation (looked up by its
// token, accepted), a new workspace. Sign-in, sign-up, two-factor and sign-out themselves are the
// session's (lib/session.ts: the tokens never pass through a screen); after a change of workspaces
// the session's `me` is loaded again (reloadMe) with the new workspace selected.
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { listAccounts, reloadMe } from '../lib/session';
import { keys } from './keys';

/** The accounts signed in on this browser (the workspace menu's "switch account"). */
export const useAccounts = (userId: string) => useQuery({ queryKey: keys.accounts(userId), queryFn: listAccounts });

/** Who invited whom to which workspace, by the link's token; not retried (a 404 is the answer). */
export const useInvitation = (token: string) =>
  useQuery({
    queryKey: keys.invitation(token),
    queryFn: () => ok(api.GET('/v1/invitations/lookup', { params: { query: { token } } })),
    retry: false,
  });

/** Accept the invitation: the person is a member now, and its workspace is selected. */
export const useAcceptInvitation = () =>
  useMutation({
    mutationFn: async (token: string) => {
      const r = await ok(api.POST('/v1/invitations/accept', { body: { token } }));
      await reloadMe(r.workspace.id);
      return r;
    },
  });

/** A new workspace, selected once created. */
export const useCreateWorkspace = () =>
  useMutation({
    mutationFn: async (name: string) => {
      const w = await ok(api.POST('/v1/workspaces', { body: { name } }));
      await reloadMe(w.id);
      return w;
    },
  });
