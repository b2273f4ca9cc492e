// Outgoing mail as the app shows it: whether it is set up (GET /v1/mail/status, refetched when a
// mailbox changes), whether a ticket's replies leave or stay in the outbox, and the words for a
// reply's delivery state (the thread's badge, the composer's confirmation). A reply kept in the
// outbox is `failed` with one exact delivery_error (docs/api.md, "Outgoing mail").
import type { MailStatus } from '../data/mail';
import type { Message, Ticket } from './api';

/** The delivery_error of a reply kept in the outbox because outgoing mail is not set up. */
export const KEPT_IN_OUTBOX =
  'outgoing mail is not set up (SMTP_URL is not set on this server); the mail is kept in the outbox';

/** Whether the ticket's replies are sent by email at all (chat and API tickets' are not). */
export const mailed = (t: Pick<Ticket, 'channel'>) => t.channel === 'email' || t.channel === 'portal';

/** Whether a reply on this ticket now would be kept in the outbox instead of sent. */
export function repliesKept(status: MailStatus | undefined, t: Pick<Ticket, 'channel' | 'mailbox_id'>): boolean {
  if (status?.system_mailer !== 'outbox' || !mailed(t)) return false;
  const mailbox = t.mailbox_id ?? status.default_mailbox_id;
  return mailbox === null || status.outbox_mailbox_ids.includes(mailbox);
}

export const keptInOutbox = (m: Pick<Message, 'delivery_status' | 'delivery_error'>) =>
  m.delivery_status === 'failed' && m.delivery_error === KEPT_IN_OUTBOX;

/** The message's delivery state in a few words (the thread's badge); '' when nothing is mailed. */
export function deliveryText(m: Message): string {
  switch (m.delivery_status) {
    case 'none':
      return '';
    case 'pending':
      return 'Sending…';
    case 'sent':
      return m.delivery_error ? `Sent, except: ${m.delivery_error}` : 'Sent';
    case 'failed':
      return keptInOutbox(m)
        ? 'Saved, not sent: outgoing mail is not set up'
        : `Not delivered: ${m.delivery_error ?? 'the mail server refused it'}`;
    case 'bounced':
      return `Bounced: ${m.delivery_error ?? 'the recipient’s server returned it'}`;
  }
}

/** How the composer colours its confirmation: ok (left, or a note), pending (queued), problem (not sent). */
export function deliveryTone(m: Message): 'ok' | 'pending' | 'problem' {
  if (m.kind === 'note') return 'ok';
  if (m.delivery_status === 'pending') return 'pending';
  return m.delivery_status === 'failed' || m.delivery_status === 'bounced' ? 'problem' : 'ok';
}

/** The composer's confirmation of what it just sent, as the message is now (live). */
export function sentText(m: Message): string {
  if (m.kind === 'note') return 'Note added.';
  switch (m.delivery_status) {
    case 'none':
    case 'sent':
      return 'Reply sent.';
    case 'pending':
      return 'Reply queued: sending it now…';
    case 'failed':
      return keptInOutbox(m)
        ? 'Reply saved, not sent: outgoing mail is not set up.'
        : `Reply not delivered: ${m.delivery_error ?? 'the mail server refused it'}.`;
    case 'bounced':
      return `Reply bounced: ${m.delivery_error ?? 'the recipient’s server returned it'}.`;
  }
}
