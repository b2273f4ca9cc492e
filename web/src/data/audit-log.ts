// The audit log (/v1/audit-logs): who changed what, newest first, filtered, in cursor pages.
import { useInfiniteQuery } from '@tanstack/react-query';
import type { paths } from '../api.gen';
import { api, ok } from '../lib/api';
import { keys } from './keys';

export type AuditQuery = NonNullable<paths['/v1/audit-logs']['get']['parameters']['query']>;

export const useAuditLog = (ws: string, filters: AuditQuery) =>
  useInfiniteQuery({
    queryKey: keys.auditLogs(ws, filters),
    queryFn: ({ pageParam }) =>
      ok(
        api.GET('/v1/audit-logs', {
          params: { query: { ...filters, limit: 50, ...(pageParam ? { cursor: pageParam } : {}) } },
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
  });
