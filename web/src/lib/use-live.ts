// The live connection of the signed-in frame's workspace (live.ts) and its state, for the shell:
// events change the cache (queries.ts applyEvent), a resync reloads what is shown.
import { useEffect, useState } from 'react';
import { type Live, type LiveStatus, startLive } from './live';
import { applyEvent, reloadWorkspace } from './queries';

export function useLive(ws: string): { status: LiveStatus; live: Live | null } {
  const [status, setStatus] = useState<LiveStatus>('connecting');
  const [live, setLive] = useState<Live | null>(null);
  useEffect(() => {
    const l = startLive(ws, {
      onEvent: (e) => applyEvent(ws, e),
      onResync: () => reloadWorkspace(ws),
      onStatus: setStatus,
    });
    setLive(l);
    return () => l.stop();
  }, [ws]);
  return { status, live };
}
