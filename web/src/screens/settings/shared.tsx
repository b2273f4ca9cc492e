// What several settings sections show alike, beyond config-kit.tsx's definitions kit: the button
// that reads a paged list's next page (audit log, outgoing mail, deliveries, notifications, saved
// replies).
import type { ReactNode } from 'react';

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
