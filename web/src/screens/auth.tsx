// Getting in: sign in (with the two-factor step when the API asks for it), sign up, and the first
// workspace for someone who has none. The returns from Google/Microsoft that are not signed in
// at once: `/sign-in#oauth_error=<code>` (cancelled or failed at the provider, said in words) and
// `/sign-in#mfa_token=...` (the two-factor step), and `/profile?linked=1` after linking an account.
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, type ReactNode, useEffect, useRef, useState } from 'react';
import { useCreateWorkspace } from '../data/auth';
import {
  clearReturnNote,
  continueWith,
  oauthErrorText,
  peekReturnNote,
  providerName,
  setReturnNote,
  takeStarted,
  useAuthMethods,
} from '../data/signin';
import { ApiError, errorText } from '../lib/api';
import { Redirect } from '../lib/redirect';
import {
  type BrowserAccount,
  completeMfa,
  listAccounts,
  login,
  loginWithPasskey,
  register,
  signOutAccount,
  useSession,
} from '../lib/session';

/** The frame of the pages before the workspace: sign in, sign up, a new workspace, an invitation. */
export function AuthPage({ title, children }: { title: string; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Help desk`;
  }, [title]);
  return (
    <main className="auth">
      <div className="auth-card">
        <p className="brand" aria-hidden="true">
          Help desk
        </p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}

export function ErrorNote({ error }: { error: string | null }) {
  return (
    <p className="error" role="alert" hidden={!error}>
      {error}
    </p>
  );
}

/** A form's submit: busy while it runs, its failure said in words. */
function useSubmit(run: () => Promise<void>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, onSubmit };
}

/** Where a signed-in person goes: their workspace's inbox, or making their first workspace. */
function Landing({ next }: { next?: string }) {
  const s = useSession();
  if (s.status !== 'signed_in') return null;
  if (!s.workspaceId) return <Redirect to="/workspaces/new" />;
  return <Redirect to={next ?? '/inbox'} />;
}

export function Login() {
  const s = useSession();
  const { next, add } = useSearch({ from: '/login' });
  // Adding another account: the form, although someone is signed in; theirs once it succeeds.
  const [adding, setAdding] = useState(Boolean(add));
  // Back from Google/Microsoft without being signed in (SignInReturn): what happened, or the
  // two-factor step. The form stays although another account of this browser is signed in.
  const [returned] = useState(peekReturnNote);
  useEffect(() => clearReturnNote(returned), [returned]);
  const [held, setHeld] = useState(returned !== null);
  const [oauthError, setOauthError] = useState(returned?.kind === 'error' ? returned.text : null);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [mfaToken, setMfaToken] = useState<string | null>(returned?.kind === 'mfa' ? returned.mfaToken : null);
  const [code, setCode] = useState('');
  const codeRef = useRef<HTMLInputElement>(null);
  // A sixth account (409 too_many_accounts): the five this browser holds, to sign one out.
  const [full, setFull] = useState<BrowserAccount[] | null>(null);
  const attempt = async () => {
    setOauthError(null);
    let r: Awaited<ReturnType<typeof login>>;
    try {
      r = await login(email.trim(), password);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'too_many_accounts') setFull(await listAccounts().catch(() => []));
      throw err;
    }
    setFull(null);
    if (r.kind === 'mfa') setMfaToken(r.mfaToken);
    else signedIn();
  };
  const signedIn = () => {
    setAdding(false);
    setHeld(false);
  };
  const signIn = useSubmit(attempt);
  // Signs one of them out, then this sign-in again.
  const [freeing, setFreeing] = useState(false);
  const [freeError, setFreeError] = useState<string | null>(null);
  const makeRoom = async (userId: string) => {
    setFreeing(true);
    setFreeError(null);
    try {
      await signOutAccount(userId);
      await attempt();
    } catch (err) {
      setFreeError(errorText(err));
    } finally {
      setFreeing(false);
    }
  };
  const verify = useSubmit(async () => {
    await completeMfa(mfaToken!, code);
    signedIn();
  });
  useEffect(() => {
    if (mfaToken) codeRef.current?.focus();
  }, [mfaToken]);

  if (s.status === 'signed_in' && !adding && !held) return <Landing next={next} />;
  const addingNow = adding || (held && s.status === 'signed_in');
  if (mfaToken) {
    return (
      <AuthPage title="Two-factor code">
        <form onSubmit={verify.onSubmit} className="stack">
          <p>Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
          <label htmlFor="mfa-code">Code</label>
          <input
            id="mfa-code"
            ref={codeRef}
            autoComplete="one-time-code"
            inputMode="text"
            required
            value={code}
            onChange={(e) => setCode(e.target.value)}
          />
          <ErrorNote error={verify.error} />
          <button type="submit" className="primary" disabled={verify.busy}>
            {verify.busy ? 'Checking…' : 'Verify'}
          </button>
          <button type="button" className="link" onClick={() => setMfaToken(null)}>
            Use another account
          </button>
        </form>
      </AuthPage>
    );
  }
  return (
    <AuthPage title={addingNow ? 'Add an account' : 'Sign in'}>
      <ErrorNote error={oauthError} />
      <form onSubmit={signIn.onSubmit} className="stack">
        <label htmlFor="login-email">Email</label>
        <input
          id="login-email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <label htmlFor="login-password">Password</label>
        <input
          id="login-password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <ErrorNote error={signIn.error ?? (s.status === 'signed_out' ? (s.reason ?? null) : null)} />
        <button type="submit" className="primary" disabled={signIn.busy || s.status === 'loading'}>
          {signIn.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <OtherWays email={email.trim()} onSignedIn={signedIn} />
      {full && full.length > 0 && (
        <section className="stack" aria-labelledby="room-title">
          <h2 id="room-title">Sign out of an account to add this one</h2>
          <p>A browser holds five accounts at most. Signing one out here keeps its data; it can sign in again later.</p>
          <ul className="account-list">
            {full.map((a) => (
              <li key={a.user.id}>
                <span>
                  {a.user.name} ({a.user.email})
                </span>{' '}
                <button type="button" disabled={freeing} onClick={() => void makeRoom(a.user.id)}>
                  Sign out<span className="visually-hidden"> {a.user.name}</span>
                </button>
              </li>
            ))}
          </ul>
          <ErrorNote error={freeError} />
        </section>
      )}
      {addingNow ? (
        <Link to="/inbox" search={{}}>
          Back to the inbox
        </Link>
      ) : (
        <p>
          New here? <Link to="/signup">Create an account</Link>
        </p>
      )}
    </AuthPage>
  );
}

/**
 * The other ways in, as GET /v1/auth/methods says: a passkey (for the typed email when there is
 * one, else any passkey of this device), Google, Microsoft. Nothing shows until it answers.
 */
function OtherWays({ email, onSignedIn }: { email: string; onSignedIn: () => void }) {
  const methods = useAuthMethods().data;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!methods) return null;
  const { passkeys, oauth } = methods;
  if (!passkeys && !oauth.google && !oauth.microsoft) return null;
  const withPasskey = async () => {
    setBusy(true);
    setError(null);
    try {
      await loginWithPasskey(email || undefined);
      onSignedIn();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="stack other-ways" aria-label="Other ways to sign in">
      <p className="divider">or</p>
      {passkeys && (
        <button type="button" disabled={busy} onClick={() => void withPasskey()}>
          {busy ? 'Waiting for your passkey…' : 'Sign in with a passkey'}
        </button>
      )}
      {oauth.google && (
        <button type="button" onClick={() => continueWith('google')}>
          Continue with Google
        </button>
      )}
      {oauth.microsoft && (
        <button type="button" onClick={() => continueWith('microsoft')}>
          Continue with Microsoft
        </button>
      )}
      <ErrorNote error={error} />
    </section>
  );
}

/**
 * `/sign-in#oauth_error=<code>` or `#mfa_token=...`: the service's return from Google/Microsoft when
 * the browser is not signed in at once. What it says goes to the sign-in page (or, for a link that
 * was cancelled, to the profile), and the address is replaced, so the fragment leaves the address
 * bar and the history.
 */
export function SignInReturn() {
  const navigate = useNavigate();
  const done = useRef(false);
  useEffect(() => {
    if (done.current) return;
    done.current = true;
    const q = new URLSearchParams(window.location.hash.slice(1));
    const started = takeStarted();
    const mfaToken = q.get('mfa_token');
    const error = q.get('oauth_error');
    if (mfaToken) setReturnNote({ kind: 'mfa', mfaToken });
    else if (error !== null) {
      setReturnNote({ kind: 'error', text: oauthErrorText(error, started?.provider ?? null, started?.link) });
    }
    if (started?.link && error !== null && !mfaToken) {
      void navigate({ to: '/settings/$', params: { _splat: 'profile' }, replace: true });
    } else void navigate({ to: '/login', search: {}, replace: true });
  });
  return null;
}

/** `/profile?linked=1`: the service's return after linking an account, said on the profile. */
export function ProfileReturn() {
  const navigate = useNavigate();
  const done = useRef(false);
  useEffect(() => {
    if (done.current) return;
    done.current = true;
    const started = takeStarted();
    if (new URLSearchParams(window.location.search).get('linked') === '1') {
      const what = started ? `Your ${providerName(started.provider)} account is` : 'The account is';
      setReturnNote({ kind: 'done', text: `${what} linked: you can sign in with it.` });
    }
    void navigate({ to: '/settings/$', params: { _splat: 'profile' }, replace: true });
  });
  return null;
}

export function Signup() {
  const s = useSession();
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const submit = useSubmit(() => register(name.trim(), email.trim(), password));
  if (s.status === 'signed_in') return <Landing />;
  return (
    <AuthPage title="Create your account">
      <form onSubmit={submit.onSubmit} className="stack">
        <label htmlFor="signup-name">Your name</label>
        <input
          id="signup-name"
          autoComplete="name"
          required
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <label htmlFor="signup-email">Email</label>
        <input
          id="signup-email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <label htmlFor="signup-password">Password</label>
        <input
          id="signup-password"
          type="password"
          autoComplete="new-password"
          required
          minLength={10}
          maxLength={200}
          aria-describedby="signup-password-hint"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <p id="signup-password-hint" className="hint">
          At least 10 characters.
        </p>
        <ErrorNote error={submit.error} />
        <button type="submit" className="primary" disabled={submit.busy}>
          {submit.busy ? 'Creating…' : 'Create account'}
        </button>
      </form>
      <p>
        Have an account? <Link to="/login">Sign in</Link>
      </p>
    </AuthPage>
  );
}

export function NewWorkspace() {
  const s = useSession();
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const createWorkspace = useCreateWorkspace();
  const submit = useSubmit(async () => {
    await createWorkspace.mutateAsync(name.trim());
    await navigate({ to: '/inbox', search: {} });
  });
  if (s.status === 'loading') return <p className="loading">Loading…</p>;
  if (s.status === 'signed_out') return <Redirect to="/login" search={{ next: '/workspaces/new' }} />;
  const first = (s.me?.workspaces.length ?? 0) === 0;
  return (
    <AuthPage title={first ? 'Create your workspace' : 'New workspace'}>
      <form onSubmit={submit.onSubmit} className="stack">
        <p>A workspace holds your team’s tickets, mailboxes and help center.</p>
        <label htmlFor="workspace-name">Workspace name</label>
        <input
          id="workspace-name"
          required
          maxLength={100}
          placeholder="Acme Support"
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <ErrorNote error={submit.error} />
        <button type="submit" className="primary" disabled={submit.busy}>
          {submit.busy ? 'Creating…' : 'Create workspace'}
        </button>
        {!first && (
          <Link to="/inbox" search={{}}>
            Back to the inbox
          </Link>
        )}
      </form>
    </AuthPage>
  );
}
