// A mailbox's page at /settings/mailboxes/<id>: its state, the connection check, pause or resume,
// reconnecting with its provider, deleting it, and its settings (name, sender name, address, servers).
import { Link, useNavigate } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import type { paths } from '../../../api.gen';
import { useCheckMailbox, useMailbox, useStartOAuth, useUpdateMailbox } from '../../../data/mailboxes';
import { useWorkspace } from '../../../lib/context';
import { ago } from '../../../lib/format';
import { CopyField } from '../../../ui/copy';
import { fieldError, TextField } from '../../../ui/form';
import { ErrorNote, Loading, PageTitle } from '../../../ui/page';
import {
  CheckResult,
  DeleteMailbox,
  KIND_TEXT,
  type Mailbox,
  ServerFields,
  StatusBadge,
  type TestResult,
} from './parts';

type MailboxPatch = NonNullable<paths['/v1/mailboxes/{id}']['patch']['requestBody']>['content']['application/json'];

export function MailboxPage({ id }: { id: string }) {
  const ws = useWorkspace();
  const m = useMailbox(ws, id);
  if (m.isPending) return <Loading />;
  if (m.error) return <ErrorNote error={m.error} what="Could not load the mailbox" />;
  return <MailboxForm key={m.data.updated_at} m={m.data} />;
}

function MailboxForm({ m }: { m: Mailbox }) {
  const ws = useWorkspace();
  const navigate = useNavigate();
  const update = useUpdateMailbox(ws, m.id);
  const sendCheck = useCheckMailbox(ws, m.id);
  const startOAuth = useStartOAuth();
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
  const patch = async (body: MailboxPatch) => {
    setError(null);
    setSaved(false);
    try {
      await update.mutateAsync(body);
      setSaved(true);
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
      setCheck(await sendCheck.mutateAsync(m.id));
    } catch (err) {
      setCheck(null);
      setError(err);
    }
  };
  const reconnect = async () => {
    setError(null);
    try {
      const provider = m.inbound_kind as 'google' | 'microsoft';
      const r = await startOAuth.mutateAsync({
        provider,
        body: { name: m.name, email: m.email, mailbox_id: m.id },
      });
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
