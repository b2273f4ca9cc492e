// Why a send failed, and whether trying again could help: shared by replies and auto-replies.
import { describeError } from '../mailboxes/connect.js';
import { HeaderInjectionError } from './outbound-headers.js';
import { TransportSetupError } from './transport.js';

/**
 * delivery_error of a reply kept in the outbox because outgoing mail is not set up (its mailbox
 * sends through the system mailer, or the workspace has none, and SMTP_URL is unset): status
 * failed, this exact text (docs/api.md; the app tells this case apart by it).
 */
export const KEPT_IN_OUTBOX =
  'outgoing mail is not set up (SMTP_URL is not set on this server); the mail is kept in the outbox';

/** A reason the message can never be sent as it is (no retry). */
export class PermanentSendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentSendError';
  }
}

export interface SendFailure {
  permanent: boolean;
  /** One line, at most 500 characters, without secrets. */
  text: string;
}

/**
 * Permanent: the server refused for good (a 5xx reply other than 503, as nodemailer's
 * `permanent` says), a failed login, no recipient, a mail that cannot be built, a mailbox that
 * cannot send. Temporary: 4xx replies, connection errors, timeouts, DNS trouble.
 */
export function classifySendError(err: unknown, secrets: Array<string | null> = []): SendFailure {
  const text = describeError(err, secrets);
  if (err instanceof PermanentSendError || err instanceof TransportSetupError || err instanceof HeaderInjectionError) {
    return { permanent: true, text };
  }
  const e = err as { code?: unknown; responseCode?: unknown; permanent?: unknown };
  if (typeof e?.responseCode === 'number') {
    const permanent = typeof e.permanent === 'boolean' ? e.permanent : e.responseCode >= 500 && e.responseCode !== 503;
    return { permanent, text };
  }
  if (e?.code === 'EAUTH' || e?.code === 'ENOAUTH' || e?.code === 'EENVELOPE' || e?.code === 'EMESSAGE') {
    return { permanent: true, text };
  }
  return { permanent: false, text };
}
