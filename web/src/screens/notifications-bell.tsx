// The bell in the sidebar: the unread notifications' count (GET /v1/notifications, unread_count),
// kept live by notification.created events (the person's own arrive in full on the workspace
// topic, docs/realtime.md). The popover with the list is a chunk of its own
// (settings/notifications-popover.tsx), loaded after the first render; until then the bell is a
// plain button with the same look, whose press opens the popover once it has loaded.
import { lazy, Suspense, useCallback, useRef, useState } from 'react';
import { useUnreadCount } from '../data/notifications';
import { useWorkspace } from '../lib/context';
import { Icon } from '../ui/icons';
import './notifications-bell.css';

const NotificationsPopover = lazy(() => import('./settings/notifications-popover'));

export function NotificationsBell() {
  const ws = useWorkspace();
  const unread = useUnreadCount(ws);
  const count = unread.data ?? 0;
  const plain = useRef<HTMLButtonElement>(null);
  // A press before the popover's code arrived is kept: it opens once it is here.
  const [pressed, setPressed] = useState(false);
  const used = useCallback(() => setPressed(false), []);
  const fallback = (
    <button
      ref={plain}
      type="button"
      className="bell"
      aria-busy={pressed || undefined}
      onClick={() => setPressed(true)}
    >
      <span className="view-name">
        <Icon name="notifications" />
        Notifications
      </span>
      {count > 0 && (
        <span className="bell-count">
          {count}
          <span className="visually-hidden"> unread</span>
        </span>
      )}
    </button>
  );
  return (
    <Suspense fallback={fallback}>
      <NotificationsPopover
        count={count}
        autoFocus={typeof document !== 'undefined' && !!plain.current && document.activeElement === plain.current}
        openAtStart={pressed}
        onOpenedAtStart={used}
      />
    </Suspense>
  );
}
