// The live connection's state in the sidebar: Live, Connecting…, Reconnecting…, or, when the
// gateway refuses a socket from this page's address, which address to open instead.
import { liveAddress } from '../lib/address';
import type { LiveStatus } from '../lib/live';
import './status.css';

const LIVE_TEXT: Record<Exclude<LiveStatus, 'elsewhere'>, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
};

export function LiveState({ status }: { status: LiveStatus }) {
  if (status === 'elsewhere') {
    const to = liveAddress();
    const here = `${location.pathname}${location.search}`;
    return (
      <div className="live live-elsewhere" role="status" aria-live="polite">
        <p>
          <span className="dot" aria-hidden="true" />
          Not live at this address
        </p>
        <p className="hint">
          {to ? (
            <>
              Live updates work at <a href={`${to.replace(/\/+$/, '')}${here}`}>{to}</a>; open the app there.
            </>
          ) : (
            'The server refuses live updates at this address.'
          )}{' '}
          Administrators: <code>PUBLIC_URL</code> or <code>CHECK_ORIGINS</code> names the addresses.
        </p>
      </div>
    );
  }
  return (
    <p className={`live live-${status}`} role="status" aria-live="polite">
      <span className="dot" aria-hidden="true" />
      {LIVE_TEXT[status]}
    </p>
  );
}
