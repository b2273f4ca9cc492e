// The mailboxes with each one's state and connection check; what the provider said after a
// Google or Microsoft sign-in (?connected=<id> or ?error=<code>); adding one below (add.tsx).
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useCheckMailbox, useMailboxes } from '../../../data/mailboxes';
import { useWorkspace } from '../../../lib/context';
import { ago } from '../../../lib/format';
import { ErrorNote, PageTitle } from '../../../ui/page';
import { Loaded, ScrollTable } from '../shared';
import { AddMailbox } from './add';
import { CheckResult, DeleteMailbox, KIND_TEXT, type Mailbox, StatusBadge, type TestResult } from './parts';

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

export function MailboxList() {
  const ws = useWorkspace();
  const list = useMailboxes(ws);
  const runCheck = useCheckMailbox(ws);
  const [checks, setChecks] = useState<Record<string, TestResult | 'busy'>>({});
  const [error, setError] = useState<unknown>(null);
  const rows = list.data?.data ?? [];
  const check = async (m: Mailbox) => {
    setError(null);
    setChecks((c) => ({ ...c, [m.id]: 'busy' }));
    try {
      const r = await runCheck.mutateAsync(m.id);
      setChecks((c) => ({ ...c, [m.id]: r }));
    } catch (err) {
      setChecks(({ [m.id]: _, ...c }) => c);
      setError(err);
    }
  };
  return (
    <div className="integrations">
      <PageTitle>Mailboxes</PageTitle>
      <OAuthResult list={rows} />
      <Loaded
        query={list}
        what="Could not load the mailboxes"
        empty={rows.length === 0 && <>No mailboxes yet. Add the address your customers write to below.</>}
      >
        <ScrollTable caption="Mailboxes">
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
        </ScrollTable>
      </Loaded>
      <ErrorNote error={error} what="Could not check the mailbox" />
      <AddMailbox />
    </div>
  );
}
