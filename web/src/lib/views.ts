// The inbox's built-in views: their GET /v1/tickets filters and their GET /v1/tickets/counts key.
import type { TicketCounts } from './api';

export interface BuiltInView {
  label: string;
  count: keyof Omit<TicketCounts, 'views'>;
  query: { status?: string; assignee?: string; spam?: boolean };
}

const ACTIVE = 'open,pending,on_hold';

export const VIEWS: Record<string, BuiltInView> = {
  unassigned: { label: 'Unassigned', count: 'unassigned', query: { assignee: 'none', status: ACTIVE } },
  mine: { label: 'Mine', count: 'mine', query: { assignee: 'me', status: ACTIVE } },
  open: { label: 'Open', count: 'open', query: { status: 'open' } },
  pending: { label: 'Pending', count: 'pending', query: { status: 'pending' } },
  on_hold: { label: 'On hold', count: 'on_hold', query: { status: 'on_hold' } },
  solved: { label: 'Solved', count: 'solved', query: { status: 'solved' } },
  spam: { label: 'Spam', count: 'spam', query: { spam: true } },
};

export const DEFAULT_VIEW = 'open';
