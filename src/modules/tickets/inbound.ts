// The one write of a customer's message (customer-message.ts: email, the chat widget, the
// portal), and the ticket side of delivery reports. `writeCustomerMessage` decides where the
// message goes: a new ticket, a follow-up of a closed one (custom.follow_up_of), or the ticket
// itself under the status rules of a customer's message. Everything runs in the caller's unit
// (one transaction, events before COMMIT); the actor is the message's (actorOfMessage): the
// visitor, the contact, or the system for mail no contact can be named for.
//
// Status rules (gaps.md "Status changes the spec does not show", docs/api.md "Inbound email"):
// - a customer's message on a pending, on_hold or solved ticket sets it to open (status_changed,
//   actor system on the wire with the contact's id); on a closed one it starts a follow-up;
// - a mail failing sender checks (auth_failed) leaves the status as it is, with a
//   status_changed activity whose from equals to, reason sender_unverified and the message_id;
// - automatic mail (auto-replies, lists, bulk: email_auto_submitted) changes no status, and is
//   added to a closed ticket rather than following it up.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import type { Unit } from '../../platform/db/tx.js';
import type { EventDraft } from '../../platform/events/envelope.js';
import { preview } from '../../platform/html/index.js';
import { type ServiceContext, SYSTEM_ACTOR } from '../../platform/http/context.js';
import { claimAttachments } from '../attachments/service.js';
import { addActivity } from './activities.js';
import {
  actorOfMessage,
  type CustomerMessage,
  type CustomerMode,
  modeOf,
  type NewCustomerTicket,
} from './customer-message.js';
import { hookMessage } from './hooks.js';
import { loadMessageView, type MessageView } from './messages.js';
import { takeTicketNumber } from './numbers.js';
import { emitUpdated } from './patch.js';
import { presentTicket, reload, type TicketRow, ticketQuery } from './queries.js';

export type { InboundFile } from './customer-message.js';

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

/** Mail sent by a program (auto-replies, lists, bulk): never a follow-up, never a customer's last message. */
const isAutomatic = (m: CustomerMessage) => m.channel.kind === 'email' && m.channel.autoSubmitted !== null;

/** The message row's columns of its channel: an email's headers and checks, nothing for the others. */
function channelColumns(m: CustomerMessage) {
  const via = m.channel;
  if (via.kind !== 'email') {
    return {
      to: [],
      cc: [],
      has_quoted: false,
      original_html: null,
      original_text: null,
      reply_to: null,
      auth_failed: false,
      form_sender: null,
      email_message_id: null,
      email_message_id_sent: null,
      email_in_reply_to: null,
      email_references: [],
      email_auto_submitted: null,
      mailbox_id: null,
      raw_inbound_id: null,
    };
  }
  return {
    to: via.to,
    cc: via.cc,
    has_quoted: via.original !== null,
    original_html: via.original?.html ?? null,
    original_text: via.original?.text ?? null,
    reply_to: via.replyTo,
    auth_failed: via.authFailed,
    form_sender: via.formSender,
    email_message_id: via.messageId,
    email_message_id_sent: via.messageIdSent,
    email_in_reply_to: via.inReplyTo,
    email_references: via.references,
    email_auto_submitted: via.autoSubmitted,
    mailbox_id: via.mailboxId,
    raw_inbound_id: via.rawInboundId,
  };
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
  m: CustomerMessage,
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
      body_html: m.body.html,
      body_text: m.body.text,
      subject: m.subject,
      from_email: m.from.email ?? '',
      from_name: m.from.name,
      bcc: [],
      delivery_status: 'none',
      ...channelColumns(m),
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
  if (m.uploads.length > 0) await claimAttachments(deps, u, m.uploads, id);
  await u.trx
    .updateTable('tickets')
    .set((eb) => ({
      message_count: eb('message_count', '+', 1),
      last_message_at: now,
      last_message_preview: preview(m.body.text),
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

/** What writeCustomerMessage did: the ticket (as the hooks left it) and the message. */
export interface CustomerWrite {
  result: 'created' | 'follow_up' | 'appended';
  ticket: TicketRow;
  message: MessageView;
}

/**
 * The one write of a customer's message, in the caller's unit. `ticket`: the ticket it belongs
 * to, locked FOR UPDATE (lockTicketById), or null for a new one; `open`: what a new ticket (or a
 * closed ticket's follow-up) takes besides the message. A closed ticket gets a follow-up ticket
 * (custom.follow_up_of) unless the message is automatic mail, which is added to it unchanged.
 */
export async function writeCustomerMessage(
  deps: Deps,
  u: Unit,
  m: CustomerMessage,
  to: { ticket: TicketRow | null; open: NewCustomerTicket },
): Promise<CustomerWrite> {
  if (m.workspaceId !== u.workspaceId) throw new Error("a customer's message written to another workspace");
  const { ticket } = to;
  if (!ticket) return { result: 'created', ...(await openTicket(deps, u, to.open, {}, m)) };
  if (ticket.status === 'closed' && !isAutomatic(m)) {
    const followUp = { follow_up_of: { id: ticket.id, number: Number(ticket.number) } };
    return { result: 'follow_up', ...(await openTicket(deps, u, to.open, followUp, m)) };
  }
  return { result: 'appended', ...(await appendToTicket(deps, u, ticket, m, modeOf(m))) };
}

/** A new ticket of the message's channel with the message as its first: ticket.created, then message.created. */
async function openTicket(
  deps: Deps,
  u: Unit,
  t: NewCustomerTicket,
  custom: Record<string, unknown>,
  m: CustomerMessage,
): Promise<{ ticket: TicketRow; message: MessageView }> {
  const mailboxId = m.channel.kind === 'email' ? m.channel.mailboxId : null;
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
    VALUES (${u.workspaceId}, ${id}, ${number}, ${t.subject}, 'open', 'normal', ${m.channel.kind}, ${mailboxId},
           ${m.contactId}, ${team?.id ?? null}, ${t.spam}, ${now}, ${JSON.stringify(custom)}::jsonb,
           ${hooked.sla}::jsonb, ${hooked.due_at}, ${hooked.sla_breach_at}, ${now}, ${now})`.execute(u.trx);
  const first = await insertInbound(deps, u, await reload(u, id), m, !isAutomatic(m));
  const row = await reload(u, id);
  u.emit({ type: 'ticket.created', data: { ticket: presentTicket(row) }, teamId: row.private_team_id });
  u.emit(first.event);
  const after = await deps.ticketHooks.run(deps, u, {
    trigger: 'ticket_created',
    ticket: row,
    before: null,
    changes: [],
    message: hookMessage(first.message),
    ctx: { actor: actorOfMessage(m) },
  });
  return { ticket: after ?? row, message: first.message };
}

/**
 * Adds the message to a locked, live ticket and applies the status rules of `mode`:
 * message.created, the activity (if any), then ticket.updated with what changed.
 * writeCustomerMessage decides which ticket; exported for a caller that holds the ticket's lock
 * already (test/modules/automations/engine.test.ts).
 */
export async function appendToTicket(
  deps: Deps,
  u: Unit,
  ticket: TicketRow,
  m: CustomerMessage,
  mode: CustomerMode,
): Promise<{ ticket: TicketRow; message: MessageView }> {
  const customer = mode === 'customer';
  const acting: ServiceContext = { actor: actorOfMessage(m) };
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
    await addActivity(u, acting.actor, target, 'status_changed', { from: ticket.status, to: 'open' });
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
      ctx: acting,
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
