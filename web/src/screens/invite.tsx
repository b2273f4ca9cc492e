// Accepting an invitation (/invite/<token>, the link of the invitation mail and the one an admin
// copies): what it is for (GET /v1/invitations/lookup, public); signed out, signing in or creating
// an account right here (the invited address filled in); signed in, Accept (POST
// /v1/invitations/accept), then the workspace is selected and its inbox opens.
import { useNavigate, useParams } from '@tanstack/react-router';
import { useState } from 'react';
import { useAcceptInvitation, useInvitation } from '../data/auth';
import { ApiError } from '../lib/api';
import { ROLE_LABEL } from '../lib/role';
import { completeMfa, login, register, useSession } from '../lib/session';
import { ErrorNote, Loading } from '../ui/page';
import { useAction } from '../ui/people';
import { AuthPage } from './auth';

const GONE_TEXT =
  'This invitation link no longer works: it was revoked, already used, or it expired (invitations last a limited time). Ask whoever invited you to send a new one.';

export function AcceptInvitation() {
  const { token } = useParams({ from: '/invite/$token' });
  const s = useSession();
  const lookup = useInvitation(token);
  const [signingIn, setSigningIn] = useState(false);

  if (lookup.isPending || s.status === 'loading') {
    return (
      <AuthPage title="Invitation">
        <Loading />
      </AuthPage>
    );
  }
  if (lookup.error) {
    const gone = lookup.error instanceof ApiError && lookup.error.status === 404;
    return (
      <AuthPage title="Invitation">
        {gone ? (
          <p className="error" role="alert">
            {GONE_TEXT}
          </p>
        ) : (
          <ErrorNote error={lookup.error} what="Could not look the invitation up" />
        )}
        <p>
          <a href="/">Go to the help desk</a>
        </p>
      </AuthPage>
    );
  }
  const inv = lookup.data;
  const about = (
    <p>
      You are invited to join <strong>{inv.workspace.name}</strong> as {article(ROLE_LABEL[inv.role])}{' '}
      <strong>{ROLE_LABEL[inv.role].toLowerCase()}</strong>. The invitation is for <strong>{inv.email}</strong>.
    </p>
  );
  const title = `Join ${inv.workspace.name}`;
  if (s.status === 'signed_in' && !signingIn) {
    return (
      <AuthPage title={title}>
        {about}
        <Accept token={token} invited={inv.email} signedInAs={s.user.email} onOtherAccount={() => setSigningIn(true)} />
      </AuthPage>
    );
  }
  return (
    <AuthPage title={title}>
      {about}
      <SignInHere email={inv.email} onDone={() => setSigningIn(false)} />
    </AuthPage>
  );
}

const article = (word: string) => (/^[AEIOU]/.test(word) ? 'an' : 'a');

function Accept({
  token,
  invited,
  signedInAs,
  onOtherAccount,
}: {
  token: string;
  invited: string;
  signedInAs: string;
  onOtherAccount(): void;
}) {
  const navigate = useNavigate();
  const action = useAction();
  const acceptInvitation = useAcceptInvitation();
  const mismatch = invited.toLowerCase() !== signedInAs.toLowerCase();
  const accept = () =>
    action.run(async () => {
      await acceptInvitation.mutateAsync(token);
      await navigate({ to: '/inbox', search: {} });
    });
  const gone = action.error instanceof ApiError && action.error.status === 404;
  return (
    <div className="stack">
      <p>
        You are signed in as <strong>{signedInAs}</strong>.
      </p>
      {mismatch && (
        <p className="error" role="alert">
          This invitation was sent to {invited}, not to the account you are signed in with. Sign in with {invited} (or
          create an account for it) to accept it.
        </p>
      )}
      {action.error ? (
        gone ? (
          <p className="error" role="alert">
            {GONE_TEXT}
          </p>
        ) : (
          <ErrorNote error={action.error} what="Could not accept the invitation" />
        )
      ) : null}
      {!mismatch && (
        <button type="button" className="primary" disabled={action.busy} onClick={() => void accept()}>
          {action.busy ? 'Joining…' : 'Accept invitation'}
        </button>
      )}
      <button type="button" className={mismatch ? 'primary' : ''} onClick={onOtherAccount}>
        Use another account
      </button>
    </div>
  );
}

/** Signing in, or creating an account, without leaving the invitation (then Accept shows). */
function SignInHere({ email: invited, onDone }: { email: string; onDone(): void }) {
  const [mode, setMode] = useState<'signup' | 'signin'>('signup');
  const [name, setName] = useState('');
  const [email, setEmail] = useState(invited);
  const [password, setPassword] = useState('');
  const [mfaToken, setMfaToken] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const action = useAction();

  if (mfaToken) {
    return (
      <form
        className="stack"
        onSubmit={(e) =>
          void action.run(async () => {
            await completeMfa(mfaToken, code);
            onDone();
          }, e)
        }
      >
        <h2>Two-factor code</h2>
        <label htmlFor="invite-code">Code</label>
        <input
          id="invite-code"
          autoComplete="one-time-code"
          required
          value={code}
          onChange={(e) => setCode(e.target.value)}
        />
        <ErrorNote error={action.error} />
        <button type="submit" className="primary" disabled={action.busy}>
          Verify
        </button>
      </form>
    );
  }
  const signup = mode === 'signup';
  return (
    <>
      <form
        className="stack"
        onSubmit={(e) =>
          void action.run(async () => {
            if (signup) await register(name.trim(), email.trim(), password);
            else {
              const r = await login(email.trim(), password);
              if (r.kind === 'mfa') {
                setMfaToken(r.mfaToken);
                return;
              }
            }
            onDone();
          }, e)
        }
      >
        <h2>{signup ? 'Create your account' : 'Sign in to accept'}</h2>
        {signup && (
          <>
            <label htmlFor="invite-name">Name</label>
            <input
              id="invite-name"
              autoComplete="name"
              required
              maxLength={100}
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          </>
        )}
        <label htmlFor="invite-email">Email</label>
        <input
          id="invite-email"
          type="email"
          autoComplete={signup ? 'email' : 'username'}
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <label htmlFor="invite-password">Password</label>
        <input
          id="invite-password"
          type="password"
          autoComplete={signup ? 'new-password' : 'current-password'}
          required
          minLength={signup ? 10 : undefined}
          maxLength={200}
          aria-describedby={signup ? 'invite-password-hint' : undefined}
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {signup && (
          <p id="invite-password-hint" className="hint">
            At least 10 characters.
          </p>
        )}
        <ErrorNote error={action.error} />
        <button type="submit" className="primary" disabled={action.busy}>
          {action.busy ? 'One moment…' : signup ? 'Create account' : 'Sign in'}
        </button>
      </form>
      <p>
        {signup ? 'Already have an account? ' : 'New here? '}
        <button
          type="button"
          className="link"
          onClick={() => {
            setMode(signup ? 'signin' : 'signup');
            action.setError(null);
          }}
        >
          {signup ? 'Sign in instead' : 'Create an account instead'}
        </button>
      </p>
    </>
  );
}
