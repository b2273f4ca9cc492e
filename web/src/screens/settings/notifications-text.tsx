// A notification in words, and as an item of a list (the bell's list and the notifications
// section share both).
import { Link } from '@tanstack/react-router';
import type { paths } from '../../api.gen';
import { ago } from '../../lib/format';

export type Notification =
  paths['/v1/notifications']['get']['responses'][200]['content']['application/json']['data'][number];
export type NotificationType = Notification['type'];

const by = (n: Notification): string => {
  const b = n.data.by as { name?: string } | null | undefined;
  return b?.name ?? '';
};

export function notificationText(n: Notification): string {
  const d = n.data as Record<string, unknown>;
  switch (n.type) {
    case 'assigned':
      return by(n) ? `${by(n)} assigned you a ticket` : 'A ticket was assigned to you';
    case 'mentioned':
      return `${by(n) || 'Someone'} mentioned you in a note${d.excerpt ? `: “${String(d.excerpt)}”` : ''}`;
    case 'customer_replied':
      return 'The customer replied on your ticket';
    case 'sla_breached':
      return 'An SLA target was missed';
    case 'ai_handoff':
      return 'The AI agent handed a conversation over to a person';
    case 'ai_cap_reached':
      return `The workspace reached its AI spending cap${d.cap_usd !== undefined ? ` ($${String(d.cap_usd)})` : ''}`;
    case 'ai_balance_low':
      return `The AI balance is low${d.remaining_usd !== undefined ? ` ($${String(d.remaining_usd)} left)` : ''}`;
    case 'ai_balance_out':
      return 'The AI balance is used up: AI features are paused';
    case 'auto_recharge_failed':
      return `The automatic AI top-up failed${d.reason ? `: ${String(d.reason)}` : ''}`;
    case 'ai_key_failed':
      return `The workspace’s AI key stopped working${d.reason ? `: ${String(d.reason)}` : ''}`;
    default:
      return String(n.type);
  }
}

/** What a person is told about (the API's notification types; there are no per-person choices). */
/** What notifies whom, a row per choice of the settings (its types muted or not together). */
export const NOTIFIED_ABOUT: Array<{ what: string; when: string; types: NotificationType[]; admins?: true }> = [
  { what: 'Assigned', when: 'a ticket is assigned to you (not when you assign it yourself)', types: ['assigned'] },
  { what: 'Mentioned', when: 'a colleague mentions you in an internal note (@Name or @email)', types: ['mentioned'] },
  { what: 'Customer replied', when: 'the customer writes on a ticket assigned to you', types: ['customer_replied'] },
  { what: 'SLA missed', when: 'a response or resolution target of your ticket is missed', types: ['sla_breached'] },
  { what: 'AI hand-off', when: 'the AI agent hands a conversation over to a person', types: ['ai_handoff'] },
  {
    what: 'Workspace notices',
    when: 'the AI spending cap is reached, the AI balance runs low or out, an automatic top-up fails, the AI key fails',
    types: ['ai_cap_reached', 'ai_balance_low', 'ai_balance_out', 'auto_recharge_failed', 'ai_key_failed'],
    admins: true,
  },
];

/**
 * One notification in a list: its words (a link to its ticket, which marks it read), when, and
 * "Mark read" while unread. `onOpen` runs after the link is followed (the bell closes).
 */
export function NotificationItem({
  n,
  read,
  onOpen,
  buttonClass = 'button',
}: {
  n: Notification;
  read(ids: string[]): void;
  onOpen?(): void;
  buttonClass?: string;
}) {
  return (
    <li className={n.read_at ? 'read' : 'unread'}>
      <div>
        <span className="visually-hidden">{n.read_at ? '' : 'Unread: '}</span>
        {n.ticket ? (
          <Link
            to="/tickets/$number"
            params={{ number: String(n.ticket.number) }}
            onClick={() => {
              if (!n.read_at) read([n.id]);
              onOpen?.();
            }}
          >
            {notificationText(n)}: #{n.ticket.number} {n.ticket.subject}
          </Link>
        ) : (
          notificationText(n)
        )}
        <time dateTime={n.created_at}>{ago(n.created_at)}</time>
      </div>
      {!n.read_at && (
        <button type="button" className={buttonClass} onClick={() => read([n.id])}>
          Mark read<span className="visually-hidden">: {notificationText(n)}</span>
        </button>
      )}
    </li>
  );
}
