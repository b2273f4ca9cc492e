// Profile: the signed-in person's own name (PATCH /v1/me), picture (PUT/DELETE /v1/me/avatar),
// password (POST /v1/me/password: the other sessions are signed out), two-factor sign-in (POST
// /v1/me/mfa/totp, then .../confirm with a first code: recovery codes shown once; DELETE /v1/me/mfa),
// where the person is signed in (GET /v1/me/sessions: signing one out, or every one but this
// browser's) and signing out of every account of this browser; passkeys and linked Google/Microsoft
// accounts (data/signin.ts).
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useId, useRef, useState } from 'react';
import type { paths } from '../../api.gen';
import {
  useChangePassword,
  useConfirmTotp,
  useEndOtherSessions,
  useEndSession,
  useMySessions,
  useRemoveAvatar,
  useRename,
  useStartTotp,
  useTurnOffMfa,
  useUploadAvatar,
} from '../../data/profile';
import {
  clearReturnNote,
  continueWith,
  peekReturnNote,
  providerName,
  useAddPasskey,
  useAuthMethods,
  useDeletePasskey,
  useIdentities,
  usePasskeys,
  useUnlinkIdentity,
} from '../../data/signin';
import { ago, when } from '../../lib/format';
import { logout, reloadProfile, useSession } from '../../lib/session';
import { Avatar } from '../../ui/avatar';
import { ConfirmButton, fieldError, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle } from '../../ui/page';
import { Done, fileBody, pictureErrorText, useAction } from '../../ui/people';
import { QrCode } from '../../ui/qr-code';
import { count } from '../../ui/words';
import type { SectionProps } from './section';
import './people.css';

export default function Profile(_: SectionProps) {
  const s = useSession();
  if (s.status !== 'signed_in') return null;
  const me = s.me;
  return (
    <div className="people">
      <PageTitle>Profile</PageTitle>
      <NameForm name={me?.name ?? s.user.name} email={s.user.email} />
      <Picture url={me?.avatar_url ?? null} name={me?.name ?? s.user.name} />
      <PasswordForm />
      <TwoFactor enabled={me?.mfa_enabled ?? s.user.mfa_enabled} />
      <Passkeys userId={s.user.id} />
      <LinkedAccounts userId={s.user.id} />
      <Sessions userId={s.user.id} />
    </div>
  );
}

function NameForm({ name: current, email }: { name: string; email: string }) {
  const [name, setName] = useState(current);
  const action = useAction();
  const rename = useRename();
  return (
    <section className="card" aria-labelledby="profile-name">
      <h2 id="profile-name">Name</h2>
      <form
        onSubmit={(e) =>
          void action.run(async () => {
            await rename.mutateAsync(name.trim());
            return 'Name saved.';
          }, e)
        }
      >
        <TextField
          label="Your name"
          hint="Teammates and customers see it."
          required
          maxLength={100}
          autoComplete="name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={fieldError(action.error, 'name')}
        />
        <p className="hint">Email: {email} (it cannot be changed here).</p>
        <ErrorNote error={fieldError(action.error, 'name') ? null : action.error} what="Could not save the name" />
        <div className="row">
          <button type="submit" className="primary" disabled={action.busy || !name.trim() || name.trim() === current}>
            Save name
          </button>
          <Done text={action.done} />
        </div>
      </form>
    </section>
  );
}

function Picture({ url, name }: { url: string | null; name: string }) {
  const action = useAction();
  const uploadAvatar = useUploadAvatar();
  const removeAvatar = useRemoveAvatar();
  const input = useRef<HTMLInputElement>(null);
  const id = useId();
  const upload = (file: File) =>
    action.run(async () => {
      await uploadAvatar.mutateAsync(fileBody(file));
      return 'Picture saved.';
    });
  return (
    <section className="card" aria-labelledby="profile-picture">
      <h2 id="profile-picture">Picture</h2>
      <div className="picture-row">
        {url ? (
          <img className="avatar" src={url} alt={name} width={96} height={96} />
        ) : (
          <Avatar url={null} name={name} size={96} />
        )}
        <div>
          <label htmlFor={id} className="field-label">
            Upload a picture
          </label>
          <input
            id={id}
            ref={input}
            type="file"
            accept="image/png,image/jpeg,image/gif,image/webp"
            aria-describedby={`${id}-hint`}
            disabled={action.busy}
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (!f) return;
              void upload(f).then(() => {
                if (input.current) input.current.value = '';
              });
            }}
          />
          <p id={`${id}-hint`} className="hint">
            PNG, JPEG, GIF or WebP, up to 5 MB. It is cropped to a square.
          </p>
          {url && (
            <ConfirmButton
              className="button"
              title="Remove your picture?"
              description="Your initials are shown instead."
              confirm="Remove picture"
              onConfirm={() => removeAvatar.mutateAsync()}
            >
              Remove picture
            </ConfirmButton>
          )}
        </div>
      </div>
      {action.error ? (
        <p className="error" role="alert">
          Could not save the picture: {pictureErrorText(action.error)}
        </p>
      ) : null}
      <Done text={action.busy ? 'Uploading…' : action.done} />
    </section>
  );
}

function PasswordForm() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const action = useAction();
  const changePassword = useChangePassword();
  return (
    <section className="card" aria-labelledby="profile-password">
      <h2 id="profile-password">Password</h2>
      <form
        onSubmit={(e) =>
          void action.run(async () => {
            await changePassword.mutateAsync({ current_password: current, new_password: next });
            setCurrent('');
            setNext('');
            return 'Password changed. Your other sessions were signed out.';
          }, e)
        }
      >
        <TextField
          label="Current password"
          type="password"
          autoComplete="current-password"
          required
          value={current}
          onChange={(e) => setCurrent(e.target.value)}
          error={fieldError(action.error, 'current_password')}
        />
        <TextField
          label="New password"
          type="password"
          autoComplete="new-password"
          required
          minLength={10}
          maxLength={200}
          hint="At least 10 characters. Changing it signs you out everywhere else."
          value={next}
          onChange={(e) => setNext(e.target.value)}
          error={fieldError(action.error, 'new_password')}
        />
        <ErrorNote error={action.error} what="Could not change the password" />
        <div className="row">
          <button type="submit" className="primary" disabled={action.busy}>
            Change password
          </button>
          <Done text={action.done} />
        </div>
      </form>
    </section>
  );
}

/** The otpauth secret in groups of four, easier to type. */
const grouped = (secret: string) => secret.replace(/(.{4})/g, '$1 ').trim();

function TwoFactor({ enabled }: { enabled: boolean }) {
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauth_url: string } | null>(null);
  const startTotp = useStartTotp();
  const confirmTotp = useConfirmTotp();
  const turnOff = useTurnOffMfa();
  const [codes, setCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState('');
  const action = useAction();

  if (codes) {
    return (
      <section className="card" aria-labelledby="profile-2fa">
        <h2 id="profile-2fa">Two-factor sign-in</h2>
        <p role="status">Two-factor sign-in is on.</p>
        <p>
          <strong>Save these recovery codes now</strong>: they are shown only this once. Each one signs you in once if
          you lose your authenticator app.
        </p>
        <ul className="recovery-codes" aria-label="Recovery codes">
          {codes.map((c) => (
            <li key={c}>
              <code>{c}</code>
            </li>
          ))}
        </ul>
        <div className="row">
          <button type="button" onClick={() => void navigator.clipboard?.writeText(codes.join('\n'))}>
            Copy the codes
          </button>
          <button type="button" className="primary" onClick={() => setCodes(null)}>
            I saved them
          </button>
        </div>
      </section>
    );
  }

  if (enabled) {
    return (
      <section className="card" aria-labelledby="profile-2fa">
        <h2 id="profile-2fa">Two-factor sign-in</h2>
        <p>
          <strong>On.</strong> Signing in asks for a code from your authenticator app (or a recovery code).
        </p>
        <form
          onSubmit={(e) =>
            void action.run(async () => {
              await turnOff.mutateAsync(code.trim());
              setCode('');
              return 'Two-factor sign-in is off.';
            }, e)
          }
        >
          <TextField
            label="Code to turn it off"
            hint="A current code from your authenticator app, or an unused recovery code."
            autoComplete="one-time-code"
            required
            value={code}
            onChange={(e) => setCode(e.target.value)}
          />
          <ErrorNote error={action.error} what="Could not turn two-factor off" />
          <button type="submit" className="button danger" disabled={action.busy}>
            Turn two-factor off
          </button>
        </form>
      </section>
    );
  }

  return (
    <section className="card" aria-labelledby="profile-2fa">
      <h2 id="profile-2fa">Two-factor sign-in</h2>
      {!enrolment ? (
        <>
          <p>Off. With it on, signing in also asks for a code from an authenticator app on your phone.</p>
          <ErrorNote error={action.error} what="Could not start the setup" />
          <button
            type="button"
            className="primary"
            disabled={action.busy}
            onClick={() =>
              void action.run(async () => {
                setEnrolment(await startTotp.mutateAsync());
              })
            }
          >
            Set up two-factor sign-in
          </button>
        </>
      ) : (
        <form
          onSubmit={(e) =>
            void action.run(async () => {
              const r = await confirmTotp.mutateAsync(code.trim());
              setCode('');
              setEnrolment(null);
              setCodes(r.recovery_codes);
              await reloadProfile();
            }, e)
          }
        >
          <ol className="steps">
            <li>
              Scan this code with your authenticator app:
              <QrCode text={enrolment.otpauth_url} label="QR code for your authenticator app" />
              Or add an account by typing this key (time-based):
              <p className="secret">
                <span>Key:</span> <code>{grouped(enrolment.secret)}</code>{' '}
                <button type="button" onClick={() => void navigator.clipboard?.writeText(enrolment.secret)}>
                  Copy key
                </button>
              </p>
              <details>
                <summary>The setup link (otpauth://), for apps that take one</summary>
                <p className="secret">
                  <code>{enrolment.otpauth_url}</code>
                </p>
              </details>
            </li>
            <li>
              <TextField
                label="Code from the app"
                hint="The 6 digits the app shows for this account."
                autoComplete="one-time-code"
                inputMode="numeric"
                required
                value={code}
                onChange={(e) => setCode(e.target.value)}
              />
            </li>
          </ol>
          <ErrorNote error={action.error} what="Could not turn two-factor on" />
          <div className="row">
            <button type="submit" className="primary" disabled={action.busy}>
              Turn on two-factor
            </button>
            <button type="button" onClick={() => setEnrolment(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

type OwnSession = paths['/v1/me/sessions']['get']['responses'][200]['content']['application/json']['data'][number];

/**
 * A session's device in words. Without a user-agent parser among the app's dependencies, a
 * browser is its User-Agent, trimmed (the "Mozilla/5.0" every browser sends says nothing).
 */
function deviceText(s: OwnSession): string {
  if (s.kind === 'native') return 'The iPhone app';
  const ua = (s.user_agent ?? '').replace(/^Mozilla\/5\.0\s*/, '').trim();
  if (!ua) return 'A browser that did not say which';
  return ua.length > 90 ? `${ua.slice(0, 89)}…` : ua;
}

function Sessions({ userId }: { userId: string }) {
  const navigate = useNavigate();
  const list = useMySessions(userId);
  const endSession = useEndSession(userId);
  const endOthers = useEndOtherSessions(userId);
  const [done, setDone] = useState<string | null>(null);
  const sessions: OwnSession[] = list.data?.data ?? [];
  const others = sessions.filter((x) => !x.current);
  return (
    <section className="card" aria-labelledby="profile-sessions">
      <h2 id="profile-sessions">Where you’re signed in</h2>
      <p className="hint">
        Every sign-in of yours that has not ended, on any device. Signing one out ends it there at once. Changing your
        password signs out all but this one too.
      </p>
      {list.isPending ? (
        <Loading label="Loading your sessions…" />
      ) : list.error ? (
        <ErrorNote error={list.error} what="Could not load your sessions" />
      ) : (
        <ul className="sessions" aria-label="Your sessions">
          {sessions.map((x) => {
            const device = deviceText(x);
            return (
              <li key={x.id}>
                <div className="session-about">
                  <p className="session-device">
                    <span className="device">{device}</span>
                    {x.current ? <span className="this-browser">This browser</span> : null}
                  </p>
                  <p className="hint">
                    Last used <time dateTime={x.last_used_at}>{ago(x.last_used_at)}</time>
                    {x.ip ? ` from ${x.ip}` : ''}. Signed in {when(x.created_at)}.
                  </p>
                </div>
                {x.current ? null : (
                  <ConfirmButton
                    className="button"
                    title="Sign out this session?"
                    description={`${device}, last used ${ago(x.last_used_at)}, is signed out at once.`}
                    confirm="Sign out"
                    onConfirm={async () => {
                      await endSession.mutateAsync(x.id);
                      setDone('Signed out.');
                    }}
                  >
                    Sign out
                    <span className="visually-hidden">
                      {' '}
                      {device}, last used {ago(x.last_used_at)}
                    </span>
                  </ConfirmButton>
                )}
              </li>
            );
          })}
        </ul>
      )}
      <div className="row">
        {others.length > 0 ? (
          <ConfirmButton
            title="Sign out everywhere else?"
            description={`Your ${others.length === 1 ? 'other session is' : `${others.length} other sessions are`} signed out at once, on every device and browser. This browser stays signed in.`}
            confirm="Sign out everywhere else"
            onConfirm={async () => {
              const r = await endOthers.mutateAsync();
              setDone(`Signed out everywhere else (${count(r.revoked, 'session')}).`);
            }}
          >
            Sign out everywhere else
          </ConfirmButton>
        ) : list.data ? (
          <p className="hint">You are signed in nowhere else.</p>
        ) : null}
        <Done text={done} />
      </div>
      <h3>This browser</h3>
      <p className="hint">To leave this browser, sign out of every account signed in here.</p>
      <ConfirmButton
        title="Sign out of every account on this browser?"
        description="Every account signed in on this browser is signed out, and their live connections close. Your sessions on other devices stay signed in."
        confirm="Sign out of every account"
        onConfirm={async () => {
          await logout(true);
          await navigate({ to: '/login', search: {} });
        }}
      >
        Sign out of every account on this browser
      </ConfirmButton>
    </section>
  );
}

/** The person's passkeys: add one (a name, then the browser's prompt), the list, remove one. */
function Passkeys({ userId }: { userId: string }) {
  const list = usePasskeys(userId);
  const add = useAddPasskey(userId);
  const remove = useDeletePasskey(userId);
  const action = useAction();
  const [name, setName] = useState('');
  const keys = list.data?.data ?? [];
  return (
    <section className="card" aria-labelledby="profile-passkeys">
      <h2 id="profile-passkeys">Passkeys</h2>
      <p className="hint">
        A passkey signs you in with this device’s screen lock or a security key, without a password or a two-factor
        code.
      </p>
      {list.isPending ? (
        <Loading label="Loading your passkeys…" />
      ) : list.error ? (
        <ErrorNote error={list.error} what="Could not load your passkeys" />
      ) : keys.length === 0 ? (
        <p>No passkeys yet.</p>
      ) : (
        <ul className="sessions" aria-label="Your passkeys">
          {keys.map((k) => (
            <li key={k.id}>
              <div className="session-about">
                <p className="session-device">
                  <span className="device">{k.name}</span>
                </p>
                <p className="hint">
                  Added {when(k.created_at)}.{' '}
                  {k.last_used_at ? (
                    <>
                      Last used <time dateTime={k.last_used_at}>{ago(k.last_used_at)}</time>.
                    </>
                  ) : (
                    'Never used.'
                  )}
                </p>
              </div>
              <ConfirmButton
                className="button"
                title={`Remove the passkey “${k.name}”?`}
                description="It no longer signs you in. The device may still list it; remove it there too."
                confirm="Remove passkey"
                onConfirm={() => remove.mutateAsync(k.id)}
              >
                Remove<span className="visually-hidden"> the passkey {k.name}</span>
              </ConfirmButton>
            </li>
          ))}
        </ul>
      )}
      <form
        onSubmit={(e) =>
          void action.run(async () => {
            await add.mutateAsync(name.trim());
            setName('');
            return 'Passkey added.';
          }, e)
        }
      >
        <TextField
          label="Passkey name"
          hint="To tell your passkeys apart, e.g. “Work laptop”."
          required
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
          error={fieldError(action.error, 'name')}
        />
        <ErrorNote error={fieldError(action.error, 'name') ? null : action.error} what="Could not add the passkey" />
        <div className="row">
          <button type="submit" className="primary" disabled={action.busy || !name.trim()}>
            {action.busy ? 'Waiting for your device…' : 'Add a passkey'}
          </button>
          <Done text={action.done} />
        </div>
      </form>
    </section>
  );
}

/**
 * Google and Microsoft accounts that sign the person in: link one (the provider's page, back to the
 * app at /profile?linked=1, or /sign-in#oauth_error=... when cancelled: what happened is said
 * here), unlink one (the server refuses, 409, the last way to sign in: said in the dialog).
 */
function LinkedAccounts({ userId }: { userId: string }) {
  const list = useIdentities(userId);
  const unlink = useUnlinkIdentity(userId);
  const oauth = useAuthMethods().data?.oauth;
  const linked = list.data?.data ?? [];
  const [returned] = useState(() => {
    const n = peekReturnNote();
    return n && n.kind !== 'mfa' ? n : null;
  });
  useEffect(() => clearReturnNote(returned), [returned]);
  const [done, setDone] = useState(returned?.kind === 'done' ? returned.text : null);
  const failed = returned?.kind === 'error' ? returned.text : null;
  // Neither provider set up on this server and nothing linked: nothing to show.
  if (oauth && !oauth.google && !oauth.microsoft && list.data && linked.length === 0 && !returned) return null;
  return (
    <section className="card" aria-labelledby="profile-identities">
      <h2 id="profile-identities">Linked accounts</h2>
      <p className="hint">Google and Microsoft accounts you can sign in with instead of your password.</p>
      {failed ? (
        <p className="error" role="alert">
          {failed}
        </p>
      ) : null}
      {list.isPending ? (
        <Loading label="Loading your linked accounts…" />
      ) : list.error ? (
        <ErrorNote error={list.error} what="Could not load your linked accounts" />
      ) : linked.length === 0 ? (
        <p>No linked accounts.</p>
      ) : (
        <ul className="sessions" aria-label="Your linked accounts">
          {linked.map((x) => (
            <li key={x.id}>
              <div className="session-about">
                <p className="session-device">
                  <span className="device">
                    {providerName(x.provider)}: {x.email}
                  </span>
                </p>
                <p className="hint">Linked {when(x.created_at)}.</p>
              </div>
              <ConfirmButton
                className="button"
                title={`Unlink ${providerName(x.provider)} (${x.email})?`}
                description="It no longer signs you in."
                confirm="Unlink"
                onConfirm={async () => {
                  await unlink.mutateAsync(x.id);
                  setDone(`${providerName(x.provider)} (${x.email}) is unlinked.`);
                }}
              >
                Unlink
                <span className="visually-hidden">
                  {' '}
                  {providerName(x.provider)} {x.email}
                </span>
              </ConfirmButton>
            </li>
          ))}
        </ul>
      )}
      <div className="row">
        {oauth?.google && (
          <button type="button" onClick={() => continueWith('google', true)}>
            Link a Google account
          </button>
        )}
        {oauth?.microsoft && (
          <button type="button" onClick={() => continueWith('microsoft', true)}>
            Link a Microsoft account
          </button>
        )}
        <Done text={done} />
      </div>
    </section>
  );
}
