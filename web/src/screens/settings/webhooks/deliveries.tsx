// An endpoint's delivery log: status, response code, attempts, time, the error, the body sent
// (fetched when opened), a finished delivery sent again. Read again every few seconds while open
// (deliveries have no live events).
import { useState } from 'react';
import { useDeliveries, useDelivery, useRedeliver } from '../../../data/webhooks';
import { errorText } from '../../../lib/api';
import { useWorkspace } from '../../../lib/context';
import { ago, when } from '../../../lib/format';
import { ErrorNote, Loading } from '../../../ui/page';
import { count } from '../../../ui/words';
import { Loaded, MoreButton, ScrollTable } from '../shared';
import type { Delivery } from './form';

const DELIVERY_STATE: Record<Delivery['status'], [string, string]> = {
  succeeded: ['Delivered', 'state-ok'],
  failed: ['Failed', 'state-bad'],
  pending: ['Pending', 'state-wait'],
};

export function Deliveries({ id }: { id: string }) {
  const ws = useWorkspace();
  const list = useDeliveries(ws, id);
  const redeliver = useRedeliver(ws, id);
  const [error, setError] = useState<unknown>(null);
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const retry = async (d: Delivery) => {
    setError(null);
    try {
      await redeliver.mutateAsync(d.id);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="deliveries">
      <h2 id="deliveries">Deliveries</h2>
      <p className="hint">Newest first; refreshed every few seconds. Failed deliveries are retried for about a day.</p>
      <ErrorNote error={error} what="Could not send the delivery again" />
      <Loaded
        query={list}
        what="Could not load the deliveries"
        empty={rows.length === 0 && <>No deliveries yet. Send a test event to try it.</>}
      >
        <ScrollTable className="table deliveries" caption="Deliveries, newest first">
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
        </ScrollTable>
      </Loaded>
      <MoreButton list={list}>Older deliveries</MoreButton>
    </section>
  );
}

function DeliveryRow({ hook, d, onRetry }: { hook: string; d: Delivery; onRetry(): Promise<void> }) {
  const ws = useWorkspace();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const body = useDelivery(ws, hook, d.id, open);
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
