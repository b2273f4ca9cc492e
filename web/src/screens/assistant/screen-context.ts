// The person's current screen, sent with each message as `context` (interface.md "Assistant"):
// the address, the page's name, on a ticket its id (its number until the page has loaded it), in
// the inbox the built-in view as `folder` or the saved view's id, and the search and filters.
import { useQueryClient } from '@tanstack/react-query';
import { useLocation } from '@tanstack/react-router';
import { useCallback } from 'react';
import type { Context } from '../../data/assistant';
import { keys } from '../../data/keys';
import type { Ticket } from '../../lib/api';
import { DEFAULT_VIEW, type InboxSearch } from '../../lib/views';

const PAGES: Record<string, string> = {
  inbox: 'inbox',
  tickets: 'ticket',
  settings: 'settings',
  'knowledge-base': 'knowledge base',
  chats: 'chats',
  reports: 'reports',
};

/** A function giving the screen as it is now (asked when a message is sent). */
export function useScreenContext(ws: string): () => Context {
  const qc = useQueryClient();
  const location = useLocation();
  return useCallback(() => {
    const path = location.pathname;
    const context: Context = { path: `${path}${location.searchStr ?? ''}`.slice(0, 2000) };
    const first = path.split('/')[1] ?? '';
    context.page = PAGES[first] ?? (first || 'inbox');
    const ticket = /^\/tickets\/(\d+)/.exec(path);
    if (ticket) {
      const number = Number(ticket[1]);
      context.ticket_id = qc.getQueryData<Ticket>(keys.ticket(ws, number))?.id ?? String(number);
    }
    if (first === 'inbox') {
      const { view, ...filters } = (location.search ?? {}) as InboxSearch;
      const shown = view ?? DEFAULT_VIEW;
      if (shown.startsWith('view:')) context.view_id = shown.slice('view:'.length);
      else context.folder = shown;
      const set = Object.entries(filters).filter(([, v]) => v !== undefined && v !== '');
      if (set.length > 0) context.filters = Object.fromEntries(set);
    }
    return context;
  }, [qc, ws, location]);
}
