// Unread tickets. The API keeps no read state per agent, so it is decided here, in this browser:
// a ticket is unread when its customer wrote last (last_customer_message_at is its newest message:
// no reply or note came after it) and this browser has not had the ticket open since that message.
// Opening a ticket (its page, or a chat) records its last_message_at, the server's time, so a
// wrong clock here changes nothing. Kept in localStorage per workspace (the newest 1,000 tickets),
// followed by every tab; in memory only when the browser refuses storage. The inbox's rows and
// Chats share it (docs/decisions.md "Unread tickets").
import { useSyncExternalStore } from 'react';
import type { Ticket } from '../lib/api';

type Seen = Record<string, string>;

const keyOf = (ws: string) => `helpdesk.seen.${ws}`;
/** Chats' own record before the inbox shared it: read until this one is first written. */
const oldKeyOf = (ws: string) => `helpdesk.chats.seen.${ws}`;
const KEEP = 1000;
/** A timestamp's milliseconds (NaN, never unread-making, for anything else). */
const time = (iso: unknown): number => (typeof iso === 'string' ? Date.parse(iso) : Number.NaN);

let cache: { ws: string; raw: string | null; seen: Seen } | null = null;
let memoryOnly = false;
const listeners = new Set<() => void>();

function read(ws: string): Seen {
  if (memoryOnly) return cache?.ws === ws ? cache.seen : {};
  let raw: string | null = null;
  try {
    raw = localStorage.getItem(keyOf(ws)) ?? localStorage.getItem(oldKeyOf(ws));
  } catch {
    return cache?.ws === ws ? cache.seen : {};
  }
  if (cache?.ws === ws && cache.raw === raw) return cache.seen;
  let seen: Seen = {};
  try {
    const parsed: unknown = raw ? JSON.parse(raw) : {};
    if (parsed && typeof parsed === 'object') seen = parsed as Seen;
  } catch {
    // a damaged record: start again
  }
  cache = { ws, raw, seen };
  return seen;
}

/** This ticket is read, up to its newest message. */
export function markSeen(ws: string, t: Pick<Ticket, 'id' | 'last_message_at'>): void {
  const seen = read(ws);
  const was = seen[t.id];
  if (was && time(was) >= time(t.last_message_at)) return;
  const kept = Object.fromEntries(
    Object.entries({ ...seen, [t.id]: t.last_message_at })
      .sort((a, b) => time(b[1]) - time(a[1]))
      .slice(0, KEEP),
  );
  const raw = JSON.stringify(kept);
  cache = { ws, raw, seen: kept };
  try {
    localStorage.setItem(keyOf(ws), raw);
  } catch {
    memoryOnly = true;
  }
  for (const on of listeners) on();
}

function subscribe(on: () => void): () => void {
  listeners.add(on);
  window.addEventListener('storage', on);
  return () => {
    listeners.delete(on);
    window.removeEventListener('storage', on);
  };
}

/** What this browser has seen in the workspace, kept current (this tab's and other tabs' opens). */
export function useSeen(ws: string): Seen {
  return useSyncExternalStore(subscribe, () => read(ws));
}

export function isUnread(t: Pick<Ticket, 'id' | 'last_message_at' | 'last_customer_message_at'>, seen: Seen): boolean {
  const wrote = t.last_customer_message_at;
  if (!wrote || time(wrote) < time(t.last_message_at)) return false;
  const at = seen[t.id];
  return !at || time(at) < time(wrote);
}
