// Merging a ticket into another: found by number or subject, confirmed in a dialog, then the page
// of the ticket it went into.
import * as Dialog from '@radix-ui/react-dialog';
import { useNavigate } from '@tanstack/react-router';
import { useEffect, useId, useState } from 'react';
import { useMergeSearch, useMergeTicket } from '../../data/tickets';
import { errorText, type Ticket } from '../../lib/api';

export /** Merge this ticket into another, found by number or subject; confirmed in the dialog. */
function MergeButton({ ws, ticket: t }: { ws: string; ticket: Ticket }) {
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [q, setQ] = useState('');
  const [debounced, setDebounced] = useState('');
  const [target, setTarget] = useState<Ticket | null>(null);
  const [error, setError] = useState<unknown>(null);
  const searchId = useId();
  useEffect(() => {
    const x = setTimeout(() => setDebounced(q.trim().replace(/^#/, '')), 250);
    return () => clearTimeout(x);
  }, [q]);
  const found = useMergeSearch(ws, t, debounced, open);
  const mergeTicket = useMergeTicket(ws);
  const busy = mergeTicket.isPending;
  const merge = async () => {
    if (!target) return;
    setError(null);
    try {
      await mergeTicket.mutateAsync({ ticket: t, into: target });
      setOpen(false);
      void navigate({ to: '/tickets/$number', params: { number: String(target.number) } });
    } catch (err) {
      setError(err);
    }
  };
  return (
    <Dialog.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        setTarget(null);
        setError(null);
        setQ('');
      }}
    >
      <Dialog.Trigger className="button merge-trigger">Merge into another ticket…</Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="overlay" />
        <Dialog.Content className="dialog merge-dialog">
          <Dialog.Title>Merge #{t.number} into another ticket</Dialog.Title>
          <Dialog.Description className="hint">
            Its messages move to the ticket you choose and #{t.number} is closed. This cannot be undone.
          </Dialog.Description>
          <div className="field">
            <label htmlFor={searchId}>Ticket number or subject</label>
            <input id={searchId} type="search" value={q} maxLength={200} onChange={(e) => setQ(e.target.value)} />
          </div>
          {found.error ? (
            <p className="error" role="alert">
              Could not search: {errorText(found.error)}
            </p>
          ) : found.data && found.data.length === 0 ? (
            <p className="hint">No other ticket matches.</p>
          ) : (
            found.data && (
              <fieldset className="merge-results">
                <legend className="visually-hidden">Tickets found</legend>
                {found.data.map((x) => (
                  <label key={x.id}>
                    <input type="radio" name="merge-into" checked={target?.id === x.id} onChange={() => setTarget(x)} />
                    #{x.number} {x.subject}
                  </label>
                ))}
              </fieldset>
            )
          )}
          {error ? (
            <p className="error" role="alert">
              Could not merge: {errorText(error)}
            </p>
          ) : null}
          <div className="dialog-actions">
            <Dialog.Close className="button">Cancel</Dialog.Close>
            <button type="button" className="button danger" disabled={!target || busy} onClick={() => void merge()}>
              {target ? `Merge #${t.number} into #${target.number}` : 'Merge'}
            </button>
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
