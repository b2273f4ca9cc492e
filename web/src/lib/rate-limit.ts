// The API's rate limit as this browser meets it (docs/app.md "Outages and rate limits"): after a
// 429, every request of the app waits until its Retry-After has passed and is then sent again; the
// notice (ui/rate-limit-notice.tsx) counts the seconds down meanwhile. A wait longer than two
// minutes, or a fourth 429 in a row, is given to the screen as the error instead.
import { useEffect, useState, useSyncExternalStore } from 'react';
import { retryAfterSeconds } from './errors';

const MAX_WAIT_SECONDS = 120;
const MAX_RETRIES = 3;

/** Until when requests wait (milliseconds since the epoch); 0 when not limited. */
let until = 0;
const listeners = new Set<() => void>();
const emit = () => {
  for (const l of listeners) l();
};

/** Requests wait until `at` (the latest of every 429's Retry-After). */
export function noteRateLimited(at: number): void {
  if (at <= until) return;
  until = at;
  emit();
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves once a 429's wait is over (at once when there is none). */
export async function whenAllowed(): Promise<void> {
  for (let left = until - Date.now(); left > 0; left = until - Date.now()) await sleep(left);
}

/**
 * Sends a request (`send` makes it anew each time) and, while the API answers 429 with a
 * Retry-After the app may wait out, waits for it and sends it again. Requests made during the
 * wait wait too, rather than being refused one by one.
 */
export async function sendWithinLimit(send: () => Promise<Response>): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    await whenAllowed();
    const res = await send();
    if (res.status !== 429 || attempt >= MAX_RETRIES) return res;
    const seconds = retryAfterSeconds(res);
    if (seconds === null || seconds > MAX_WAIT_SECONDS) return res;
    noteRateLimited(Date.now() + seconds * 1000);
  }
}

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => {
    listeners.delete(l);
  };
};

/** Seconds left of the wait (0: none), again every second while there is one. */
export function useSecondsLeft(): number {
  const end = useSyncExternalStore(subscribe, () => until);
  const [, tick] = useState(0);
  useEffect(() => {
    if (end <= Date.now()) return;
    const t = setInterval(() => {
      tick((n) => n + 1);
      if (Date.now() >= end) clearInterval(t);
    }, 1000);
    return () => clearInterval(t);
  }, [end]);
  return Math.max(0, Math.ceil((end - Date.now()) / 1000));
}
