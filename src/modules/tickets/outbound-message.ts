// Writing an agent's, a key's or an automation's message: its body made safe (cleanBody), its
// row, its attachments claimed, its ticket's statistics and its message.created event. Used by
// the message endpoint (messages.ts), a new ticket's first message (service.ts) and automations'
// replies and notes; apart from messages.ts so that service.ts and messages.ts (which changes
// the ticket's status through service.ts) do not import each other.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import type { Unit } from '../../platform/db/tx.js';
import type { EventDraft } from '../../platform/events/envelope.js';
import { htmlToText, preview, sanitizeHtml } from '../../platform/html/index.js';
import { type Actor, unknownActor } from '../../platform/http/context.js';
import { invalid } from '../../platform/http/errors.js';
import { type AttachmentView, claimAttachments } from '../attachments/service.js';
import { queueOutbound } from '../email/outbound-queue.js';
import { userRefOf } from './activities.js';
import type { TicketRow } from './queries.js';
import type { Message } from './schemas.js';

export type MessageView = Static<typeof Message>;

export interface CleanBody {
  html: string;
  text: string;
}

export interface NewMessage {
  kind: 'reply' | 'note';
  /** The body, already through cleanBody. */
  body: CleanBody;
  cc?: string[];
  bcc?: string[];
  attachment_ids?: string[];
  /**
   * Written by the workspace's assistant (an AI answer in the chat, src/modules/widget/
   * ai-answers.ts): author type `ai`, this name as from_name. The actor is then an AI actor.
   */
  assistant?: string;
}

/**
 * Sanitized HTML and its text; 422 when nothing is left to send. Done before the transaction:
 * sanitizing a large body must not hold the ticket's row lock.
 */
export function cleanBody(html: string, hasAttachments: boolean, location = 'body.body_html'): CleanBody {
  const clean = sanitizeHtml(html);
  const text = htmlToText(clean);
  if (text.trim() === '' && !/<img\b/i.test(clean) && !hasAttachments) {
    throw invalid(location, 'is empty once unsafe content is removed');
  }
  return { html: clean, text };
}

/**
 * Who wrote an outbound message: a person, a key, or (automations, the system, the AI on its
 * own) nobody named. Visitors and customers write inbound messages only (customer-message.ts).
 */
function authorOf(actor: Actor) {
  switch (actor.kind) {
    case 'member':
      return { type: 'user' as const, userId: actor.userId, apiKeyId: null };
    case 'api_key':
      return { type: 'api' as const, userId: null, apiKeyId: actor.apiKeyId };
    case 'system':
    case 'automation':
    case 'ai':
    case 'visitor':
    case 'customer':
      return { type: 'system' as const, userId: null, apiKeyId: null };
    default:
      return unknownActor(actor);
  }
}

/**
 * The ticket columns an agent's, a key's or an automation's new message sets besides the count
 * (an automation's reply is no first response). A new ticket's INSERT starts with them.
 */
export function outboundMessageStats(
  actor: Actor,
  kind: 'reply' | 'note',
  text: string,
  now: Date,
  firstRespondedAt: Date | null,
): { last_message_at: Date; last_message_preview: string; first_responded_at: Date | null } {
  const responds = kind === 'reply' && authorOf(actor).type !== 'system' && firstRespondedAt === null;
  return {
    last_message_at: now,
    last_message_preview: preview(text),
    first_responded_at: responds ? now : firstRespondedAt,
  };
}

/**
 * Writes an agent's, a key's or an automation's message on a locked ticket and updates the
 * ticket's statistics, unless `statsWritten` says a new ticket's INSERT already holds them
 * (outboundMessageStats at `now`). Returns the message and its message.created event, for the
 * caller to append in the order it needs (after ticket.created on a new ticket).
 */
export async function insertMessage(
  deps: Deps,
  u: Unit,
  actor: Actor,
  ticket: TicketRow,
  input: NewMessage,
  statsWritten?: { now: Date },
): Promise<{ message: MessageView; event: EventDraft }> {
  const attachmentIds = input.attachment_ids ?? [];
  const { html, text } = input.body;
  if (input.kind === 'note' && ((input.cc?.length ?? 0) > 0 || (input.bcc?.length ?? 0) > 0)) {
    throw invalid(input.cc?.length ? 'body.cc' : 'body.bcc', 'notes are never sent, so they take no recipients');
  }
  const user = await userRefOf(u.trx, actor);
  const author =
    input.assistant === undefined ? authorOf(actor) : { type: 'ai' as const, userId: null, apiKeyId: null };
  const fromName = input.assistant ?? user?.name ?? '';
  const isReply = input.kind === 'reply';
  // Replies on email tickets, and on the portal's (its customers are answered by email), are
  // delivered by the email module through the ticket's or the workspace's default mailbox.
  const mailed = isReply && (ticket.channel === 'email' || ticket.channel === 'portal');
  const id = newId();
  const now = statsWritten?.now ?? new Date();
  const to = isReply && ticket.contact_email ? [ticket.contact_email] : [];
  await u.trx
    .insertInto('messages')
    .values({
      workspace_id: u.workspaceId,
      id,
      ticket_id: ticket.id,
      kind: input.kind,
      direction: 'outbound',
      author_type: author.type,
      author_user_id: author.userId,
      author_contact_id: null,
      author_api_key_id: author.apiKeyId,
      body_html: html,
      body_text: text,
      subject: ticket.subject,
      from_name: fromName,
      to,
      cc: input.cc ?? [],
      bcc: input.bcc ?? [],
      // The email module delivers pending replies through the ticket's mailbox.
      delivery_status: mailed ? 'pending' : 'none',
      created_at: now,
    })
    .execute();
  const attachments: AttachmentView[] =
    attachmentIds.length > 0 ? await claimAttachments(deps, u, attachmentIds, id) : [];
  // The pending row is the durable record; the job that sends it is queued once it is committed
  // (a lost job is queued again by the email module's sweep).
  if (mailed) u.afterCommit(() => queueOutbound(deps, u.workspaceId, id));
  if (!statsWritten) {
    await u.trx
      .updateTable('tickets')
      .set((eb) => ({
        message_count: eb('message_count', '+', 1),
        ...outboundMessageStats(actor, input.kind, text, now, ticket.first_responded_at),
        updated_at: now,
      }))
      .where('workspace_id', '=', u.workspaceId)
      .where('id', '=', ticket.id)
      .execute();
  }

  const message: MessageView = {
    id,
    ticket_id: ticket.id,
    kind: input.kind,
    direction: 'outbound',
    author: { type: author.type, user, contact: null },
    body_html: html,
    body_text: text,
    has_quoted: false,
    subject: ticket.subject,
    from_email: '',
    from_name: fromName,
    to,
    cc: input.cc ?? [],
    bcc: input.bcc ?? [],
    attachments,
    delivery_status: mailed ? 'pending' : 'none',
    delivery_error: null,
    reply_to: null,
    auth_failed: false,
    form_sender: null,
    created_at: now.toISOString(),
  };
  // Replies on chat tickets reach the customer's widget; everything else stays with agents.
  const isPublic = isReply && ticket.channel === 'chat' && ticket.contact_id !== null;
  const event: EventDraft = {
    type: 'message.created',
    data: { ticket_id: ticket.id, message },
    teamId: ticket.private_team_id,
    ...(isPublic ? { visibility: 'public', topics: [`contact:${u.workspaceId}:${ticket.contact_id}`] } : {}),
  };
  return { message, event };
}
