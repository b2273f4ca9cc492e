// The signed-in person, as the API's browser sessions work (docs/api.md "Sessions and two-factor"):
// the access token (15 minutes) lives in memory only; the refresh token is the HttpOnly cookie
// svc_rt_<user id> that POST /v1/auth/refresh rotates. A reload starts with a refresh. Refreshes
// never run twice at once (a reused refresh token signs the whole session out): one at a time in
// this tab, and one at a time across tabs under a Web Lock. The selected workspace is remembered
// per browser (localStorage) and sent as SVC-Workspace.
import { useSyncExternalStore } from 'react';
import { ApiError, offline } from './errors';
import { sendWithinLimit } from './rate-limit';
import type { Me } from './schemas';

export interface SessionUser {
  id: string;
  name: string;
  email: string;
  mfa_enabled: boolean;
}

export type Session =
  | { status: 'loading' }
  | { status: 'signed_out'; reason?: string }
  | { status: 'signed_in'; user: SessionUser; me: Me | null; workspaceId: string | null };

interface TokenAnswer {
  access_token: string;
  expires_in: number;
  user: SessionUser;
}

const WORKSPACE_KEY = 'helpdesk.workspace';
const ACCOUNT_KEY = 'helpdesk.account';

let state: Session = { status: 'loading' };
let token: string | null = null;
let expiresAt = 0;
const listeners = new Set<() => void>();

function set(next: Session): void {
  state = next;
  for (const l of listeners) l();
}

export const getSession = (): Session => state;
export const subscribeSession = (l: () => void): (() => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};
export const useSession = (): Session => useSyncExternalStore(subscribeSession, getSession);

export function currentWorkspaceId(): string | null {
  return state.status === 'signed_in' ? state.workspaceId : null;
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  try {
    return await fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  } catch {
    throw offline();
  }
}

async function fail(res: Response): Promise<never> {
  throw await ApiError.from(res, await res.json().catch(() => null));
}

async function loadMe(): Promise<Me> {
  // Rate limited (a reload in the middle of a 429's wait): wait as the answer says, rather than
  // taking the person to the sign-in page.
  const res = await sendWithinLimit(() => fetch('/v1/me', { headers: { authorization: `Bearer ${token}` } })).catch(
    () => {
      throw offline();
    },
  );
  if (!res.ok) return fail(res);
  return (await res.json()) as Me;
}

/** Picks the remembered workspace when the person still belongs to it, else their first. */
function pickWorkspace(me: Me): string | null {
  const remembered = localStorage.getItem(WORKSPACE_KEY);
  const ids = me.workspaces.map((w) => w.id);
  return remembered && ids.includes(remembered) ? remembered : (ids[0] ?? null);
}

async function begin(answer: TokenAnswer): Promise<void> {
  token = answer.access_token;
  expiresAt = Date.now() + answer.expires_in * 1000;
  localStorage.setItem(ACCOUNT_KEY, answer.user.id);
  const me = await loadMe();
  set({ status: 'signed_in', user: answer.user, me, workspaceId: pickWorkspace(me) });
}

let refreshing: Promise<boolean> | null = null;

/** One refresh at a time: in this tab (a shared promise) and across tabs (a Web Lock). */
function refresh(): Promise<boolean> {
  if (!refreshing) {
    const run = async (): Promise<boolean> => {
      const account = localStorage.getItem(ACCOUNT_KEY);
      let res = await post('/v1/auth/refresh', account ? { user_id: account } : {});
      // That account was signed out meanwhile (another tab): the browser's most recent one, if any.
      if (res.status === 401 && account) res = await post('/v1/auth/refresh', {});
      if (res.status === 401) {
        token = null;
        set({ status: 'signed_out' });
        return false;
      }
      if (!res.ok) return fail(res);
      const answer = (await res.json()) as TokenAnswer;
      const keep = state.status === 'signed_in' && state.user.id === answer.user.id;
      if (keep) {
        token = answer.access_token;
        expiresAt = Date.now() + answer.expires_in * 1000;
      } else await begin(answer);
      return true;
    };
    const locked: Promise<boolean> = navigator.locks
      ? // request() resolves with what the callback resolves with (its types say a promise of a promise).
        (navigator.locks.request('helpdesk.refresh', run) as unknown as Promise<boolean>)
      : run();
    refreshing = locked.finally(() => {
      refreshing = null;
    });
  }
  return refreshing as Promise<boolean>;
}

/** At start: the browser's session, if it has one. */
export async function restore(): Promise<void> {
  try {
    await refresh();
  } catch (err) {
    set({ status: 'signed_out', reason: err instanceof Error ? err.message : String(err) });
  }
}

/** The request with the access token (refreshed first when it is about to expire) and the workspace. */
export async function authorize(request: Request): Promise<Request> {
  if (token && Date.now() > expiresAt - 30_000) await refresh();
  const headers = new Headers(request.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  const ws = currentWorkspaceId();
  if (ws && !headers.has('svc-workspace')) headers.set('svc-workspace', ws);
  return new Request(request, { headers });
}

/** After a 401: whether a refresh gave a new token worth retrying with. */
export async function refreshAfter401(): Promise<boolean> {
  if (!token) return false;
  return refresh();
}

export type SignIn = { kind: 'signed_in' } | { kind: 'mfa'; mfaToken: string };

export async function login(email: string, password: string): Promise<SignIn> {
  const res = await post('/v1/auth/login', { email, password });
  if (!res.ok) return fail(res);
  const body = (await res.json()) as TokenAnswer | { mfa_required: true; mfa_token: string };
  if ('mfa_required' in body) return { kind: 'mfa', mfaToken: body.mfa_token };
  await begin(body);
  return { kind: 'signed_in' };
}

export async function completeMfa(mfaToken: string, code: string): Promise<void> {
  const res = await post('/v1/auth/mfa', { mfa_token: mfaToken, code: code.trim() });
  if (!res.ok) return fail(res);
  await begin((await res.json()) as TokenAnswer);
}

export async function register(name: string, email: string, password: string): Promise<void> {
  const res = await post('/v1/auth/register', { name, email, password });
  if (!res.ok) return fail(res);
  await begin((await res.json()) as TokenAnswer);
}

/**
 * Signs out this account (`all`: every account of this browser). Another account still signed in
 * on this browser takes over (the most recently used), else the browser is signed out.
 */
export async function logout(all = false): Promise<void> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const res = await post('/v1/auth/logout', all ? { all: true } : {}, headers);
  if (!res.ok && res.status !== 401) return fail(res);
  token = null;
  localStorage.removeItem(ACCOUNT_KEY);
  set({ status: 'signed_out' });
  if (!all) await refresh();
}

/**
 * Signs out one account of this browser by its user id (its refresh cookie goes): this tab's own
 * account as logout() does, another one without touching this tab's session.
 */
export async function signOutAccount(userId: string): Promise<void> {
  if (state.status === 'signed_in' && state.user.id === userId) return logout(false);
  const res = await post('/v1/auth/logout', { user_id: userId });
  if (!res.ok && res.status !== 401) return fail(res);
}

export interface BrowserAccount {
  user: SessionUser;
  workspaces: Array<{ id: string; name: string }>;
  current: boolean;
}

/** The accounts signed in on this browser (POST /v1/auth/accounts), most recently used first. */
export async function listAccounts(): Promise<BrowserAccount[]> {
  const res = await post('/v1/auth/accounts', {});
  if (!res.ok) return fail(res);
  return ((await res.json()) as { data: BrowserAccount[] }).data;
}

/** Makes another account of this browser the current one (a refresh with its user id). */
export async function switchAccount(userId: string): Promise<void> {
  if (refreshing) await refreshing;
  localStorage.setItem(ACCOUNT_KEY, userId);
  await refresh();
}

/** Reloads the person and their workspaces (after creating one), optionally selecting one. */
export async function reloadMe(select?: string): Promise<void> {
  if (state.status !== 'signed_in') return;
  const me = await loadMe();
  if (select) localStorage.setItem(WORKSPACE_KEY, select);
  set({ ...state, me, workspaceId: pickWorkspace(me) });
}

export function selectWorkspace(id: string): void {
  if (state.status !== 'signed_in') return;
  localStorage.setItem(WORKSPACE_KEY, id);
  set({ ...state, workspaceId: id });
}

/** After a change to the person themself (name, picture, two-factor): their row and `me` again. */
export async function reloadProfile(): Promise<void> {
  if (state.status !== 'signed_in') return;
  const me = await loadMe();
  if (state.status !== 'signed_in') return;
  const user = { ...state.user, name: me.name, email: me.email ?? state.user.email, mfa_enabled: me.mfa_enabled };
  set({ ...state, user, me });
}

/**
 * Sign-in with a passkey (docs/api.md "Passkeys"): the server's challenge (optionally for one
 * email), the browser's WebAuthn prompt (@simplewebauthn/browser), then the signed answer, which
 * signs in as a password would (no two-factor step: a passkey is two factors). A prompt the person
 * closes is said in words, not as the browser's NotAllowedError.
 */
export async function loginWithPasskey(email?: string): Promise<void> {
  const { startAuthentication } = await import('@simplewebauthn/browser');
  const res = await post('/v1/auth/passkey/options', email ? { email } : {});
  if (!res.ok) return fail(res);
  const { options, challenge_id } = (await res.json()) as {
    options: Parameters<typeof startAuthentication>[0]['optionsJSON'];
    challenge_id: string;
  };
  let response: Awaited<ReturnType<typeof startAuthentication>>;
  try {
    response = await startAuthentication({ optionsJSON: options });
  } catch (err) {
    throw new Error(passkeyPromptText(err));
  }
  const signed = await post('/v1/auth/passkey', { challenge_id, response });
  if (!signed.ok) return fail(signed);
  await begin((await signed.json()) as TokenAnswer);
}

/** The browser's refusal of a WebAuthn prompt, in words. */
export function passkeyPromptText(err: unknown): string {
  const name = err instanceof Error ? err.name : '';
  if (name === 'NotAllowedError') return 'The passkey prompt was closed or timed out. Try again.';
  if (name === 'InvalidStateError') return 'This device already holds a passkey for your account.';
  if (name === 'NotSupportedError' || name === 'SecurityError')
    return 'This browser cannot use passkeys here. Sign in with your password instead.';
  return err instanceof Error ? err.message : String(err);
}

/**
 * OAuth sign-in leaves the app for the provider and comes back to `/` signed in (the refresh
 * cookie): the account to restore is then the browser's most recent one, not the remembered one.
 */
export function startOAuth(provider: 'google' | 'microsoft', link?: boolean): void {
  if (!link) localStorage.removeItem(ACCOUNT_KEY);
  const q = link ? '?link=1' : '';
  window.location.assign(`/v1/auth/oauth/${provider}/start${q}`);
}
