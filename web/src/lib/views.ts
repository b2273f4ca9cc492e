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

/** The inbox's address: the view, the search, the filters and the sort (a reload keeps them). */
export interface InboxSearch {
  view?: string;
  q?: string;
  status?: string;
  priority?: string;
  severity?: string;
  /** me, none or a user id. */
  assignee?: string;
  team?: string;
  /** A label's name. */
  label?: string;
  /** Custom field filters: `key` or `key[op]` to the value, as the list's `field.<key>[op]` takes. */
  fields?: Record<string, string>;
  sort?: string;
  order?: 'asc' | 'desc';
}

const FILTER_KEYS = ['status', 'priority', 'severity', 'assignee', 'team', 'label', 'sort'] as const;
const FIELD_PARAM = /^[a-z][a-z0-9_]{0,39}(\[[a-z_]+\])?$/;

export function parseInboxSearch(s: Record<string, unknown>): InboxSearch {
  const out: InboxSearch = {};
  if (typeof s.view === 'string' && (s.view in VIEWS || s.view.startsWith('view:'))) out.view = s.view;
  if (typeof s.q === 'string' && s.q.trim()) out.q = s.q.slice(0, 200);
  for (const k of FILTER_KEYS) {
    const v = s[k];
    if (typeof v === 'string' && v.trim() && v.length <= 200) out[k] = v;
  }
  if (s.order === 'asc' || s.order === 'desc') out.order = s.order;
  if (s.fields && typeof s.fields === 'object') {
    const fields = Object.fromEntries(
      Object.entries(s.fields as Record<string, unknown>).filter(
        (e): e is [string, string] => FIELD_PARAM.test(e[0]) && typeof e[1] === 'string' && e[1].length <= 200,
      ),
    );
    if (Object.keys(fields).length > 0) out.fields = fields;
  }
  return out;
}

/** How many filters beyond the view are set (for the Filters button). */
export const filterCount = (s: InboxSearch): number =>
  (['status', 'priority', 'severity', 'assignee', 'team', 'label'] as const).filter((k) => s[k]).length +
  Object.keys(s.fields ?? {}).length;
