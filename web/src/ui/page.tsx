// The parts every screen is made of: a page heading that also titles the browser tab, the message
// for a failed request (what failed and what to do), and the placeholder of a screen not built yet.
import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useEffect, useState } from 'react';
import { ApiError, errorText } from '../lib/errors';
import './status.css';

/** The screen's heading (h1 unless `level`), also the browser tab's title. */
export function PageTitle({ children, actions }: { children: string; actions?: ReactNode }) {
  useEffect(() => {
    document.title = `${children} · Help desk`;
  }, [children]);
  return (
    <header className="page-head">
      <h1>{children}</h1>
      {actions && <div className="page-actions">{actions}</div>}
    </header>
  );
}

/**
 * A failed request, said in words a person can act on (an alert, read out when it appears). When it
 * is a query's error (a list or a record that could not be loaded), "Try again" fetches it again; a
 * 429's seconds are counted down.
 */
export function ErrorNote({ error, what }: { error: unknown; what?: string }) {
  const queryClient = useQueryClient();
  const query = error
    ? queryClient.getQueryCache().findAll({ predicate: (q) => q.state.error === error })[0]
    : undefined;
  const [, tick] = useState(0);
  const waiting = error instanceof ApiError && error.retryAt !== null && error.retryAt > Date.now();
  useEffect(() => {
    if (!waiting) return;
    const t = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(t);
  }, [waiting]);
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {what ? `${what}: ` : ''}
      {errorText(error)}
      {query && (
        <button
          type="button"
          className="link error-actions"
          onClick={() => void queryClient.refetchQueries({ queryKey: query.queryKey, exact: true })}
        >
          Try again
        </button>
      )}
    </p>
  );
}

/** Loading, failed or loaded: one line for the first two. */
export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <p className="loading" role="status">
      {label}
    </p>
  );
}

export function NotYet() {
  return (
    <p>
      This screen is not part of the app yet. Everything it will show is available through the API meanwhile: see the{' '}
      <a href="/docs">API reference</a>.
    </p>
  );
}

/**
 * Said at the top of a screen the person may read but not change: `what` they cannot do ("change
 * webhooks"), or the whole sentence as children.
 */
export function ReadOnlyNote({ what, children }: { what?: string; children?: ReactNode }) {
  return (
    <p className="hint read-only-note" role="note">
      {children ?? (what ? `Only owners and admins can ${what}. Ask one of them.` : 'Only admins can change these.')}
    </p>
  );
}
