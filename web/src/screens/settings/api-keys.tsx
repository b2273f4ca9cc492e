// API keys (GET/POST /v1/api-keys, DELETE /v1/api-keys/{id}): create one with a name, scopes and
// an optional expiry; its secret is shown once, with Copy; the list shows each key's prefix,
// scopes, creator, expiry and last use; revoking asks first.
import './integrations.css';
import { type FormEvent, useState } from 'react';
import type { paths } from '../../api.gen';
import { useApiKeys, useCreateApiKey, useRevokeApiKey } from '../../data/api-keys';
import { useWorkspace } from '../../lib/context';
import { ago, when } from '../../lib/format';
import { useIsAdmin } from '../../lib/role';
import { CopyField } from '../../ui/copy';
import { CheckboxField, ConfirmButton, fieldError, SelectField, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import type { SectionProps } from './section';
import { ScrollTable } from './shared';

type ApiKey = paths['/v1/api-keys']['get']['responses'][200]['content']['application/json']['data'][number];
type Scope = ApiKey['scopes'][number];

const SCOPES: Array<[Scope, string]> = [
  ['tickets:read', 'Read tickets, messages and activities'],
  ['tickets:write', 'Create and change tickets, reply, add notes'],
  ['contacts:read', 'Read contacts and companies'],
  ['contacts:write', 'Create and change contacts and companies'],
  ['kb:read', 'Read knowledge-base articles'],
  ['kb:write', 'Write knowledge-base articles'],
  ['settings:read', 'Read settings (workspace, members, teams, mailboxes, webhooks)'],
  ['settings:write', 'Change settings'],
  ['realtime', 'Receive every event live, and replay them'],
];
// Every scope the API knows is offered: this fails to compile when the API adds one.
type MissingScope = Exclude<Scope, (typeof SCOPES)[number][0]>;
const everyScope: MissingScope extends never ? true : MissingScope = true;
void everyScope;

const EXPIRY: Array<[string, string]> = [
  ['', 'Never'],
  ['30', 'In 30 days'],
  ['90', 'In 90 days'],
  ['365', 'In a year'],
];

export default function ApiKeys(_: SectionProps) {
  const admin = useIsAdmin();
  return (
    <div className="integrations">
      <PageTitle>API keys</PageTitle>
      <p className="hint">
        Keys let scripts and integrations use the <a href="/docs">API</a> for this workspace, limited to the scopes you
        choose. Send one as <code>Authorization: Bearer &lt;key&gt;</code>.
      </p>
      {admin ? (
        <>
          <KeyList />
          <NewKey />
        </>
      ) : (
        <ReadOnlyNote what="see, create and revoke API keys" />
      )}
    </div>
  );
}

function KeyList() {
  const ws = useWorkspace();
  const list = useApiKeys(ws);
  const revoke = useRevokeApiKey(ws);
  if (list.isPending) return <Loading />;
  if (list.error) return <ErrorNote error={list.error} what="Could not load the API keys" />;
  const rows: ApiKey[] = list.data.data;
  if (rows.length === 0) return <p className="empty">No API keys yet.</p>;
  return (
    <ScrollTable caption="API keys">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Key</th>
          <th scope="col">Scopes</th>
          <th scope="col">Last used</th>
          <th scope="col">Expires</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((k) => (
          <tr key={k.id}>
            <td>
              {k.name}
              <p className="hint">
                Made by {k.created_by?.name ?? 'someone no longer here'}, {ago(k.created_at)}
              </p>
            </td>
            <td>
              <code>{k.prefix}…</code>
            </td>
            <td>{k.scopes.join(', ')}</td>
            <td>{k.last_used_at ? <time dateTime={k.last_used_at}>{ago(k.last_used_at)}</time> : 'Never'}</td>
            <td>{k.expires_at ? when(k.expires_at) : 'Never'}</td>
            <td>
              <ConfirmButton
                title={`Revoke the key “${k.name}”?`}
                description="Whatever uses it stops working at once. This cannot be undone."
                confirm="Revoke key"
                onConfirm={() => revoke.mutateAsync(k.id)}
              >
                Revoke<span className="visually-hidden"> {k.name}</span>
              </ConfirmButton>
            </td>
          </tr>
        ))}
      </tbody>
    </ScrollTable>
  );
}

function NewKey() {
  const create = useCreateApiKey(useWorkspace());
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(['tickets:read']);
  const [expiry, setExpiry] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const expires_at = expiry ? new Date(Date.now() + Number(expiry) * 86_400_000).toISOString() : undefined;
      const k = await create.mutateAsync({ name, scopes, ...(expires_at ? { expires_at } : {}) });
      setCreated({ name: k.name, key: k.key });
      setName('');
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="new-key" className="add-section">
      <h2 id="new-key">New API key</h2>
      {created && (
        <div className="once" role="status">
          <p>
            The key <strong>{created.name}</strong> is made. Copy it now: it is shown only once, and only a hash of it
            is kept.
          </p>
          <CopyField label="API key (shown once)" value={created.key} />
          <button type="button" className="button" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </div>
      )}
      <form onSubmit={submit} noValidate>
        <TextField
          label="Name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          hint="What uses it, e.g. “CRM sync”."
          maxLength={100}
          error={fieldError(error, 'name')}
        />
        <fieldset>
          <legend>Scopes</legend>
          <div className="checks">
            {SCOPES.map(([s, hint]) => (
              <CheckboxField
                key={s}
                label={s}
                hint={hint}
                checked={scopes.includes(s)}
                onChange={(e) => setScopes((x) => (e.target.checked ? [...x, s] : x.filter((y) => y !== s)))}
              />
            ))}
          </div>
          {fieldError(error, 'scopes') && <p className="field-error">{fieldError(error, 'scopes')}</p>}
        </fieldset>
        <SelectField
          label="Expires"
          value={expiry}
          onChange={(e) => setExpiry(e.target.value)}
          options={EXPIRY}
          error={fieldError(error, 'expires_at')}
        />
        <ErrorNote error={error} what="Could not create the key" />
        <div className="form-actions">
          <button type="submit" className="primary" disabled={busy || scopes.length === 0}>
            Create key
          </button>
        </div>
      </form>
    </section>
  );
}
