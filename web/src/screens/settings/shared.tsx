// What several settings sections show alike, beyond config-kit.tsx's definitions kit: a list's
// loading, error and empty states, a table that scrolls sideways, and the button that reads a
// paged list's next page (audit log, outgoing mail, deliveries, notifications, saved replies).
import type { ReactNode } from 'react';
import { ErrorNote, Loading } from '../../ui/page';

/** What MoreButton needs of an infinite query (TanStack Query's useInfiniteQuery result). */
interface Paged {
  hasNextPage: boolean;
  isFetchingNextPage: boolean;
  fetchNextPage(): Promise<unknown>;
}

/** "Older entries": the next page, while there is one; `saysLoading` names the wait on the button. */
export function MoreButton({
  list,
  children,
  className = 'button more',
  saysLoading = false,
}: {
  list: Paged;
  children: ReactNode;
  className?: string;
  saysLoading?: boolean;
}) {
  if (!list.hasNextPage) return null;
  return (
    <button
      type="button"
      className={className}
      disabled={list.isFetchingNextPage}
      onClick={() => void list.fetchNextPage()}
    >
      {saysLoading && list.isFetchingNextPage ? 'Loading…' : children}
    </button>
  );
}

/** A query's list: "Loading…", the error saying `what` failed, `empty` when there is nothing, or the list. */
export function Loaded({
  query,
  what,
  empty,
  children,
}: {
  query: { isPending: boolean; error: unknown };
  what: string;
  /** Said instead of the list when it has no rows (false: it has some). */
  empty: ReactNode;
  children: ReactNode;
}) {
  if (query.isPending) return <Loading />;
  if (query.error) return <ErrorNote error={query.error} what={what} />;
  if (empty) return <p className="empty">{empty}</p>;
  return <>{children}</>;
}

/** A table that scrolls sideways on a narrow screen, its caption read out only. */
export function ScrollTable({
  caption,
  className = 'table',
  children,
}: {
  caption: string;
  className?: string;
  children: ReactNode;
}) {
  return (
    <div className="table-scroll">
      <table className={className}>
        <caption className="visually-hidden">{caption}</caption>
        {children}
      </table>
    </div>
  );
}
