// A route's error (router.tsx): the screen could not be shown, the rest of the app (the shell,
// its navigation) stays. Retry fetches the screen again; when the server could not be reached, it
// retries by itself as soon as the server answers again (lib/reachable.ts).
import { Link, useRouter } from '@tanstack/react-router';
import { useEffect, useRef } from 'react';
import { isUnreachable } from '../lib/errors';
import { retryScreens } from '../lib/lazy';
import { onComeback } from '../lib/reachable';
import './status.css';

export function RouteError({ error, reset }: { error: unknown; reset?: () => void }) {
  const router = useRouter();
  const retry = () => {
    retryScreens();
    reset?.();
    void router.invalidate();
  };
  const unreachable = isUnreachable(error);
  const latest = useRef(retry);
  latest.current = retry;
  useEffect(() => (unreachable ? onComeback(() => latest.current()) : undefined), [unreachable]);
  return (
    <div className="page-error route-error" role="alert">
      <h1>{unreachable ? 'This page could not be loaded' : 'This page stopped working'}</h1>
      <p>
        {unreachable
          ? 'The help desk server could not be reached. This page opens by itself once it answers again, or try now.'
          : 'Something went wrong while showing it. Try again; if it keeps happening, reload the app.'}
      </p>
      <div className="actions">
        <button type="button" className="primary" onClick={retry}>
          Retry
        </button>
        <Link to="/inbox" search={{}}>
          Go to the inbox
        </Link>
        {!unreachable && (
          <button type="button" className="link" onClick={() => location.reload()}>
            Reload the app
          </button>
        )}
      </div>
    </div>
  );
}
