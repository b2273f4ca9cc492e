// Notifications: the bell's unread count, kept live by notification.created events (the person's
// own arrive on the workspace topic, docs/realtime.md), and marking them read (the popover), shown
// at once in the count and taken back when refused.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, ok } from '../lib/api';
import { useLiveEvents } from '../lib/events';
import { keys } from './keys';

type Unread = Awaited<ReturnType<typeof loadUnread>>;
type List = Awaited<ReturnType<typeof loadList>>;
const loadList = () => ok(api.GET('/v1/notifications', { params: { query: { sort: 'unread_first', limit: 20 } } }));
const loadUnread = () => ok(api.GET('/v1/notifications', { params: { query: { unread: true, limit: 1 } } }));

/** How many notifications are unread; everything of the notifications is asked again on a new one. */
export function useUnreadCount(ws: string) {
  const qc = useQueryClient();
  useLiveEvents(['notification.created'], (_e, from) => {
    if (from === ws) void qc.invalidateQueries({ queryKey: keys.notifications(ws) });
  });
  return useQuery({ queryKey: keys.unreadNotifications(ws), queryFn: loadUnread, select: (d) => d.unread_count });
}

/** The popover's list: unread first, the latest 20. */
export const useNotificationList = (ws: string) => useQuery({ queryKey: keys.notificationList(ws), queryFn: loadList });

/**
 * Mark notifications read: `ids`, or all of them (POST /v1/notifications/read). The bell's count
 * and the list's rows show read at once, as they were when refused; the notifications are asked
 * again either way (the answer waits for that, so the list is current when it resolves).
 */
export function useMarkNotificationsRead(ws: string) {
  const qc = useQueryClient();
  const key = keys.unreadNotifications(ws);
  return useMutation({
    mutationFn: (ids: string[] | 'all') =>
      ok(api.POST('/v1/notifications/read', { body: ids === 'all' ? { all: true } : { ids } })),
    onMutate: async (ids) => {
      await qc.cancelQueries({ queryKey: keys.notifications(ws) });
      const before = qc.getQueryData<Unread>(key);
      const list = qc.getQueryData<List>(keys.notificationList(ws));
      const now = new Date().toISOString();
      const marks = (id: string) => ids === 'all' || ids.includes(id);
      if (before) {
        const unread = ids === 'all' ? 0 : Math.max(0, before.unread_count - ids.length);
        qc.setQueryData<Unread>(key, { ...before, unread_count: unread });
      }
      if (list) {
        const newlyRead = list.data.filter((n) => marks(n.id) && !n.read_at).length;
        const data = list.data.map((n) => (marks(n.id) && !n.read_at ? { ...n, read_at: now } : n));
        const left = ids === 'all' ? 0 : Math.max(0, list.unread_count - newlyRead);
        qc.setQueryData<List>(keys.notificationList(ws), { ...list, data, unread_count: left });
      }
      return { before, list };
    },
    onError: (_err, _ids, context) => {
      if (context?.before) qc.setQueryData(key, context.before);
      if (context?.list) qc.setQueryData(keys.notificationList(ws), context.list);
    },
    onSettled: () => qc.invalidateQueries({ queryKey: keys.notifications(ws) }),
  });
}
