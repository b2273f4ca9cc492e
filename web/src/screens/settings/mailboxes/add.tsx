// Adding a mailbox: by forwarding (the address to forward to, to copy), by IMAP and SMTP, or by
// signing in to Google or Microsoft (POST /v1/mailboxes/oauth/{provider}/start gives the
// provider's address; the provider sends the browser back to /settings/mailboxes).
import { type FormEvent, useState } from 'react';
import { useCreateMailbox, useStartOAuth } from '../../../data/mailboxes';
import { useWorkspace } from '../../../lib/context';
import { CopyField } from '../../../ui/copy';
import { fieldError, TextField } from '../../../ui/form';
import { ErrorNote } from '../../../ui/page';
import { type Mailbox, ServerFields } from './parts';

type Kind = 'forwarding' | 'imap' | 'google' | 'microsoft';

export function AddMailbox() {
  const create = useCreateMailbox(useWorkspace());
  const startOAuth = useStartOAuth();
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
        const r = await startOAuth.mutateAsync({
          provider: kind,
          body: { name: v('name'), ...(v('email') ? { email: v('email') } : {}) },
        });
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
      const m = await create.mutateAsync(body);
      setCreated(m);
      setF({ imap_tls: 'tls', smtp_tls: 'starttls' });
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
