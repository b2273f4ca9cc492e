// Whether the help desk server answers: false once a request could not reach it, true again at the
// next answer (a request, or the live socket joining). What failed while it was away is tried again
// when it comes back: failed queries (queries.ts) and a screen that could not load (ui/route-error.tsx).
let reachable = true;
const comebacks = new Set<() => void>();

export function noteReachable(ok: boolean): void {
  if (ok === reachable) return;
  reachable = ok;
  if (!ok) return;
  for (const l of [...comebacks]) {
    try {
      l();
    } catch (err) {
      console.error('comeback handler failed', err);
    }
  }
}

export const isReachable = (): boolean => reachable;

/** Calls `l` each time the server answers again after it could not be reached; returns the unsubscribe. */
export function onComeback(l: () => void): () => void {
  comebacks.add(l);
  return () => {
    comebacks.delete(l);
  };
}
