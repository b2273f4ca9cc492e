// Webhooks (/v1/webhooks): the endpoints; a new one (URL, description, the events it receives
// from the API's catalog, on or paused) with its signing secret shown once; an endpoint's page at
// /settings/webhooks/<id>: change it, send a test event, roll its signing secret, delete it, and its delivery log (status,
// response code, attempts, time, the error, the body sent: GET .../deliveries/{delivery_id}), a
// finished delivery sent again (redeliver). The log is fetched again every few seconds while open
// (deliveries have no live events).
import './integrations.css';
import { useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import type { paths } from '../../api.gen';
import { api, errorText, ok, type Schemas } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { ago, when } from '../../lib/format';
import { useIsAdmin } from '../../lib/role';
import { CopyField } from '../../ui/copy';
import { CheckboxField, ConfirmButton, fieldError, TextField } from '../../ui/form';
import { ErrorNote, Loading, PageTitle, ReadOnlyNote } from '../../ui/page';
import { count } from '../../ui/words';
import type { SectionProps } from './section';

type Webhook = Schemas['Webhook'];
type Delivery =
  paths['/v1/webhooks/{id}/deliveries']['get']['responses'][200]['content']['application/json']['data'][number];
type EventName = NonNullable<
  paths['/v1/webhooks']['post']['requestBody']
>['content']['application/json']['events'][number];

/** The API's event catalog (what an endpoint may subscribe to), `*` aside. */
const EVENTS = [
  'ticket.created',
  'ticket.updated',
  'ticket.deleted',
  'message.created',
  'message.updated',
  'activity.created',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'company.created',
  'company.updated',
  'company.deleted',
  'tag.created',
  'tag.updated',
  'tag.deleted',
  'tag.merged',
  'tag_group.created',
  'tag_group.updated',
  'tag_group.deleted',
  'custom_field.created',
  'custom_field.updated',
  'custom_field.deleted',
  'mailbox.created',
  'mailbox.updated',
  'mailbox.deleted',
  'member.added',
  'member.updated',
  'member.removed',
  'workspace.updated',
  'notification.created',
  'saved_reply.created',
  'saved_reply.updated',
  'saved_reply.deleted',
  'view.created',
  'view.updated',
  'view.deleted',
  'automation.created',
  'automation.updated',
  'automation.deleted',
  'sla_policy.created',
  'sla_policy.updated',
  'sla_policy.deleted',
  'kb_article.created',
  'kb_article.updated',
  'kb_article.deleted',
  'kb_collection.created',
  'kb_collection.updated',
  'kb_collection.deleted',
  'team.created',
  'team.updated',
  'team.deleted',
  'webhook.created',
  'webhook.updated',
  'webhook.deleted',
  'billing.updated',
] as const satisfies readonly EventName[];
// Every type of the API's catalog is offered: this fails to compile when the catalog grows.
type MissingEvent = Exclude<EventName, (typeof EVENTS)[number] | '*'>;
const everyEvent: MissingEvent extends never ? true : MissingEvent = true;
void everyEvent;

export default function Webhooks({ path }: SectionProps) {
  const [id] = path;
  const admin = useIsAdmin();
  if (!admin) {
    return (
      <div className="integrations">
        <PageTitle>Webhooks</PageTitle>
        <ReadOnlyNote what="see and change webhooks" />
      </div>
    );
  }
  return id ? <WebhookPage key={id} id={id} /> : <WebhookList />;
}

function Enabled({ w }: { w: Webhook }) {
  return w.enabled ? <span className="state state-ok">On</span> : <span className="state state-wait">Paused</span>;
}

function WebhookList() {
  const ws = useWorkspace();
  const list = useQuery({
    queryKey: ['webhooks', ws],
    queryFn: () => ok(api.GET('/v1/webhooks', { params: { query: { limit: 100 } } })),
  });
  const rows = list.data?.data ?? [];
  return (
    <div className="integrations">
      <PageTitle>Webhooks</PageTitle>
      <p className="hint">
        The help desk sends the events you choose to your URL as signed JSON (see the <a href="/docs">API reference</a>{' '}
        for the signature). Open an endpoint to see its deliveries.
      </p>
      {list.isPending ? (
        <Loading />
      ) : list.error ? (
        <ErrorNote error={list.error} what="Could not load the webhooks" />
      ) : rows.length === 0 ? (
        <p className="empty">No webhooks yet.</p>
      ) : (
        <div className="table-scroll">
          <table className="table">
            <caption className="visually-hidden">Webhook endpoints</caption>
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
          </table>
        </div>
      )}
      <NewWebhook />
    </div>
  );
}

interface Draft {
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
}

function WebhookFields({ d, set, error }: { d: Draft; set(p: Partial<Draft>): void; error: unknown }) {
  const all = d.events.includes('*');
  const eventsError = fieldError(error, 'events');
  return (
    <>
      <TextField
        label="URL"
        type="url"
        value={d.url}
        onChange={(e) => set({ url: e.target.value })}
        placeholder="https://example.com/hooks/helpdesk"
        hint="An https address on the internet."
        error={fieldError(error, 'url')}
      />
      <TextField
        label="Description"
        value={d.description}
        onChange={(e) => set({ description: e.target.value })}
        maxLength={500}
        error={fieldError(error, 'description')}
      />
      <fieldset>
        <legend>Events</legend>
        <CheckboxField
          label="All events, including those added later"
          checked={all}
          onChange={(e) => set({ events: e.target.checked ? ['*'] : [] })}
        />
        {!all && (
          <div className="checks">
            {EVENTS.map((t) => (
              <CheckboxField
                key={t}
                label={t}
                checked={d.events.includes(t)}
                onChange={(e) => set({ events: e.target.checked ? [...d.events, t] : d.events.filter((x) => x !== t) })}
              />
            ))}
          </div>
        )}
        {eventsError && <p className="field-error">{eventsError}</p>}
      </fieldset>
      <CheckboxField
        label="On (unchecked: paused, no deliveries)"
        checked={d.enabled}
        onChange={(e) => set({ enabled: e.target.checked })}
      />
    </>
  );
}

function NewWebhook() {
  const ws = useWorkspace();
  const queryClient = useQueryClient();
  const [d, setD] = useState<Draft>({ url: '', description: '', events: ['ticket.created'], enabled: true });
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState<{ id: string; url: string; secret: string } | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const w = await ok(
        api.POST('/v1/webhooks', {
          body: {
            url: d.url,
            events: d.events as EventName[],
            description: d.description.trim() || null,
            enabled: d.enabled,
          },
        }),
      );
      setCreated({ id: w.id, url: w.url, secret: w.secret });
      setD({ url: '', description: '', events: ['ticket.created'], enabled: true });
      await queryClient.invalidateQueries({ queryKey: ['webhooks', ws] });
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

function WebhookPage({ id }: { id: string }) {
  const ws = useWorkspace();
  const w = useQuery({
    queryKey: ['webhook', ws, id],
    queryFn: () => ok(api.GET('/v1/webhooks/{id}', { params: { path: { id } } })),
  });
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
  const queryClient = useQueryClient();
  const [d, setD] = useState<Draft>({
    url: w.url,
    description: w.description ?? '',
    events: w.events,
    enabled: w.enabled,
  });
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const refresh = async () => {
    await queryClient.invalidateQueries({ queryKey: ['webhooks', ws] });
    await queryClient.invalidateQueries({ queryKey: ['webhook', ws, w.id] });
  };
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    setNote('');
    try {
      await ok(
        api.PATCH('/v1/webhooks/{id}', {
          params: { path: { id: w.id } },
          body: {
            url: d.url,
            events: d.events as EventName[],
            description: d.description.trim() || null,
            enabled: d.enabled,
          },
        }),
      );
      setNote('Saved.');
      await refresh();
    } catch (err) {
      setError(err);
    }
  };
  const test = async () => {
    setError(null);
    setNote('');
    try {
      await ok(api.POST('/v1/webhooks/{id}/test', { params: { path: { id: w.id } } }));
      setNote('A webhook.test event is on its way: see the deliveries below.');
      await queryClient.invalidateQueries({ queryKey: ['webhook-deliveries', ws, w.id] });
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
            await ok(api.DELETE('/v1/webhooks/{id}', { params: { path: { id: w.id } } }));
            await queryClient.invalidateQueries({ queryKey: ['webhooks', ws] });
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
  const ws = useWorkspace();
  const queryClient = useQueryClient();
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
            const r = await ok(
              api.POST('/v1/webhooks/{id}/rotate-secret', {
                params: { path: { id: w.id } },
                body: { previous_secret_hours: keepOld ? 24 : 0 },
              }),
            );
            setRolled({ secret: r.secret, until: r.previous_secret_expires_at });
            await queryClient.invalidateQueries({ queryKey: ['webhook', ws, w.id] });
          }}
        >
          Roll the secret…
        </ConfirmButton>
      </div>
    </section>
  );
}

const DELIVERY_STATE: Record<Delivery['status'], [string, string]> = {
  succeeded: ['Delivered', 'state-ok'],
  failed: ['Failed', 'state-bad'],
  pending: ['Pending', 'state-wait'],
};

function Deliveries({ id }: { id: string }) {
  const ws = useWorkspace();
  const queryClient = useQueryClient();
  const list = useInfiniteQuery({
    queryKey: ['webhook-deliveries', ws, id],
    queryFn: ({ pageParam }) =>
      ok(
        api.GET('/v1/webhooks/{id}/deliveries', {
          params: { path: { id }, query: { limit: 25, ...(pageParam ? { cursor: pageParam } : {}) } },
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
    refetchInterval: 3000,
  });
  const [error, setError] = useState<unknown>(null);
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const retry = async (d: Delivery) => {
    setError(null);
    try {
      await ok(
        api.POST('/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
          params: { path: { id, delivery_id: d.id } },
        }),
      );
      await queryClient.invalidateQueries({ queryKey: ['webhook-deliveries', ws, id] });
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="deliveries">
      <h2 id="deliveries">Deliveries</h2>
      <p className="hint">Newest first; refreshed every few seconds. Failed deliveries are retried for about a day.</p>
      <ErrorNote error={error} what="Could not send the delivery again" />
      {list.isPending ? (
        <Loading />
      ) : list.error ? (
        <ErrorNote error={list.error} what="Could not load the deliveries" />
      ) : rows.length === 0 ? (
        <p className="empty">No deliveries yet. Send a test event to try it.</p>
      ) : (
        <div className="table-scroll">
          <table className="table deliveries">
            <caption className="visually-hidden">Deliveries, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Response</th>
                <th scope="col">When</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <DeliveryRow key={d.id} hook={id} d={d} onRetry={() => retry(d)} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.hasNextPage && (
        <button
          type="button"
          className="button more"
          disabled={list.isFetchingNextPage}
          onClick={() => void list.fetchNextPage()}
        >
          Older deliveries
        </button>
      )}
    </section>
  );
}

function DeliveryRow({ hook, d, onRetry }: { hook: string; d: Delivery; onRetry(): Promise<void> }) {
  const ws = useWorkspace();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const body = useQuery({
    queryKey: ['webhook-delivery', ws, d.id],
    queryFn: () =>
      ok(
        api.GET('/v1/webhooks/{id}/deliveries/{delivery_id}', {
          params: { path: { id: hook, delivery_id: d.id } },
        }),
      ),
    enabled: open,
    staleTime: Number.POSITIVE_INFINITY,
  });
  const [text, cls] = DELIVERY_STATE[d.status];
  const pretty = (s: string) => {
    try {
      return JSON.stringify(JSON.parse(s), null, 2);
    } catch {
      return s;
    }
  };
  return (
    <>
      <tr>
        <td>
          <code>{d.event_type}</code>
        </td>
        <td>
          <span className={`state ${cls}`}>{text}</span>
          <p className="hint">
            {count(d.attempts, 'attempt')}
            {d.status === 'pending' && d.next_attempt_at ? `, next ${ago(d.next_attempt_at)}` : ''}
          </p>
        </td>
        <td>
          {d.response_status ?? '—'}
          {d.duration_ms !== null && <p className="hint">{d.duration_ms} ms</p>}
          {d.error && <p className="hint break">{d.error}</p>}
        </td>
        <td>
          <time dateTime={d.created_at} title={when(d.created_at)}>
            {ago(d.created_at)}
          </time>
        </td>
        <td className="nowrap">
          <button type="button" className="button" aria-expanded={open} onClick={() => setOpen((o) => !o)}>
            {open ? 'Hide body' : 'Body'}
            <span className="visually-hidden"> of the {d.event_type} delivery</span>
          </button>{' '}
          {d.status !== 'pending' && (
            <button
              type="button"
              className="button"
              disabled={busy}
              onClick={async () => {
                setBusy(true);
                await onRetry();
                setBusy(false);
              }}
            >
              {d.status === 'failed' ? 'Retry' : 'Send again'}
              <span className="visually-hidden"> the {d.event_type} delivery</span>
            </button>
          )}
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={5}>
            {body.isPending ? (
              <Loading />
            ) : body.error ? (
              <p className="error">Could not load the body: {errorText(body.error)}</p>
            ) : (
              <pre className="payload">{pretty(body.data.body)}</pre>
            )}
          </td>
        </tr>
      )}
    </>
  );
}
