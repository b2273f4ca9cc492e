// Outgoing mail on a ticket: the notice that its replies are not leaving (outgoing mail is not set
// up, so they are kept in the outbox), and "Send again" on a reply whose delivery failed
// (POST /v1/messages/{id}/resend; the message then updates live: Sending…, then Sent).
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useMailStatus } from '../../data/mail';
import { useResendMessage } from '../../data/messages';
import { errorText, type Message, type Ticket } from '../../lib/api';
import { repliesKept } from '../../lib/mail';
import { canWrite, useIsAdmin, useRole } from '../../lib/role';

/** Said above the composer while a reply on this ticket would be kept in the outbox, not sent. */
export function RepliesNotLeaving({ ws, ticket }: { ws: string; ticket: Ticket }) {
  const status = useMailStatus(ws);
  const admin = useIsAdmin();
  if (!repliesKept(status.data, ticket)) return null;
  return (
    <p className="mail-warning" role="note">
      <strong>Replies on this ticket are not leaving:</strong> outgoing mail is not set up, so they are kept in the
      outbox instead of being sent.{' '}
      {admin ? (
        <Link to="/settings/$" params={{ _splat: 'outgoing-mail' }}>
          See the outbox and how to set up mail
        </Link>
      ) : (
        'Ask an admin to set up outgoing mail.'
      )}
    </p>
  );
}

/** "Send again" for a reply whose delivery failed, when sending could now work. */
export function SendAgain({ ws, ticket, m }: { ws: string; ticket: Ticket; m: Message }) {
  const resendMessage = useResendMessage(ws, ticket);
  const status = useMailStatus(ws);
  const role = useRole();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (m.delivery_status !== 'failed' || !canWrite(role) || repliesKept(status.data, ticket)) return null;
  const resend = async () => {
    setBusy(true);
    setError(null);
    try {
      await resendMessage.mutateAsync(m);
    } catch (err) {
      setError(`Could not send it again: ${errorText(err)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" className="link-button" disabled={busy} onClick={() => void resend()}>
        {busy ? 'Sending…' : 'Send again'}
      </button>
      {error && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </>
  );
}
