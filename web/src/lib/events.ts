// The selected workspace's live events, for the screens that follow more than tickets (chats,
// the knowledge base, notifications, settings lists): a screen subscribes to the event types it
// shows, with useLiveEvents, and refetches or patches its own queries. queries.ts applyEvent, which
// keeps the ticket caches, hands every event here too, in seq order, once.
import { useEffect, useRef } from 'react';
import type { Envelope } from './live';

type Listener = (ws: string, e: Envelope) => void;
const listeners = new Set<Listener>();

export function emitLiveEvent(ws: string, e: Envelope): void {
  for (const l of listeners) {
    try {
      l(ws, e);
    } catch (err) {
      console.error('live event handler failed', err);
    }
  }
}

/**
 * Calls `handler` for each live event whose type is in `types`, or starts with one of them that
 * ends in '.' ('kb_article.' for every article event), while the component is mounted.
 */
export function useLiveEvents(types: readonly string[], handler: (e: Envelope, ws: string) => void): void {
  const current = useRef(handler);
  current.current = handler;
  const key = types.join(',');
  useEffect(() => {
    const wanted = key.split(',');
    const l: Listener = (ws, e) => {
      if (wanted.some((t) => (t.endsWith('.') ? e.type.startsWith(t) : e.type === t))) current.current(e, ws);
    };
    listeners.add(l);
    return () => {
      listeners.delete(l);
    };
  }, [key]);
}
