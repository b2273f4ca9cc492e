// The inbox: the selected view's tickets (GET /v1/tickets), searched with q, paged by cursor as
// the list scrolls, kept current by live events (lib/queries.ts). Keyboard: j/k move the focus
// through the list, Enter opens, e solves the focused ticket, / searches.
import { useInfiniteQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import type { paths } from '../api.gen';
import { api, errorText, ok, type Ticket } from '../lib/api';
import { useShowShortcuts, useWorkspace } from '../lib/context';
import { ago, STATUS_LABEL } from '../lib/format';
import { useShortcuts } from '../lib/keys';
import { keys, type TicketPage } from '../lib/queries';
import { DEFAULT_VIEW, VIEWS } from '../lib/views';

export interface InboxSearch {
  view?: string;
  q?: string;
}

type ListQuery = NonNullable<paths['/v1/tickets']['get']['parameters']['query']>;

function queryOf(view: string, q: string | undefined): ListQuery {
  const saved = view.startsWith('view:') ? view.slice(5) : null;
  const base: ListQuery = saved ? { view_id: saved } : { ...(VIEWS[view] ?? VIEWS[DEFAULT_VIEW]!).query };
  return { ...base, ...(q ? { q } : {}), limit: 50 };
}

export function Inbox() {
  const ws = useWorkspace();
  const search = useSearch({ from: '/app/inbox' });
  const view = search.view ?? DEFAULT_VIEW;
  const navigate = useNavigate();
  const showShortcuts = useShowShortcuts();
  const queryClient = useQueryClient();
  const query = queryOf(view, search.q);
  const list = useInfiniteQuery({
    queryKey: [...keys.tickets(ws), query],
    queryFn: ({ pageParam }) =>
      ok(api.GET('/v1/tickets', { params: { query: { ...query, ...(pageParam ? { cursor: pageParam } : {}) } } })),
    initialPageParam: null as string | null,
    getNextPageParam: (last: TicketPage) => last.next_cursor,
  });
  const tickets = list.data?.pages.flatMap((p) => p.data) ?? [];
  const title = view.startsWith('view:') ? 'Saved view' : (VIEWS[view]?.label ?? 'Inbox');

  useEffect(() => {
    document.title = `${title} · Help desk`;
  }, [title]);

  // Search: typed into the box, applied on Enter (and to the URL, so it survives a reload).
  const [q, setQ] = useState(search.q ?? '');
  useEffect(() => setQ(search.q ?? ''), [search.q]);
  const searchRef = useRef<HTMLInputElement>(null);
  const onSearch = (e: FormEvent) => {
    e.preventDefault();
    void navigate({
      to: '/inbox',
      search: { ...(search.view ? { view: search.view } : {}), ...(q.trim() ? { q: q.trim() } : {}) },
    });
  };

  // The row with the focus (j/k), by position in the list.
  const listRef = useRef<HTMLOListElement>(null);
  const rows = () => Array.from(listRef.current?.querySelectorAll<HTMLAnchorElement>('a.ticket-row') ?? []);
  const move = (by: number) => {
    const all = rows();
    if (all.length === 0) return;
    const at = all.indexOf(document.activeElement as HTMLAnchorElement);
    const next = all[at === -1 ? 0 : Math.min(all.length - 1, Math.max(0, at + by))]!;
    next.focus();
    next.scrollIntoView({ block: 'nearest' });
  };
  const [actionError, setActionError] = useState<string | null>(null);
  const solveFocused = async () => {
    const el = document.activeElement as HTMLElement | null;
    const id = el?.closest<HTMLElement>('[data-ticket-id]')?.dataset.ticketId;
    if (!id) return;
    try {
      setActionError(null);
      await ok(api.PATCH('/v1/tickets/{id}', { params: { path: { id } }, body: { status: 'solved' } }));
      void queryClient.invalidateQueries({ queryKey: keys.tickets(ws) });
      void queryClient.invalidateQueries({ queryKey: keys.counts(ws) });
    } catch (err) {
      setActionError(`Could not solve the ticket: ${errorText(err)}`);
    }
  };
  useShortcuts({
    j: () => move(1),
    k: () => move(-1),
    '/': () => searchRef.current?.focus(),
    e: () => void solveFocused(),
    Escape: (e) => {
      if (e.target === searchRef.current) searchRef.current?.blur();
    },
  });

  // Infinite scroll: the next page when the end of the list comes into view.
  const endRef = useRef<HTMLDivElement>(null);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = list;
  useEffect(() => {
    const el = endRef.current;
    if (!el || !hasNextPage) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !isFetchingNextPage) void fetchNextPage();
    });
    io.observe(el);
    return () => io.disconnect();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);

  return (
    <section className="inbox" aria-labelledby="inbox-title">
      <header className="inbox-head">
        <h1 id="inbox-title">{title}</h1>
        <search className="search">
          <form onSubmit={onSearch}>
            <label htmlFor="ticket-search" className="visually-hidden">
              Search tickets
            </label>
            <input
              id="ticket-search"
              ref={searchRef}
              type="search"
              placeholder="Search tickets (/)"
              value={q}
              maxLength={200}
              onChange={(e) => setQ(e.target.value)}
            />
          </form>
        </search>
        <button type="button" className="icon-button" onClick={showShortcuts} aria-label="Keyboard shortcuts">
          ?
        </button>
      </header>
      {actionError && (
        <p className="error" role="alert">
          {actionError}
        </p>
      )}
      {list.error ? (
        <div className="error" role="alert">
          <p>Could not load the tickets: {errorText(list.error)}</p>
          <button type="button" onClick={() => void list.refetch()}>
            Try again
          </button>
        </div>
      ) : list.isPending ? (
        <p className="loading">Loading tickets…</p>
      ) : tickets.length === 0 ? (
        <p className="empty">{search.q ? `No tickets match “${search.q}”.` : 'No tickets here.'}</p>
      ) : (
        <ol className="ticket-list" ref={listRef} aria-label={`${title}: tickets`}>
          {tickets.map((t) => (
            <TicketRow key={t.id} t={t} />
          ))}
        </ol>
      )}
      <div ref={endRef} className="list-end">
        {isFetchingNextPage ? 'Loading more…' : ''}
      </div>
    </section>
  );
}

function TicketRow({ t }: { t: Ticket }) {
  const who = t.contact?.name ?? t.contact?.email ?? 'Unknown sender';
  return (
    <li data-ticket-id={t.id}>
      <Link to="/tickets/$number" params={{ number: String(t.number) }} className="ticket-row">
        <span className="row-top">
          <span className="who">{who}</span>
          <time dateTime={t.last_message_at ?? t.created_at}>{ago(t.last_message_at ?? t.created_at)}</time>
        </span>
        <span className="subject">
          <span className="number">#{t.number}</span> {t.subject}
        </span>
        <span className="row-bottom">
          <span className="preview">{t.last_message_preview}</span>
          {t.tags.length > 0 && (
            <span className="labels">
              <span className="visually-hidden">Labels: </span>
              {t.tags.map((tag) => (
                <span key={tag.id} className={`label label-${tag.color}`}>
                  {tag.name}
                </span>
              ))}
            </span>
          )}
          <span className={`status status-${t.status}`}>{STATUS_LABEL[t.status]}</span>
        </span>
      </Link>
    </li>
  );
}
