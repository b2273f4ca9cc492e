// The notice while the API's rate limit makes requests wait (lib/rate-limit.ts): the seconds left,
// counted down, after which what was asked is sent again by itself. The region is always there
// (an alert added with its text is not always read out); the countdown is a timer, which screen
// readers do not read out every second.
import { useSecondsLeft } from '../lib/rate-limit';
import './status.css';

export function RateLimitNotice() {
  const left = useSecondsLeft();
  return (
    <div className={left > 0 ? 'rate-limit-notice' : 'visually-hidden'} role="status">
      {left > 0 && (
        <>
          Too many requests for the help desk server.{' '}
          <span role="timer" aria-live="off">
            Trying again in {left} {left === 1 ? 'second' : 'seconds'}.
          </span>
        </>
      )}
    </div>
  );
}
