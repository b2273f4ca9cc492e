// Mailboxes (/v1/mailboxes): the list with each one's state; adding one by forwarding (the
// address to forward to, to copy), by IMAP and SMTP, or by signing in to Google or Microsoft
// (POST /v1/mailboxes/oauth/{provider}/start gives the provider's address; the provider sends the
// browser back to /settings/mailboxes?connected=<id> or ?error=<code>, said here); the connection
// check (POST /v1/mailboxes/{id}/test); a mailbox's settings at /settings/mailboxes/<id>; delete.
import './integrations.css';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import type { paths } from '../../api.gen';
import { api, ok, type Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { ago } from '../../lib/format';
import { useIsAdmin } from '../../lib/role';
import { CopyField } from '../../ui/copy';
import { ConfirmButton, fieldError, SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import type { SectionProps } from './section';

type Mailbox = Schemas['Mailbox'];
type TestResult = paths['/v1/mailboxes/{id}/test']['post']['responses'][200]['content']['application/json'];
type MailboxPatch = NonNullable<paths['/v1/mailboxes/{id}']['patch']['requestBody']>['content']['application/json'];

const KIND_TEXT: Record<Mailbox['inbound_kind'], string> = {
  forwarding: 'Forwarding',
  imap: 'IMAP',
  google: 'Google',
  microsoft: 'Microsoft',
};
const STATUS_TEXT: Record<Mailbox['status'], string> = { active: 'Active', error: 'Error', disabled: 'Paused' };

const OAUTH_ERRORS: Record<string, string> = {
  invalid_state: 'the sign-in link was not valid or was used twice. Start again.',
  session_expired: 'your session ended while you were at the provider. Sign in and start again.',
  forbidden: 'only owners and admins can connect mailboxes.',
  access_denied: 'access was not granted at the provider. Start again and allow access.',
  provider_error: 'the provider answered with an error. Try again in a moment.',
  token_exchange_failed: 'the provider did not give the help desk access. Start again.',
  account_unverified: 'the account’s email address is not verified at the provider.',
  account_mismatch: 'you signed in with a different account than the mailbox’s. Use the same account.',
  mailbox_exists: 'a mailbox for this account already exists. Reconnect that one instead.',
  mailbox_not_found: 'the mailbox to reconnect no longer exists.',
  not_configured: 'this provider is not set up on this server (ask whoever runs it to add its OAuth client).',
};

const useMailboxes = (enabled: boolean) => {
  const ws = useWorkspace();
  return useQuery({
    queryKey: ['mailboxes', ws],
    queryFn: () => ok(api.GET('/v1/mailboxes', { params: { query: { limit: 100 } } })),
    enabled,
  });
};

export default function Mailboxes({ path }: SectionProps) {
  const [id] = path;
  const admin = useIsAdmin();
  if (!admin) {
    return (
      <div className="integrations">
        <PageTitle>Mailboxes</PageTitle>
        <ReadOnlyNote what="see and change mailboxes" />
      </div>
    );
  }
  return id ? <MailboxPage key={id} id={id} /> : <MailboxList />;
}

function OAuthResult({ list }: { list: Mailbox[] }) {
  const q = new URLSearchParams(globalThis.location?.search ?? '');
  const connected = q.get('connected');
  const error = q.get('error');
  if (connected) {
    const m = list.find((x) => x.id === connected);
    return (
      <p className="ok-note" role="status">
        Mailbox connected{m ? `: ${m.name} (${m.email})` : ''}. New mail will arrive in the inbox.
      </p>
    );
  }
  if (error) {
    const provider = q.get('provider');
    return (
      <p className="error" role="alert">
        Could not connect the {provider === 'microsoft' ? 'Microsoft' : provider === 'google' ? 'Google' : ''} mailbox:{' '}
        {OAUTH_ERRORS[error] ?? `the provider said ${error}. Try again.`}
      </p>
    );
  }
  return null;
}

function CheckResult({ name, r }: { name: string; r: TestResult }) {
  return (
    <div role="status" className="check-result">
      <p>
        <strong>{name}</strong>: receiving{' '}
        {r.inbound.ok ? (
          <span className="ok-note">works</span>
        ) : (
          <span className="error">failed: {r.inbound.error}</span>
        )}
        ; sending{' '}
        {r.outbound.ok ? (
          <span className="ok-note">works</span>
        ) : (
          <span className="error">failed: {r.outbound.error}</span>
        )}
        .
      </p>
    </div>
  );
}

function StatusBadge({ m }: { m: Mailbox }) {
  const cls = m.status === 'active' ? 'state-ok' : m.status === 'error' ? 'state-bad' : 'state-wait';
  return <span className={`state ${cls}`}>{STATUS_TEXT[m.status]}</span>;
}

function MailboxList() {
  const ws = useWorkspace();
  const queryClient = useQueryClient();
  const list = useMailboxes(true);
  const [checks, setChecks] = useState<Record<string, TestResult | 'busy'>>({});
  const [error, setError] = useState<unknown>(null);
  const rows = list.data?.data ?? [];
  const check = async (m: Mailbox) => {
    setError(null);
    setChecks((c) => ({ ...c, [m.id]: 'busy' }));
    try {
      const r = await ok(api.POST('/v1/mailboxes/{id}/test', { params: { path: { id: m.id } } }));
      setChecks((c) => ({ ...c, [m.id]: r }));
      await queryClient.invalidateQueries({ queryKey: ['mailboxes', ws] });
    } catch (err) {
      setChecks(({ [m.id]: _, ...c }) => c);
      setError(err);
    }
  };
  return (
    <div className="integrations">
      <PageTitle>Mailboxes</PageTitle>
      <OAuthResult list={rows} />
      {list.isPending ? (
        <Loading />
      ) : list.error ? (
        <ErrorNote error={list.error} what="Could not load the mailboxes" />
      ) : rows.length === 0 ? (
        <p className="empty">No mailboxes yet. Add the address your customers write to below.</p>
      ) : (
        <div className="table-scroll">
          <table className="table">
            <caption className="visually-hidden">Mailboxes</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Address</th>
                <th scope="col">Receives by</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((m) => {
                const c = checks[m.id];
                return (
                  <tr key={m.id}>
                    <td>
                      <Link to="/settings/$" params={{ _splat: `mailboxes/${m.id}` }}>
                        {m.name}
                      </Link>
                    </td>
                    <td className="break">{m.email}</td>
                    <td>{KIND_TEXT[m.inbound_kind]}</td>
                    <td>
                      <StatusBadge m={m} />
                      {m.last_error && <p className="hint">{m.last_error}</p>}
                      {m.last_synced_at && <p className="hint">Checked {ago(m.last_synced_at)}</p>}
                      {c && c !== 'busy' && <CheckResult name={m.name} r={c} />}
                    </td>
                    <td className="row-actions">
                      <button type="button" className="button" disabled={c === 'busy'} onClick={() => void check(m)}>
                        {c === 'busy' ? 'Checking…' : 'Check connection'}
                        <span className="visually-hidden"> of {m.name}</span>
                      </button>
                      <DeleteMailbox m={m} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <ErrorNote error={error} what="Could not check the mailbox" />
      <AddMailbox />
    </div>
  );
}

function DeleteMailbox({ m, after }: { m: Mailbox; after?: () => void }) {
  const ws = useWorkspace();
  const queryClient = useQueryClient();
  return (
    <ConfirmButton
      title={`Delete the mailbox ${m.name}?`}
      description={`Mail to ${m.email} stops arriving here and replies can no longer be sent from it. Its tickets stay.`}
      confirm="Delete mailbox"
      onConfirm={async () => {
        await ok(api.DELETE('/v1/mailboxes/{id}', { params: { path: { id: m.id } } }));
        await queryClient.invalidateQueries({ queryKey: ['mailboxes', ws] });
        after?.();
      }}
    >
      Delete<span className="visually-hidden"> {m.name}</span>
    </ConfirmButton>
  );
}

type Kind = 'forwarding' | 'imap' | 'google' | 'microsoft';

function AddMailbox() {
  const ws = useWorkspace();
  const queryClient = useQueryClient();
  const [kind, setKind] = useState<Kind>('forwarding');
  const [f, setF] = useState<Record<string, string>>({ imap_tls: 'tls', smtp_tls: 'starttls' });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<Mailbox | null>(null);
  const v = (k: string) => f[k] ?? '';
  const on = (k: string) => (e: { target: { value: string } }) => setF((x) => ({ ...x, [k]: e.target.value }));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (kind === 'google' || kind === 'microsoft') {
        const r = await ok(
          api.POST('/v1/mailboxes/oauth/{provider}/start', {
            params: { path: { provider: kind } },
            body: { name: v('name'), ...(v('email') ? { email: v('email') } : {}) },
          }),
        );
        globalThis.location.assign(r.url);
        return;
      }
      const port = (k: string) => (v(k) ? Number(v(k)) : undefined);
      const body =
        kind === 'forwarding'
          ? { name: v('name'), email: v('email') }
          : {
              name: v('name'),
              email: v('email'),
              inbound_kind: 'imap' as const,
              outbound_kind: 'smtp' as const,
              config: {
                imap_host: v('imap_host') || undefined,
                imap_port: port('imap_port'),
                imap_username: v('imap_username') || undefined,
                imap_tls: v('imap_tls') as 'tls',
                smtp_host: v('smtp_host') || undefined,
                smtp_port: port('smtp_port'),
                smtp_username: v('smtp_username') || undefined,
                smtp_tls: v('smtp_tls') as 'tls',
              },
              ...(v('password') ? { password: v('password') } : {}),
              ...(v('smtp_password') ? { smtp_password: v('smtp_password') } : {}),
            };
      const m = await ok(api.POST('/v1/mailboxes', { body }));
      setCreated(m);
      setF({ imap_tls: 'tls', smtp_tls: 'starttls' });
      await queryClient.invalidateQueries({ queryKey: ['mailboxes', ws] });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="add-mailbox" className="add-section">
      <h2 id="add-mailbox">Add a mailbox</h2>
      {created && (
        <div className="once" role="status">
          <p>
            <strong>{created.name}</strong> ({created.email}) is added.
            {created.inbound_kind === 'forwarding'
              ? ' Now, at your mail provider, forward its mail to this address:'
              : ' Check its connection in the list above.'}
          </p>
          {created.inbound_kind === 'forwarding' && (
            <CopyField
              label="Forwarding address"
              value={created.forwarding_address}
              hint="Set up forwarding of every message to this address (in Gmail: Settings → Forwarding; in Outlook: Rules)."
            />
          )}
        </div>
      )}
      <form onSubmit={submit} noValidate>
        <fieldset>
          <legend>How mail arrives</legend>
          {(
            [
              ['forwarding', 'Forwarding', 'Your mail provider forwards each message to an address of the help desk.'],
              ['imap', 'IMAP and SMTP', 'The help desk reads the mailbox over IMAP and sends over SMTP.'],
              ['google', 'Google (Gmail, Workspace)', 'Sign in with Google: no passwords kept here.'],
              ['microsoft', 'Microsoft (Outlook, 365)', 'Sign in with Microsoft: no passwords kept here.'],
            ] as const
          ).map(([k, label, hint]) => (
            <div className="field field-check" key={k}>
              <input
                type="radio"
                id={`kind-${k}`}
                name="mailbox-kind"
                value={k}
                checked={kind === k}
                onChange={() => setKind(k)}
                aria-describedby={`kind-${k}-hint`}
              />
              <label htmlFor={`kind-${k}`}>{label}</label>
              <p className="hint" id={`kind-${k}-hint`}>
                {hint}
              </p>
            </div>
          ))}
        </fieldset>
        <TextField label="Name" value={v('name')} onChange={on('name')} error={fieldError(error, 'name')} required />
        <TextField
          label={kind === 'google' || kind === 'microsoft' ? 'Email address (optional)' : 'Email address'}
          type="email"
          value={v('email')}
          onChange={on('email')}
          hint="The address customers write to."
          error={fieldError(error, 'email')}
        />
        {kind === 'imap' && <ServerFields v={v} on={on} error={error} passwords />}
        <ErrorNote error={error} what="Could not add the mailbox" />
        <div className="form-actions">
          <button type="submit" className="primary" disabled={busy}>
            {kind === 'google' ? 'Continue to Google' : kind === 'microsoft' ? 'Continue to Microsoft' : 'Add mailbox'}
          </button>
        </div>
      </form>
    </section>
  );
}

const TLS: Array<[string, string]> = [
  ['tls', 'TLS'],
  ['starttls', 'STARTTLS'],
  ['none', 'None (unencrypted)'],
];

/** One server's fields: IMAP (incoming) or SMTP (outgoing); the IMAP password's key is `password`. */
const SERVERS = [
  { kind: 'IMAP', legend: 'Incoming (IMAP)', prefix: 'imap_', port: '993', password: 'password' },
  { kind: 'SMTP', legend: 'Outgoing (SMTP)', prefix: 'smtp_', port: '587', password: 'smtp_password' },
] as const;

function ServerFields({
  v,
  on,
  error,
  passwords,
  passwordHint,
}: {
  v(k: string): string;
  on(k: string): (e: { target: { value: string } }) => void;
  error: unknown;
  passwords: boolean;
  passwordHint?: string;
}) {
  const cfg = (k: string) => fieldError(error, `config.${k}`);
  return (
    <>
      {SERVERS.map(({ kind, legend, prefix, port, password }) => (
        <fieldset key={kind}>
          <legend>{legend}</legend>
          <TextField
            label={`${kind} server`}
            value={v(`${prefix}host`)}
            onChange={on(`${prefix}host`)}
            error={cfg(`${prefix}host`)}
          />
          <TextField
            label={`${kind} port`}
            type="number"
            value={v(`${prefix}port`)}
            onChange={on(`${prefix}port`)}
            placeholder={port}
            error={cfg(`${prefix}port`)}
          />
          <TextField
            label={`${kind} user name`}
            value={v(`${prefix}username`)}
            onChange={on(`${prefix}username`)}
            autoComplete="off"
            error={cfg(`${prefix}username`)}
          />
          {passwords && (
            <TextField
              label={`${kind} password`}
              type="password"
              value={v(password)}
              onChange={on(password)}
              autoComplete="new-password"
              hint={passwordHint}
              error={fieldError(error, password)}
            />
          )}
          <SelectField
            label={`${kind} security`}
            value={v(`${prefix}tls`)}
            onChange={on(`${prefix}tls`)}
            options={TLS}
          />
        </fieldset>
      ))}
    </>
  );
}

function MailboxPage({ id }: { id: string }) {
  const ws = useWorkspace();
  const m = useQuery({
    queryKey: ['mailbox', ws, id],
    queryFn: () => ok(api.GET('/v1/mailboxes/{id}', { params: { path: { id } } })),
  });
  if (m.isPending) return <Loading />;
  if (m.error) return <ErrorNote error={m.error} what="Could not load the mailbox" />;
  return <MailboxForm key={m.data.updated_at} m={m.data} />;
}

function MailboxForm({ m }: { m: Mailbox }) {
  const ws = useWorkspace();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const c = m.config;
  const [f, setF] = useState<Record<string, string>>({
    name: m.name,
    display_name: m.display_name,
    email: m.email,
    imap_host: c.imap_host ?? '',
    imap_port: c.imap_port ? String(c.imap_port) : '',
    imap_username: c.imap_username ?? '',
    imap_tls: c.imap_tls ?? 'tls',
    smtp_host: c.smtp_host ?? '',
    smtp_port: c.smtp_port ? String(c.smtp_port) : '',
    smtp_username: c.smtp_username ?? '',
    smtp_tls: c.smtp_tls ?? 'starttls',
  });
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);
  const [check, setCheck] = useState<TestResult | 'busy' | null>(null);
  const v = (k: string) => f[k] ?? '';
  const on = (k: string) => (e: { target: { value: string } }) => {
    setSaved(false);
    setF((x) => ({ ...x, [k]: e.target.value }));
  };
  const refresh = async () => {
    await queryClient.invalidateQueries({ queryKey: ['mailboxes', ws] });
    await queryClient.invalidateQueries({ queryKey: ['mailbox', ws, m.id] });
  };
  const patch = async (body: MailboxPatch) => {
    setError(null);
    setSaved(false);
    try {
      await ok(api.PATCH('/v1/mailboxes/{id}', { params: { path: { id: m.id } }, body }));
      setSaved(true);
      await refresh();
    } catch (err) {
      setError(err);
    }
  };
  const imap = m.inbound_kind === 'imap' || m.outbound_kind === 'smtp';
  const save = (e: FormEvent) => {
    e.preventDefault();
    const s = (k: string) => v(k).trim() || null;
    const n = (k: string) => (v(k) ? Number(v(k)) : null);
    void patch({
      name: v('name'),
      display_name: v('display_name'),
      email: v('email'),
      ...(imap
        ? {
            config: {
              imap_host: s('imap_host'),
              imap_port: n('imap_port'),
              imap_username: s('imap_username'),
              imap_tls: v('imap_tls') as 'tls',
              smtp_host: s('smtp_host'),
              smtp_port: n('smtp_port'),
              smtp_username: s('smtp_username'),
              smtp_tls: v('smtp_tls') as 'tls',
            },
            ...(v('password') ? { password: v('password') } : {}),
            ...(v('smtp_password') ? { smtp_password: v('smtp_password') } : {}),
          }
        : {}),
    });
  };
  const runCheck = async () => {
    setCheck('busy');
    setError(null);
    try {
      setCheck(await ok(api.POST('/v1/mailboxes/{id}/test', { params: { path: { id: m.id } } })));
      await refresh();
    } catch (err) {
      setCheck(null);
      setError(err);
    }
  };
  const reconnect = async () => {
    setError(null);
    try {
      const provider = m.inbound_kind as 'google' | 'microsoft';
      const r = await ok(
        api.POST('/v1/mailboxes/oauth/{provider}/start', {
          params: { path: { provider } },
          body: { name: m.name, email: m.email, mailbox_id: m.id },
        }),
      );
      globalThis.location.assign(r.url);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div className="integrations">
      <PageTitle>{`Mailbox: ${m.name}`}</PageTitle>
      <p>
        <Link to="/settings/$" params={{ _splat: 'mailboxes' }}>
          ← All mailboxes
        </Link>
      </p>
      <p>
        <StatusBadge m={m} /> {KIND_TEXT[m.inbound_kind]}
        {m.last_synced_at ? `, checked ${ago(m.last_synced_at)}` : ''}
      </p>
      {m.last_error && <p className="error">Last error: {m.last_error}</p>}
      {m.inbound_kind === 'forwarding' && (
        <CopyField
          label="Forwarding address"
          value={m.forwarding_address}
          hint={`At your mail provider, forward the mail of ${m.email} to this address.`}
        />
      )}
      <div className="form-actions">
        <button type="button" className="button" disabled={check === 'busy'} onClick={() => void runCheck()}>
          {check === 'busy' ? 'Checking…' : 'Check connection'}
        </button>
        {m.status === 'disabled' ? (
          <button type="button" className="button" onClick={() => void patch({ status: 'active' })}>
            Resume
          </button>
        ) : (
          <button type="button" className="button" onClick={() => void patch({ status: 'disabled' })}>
            Pause
          </button>
        )}
        {(m.inbound_kind === 'google' || m.inbound_kind === 'microsoft') && (
          <button type="button" className="button" onClick={() => void reconnect()}>
            Reconnect with {KIND_TEXT[m.inbound_kind]}
          </button>
        )}
        <DeleteMailbox m={m} after={() => void navigate({ to: '/settings/$', params: { _splat: 'mailboxes' } })} />
      </div>
      {check && check !== 'busy' && <CheckResult name={m.name} r={check} />}
      <form onSubmit={save} noValidate>
        <TextField label="Name" value={v('name')} onChange={on('name')} error={fieldError(error, 'name')} />
        <TextField
          label="Sender name"
          value={v('display_name')}
          onChange={on('display_name')}
          hint="The From name of replies sent from this mailbox."
          error={fieldError(error, 'display_name')}
        />
        <TextField
          label="Email address"
          type="email"
          value={v('email')}
          onChange={on('email')}
          error={fieldError(error, 'email')}
        />
        {imap && (
          <ServerFields
            v={v}
            on={on}
            error={error}
            passwords
            passwordHint="Stored encrypted and never shown. Leave empty to keep the current one."
          />
        )}
        <ErrorNote error={error} what="Could not change the mailbox" />
        {saved && (
          <p className="ok-note" role="status">
            Saved.
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="primary">
            Save
          </button>
        </div>
      </form>
    </div>
  );
}
