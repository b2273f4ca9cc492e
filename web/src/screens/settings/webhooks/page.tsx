// An endpoint's page at /settings/webhooks/<id>: change it, send a test event, roll its signing
// secret, delete it; its delivery log below (deliveries.tsx).
import { Link, useNavigate } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import {
  useDeleteWebhook,
  useRotateWebhookSecret,
  useTestWebhook,
  useUpdateWebhook,
  useWebhook,
} from '../../../data/webhooks';
import { useWorkspace } from '../../../lib/context';
import { ago, when } from '../../../lib/format';
import { CopyField } from '../../../ui/copy';
import { CheckboxField, ConfirmButton } from '../../../ui/form';
import { ErrorNote, Loading, PageTitle } from '../../../ui/page';
import { Deliveries } from './deliveries';
import { type Draft, Enabled, type EventName, type Webhook, WebhookFields } from './form';

export function WebhookPage({ id }: { id: string }) {
  const ws = useWorkspace();
  const w = useWebhook(ws, id);
  if (w.isPending) return <Loading />;
  if (w.error) return <ErrorNote error={w.error} what="Could not load the webhook" />;
  return (
    <div className="integrations">
      <PageTitle>Webhook</PageTitle>
      <p>
        <Link to="/settings/$" params={{ _splat: 'webhooks' }}>
          ← All webhooks
        </Link>
      </p>
      <EditWebhook key={w.data.updated_at} w={w.data} />
      <SigningSecret w={w.data} />
      <Deliveries id={id} />
    </div>
  );
}

function EditWebhook({ w }: { w: Webhook }) {
  const ws = useWorkspace();
  const navigate = useNavigate();
  const update = useUpdateWebhook(ws, w.id);
  const sendTest = useTestWebhook(ws, w.id);
  const remove = useDeleteWebhook(ws);
  const [d, setD] = useState<Draft>({
    url: w.url,
    description: w.description ?? '',
    events: w.events,
    enabled: w.enabled,
  });
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setNote('');
    try {
      await update.mutateAsync({
        url: d.url,
        events: d.events as EventName[],
        description: d.description.trim() || null,
        enabled: d.enabled,
      });
      setNote('Saved.');
    } catch (err) {
      setError(err);
    }
  };
  const test = async () => {
    setError(null);
    setNote('');
    try {
      await sendTest.mutateAsync();
      setNote('A webhook.test event is on its way: see the deliveries below.');
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="webhook-settings">
      <h2 id="webhook-settings" className="break">
        {w.url} <Enabled w={w} />
      </h2>
      <p className="hint">Made {ago(w.created_at)}.</p>
      <div className="form-actions">
        <button type="button" className="button" onClick={() => void test()}>
          Send a test event
        </button>
        <ConfirmButton
          title="Delete this webhook?"
          description={`Deliveries to ${w.url} stop at once, and its delivery log is deleted.`}
          confirm="Delete webhook"
          onConfirm={async () => {
            await remove.mutateAsync(w.id);
            await navigate({ to: '/settings/$', params: { _splat: 'webhooks' } });
          }}
        >
          Delete webhook
        </ConfirmButton>
      </div>
      <form onSubmit={save} noValidate>
        <WebhookFields d={d} set={(p) => setD((x) => ({ ...x, ...p }))} error={error} />
        <ErrorNote error={error} what="Could not change the webhook" />
        <p className="ok-note" role="status">
          {note}
        </p>
        <div className="form-actions">
          <button type="submit" className="primary">
            Save
          </button>
        </div>
      </form>
    </section>
  );
}

/**
 * The signing secret: shown once when the webhook was made; rolled here (POST .../rotate-secret),
 * the new one shown once, the old one signing beside it for a day or ended at once. Outside the
 * form above, whose remount on every change would lose the secret on screen.
 */
function SigningSecret({ w }: { w: Webhook }) {
  const rotate = useRotateWebhookSecret(useWorkspace(), w.id);
  const [keepOld, setKeepOld] = useState(true);
  const [rolled, setRolled] = useState<{ secret: string; until: string | null } | null>(null);
  return (
    <section aria-labelledby="signing-secret">
      <h2 id="signing-secret">Signing secret</h2>
      <p className="hint">
        Your receiver checks each delivery’s <code>SVC-Signature</code> with it. It was shown once, when the webhook was
        made; rolling it gives a new one, shown once.
        {w.previous_secret_expires_at && !rolled
          ? ` The secret before the last roll also signs deliveries until ${when(w.previous_secret_expires_at)}.`
          : ''}
      </p>
      {rolled && (
        <div className="once" role="status">
          <p>
            The new signing secret: copy it now, it is shown only once.{' '}
            {rolled.until
              ? `Deliveries carry a signature with the old one too until ${when(rolled.until)}: switch your receiver before then.`
              : 'The old one no longer signs anything.'}
          </p>
          <CopyField label="New signing secret" value={rolled.secret} />
        </div>
      )}
      <CheckboxField
        label="Keep the old secret signing for 24 hours"
        hint="Deliveries then carry two signatures, so your receiver can switch without a failed delivery. Untick it when the old secret leaked."
        checked={keepOld}
        onChange={(e) => setKeepOld(e.target.checked)}
      />
      <div className="form-actions">
        <ConfirmButton
          className="button"
          title="Roll the signing secret?"
          description={
            keepOld
              ? 'A new secret signs every delivery from now on; the old one signs beside it for 24 hours.'
              : 'A new secret signs every delivery from now on; the old one stops at once, so deliveries fail at your receiver until it has the new one (they are retried).'
          }
          confirm="Roll the secret"
          onConfirm={async () => {
            const r = await rotate.mutateAsync({ previous_secret_hours: keepOld ? 24 : 0 });
            setRolled({ secret: r.secret, until: r.previous_secret_expires_at });
          }}
        >
          Roll the secret…
        </ConfirmButton>
      </div>
    </section>
  );
}
