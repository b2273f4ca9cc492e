// Notifications (GET /v1/notifications, POST /v1/notifications/read): what a person is told about,
// each kind switched on or off for this workspace (GET and PATCH /v1/notifications/settings), and
// every notification of theirs, unread ones first or only, marked read one by one or all at once.
import { useState } from 'react';
import {
  useAllNotifications,
  useNotificationSettings,
  useSaveNotificationSettings,
} from '../../data/notification-settings';
import { useMarkNotificationsRead } from '../../data/notifications';
import { useWorkspace } from '../../lib/context';
import { CheckboxField } from '../../ui/form';
import './integrations.css';
import { isAdmin, useRole } from '../../lib/role';
import { ErrorNote, Loading, PageTitle } from '../../ui/page';
import { NOTIFIED_ABOUT, NotificationItem, type NotificationType } from './notifications-text';
import type { SectionProps } from './section';
import { Loaded, MoreButton } from './shared';

export default function Notifications(_: SectionProps) {
  const ws = useWorkspace();
  const [unreadOnly, setUnreadOnly] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const list = useAllNotifications(ws, unreadOnly);
  const markRead = useMarkNotificationsRead(ws);
  const rows = list.data?.pages.flatMap((p) => p.data) ?? [];
  const unread = list.data?.pages[0]?.unread_count ?? 0;
  const read = async (body: { ids: string[] } | { all: true }) => {
    setError(null);
    try {
      await markRead.mutateAsync('all' in body ? 'all' : body.ids);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div className="integrations">
      <PageTitle
        actions={
          <button type="button" className="button" disabled={unread === 0} onClick={() => void read({ all: true })}>
            Mark all read
          </button>
        }
      >
        Notifications
      </PageTitle>
      <ToldAbout />
      <section aria-labelledby="yours">
        <h2 id="yours">Yours{unread > 0 ? ` (${unread} unread)` : ''}</h2>
        <CheckboxField label="Unread only" checked={unreadOnly} onChange={(e) => setUnreadOnly(e.target.checked)} />
        <ErrorNote error={error} what="Could not mark them read" />
        <Loaded
          query={list}
          what="Could not load your notifications"
          empty={rows.length === 0 && <>{unreadOnly ? 'Nothing unread.' : 'No notifications yet.'}</>}
        >
          <ul className="notification-list">
            {rows.map((n) => (
              <NotificationItem key={n.id} n={n} read={(ids) => void read({ ids })} />
            ))}
          </ul>
        </Loaded>
        <MoreButton list={list}>Older notifications</MoreButton>
      </section>
    </div>
  );
}

/** Each kind of notification, on or off for this person in this workspace; saved as it changes. */
function ToldAbout() {
  const ws = useWorkspace();
  const admin = isAdmin(useRole());
  const settings = useNotificationSettings(ws);
  const save = useSaveNotificationSettings(ws);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState('');
  // The choice being saved, shown in the same render as the click (the cache's optimistic copy
  // lands a moment later, after a refetch in flight is cancelled); null once the save ends.
  const [choosing, setChoosing] = useState<Set<NotificationType> | null>(null);
  const muted = choosing ?? new Set<NotificationType>(settings.data?.muted ?? []);
  const toggle = async (types: NotificationType[], on: boolean, what: string) => {
    setError(null);
    setSaved('');
    const next = new Set(muted);
    for (const t of types) {
      if (on) next.delete(t);
      else next.add(t);
    }
    setChoosing(next);
    // The box shows the choice at once; a refusal puts it back.
    try {
      await save.mutateAsync([...next]);
      setSaved(on ? `Saved: you are told about “${what}” again.` : `Saved: no more “${what}” notifications here.`);
    } catch (err) {
      setError(err);
    } finally {
      setChoosing(null);
    }
  };
  return (
    <section aria-labelledby="told-about">
      <h2 id="told-about">What you are told about</h2>
      <p className="hint">
        Notifications appear in the bell in the sidebar as they happen. Untick what you would rather not be told about
        in this workspace; your other workspaces keep their own choices.
      </p>
      {settings.isPending ? (
        <Loading />
      ) : settings.error ? (
        <ErrorNote error={settings.error} what="Could not load your notification choices" />
      ) : (
        NOTIFIED_ABOUT.filter((k) => admin || !k.admins).map((k) => (
          <CheckboxField
            key={k.what}
            label={k.what}
            hint={`When ${k.when}.`}
            checked={!k.types.every((t) => muted.has(t))}
            onChange={(e) => void toggle(k.types, e.target.checked, k.what)}
          />
        ))
      )}
      <ErrorNote error={error} what="Could not save your choice" />
      <p className="ok-note" role="status">
        {saved}
      </p>
    </section>
  );
}
