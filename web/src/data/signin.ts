// Ways to sign in (issue 38): which buttons the sign-in page shows (GET /v1/auth/methods), the
// person's passkeys (POST /v1/me/passkeys/options, then the browser's WebAuthn prompt, then POST
// /v1/me/passkeys with a name; GET; DELETE) and their linked sign-in accounts (GET
// /v1/me/identities; DELETE /v1/me/identities/{id}, refused with 409 when it would leave no way to
// sign in). Types from the OpenAPI document (api.gen.d.ts), calls through the typed client.
//
// A Google/Microsoft round trip leaves the app and comes back to an address the service chooses
// (`/` signed in, `/sign-in#oauth_error=<code>` or `#mfa_token=...`, `/profile?linked=1` after a
// link): which provider it was, and whether it was a link, is kept in this tab's sessionStorage
// when it starts, so the return can say "Sign-in with Google was cancelled." (the fragment names
// no provider). What the return has to say is handed to the screen it lands on (returnNote).
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import { useQuery } from '@tanstack/react-query';
import type { paths } from '../api.gen';
import { ApiError, api, ok } from '../lib/api';
import { passkeyPromptText, startOAuth } from '../lib/session';
import { useChange } from './change';
import { keys } from './keys';

type Json<P extends keyof paths, M extends keyof paths[P], S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { 'application/json': infer B } } };
}
  ? B
  : never;

export type AuthMethods = Json<'/v1/auth/methods', 'get', 200>;
export type Passkey = Json<'/v1/me/passkeys', 'get', 200>['data'][number];
export type Identity = Json<'/v1/me/identities', 'get', 200>['data'][number];
export type Provider = keyof AuthMethods['oauth'];

/** Public: which sign-in buttons to show. Until it answers, only the password form. */
export const useAuthMethods = () =>
  useQuery({
    queryKey: keys.authMethods(),
    queryFn: () => ok(api.GET('/v1/auth/methods')),
    staleTime: 5 * 60_000,
    retry: false,
  });

export const usePasskeys = (userId: string) =>
  useQuery({ queryKey: keys.mePasskeys(userId), queryFn: () => ok(api.GET('/v1/me/passkeys')) });

/** A new passkey: the server's options, the browser's prompt, then the answer saved with its name. */
export const useAddPasskey = (userId: string) =>
  useChange(
    async (name: string) => {
      const { startRegistration } = await import('@simplewebauthn/browser');
      const options = await ok(api.POST('/v1/me/passkeys/options'));
      let response: Awaited<ReturnType<typeof startRegistration>>;
      try {
        response = await startRegistration({
          optionsJSON: options as unknown as PublicKeyCredentialCreationOptionsJSON,
        });
      } catch (err) {
        throw new Error(passkeyPromptText(err));
      }
      return ok(api.POST('/v1/me/passkeys', { body: { name, response: { ...response } } }));
    },
    [keys.mePasskeys(userId)],
  );

export const useDeletePasskey = (userId: string) =>
  useChange(
    (id: string) => ok(api.DELETE('/v1/me/passkeys/{id}', { params: { path: { id } } })),
    [keys.mePasskeys(userId)],
  );

export const useIdentities = (userId: string) =>
  useQuery({ queryKey: keys.meIdentities(userId), queryFn: () => ok(api.GET('/v1/me/identities')) });

/** Unlinks; the service's 409 (the last way to sign in) in words a person can act on. */
export const useUnlinkIdentity = (userId: string) =>
  useChange(
    async (id: string) => {
      try {
        return await ok(api.DELETE('/v1/me/identities/{id}', { params: { path: { id } } }));
      } catch (err) {
        if (err instanceof ApiError && err.status === 409) {
          throw new ApiError(409, err.code, LAST_WAY_IN);
        }
        throw err;
      }
    },
    [keys.meIdentities(userId)],
  );

export const LAST_WAY_IN =
  'This account is your only way to sign in, so it cannot be unlinked: you would have no way back in. ' +
  'Add a passkey or link another account first.';

export const providerName = (p: string): string => (p === 'google' ? 'Google' : p === 'microsoft' ? 'Microsoft' : p);

const STARTED_KEY = 'helpdesk.oauth-started';

/** Leaves for the provider (link: to link it to the signed-in person), noting which for the return. */
export function continueWith(provider: Provider, link = false): void {
  try {
    sessionStorage.setItem(STARTED_KEY, JSON.stringify({ provider, link }));
  } catch {
    // Storage refused (private mode): the return says what happened without the provider's name.
  }
  startOAuth(provider, link);
}

/** The round trip this tab started last (read once: a later return is not taken for it). */
export function takeStarted(): { provider: Provider; link: boolean } | null {
  try {
    const raw = sessionStorage.getItem(STARTED_KEY);
    sessionStorage.removeItem(STARTED_KEY);
    const v = raw ? (JSON.parse(raw) as { provider?: unknown; link?: unknown }) : null;
    if (v && (v.provider === 'google' || v.provider === 'microsoft')) return { provider: v.provider, link: !!v.link };
  } catch {
    // Unreadable: as if nothing was noted.
  }
  return null;
}

/** The provider's error return (`#oauth_error=<code>`) in words. */
export function oauthErrorText(code: string, provider: Provider | null, link = false): string {
  const who = provider ? providerName(provider) : 'Google or Microsoft';
  const what = link ? `Linking your ${provider ? `${who} account` : 'account'}` : `Sign-in with ${who}`;
  if (code === 'access_denied') {
    return `${what} was cancelled.${link ? '' : ' Sign in another way, or try again.'}`;
  }
  return `${what} did not work. Try again${link ? '' : ', or sign in another way'}.`;
}

/**
 * What a provider's return has to say on the screen it lands on: an error (an alert), something
 * done (a status), or the two-factor step to show (sign-in after OAuth with two-factor on).
 */
export type ReturnNote = { kind: 'error' | 'done'; text: string } | { kind: 'mfa'; mfaToken: string };

let note: ReturnNote | null = null;
/** Handed over by the return's route; the screen reads it as it mounts (peek), then clears it. */
export const setReturnNote = (n: ReturnNote | null) => {
  note = n;
};
export const peekReturnNote = () => note;
export const clearReturnNote = (n: ReturnNote | null) => {
  if (note === n) note = null;
};
