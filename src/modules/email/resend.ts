// Sending a reply again (POST /v1/messages/{id}/resend): a reply whose delivery failed, or that
// was kept in the outbox because outgoing mail was not set up, goes back to pending and through
// the same send job and lease as a first send (the job claims only a pending message that no
// worker holds, so a reply is never sent twice at once), with message.updated at each step.
// Its Message-ID and threading headers, stored before the first attempt, are reused.
//
// Refused: a note, a customer's message or a reply whose channel sends no email (422); a reply
// that is pending, sent or bounced (409); a reply that would only be kept in the outbox again
// because outgoing mail is still not set up for it (409); another workspace's message, or one on
// a ticket the caller may not see (404).
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/http/context.js';
import { conflict, invalid, notFound } from '../../platform/http/errors.js';
import { defaultMailbox, loadMailbox } from '../mailboxes/service.js';
import { loadMessageView, type MessageView } from '../tickets/messages.js';
import { ticketQuery } from '../tickets/queries.js';
import { findVisibleTicket } from '../tickets/service.js';
import { queueOutbound } from './outbound-queue.js';

/**
 * Whether a reply sent now would be kept in the outbox rather than sent: SMTP_URL is unset and
 * the reply goes through the system mailer (its mailbox, or the ticket's, or the workspace's
 * default one sends through it, or there is no mailbox at all). The sender decides the same way.
 */
export async function replyWouldBeKept(
  deps: Deps,
  db: Kysely<DB>,
  workspaceId: string,
  mailboxId: string | null,
): Promise<boolean> {
  if (deps.config.smtpUrl) return false;
  const mailbox = mailboxId ? await loadMailbox(db, workspaceId, mailboxId) : await defaultMailbox(db, workspaceId);
  // A deleted mailbox fails the reply; it is not kept.
  if (!mailbox) return mailboxId === null;
  return mailbox.status !== 'disabled' && mailbox.outbound_kind === 'system';
}

const notFoundMessage = () => notFound('Message not found.');

export async function resendMessage(deps: Deps, ctx: RequestContext, id: string): Promise<MessageView> {
  if (!isUuid(id)) throw notFoundMessage();
  const db = deps.database.db;
  const m = await db
    .selectFrom('messages')
    .select(['id', 'ticket_id', 'kind', 'direction', 'delivery_status', 'mailbox_id'])
    .where('workspace_id', '=', ctx.workspaceId)
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst();
  if (!m) throw notFoundMessage();
  let ticketMailbox: string | null;
  try {
    ticketMailbox = (await findVisibleTicket(db, ctx, m.ticket_id)).mailbox_id;
  } catch {
    throw notFoundMessage();
  }
  if (m.kind === 'note') throw invalid('path.id', 'is an internal note: notes are never sent');
  if (m.direction !== 'outbound') throw invalid('path.id', "is a customer's message: only replies are sent");
  if (m.delivery_status === 'none') throw invalid('path.id', 'is a reply on a ticket whose channel sends no email');
  if (m.delivery_status === 'pending') throw conflict('This reply is being sent already.');
  if (m.delivery_status === 'sent') throw conflict('This reply was sent.');
  if (m.delivery_status === 'bounced') {
    throw conflict("This reply bounced: the recipient's server refused it. Write a new reply instead.");
  }
  if (await replyWouldBeKept(deps, db, ctx.workspaceId, m.mailbox_id ?? ticketMailbox)) {
    throw conflict(
      'Outgoing mail is not set up, so this reply would be kept in the outbox again: set SMTP_URL on the ' +
        'server, or give the mailbox its own SMTP server, then send it again.',
    );
  }
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const row = await u.trx
      .updateTable('messages')
      .set({
        delivery_status: 'pending',
        delivery_error: null,
        delivery_attempts: 0,
        delivery_next_at: null,
        delivery_lease_until: null,
        delivery_last_error: null,
      })
      .where('workspace_id', '=', ctx.workspaceId)
      .where('id', '=', m.id)
      .where('delivery_status', '=', 'failed')
      .returning('ticket_id')
      .executeTakeFirst();
    // Another request sent it again a moment ago.
    if (!row) throw conflict('This reply is being sent already.');
    const message = await loadMessageView(deps, u.trx, ctx.workspaceId, m.id);
    const ticket = await ticketQuery(u.trx, ctx.workspaceId).where('t.id', '=', row.ticket_id).executeTakeFirst();
    if (!message) throw notFoundMessage();
    u.emit({
      type: 'message.updated',
      data: { ticket_id: row.ticket_id, message },
      teamId: ticket?.private_team_id ?? null,
    });
    // The same send job as a first send, queued once this commits.
    u.afterCommit(() => queueOutbound(deps, ctx.workspaceId, m.id));
    return message;
  });
}
