// TanStack Query keys and the live events' effect on what is cached: a changed ticket replaces
// its copy everywhere at once (no refetch, no layout shift); the lists and counts are refetched
// shortly after (a new ticket, or one that left a view), coalesced when events come in bursts.
import { type InfiniteData, QueryClient } from '@tanstack/react-query';
import { keys } from '../data/keys';
import type { TicketPage } from '../data/tickets';
import type { Activity, Message, Ticket } from './api';
import { emitLiveEvent } from './events';
import type { Envelope } from './live';
import { onComeback } from './reachable';

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: { staleTime: 30_000, retry: (n, err) => n < 2 && !(err as { status?: number }).status },
  },
});

// The server answers again after it could not be reached: what failed meanwhile, and is on screen,
// is fetched again (the live connection's replay brings what changed).
onComeback(() => {
  void queryClient.refetchQueries({ type: 'active', predicate: (q) => q.state.status === 'error' });
});

export type { TicketPage };
// The keys are defined in one place, beside the resources' hooks (web/src/data/keys.ts).
export { keys };

const soon = new Map<string, ReturnType<typeof setTimeout>>();
function refetchSoon(key: readonly unknown[]): void {
  const k = JSON.stringify(key);
  if (soon.has(k)) return;
  soon.set(
    k,
    setTimeout(() => {
      soon.delete(k);
      void queryClient.invalidateQueries({ queryKey: key });
    }, 150),
  );
}

function upsert<T extends { id: string }>(list: T[] | undefined, item: T): T[] | undefined {
  if (!list) return list;
  const i = list.findIndex((x) => x.id === item.id);
  if (i === -1) return [...list, item];
  const copy = list.slice();
  copy[i] = item;
  return copy;
}

/** What a live event changes in the cache of workspace `ws`. */
export function applyEvent(ws: string, e: Envelope): void {
  const d = e.data;
  switch (e.type) {
    case 'ticket.created':
    case 'ticket.updated': {
      const t = d.ticket as Ticket;
      queryClient.setQueryData<Ticket>(keys.ticket(ws, t.number), (old) => (old ? t : old));
      queryClient.setQueriesData<InfiniteData<TicketPage>>({ queryKey: keys.tickets(ws) }, (old) =>
        old
          ? { ...old, pages: old.pages.map((p) => ({ ...p, data: p.data.map((x) => (x.id === t.id ? t : x)) })) }
          : old,
      );
      refetchSoon(keys.tickets(ws));
      refetchSoon(keys.counts(ws));
      break;
    }
    case 'ticket.deleted':
      refetchSoon(keys.tickets(ws));
      refetchSoon(keys.counts(ws));
      break;
    case 'message.created':
    case 'message.updated': {
      const m = d.message as Message;
      queryClient.setQueryData<Message[]>(keys.messages(ws, d.ticket_id as string), (old) => upsert(old, m));
      break;
    }
    case 'activity.created': {
      const a = d.activity as Activity;
      queryClient.setQueryData<Activity[]>(keys.activities(ws, d.ticket_id as string), (old) => upsert(old, a));
      break;
    }
    case 'view.created':
    case 'view.updated':
    case 'view.deleted':
      refetchSoon(keys.views(ws));
      refetchSoon(keys.counts(ws));
      break;
    case 'member.added':
    case 'member.updated':
    case 'member.removed':
      refetchSoon(keys.members(ws));
      break;
    case 'contact.updated':
    case 'company.updated': {
      const c = (d.contact ?? d.company) as { id: string };
      if (c?.id)
        queryClient.setQueryData(e.type === 'contact.updated' ? keys.contact(ws, c.id) : keys.company(ws, c.id), c);
      break;
    }
    case 'workspace.updated':
      break;
    case 'mailbox.created':
    case 'mailbox.updated':
    case 'mailbox.deleted':
      // Whose replies leave and whose are kept in the outbox (lib/mail.ts).
      refetchSoon(keys.mailStatus(ws));
      break;
    default:
      // Definitions the pickers show: labels, label groups, custom fields, teams, saved replies.
      for (const [prefix, key] of [
        ['tag.', keys.tags(ws)],
        ['tag_group.', keys.tagGroups(ws)],
        ['custom_field.', keys.fields(ws)],
        ['team.', keys.teams(ws)],
        ['saved_reply.', keys.savedReplies(ws)],
      ] as const) {
        if (e.type.startsWith(prefix)) refetchSoon(key);
      }
      if (e.type === 'tag.merged') refetchSoon(keys.tickets(ws));
  }
  emitLiveEvent(ws, e);
}

/** Everything of the workspace again (after a resync or the first join). */
export function reloadWorkspace(ws: string): void {
  for (const k of [
    'counts',
    'views',
    'tickets',
    'ticket',
    'messages',
    'activities',
    'members',
    'teams',
    'tags',
    'tag-groups',
    'custom-fields',
    'saved-replies',
    'contact',
    'company',
    'contact-tickets',
    'mail-status',
  ]) {
    void queryClient.invalidateQueries({ queryKey: [k, ws] });
  }
}

/** A "Try again" button's handler: the query asked again (its error shows until the answer). */
export const askAgain = (query: { refetch(): Promise<unknown> }) => (): void => void query.refetch();
