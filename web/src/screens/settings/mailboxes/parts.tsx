// What the mailbox screens share: the kinds and states in words, the connection check's result,
// the state badge, deleting a mailbox, and one server's fields (IMAP or SMTP).
import type { paths } from '../../../api.gen';
import { useDeleteMailbox } from '../../../data/mailboxes';
import type { Schemas } from '../../../lib/api';
import { useWorkspace } from '../../../lib/context';
import { ConfirmButton, fieldError, SelectField, TextField } from '../../../ui/form';

export type Mailbox = Schemas['Mailbox'];
export type TestResult = paths['/v1/mailboxes/{id}/test']['post']['responses'][200]['content']['application/json'];

export const KIND_TEXT: Record<Mailbox['inbound_kind'], string> = {
  forwarding: 'Forwarding',
  imap: 'IMAP',
  google: 'Google',
  microsoft: 'Microsoft',
};
export const STATUS_TEXT: Record<Mailbox['status'], string> = { active: 'Active', error: 'Error', disabled: 'Paused' };

export function CheckResult({ name, r }: { name: string; r: TestResult }) {
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

export function StatusBadge({ m }: { m: Mailbox }) {
  const cls = m.status === 'active' ? 'state-ok' : m.status === 'error' ? 'state-bad' : 'state-wait';
  return <span className={`state ${cls}`}>{STATUS_TEXT[m.status]}</span>;
}

export function DeleteMailbox({ m, after }: { m: Mailbox; after?: () => void }) {
  const remove = useDeleteMailbox(useWorkspace());
  return (
    <ConfirmButton
      title={`Delete the mailbox ${m.name}?`}
      description={`Mail to ${m.email} stops arriving here and replies can no longer be sent from it. Its tickets stay.`}
      confirm="Delete mailbox"
      onConfirm={async () => {
        await remove.mutateAsync(m.id);
        after?.();
      }}
    >
      Delete<span className="visually-hidden"> {m.name}</span>
    </ConfirmButton>
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

export function ServerFields({
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
