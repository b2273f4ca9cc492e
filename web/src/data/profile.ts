// The signed-in person (/v1/me): name, picture, password, two-factor sign-in and where they are
// signed in. What changes the person reloads the session's profile (lib/session.ts) once done.
import { useMutation, useQuery } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { reloadProfile } from '../lib/session';
import { type Body, useChange } from './change';
import { keys } from './keys';

/** A change to the person, then their profile read again. */
const useProfileChange = <V, R>(fn: (v: V) => Promise<R>) =>
  useMutation({
    mutationFn: fn,
    onSuccess: async (r) => {
      await reloadProfile();
      return r;
    },
  });

export const useRename = () => useProfileChange((name: string) => ok(api.PATCH('/v1/me', { body: { name } })));

/** The picture (multipart: the file as `file`, ui/people.tsx fileBody). */
export const useUploadAvatar = () =>
  useProfileChange((body: { file: string }) => ok(api.PUT('/v1/me/avatar', { body })));

export const useRemoveAvatar = () => useProfileChange(() => ok(api.DELETE('/v1/me/avatar')));

/** A new password signs out the other sessions: their list is read again. */
export const useChangePassword = () =>
  useChange((body: Body<'/v1/me/password', 'post'>) => ok(api.POST('/v1/me/password', { body })), [keys.meSessions()]);

/** Two-factor: the secret to scan (nothing changes until it is confirmed). */
export const useStartTotp = () => useMutation({ mutationFn: () => ok(api.POST('/v1/me/mfa/totp')) });

/**
 * Two-factor on: the answer carries the recovery codes, shown once. The screen reloads the
 * profile itself after it holds the codes (reloaded first, the screen would show "On" without them).
 */
export const useConfirmTotp = () =>
  useMutation({ mutationFn: (code: string) => ok(api.POST('/v1/me/mfa/totp/confirm', { body: { code } })) });

export const useTurnOffMfa = () => useProfileChange((code: string) => ok(api.DELETE('/v1/me/mfa', { body: { code } })));

/** Where the person is signed in (any workspace). */
export const useMySessions = (userId: string) =>
  useQuery({ queryKey: keys.meSessions(userId), queryFn: () => ok(api.GET('/v1/me/sessions')) });

export const useEndSession = (userId: string) =>
  useChange(
    (id: string) => ok(api.DELETE('/v1/me/sessions/{id}', { params: { path: { id } } })),
    [keys.meSessions(userId)],
  );

export const useEndOtherSessions = (userId: string) =>
  useChange(() => ok(api.POST('/v1/me/sessions/revoke-others')), [keys.meSessions(userId)]);
