// The bell's popover (loaded on its own, after the first load): the newest notifications, each
// linking to its ticket (opening one marks it read), "Mark all read", and a link to them all.
import * as Popover from '@radix-ui/react-popover';
import { Link } from '@tanstack/react-router';
import { useEffect, useRef, useState } from 'react';
import { useMarkNotificationsRead, useNotificationList } from '../../data/notifications';
import { errorText } from '../../lib/api';
import { useWorkspace } from '../../lib/context';
import { Icon } from '../../ui/icons';
import { type Notification, NotificationItem } from './notifications-text';
import './notifications-popover.css';

export default function NotificationsPopover({
  count,
  autoFocus,
  openAtStart = false,
  onOpenedAtStart,
}: {
  count: number;
  autoFocus: boolean;
  /** The plain bell was pressed before this chunk arrived: open at once (then told, once). */
  openAtStart?: boolean;
  onOpenedAtStart?: () => void;
}) {
  const ws = useWorkspace();
  const [open, setOpen] = useState(openAtStart);
  // The press is used up: a later mount (another screen's sidebar) starts closed.
  useEffect(() => {
    if (openAtStart) onOpenedAtStart?.();
  }, [openAtStart, onOpenedAtStart]);
  const trigger = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (autoFocus) trigger.current?.focus();
  }, [autoFocus]);
  return (
    <Popover.Root open={open} onOpenChange={setOpen}>
      <Popover.Trigger ref={trigger} className="bell">
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
      </Popover.Trigger>
      <Popover.Portal>
        <Popover.Content
          aria-label="Notifications"
          className="bell-popover"
          side="right"
          align="end"
          sideOffset={6}
          collisionPadding={8}
        >
          {open && <List ws={ws} close={() => setOpen(false)} />}
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}

function List({ ws, close }: { ws: string; close(): void }) {
  const list = useNotificationList(ws);
  const markRead = useMarkNotificationsRead(ws);
  const [error, setError] = useState<unknown>(null);
  const read = async (body: { ids: string[] } | { all: true }) => {
    setError(null);
    try {
      await markRead.mutateAsync('all' in body ? 'all' : body.ids);
    } catch (err) {
      setError(err);
    }
  };
  const rows: Notification[] = list.data?.data ?? [];
  const unread = list.data?.unread_count ?? 0;
  return (
    <section aria-labelledby="bell-title">
      <header className="bell-head">
        <h2 id="bell-title">Notifications</h2>
        <button type="button" className="button" disabled={unread === 0} onClick={() => void read({ all: true })}>
          Mark all read
        </button>
      </header>
      {list.isPending ? (
        <p className="loading">Loading…</p>
      ) : list.error ? (
        <p className="error" role="alert">
          Could not load the notifications: {errorText(list.error)}
        </p>
      ) : rows.length === 0 ? (
        <p className="empty">Nothing yet. You are told here when a ticket is assigned to you or you are mentioned.</p>
      ) : (
        <ul className="bell-list">
          {rows.map((n) => (
            <NotificationItem
              key={n.id}
              n={n}
              read={(ids) => void read({ ids })}
              onOpen={close}
              buttonClass="button small"
            />
          ))}
        </ul>
      )}
      {error ? (
        <p className="error" role="alert">
          Could not mark them read: {errorText(error)}
        </p>
      ) : null}
      <p className="bell-foot">
        <Link to="/settings/$" params={{ _splat: 'notifications' }} onClick={close}>
          All notifications
        </Link>
      </p>
    </section>
  );
}
