// The ticket side of a customer's messages, by email (src/modules/email/inbound.ts decides) or
// from the help center's portal (src/modules/portal): a new ticket with its first message, a
// message added to an existing ticket with the status rules of a customer message, and an
// outbound message marked bounced. Everything runs in the caller's unit (one transaction,
// events before COMMIT), with the system as the actor.
//
// Status rules (docs/api.md "Tickets" and "Inbound email"):
// - a customer's mail on a pending, on_hold or solved ticket sets it to open (status_changed,
//   actor system); the email module starts a follow-up ticket instead for a closed one;
// - a mail failing sender checks (auth_failed) leaves the status as it is, with a
//   status_changed activity whose from equals to, reason sender_unverified and the message_id;
// - automatic mail (auto-replies, lists, bulk: email_auto_submitted) changes no status.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import type { Unit } from '../../platform/db/tx.js';
import type { EventDraft } from '../../platform/events/envelope.js';
import { preview } from '../../platform/html/index.js';
import { SYSTEM, SYSTEM_ACTOR } from '../../platform/http/context.js';
import { claimAttachments } from '../attachments/service.js';
import { addActivity } from './activities.js';
import { hookMessage } from './hooks.js';
import { loadMessageView, type MessageView } from './messages.js';
import { takeTicketNumber } from './numbers.js';
import { emitUpdated } from './patch.js';
import { presentTicket, reload, type TicketRow, ticketQuery } from './queries.js';

/** An attachment whose bytes are already in storage, to be recorded with the message. */
export interface InboundFile {
  id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  inline: boolean;
  content_id: string | null;
  storage_key: string;
  sha256: string;
}

/** One inbound mail (or a portal message: no mailbox, no raw mail, no Message-ID) as a message row. */
export interface InboundMessage {
  mailboxId: string | null;
  rawInboundId: string | null;
  contactId: string | null;
  subject: string;
  fromEmail: string;
  fromName: string;
  to: string[];
  cc: string[];
  bodyHtml: string;
  bodyText: string;
  hasQuoted: boolean;
  /** The whole original (quoted history included) when it differs from the body; else null. */
  originalHtml: string | null;
  originalText: string | null;
  replyTo: string | null;
  authFailed: boolean;
  formSender: string | null;
  /** email_message_id: the normal form, or "sha256:<hex>" for mail without one (the de-duplication key); null off email. */
  messageId: string | null;
  /** The Message-ID as sent (case kept), or null. */
  messageIdSent: string | null;
  /** The first In-Reply-To as sent, or null. */
  inReplyTo: string | null;
  /** References as sent, oldest first. */
  references: string[];
  /** autoSubmitted's reason, or null for mail a person sent. */
  autoSubmitted: string | null;
  files: InboundFile[];
  /** Uploads already stored (the chat widget's), claimed by the message (attachments/service.ts). */
  attachmentIds?: string[];
}

/** How a message on an existing ticket counts: see the status rules above. */
export type InboundMode = 'customer' | 'automatic' | 'unverified';

/** The mailbox already has a message with this Message-ID: the transaction must roll back. */
export class DuplicateInboundMessage extends Error {
  constructor() {
    super('duplicate inbound message');
    this.name = 'DuplicateInboundMessage';
  }
}

const STAT_CHANGES = ['message_count', 'last_message_at', 'last_message_preview'];

/** A live ticket of the unit's workspace, locked FOR UPDATE, or null. */
export async function lockTicketById(u: Unit, id: string): Promise<TicketRow | null> {
  const row = await ticketQuery(u.trx, u.workspaceId).where('t.id', '=', id).forUpdate('t').executeTakeFirst();
  return row && row.deleted_at === null ? row : null;
}

/**
 * Writes the message (once per mailbox and Message-ID: a second one throws
 * DuplicateInboundMessage, after waiting for a concurrent first one to commit), its
 * attachment rows and the ticket's statistics. Returns the message and its event.
 */
async function insertInbound(
  deps: Deps,
  u: Unit,
  ticket: TicketRow,
  m: InboundMessage,
  customer: boolean,
): Promise<{ message: MessageView; event: EventDraft }> {
  const id = newId();
  const now = new Date();
  const inserted = await u.trx
    .insertInto('messages')
    .values({
      workspace_id: u.workspaceId,
      id,
      ticket_id: ticket.id,
      kind: 'reply',
      direction: 'inbound',
      author_type: 'contact',
      author_user_id: null,
      author_contact_id: m.contactId,
      author_api_key_id: null,
      body_html: m.bodyHtml,
      body_text: m.bodyText,
      has_quoted: m.hasQuoted,
      original_html: m.originalHtml,
      original_text: m.originalText,
      subject: m.subject,
      from_email: m.fromEmail,
      from_name: m.fromName,
      to: m.to,
      cc: m.cc,
      bcc: [],
      delivery_status: 'none',
      reply_to: m.replyTo,
      auth_failed: m.authFailed,
      form_sender: m.formSender,
      email_message_id: m.messageId,
      email_message_id_sent: m.messageIdSent,
      email_in_reply_to: m.inReplyTo,
      email_references: m.references,
      email_auto_submitted: m.autoSubmitted,
      mailbox_id: m.mailboxId,
      raw_inbound_id: m.rawInboundId,
      created_at: now,
    })
    .onConflict((oc) =>
      oc
        .columns(['workspace_id', 'mailbox_id', 'email_message_id'])
        .where('mailbox_id', 'is not', null)
        .where('email_message_id', 'is not', null)
        .doNothing(),
    )
    .returning('id')
    .executeTakeFirst();
  if (!inserted) throw new DuplicateInboundMessage();
  if (m.files.length > 0) {
    await u.trx
      .insertInto('attachments')
      .values(
        m.files.map((f) => ({
          workspace_id: u.workspaceId,
          id: f.id,
          message_id: id,
          filename: f.filename,
          content_type: f.content_type,
          size_bytes: f.size_bytes,
          inline: f.inline,
          content_id: f.content_id,
          storage_key: f.storage_key,
          sha256: f.sha256,
          uploaded_by_user_id: null,
          uploaded_by_api_key_id: null,
        })),
      )
      .execute();
  }
  if (m.attachmentIds && m.attachmentIds.length > 0) await claimAttachments(deps, u, m.attachmentIds, id);
  await u.trx
    .updateTable('tickets')
    .set((eb) => ({
      message_count: eb('message_count', '+', 1),
      last_message_at: now,
      last_message_preview: preview(m.bodyText),
      ...(customer ? { last_customer_message_at: now } : {}),
      updated_at: now,
    }))
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', ticket.id)
    .execute();
  const message = (await loadMessageView(deps, u.trx, u.workspaceId, id))!;
  // A customer's message on a chat ticket is public: the customer's widget gets it too.
  const isPublic = ticket.channel === 'chat' && ticket.contact_id !== null;
  return {
    message,
    event: {
      type: 'message.created',
      data: { ticket_id: ticket.id, message },
      teamId: ticket.private_team_id,
      ...(isPublic ? { visibility: 'public', topics: [`contact:${u.workspaceId}:${ticket.contact_id}`] } : {}),
    },
  };
}

export interface NewInboundTicket {
  subject: string;
  /** email (the default), portal (the help center's contact form, a portal reply's follow-up) or chat (the widget). */
  channel?: 'email' | 'portal' | 'chat';
  mailboxId: string | null;
  teamId: string | null;
  contactId: string | null;
  /** Mail of a blocked contact: the ticket is spam from the start. */
  spam: boolean;
  custom: Record<string, unknown>;
}

/** A new email (or portal) ticket with the message as its first: ticket.created, then message.created. */
export async function createInboundTicket(
  deps: Deps,
  u: Unit,
  t: NewInboundTicket,
  m: InboundMessage,
): Promise<{ ticket: TicketRow; message: MessageView }> {
  const id = newId();
  const now = new Date();
  // The team may have been deleted since the mailbox named it: then no team.
  const team = t.teamId
    ? await u.trx
        .selectFrom('teams')
        .select('id')
        .where('workspace_id', '=', u.workspaceId)
        .where('id', '=', t.teamId)
        .forShare()
        .executeTakeFirst()
    : undefined;
  // The hooks' columns (SLA due dates) go in the INSERT.
  const hooked = await deps.ticketHooks.prepareCreated(deps, u, {
    priority: 'normal',
    status: 'open',
    created_at: now,
    first_responded_at: null,
    spam: t.spam,
  });
  // The number comes last before the insert (numbers.ts).
  const number = await takeTicketNumber(deps, u);
  await sql`
    INSERT INTO tickets (workspace_id, id, number, subject, status, priority, channel, mailbox_id, contact_id,
                         team_id, spam, last_message_at, custom, sla, due_at, sla_breach_at, created_at, updated_at)
    VALUES (${u.workspaceId}, ${id}, ${number}, ${t.subject}, 'open', 'normal', ${t.channel ?? 'email'}, ${t.mailboxId},
           ${t.contactId}, ${team?.id ?? null}, ${t.spam}, ${now}, ${JSON.stringify(t.custom)}::jsonb,
           ${hooked.sla}::jsonb, ${hooked.due_at}, ${hooked.sla_breach_at}, ${now}, ${now})`.execute(u.trx);
  const first = await insertInbound(deps, u, await reload(u, id), m, m.autoSubmitted === null);
  const row = await reload(u, id);
  u.emit({ type: 'ticket.created', data: { ticket: presentTicket(row) }, teamId: row.private_team_id });
  u.emit(first.event);
  const after = await deps.ticketHooks.run(deps, u, {
    trigger: 'ticket_created',
    ticket: row,
    before: null,
    changes: [],
    message: hookMessage(first.message),
    ctx: SYSTEM,
  });
  return { ticket: after ?? row, message: first.message };
}

/**
 * Adds the mail to a locked, live ticket and applies the status rules of `mode`: message.created,
 * the activity (if any), then ticket.updated with what changed.
 */
export async function appendInboundMessage(
  deps: Deps,
  u: Unit,
  ticket: TicketRow,
  m: InboundMessage,
  mode: InboundMode,
): Promise<{ ticket: TicketRow; message: MessageView }> {
  const customer = mode === 'customer';
  const { message, event } = await insertInbound(deps, u, ticket, m, customer);
  u.emit(event);
  const changes = [...STAT_CHANGES, ...(customer ? ['last_customer_message_at'] : [])];
  const target = { id: ticket.id, privateTeamId: ticket.private_team_id };
  if (customer && (ticket.status === 'pending' || ticket.status === 'on_hold' || ticket.status === 'solved')) {
    await u.trx
      .updateTable('tickets')
      .set({ status: 'open', solved_at: null, ...(ticket.snoozed_until !== null ? { snoozed_until: null } : {}) })
      .where('workspace_id', '=', u.workspaceId)
      .where('id', '=', ticket.id)
      .execute();
    changes.push('status');
    if (ticket.snoozed_until !== null) changes.push('snoozed_until');
    await addActivity(u, SYSTEM_ACTOR, target, 'status_changed', { from: ticket.status, to: 'open' });
  } else if (mode === 'unverified') {
    await addActivity(u, SYSTEM_ACTOR, target, 'status_changed', {
      from: ticket.status,
      to: ticket.status,
      reason: 'sender_unverified',
      message_id: message.id,
    });
  }
  let row = await reload(u, ticket.id);
  emitUpdated(u, row, changes);
  if (customer) {
    const after = await deps.ticketHooks.run(deps, u, {
      trigger: 'customer_replied',
      ticket: row,
      before: ticket,
      changes,
      message: hookMessage(message),
      ctx: SYSTEM,
    });
    row = after ?? row;
  }
  return { ticket: row, message };
}

/**
 * A delivery report for one of our outbound messages: delivery_status bounced with the
 * remote server's answer in delivery_error, and message.updated. Only a message still
 * pending or sent changes (a repeated report changes nothing). Returns the message's ticket
 * id, or null when nothing changed.
 */
export async function markMessageBounced(
  deps: Deps,
  u: Unit,
  messageId: string,
  error: string,
): Promise<{ ticketId: string } | null> {
  const updated = await u.trx
    .updateTable('messages')
    .set({ delivery_status: 'bounced', delivery_error: error })
    .where('workspace_id', '=', u.workspaceId)
    .where('id', '=', messageId)
    .where('direction', '=', 'outbound')
    .where('delivery_status', 'in', ['pending', 'sent'])
    .returning('ticket_id')
    .executeTakeFirst();
  if (!updated) return null;
  const ticket = await ticketQuery(u.trx, u.workspaceId).where('t.id', '=', updated.ticket_id).executeTakeFirst();
  const message = (await loadMessageView(deps, u.trx, u.workspaceId, messageId))!;
  u.emit({
    type: 'message.updated',
    data: { ticket_id: updated.ticket_id, message },
    teamId: ticket?.private_team_id ?? null,
  });
  return { ticketId: updated.ticket_id };
}
