// Notifications (/v1/notifications) as the settings section shows them: every notification, and
// which kinds a person is told about here (/v1/notifications/settings). The bell's count, its list
// and marking read are data/notifications.ts's.
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { type Body, useLiveRefresh } from './change';
import { keys } from './keys';

/** Every notification, unread first (or only), 50 a page; read again when a new one lands. */
export function useAllNotifications(ws: string, unreadOnly: boolean) {
  useLiveRefresh(['notification.created'], keys.notifications(ws));
  return useInfiniteQuery({
    queryKey: keys.notificationsAll(ws, unreadOnly),
    queryFn: ({ pageParam }) =>
      ok(
        api.GET('/v1/notifications', {
          params: {
            query: {
              sort: 'unread_first',
              limit: 50,
              ...(unreadOnly ? { unread: true } : {}),
              ...(pageParam ? { cursor: pageParam } : {}),
            },
          },
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.next_cursor,
  });
}

export const useNotificationSettings = (ws: string) =>
  useQuery({ queryKey: keys.notificationSettings(ws), queryFn: () => ok(api.GET('/v1/notifications/settings')) });

type Muted = Body<'/v1/notifications/settings', 'patch'>['muted'];

/** The muted kinds: shown at once, the answer kept, put back when refused. */
export function useSaveNotificationSettings(ws: string) {
  const qc = useQueryClient();
  const key = keys.notificationSettings(ws);
  return useMutation({
    mutationFn: (muted: Muted) => ok(api.PATCH('/v1/notifications/settings', { body: { muted } })),
    onMutate: async (muted) => {
      // A refetch in flight would land after this and show the old kinds again.
      await qc.cancelQueries({ queryKey: key, exact: true });
      const before = qc.getQueryData(key);
      qc.setQueryData(key, { muted });
      return { before };
    },
    onError: (_, __, context) => qc.setQueryData(key, context?.before),
    onSuccess: (r) => qc.setQueryData(key, r),
  });
}
