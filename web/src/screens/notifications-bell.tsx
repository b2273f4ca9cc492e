// Not built yet: the bell with the unread notifications' count, live.
export function NotificationsBell() {
  return null;
}
