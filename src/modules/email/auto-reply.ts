// Auto-replies: a mailbox's answer to a customer's mail that opened a ticket (maybeAutoReply,
// and autoReplyToDelivered for the inbound job's listener), sent as its own job (sendAutoReply).

import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DB } from '../../platform/db/schema.js';
import { htmlToText } from '../../platform/html/index.js';
import { loadMailbox } from '../mailboxes/service.js';
import { presentTicket, ticketQuery } from '../tickets/queries.js';
import { autoSubmitted, isNoReplyAddress } from './classify.js';
import type { InboundDelivered } from './delivered.js';
import { buildReplyHeaders, domainOf, headerSafe, safeMailbox } from './outbound-headers.js';
import { AUTO_REPLY_JOB } from './outbound-queue.js';
import type { InboundMail } from './parse.js';
import { classifySendError } from './send-errors.js';
import { ticketTokenFor } from './ticket-token.js';
import { type MailboxTransport, sendOrKeep, transportFor } from './transport.js';

export interface AutoReplyInput {
  workspaceId: string;
  mailboxId: string;
  contactId: string;
  ticketId: string;
  /** The customer's mail, as parseInbound made it. */
  inbound: InboundMail;
}

export type AutoReplyOutcome =
  /** Queued: the mailbox answers this mail. */
  | 'queued'
  /** The mailbox has no auto-reply (off, empty, disabled or gone). */
  | 'disabled'
  /** The mail is automatic (autoSubmitted: auto-replies, lists, bulk, bounces) or a report. */
  | 'automatic'
  /** From a no-reply, mailer-daemon or postmaster address. */
  | 'no_reply_sender'
  /** The contact has no address, or it is one of the workspace's own mailboxes (a loop). */
  | 'no_recipient'
  /** This contact already got one from this mailbox in the last 24 hours. */
  | 'already_sent'
  /** The From failed DMARC: answering could hit a forged address. */
  | 'unverified_sender';

export interface AutoReplyJob {
  w: string;
  mb: string;
  t: string;
  to: string;
  name: string;
  subject: string;
  /** The customer's Message-ID and References as they wrote them. */
  irt: string | null;
  refs: string[];
}

/** What an auto-reply decision needs of the customer's mail. */
interface AutoReplyTrigger {
  workspaceId: string;
  mailboxId: string;
  contactId: string;
  ticketId: string;
  /** autoSubmitted's reason ("bounce" for a report), or null for mail a person sent. */
  automatic: string | null;
  sender: string | null;
  senderName: string;
  /** The From failed DMARC at a trusted server: the sender may be forged (no backscatter). */
  authFailed: boolean;
  subject: string;
  /** The customer's Message-ID and References as they wrote them. */
  messageIdSent: string | null;
  references: string[];
}

/**
 * The mailbox's auto-reply to a customer's mail that opened a ticket: at most once per contact
 * per mailbox in 24 hours, never to automatic mail, lists, bounces or no-reply senders. The
 * mail says `Auto-Submitted: auto-replied` (RFC 3834) so other systems do not answer it, and
 * threads to the customer's mail. Queued as a job; returns what was decided.
 */
export async function maybeAutoReply(deps: Deps, input: AutoReplyInput): Promise<AutoReplyOutcome> {
  const mail = input.inbound;
  return decideAutoReply(deps, {
    workspaceId: input.workspaceId,
    mailboxId: input.mailboxId,
    contactId: input.contactId,
    ticketId: input.ticketId,
    automatic: mail.report ? 'bounce' : autoSubmitted(mail.headers),
    sender: mail.from?.address ?? null,
    senderName: mail.from?.name ?? '',
    authFailed: false,
    subject: mail.subject,
    messageIdSent: mail.as_sent.message_id,
    references: mail.as_sent.references,
  });
}

/**
 * The same decision from what the inbound job stored: for a mail that opened a ticket (not
 * spam, with a contact), from the stored message's subject and threading ids.
 */
export async function autoReplyToDelivered(deps: Deps, info: InboundDelivered): Promise<AutoReplyOutcome | null> {
  if (!info.newTicket || info.spam || !info.contactId) return null;
  const m = await deps.database.db
    .selectFrom('messages')
    .select(['subject', 'email_message_id', 'email_message_id_sent', 'email_references', 'from_name'])
    .where('workspace_id', '=', info.workspaceId)
    .where('id', '=', info.messageId)
    .executeTakeFirst();
  if (!m) return null;
  const sentId = m.email_message_id_sent ?? m.email_message_id;
  return decideAutoReply(deps, {
    workspaceId: info.workspaceId,
    mailboxId: info.mailboxId,
    contactId: info.contactId,
    ticketId: info.ticketId,
    automatic: info.autoSubmitted,
    sender: info.fromEmail || null,
    senderName: m.from_name,
    authFailed: info.authFailed,
    subject: m.subject,
    messageIdSent: sentId && !sentId.startsWith('sha256:') ? sentId : null,
    references: m.email_references,
  });
}

async function decideAutoReply(deps: Deps, input: AutoReplyTrigger): Promise<AutoReplyOutcome> {
  const db = deps.database.db;
  const mailbox = await loadMailbox(db, input.workspaceId, input.mailboxId);
  if (
    !mailbox?.auto_reply_enabled ||
    mailbox.status === 'disabled' ||
    (htmlToText(mailbox.auto_reply_html).trim() === '' && mailbox.auto_reply_subject.trim() === '')
  ) {
    return 'disabled';
  }
  if (input.automatic === 'no_reply_sender' || (input.sender && isNoReplyAddress(input.sender))) {
    return 'no_reply_sender';
  }
  if (input.automatic !== null) return 'automatic';
  if (input.authFailed) return 'unverified_sender';

  const ticket = await ticketQuery(db, input.workspaceId).where('t.id', '=', input.ticketId).executeTakeFirst();
  const to = ticket?.contact_email ?? null;
  if (!ticket || !to) return 'no_recipient';
  if (isNoReplyAddress(to)) return 'no_reply_sender';
  if (await isOwnAddress(db, input.workspaceId, to)) return 'no_recipient';

  const claimed = await sql<{ contact_id: string }>`
    INSERT INTO email_auto_replies (workspace_id, mailbox_id, contact_id, last_sent_at)
    VALUES (${input.workspaceId}, ${input.mailboxId}, ${input.contactId}, now())
    ON CONFLICT (workspace_id, mailbox_id, contact_id) DO UPDATE SET last_sent_at = excluded.last_sent_at
      WHERE email_auto_replies.last_sent_at <= now() - interval '24 hours'
    RETURNING contact_id`.execute(db);
  if (claimed.rows.length === 0) return 'already_sent';

  const job: AutoReplyJob = {
    w: input.workspaceId,
    mb: input.mailboxId,
    t: input.ticketId,
    to,
    name: presentTicket(ticket).contact?.name ?? input.senderName,
    subject: input.subject,
    irt: input.messageIdSent,
    refs: input.references,
  };
  await deps.jobs.send(AUTO_REPLY_JOB, job, { retryLimit: 3, retryDelaySeconds: 60 });
  return 'queued';
}

/** An address of one of the workspace's mailboxes (its email or a forwarding address). */
async function isOwnAddress(db: Kysely<DB>, workspaceId: string, address: string): Promise<boolean> {
  const a = address.trim().toLowerCase();
  const row = await db
    .selectFrom('mailboxes')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or([eb(eb.fn('lower', ['email']), '=', a), eb('forwarding_address', '=', a)]))
    .executeTakeFirst();
  if (row) return true;
  const routed = await db.selectFrom('mailbox_addresses').select('address').where('address', '=', a).executeTakeFirst();
  return routed !== undefined;
}

/** Sends a queued auto-reply. Temporary failures throw (the job retries); permanent ones are logged. */
export async function sendAutoReply(deps: Deps, job: AutoReplyJob): Promise<void> {
  const db = deps.database.db;
  const mailbox = await loadMailbox(db, job.w, job.mb);
  if (!mailbox?.auto_reply_enabled || mailbox.status === 'disabled') return;
  const ticket = await ticketQuery(db, job.w).where('t.id', '=', job.t).executeTakeFirst();
  if (!ticket) return;
  const token = ticketTokenFor(deps.config, job.w, Number(ticket.number));
  let transport: MailboxTransport | null = null;
  try {
    const h = buildReplyHeaders({
      domain: domainOf(mailbox.email),
      subject: job.subject,
      inReplyTo: job.irt,
      references: job.refs,
      ticketToken: token,
    });
    const own = headerSafe(mailbox.auto_reply_subject);
    const subject = own === '' ? h.subject : own.includes(`[#${token}]`) ? own : `${own} [#${token}]`;
    const html = mailbox.auto_reply_html;
    transport = await transportFor(deps, job.w, mailbox, { timeoutMs: deps.outboundOptions.timeoutMs });
    // Through the system mailer while SMTP_URL is unset: kept in the outbox instead.
    await sendOrKeep(
      deps,
      transport,
      {
        from: safeMailbox(mailbox.display_name || mailbox.name, mailbox.email),
        to: safeMailbox(job.name, job.to),
        subject,
        messageId: h.messageId,
        ...(h.inReplyTo ? { inReplyTo: h.inReplyTo } : {}),
        ...(h.references ? { references: h.references } : {}),
        headers: {
          // RFC 3834: an automatic answer; well-behaved systems never answer it.
          'Auto-Submitted': 'auto-replied',
          // Exchange and Outlook: no out-of-office or other automatic answer to this one.
          'X-Auto-Response-Suppress': 'All',
        },
        html,
        text: htmlToText(html),
      },
      { workspaceId: job.w, kind: 'auto_reply', ticketId: job.t },
    );
  } catch (err) {
    const failure = classifySendError(err, transport?.secrets ?? []);
    deps.log.warn(
      { workspace: job.w, mailbox: job.mb, ticket: job.t, permanent: failure.permanent, err: failure.text },
      'auto-reply not sent',
    );
    if (!failure.permanent) throw new Error(failure.text);
  } finally {
    (transport as MailboxTransport | null)?.close();
  }
}
