// Ways to sign in (issue 38): which buttons the sign-in page shows (GET /v1/auth/methods), the
// person's passkeys (POST /v1/me/passkeys/options, then the browser's WebAuthn prompt, then POST
// /v1/me/passkeys with a name; GET; DELETE) and their linked sign-in accounts (GET
// /v1/me/identities; DELETE /v1/me/identities/{id}, refused with 409 when it would leave no way to
// sign in). These routes are called through the session's authorized fetch until their schemas are
// in the generated API types.
import { useQuery } from '@tanstack/react-query';
import { ApiError, offline } from '../lib/errors';
import { authorize, passkeyPromptText } from '../lib/session';
import { useChange } from './change';
import { keys } from './keys';

export interface AuthMethods {
  password: boolean;
  passkeys: boolean;
  oauth: { google: boolean; microsoft: boolean };
}
export interface Passkey {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}
export interface Identity {
  id: string;
  provider: 'google' | 'microsoft';
  email: string;
  created_at: string;
}

async function call<T>(method: string, path: string, body?: unknown, signedIn = true): Promise<T> {
  const init: RequestInit = {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  };
  let res: Response;
  try {
    const req = new Request(path, init);
    res = await fetch(signedIn ? await authorize(req) : req);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw offline();
  }
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (!res.ok) throw await ApiError.from(res, data);
  return data as T;
}

/** Public: which sign-in buttons to show. Until it answers, only the password form. */
export const useAuthMethods = () =>
  useQuery({
    queryKey: keys.authMethods(),
    queryFn: () => call<AuthMethods>('GET', '/v1/auth/methods', undefined, false),
    staleTime: 5 * 60_000,
    retry: false,
  });

export const usePasskeys = (userId: string) =>
  useQuery({
    queryKey: keys.mePasskeys(userId),
    queryFn: () => call<{ data: Passkey[] }>('GET', '/v1/me/passkeys'),
  });

/** A new passkey: the server's options, the browser's prompt, then the answer saved with its name. */
export const useAddPasskey = (userId: string) =>
  useChange(
    async (name: string) => {
      const { startRegistration } = await import('@simplewebauthn/browser');
      const options = await call<Parameters<typeof startRegistration>[0]['optionsJSON']>(
        'POST',
        '/v1/me/passkeys/options',
        {},
      );
      let response: Awaited<ReturnType<typeof startRegistration>>;
      try {
        response = await startRegistration({ optionsJSON: options });
      } catch (err) {
        throw new Error(passkeyPromptText(err));
      }
      return call<Passkey>('POST', '/v1/me/passkeys', { name, response });
    },
    [keys.mePasskeys(userId)],
  );

export const useDeletePasskey = (userId: string) =>
  useChange(
    (id: string) => call<null>('DELETE', `/v1/me/passkeys/${encodeURIComponent(id)}`),
    [keys.mePasskeys(userId)],
  );

export const useIdentities = (userId: string) =>
  useQuery({
    queryKey: keys.meIdentities(userId),
    queryFn: () => call<{ data: Identity[] }>('GET', '/v1/me/identities'),
  });

export const useUnlinkIdentity = (userId: string) =>
  useChange(
    (id: string) => call<null>('DELETE', `/v1/me/identities/${encodeURIComponent(id)}`),
    [keys.meIdentities(userId)],
  );
