// The endpoints, and a new one with its signing secret shown once.
import { Link } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { useCreateWebhook, useWebhooks } from '../../../data/webhooks';
import { useWorkspace } from '../../../lib/context';
import { CopyField } from '../../../ui/copy';
import { ErrorNote, PageTitle } from '../../../ui/page';
import { Loaded, ScrollTable } from '../shared';
import { type Draft, Enabled, type EventName, WebhookFields } from './form';

export function WebhookList() {
  const ws = useWorkspace();
  const list = useWebhooks(ws);
  const rows = list.data?.data ?? [];
  return (
    <div className="integrations">
      <PageTitle>Webhooks</PageTitle>
      <p className="hint">
        The help desk sends the events you choose to your URL as signed JSON (see the <a href="/docs">API reference</a>{' '}
        for the signature). Open an endpoint to see its deliveries.
      </p>
      <Loaded query={list} what="Could not load the webhooks" empty={rows.length === 0 && <>No webhooks yet.</>}>
        <ScrollTable caption="Webhook endpoints">
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((w) => (
              <tr key={w.id}>
                <td className="break">
                  <Link to="/settings/$" params={{ _splat: `webhooks/${w.id}` }}>
                    {w.url}
                  </Link>
                  {w.description && <p className="hint">{w.description}</p>}
                </td>
                <td>{w.events.includes('*') ? 'All events' : w.events.join(', ')}</td>
                <td>
                  <Enabled w={w} />
                </td>
              </tr>
            ))}
          </tbody>
        </ScrollTable>
      </Loaded>
      <NewWebhook />
    </div>
  );
}

function NewWebhook() {
  const create = useCreateWebhook(useWorkspace());
  const [d, setD] = useState<Draft>({ url: '', description: '', events: ['ticket.created'], enabled: true });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<{ id: string; url: string; secret: string } | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const w = await create.mutateAsync({
        url: d.url,
        events: d.events as EventName[],
        description: d.description.trim() || null,
        enabled: d.enabled,
      });
      setCreated({ id: w.id, url: w.url, secret: w.secret });
      setD({ url: '', description: '', events: ['ticket.created'], enabled: true });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="new-webhook" className="add-section">
      <h2 id="new-webhook">New webhook</h2>
      {created && (
        <div className="once" role="status">
          <p>
            The webhook to <span className="break">{created.url}</span> is made. Copy its signing secret now: it is
            shown only once. Your receiver checks each delivery’s <code>SVC-Signature</code> with it.
          </p>
          <CopyField label="Signing secret" value={created.secret} />
          <p>
            <Link to="/settings/$" params={{ _splat: `webhooks/${created.id}` }}>
              Open the webhook and its deliveries
            </Link>
          </p>
        </div>
      )}
      <form onSubmit={submit} noValidate>
        <WebhookFields d={d} set={(p) => setD((x) => ({ ...x, ...p }))} error={error} />
        <ErrorNote error={error} what="Could not create the webhook" />
        <div className="form-actions">
          <button type="submit" className="primary" disabled={busy}>
            Create webhook
          </button>
        </div>
      </form>
    </section>
  );
}
