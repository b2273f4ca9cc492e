// The notice owners and admins see at the top of every screen while outgoing mail is not set up
// (GET /v1/mail/status: the system mailer keeps mail in the outbox): nothing the help desk mails
// leaves, and where to read it and how to set mail up (Settings → Outgoing mail). It stays until
// dismissed; the dismissal is remembered in this browser, per workspace.
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { useMailStatus } from '../data/mail';
import { useWorkspace } from '../lib/context';
import { useIsAdmin } from '../lib/role';
import './mail-notice.css';

const dismissedKey = (ws: string) => `mail-notice-dismissed:${ws}`;

function wasDismissed(ws: string): boolean {
  try {
    return localStorage.getItem(dismissedKey(ws)) === '1';
  } catch {
    return false;
  }
}

export function MailNotice() {
  const ws = useWorkspace();
  const admin = useIsAdmin();
  const status = useMailStatus(ws);
  const [dismissed, setDismissed] = useState(() => wasDismissed(ws));
  if (!admin || dismissed || status.data?.system_mailer !== 'outbox') return null;
  const dismiss = () => {
    try {
      localStorage.setItem(dismissedKey(ws), '1');
    } catch {
      // Storage refused: dismissed for this page only.
    }
    setDismissed(true);
  };
  return (
    <section className="mail-notice" aria-label="Outgoing mail is not set up">
      <p>
        <strong>Outgoing mail is not set up.</strong> Replies, rating requests, portal sign-in links and invitations are
        kept in the outbox instead of being sent.{' '}
        <Link to="/settings/$" params={{ _splat: 'outgoing-mail' }} hash="set-up">
          How to set up outgoing mail
        </Link>
      </p>
      <button type="button" onClick={dismiss}>
        Dismiss
      </button>
    </section>
  );
}
