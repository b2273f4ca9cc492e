// Messages of a ticket: replies (customer-visible) and notes (agents only). The body is
// sanitized with an allowlist before storage and its text derived from the sanitized HTML. A
// message updates its ticket's statistics (count, last message time and preview, first
// response) in the same transaction, and a `status` sent with it changes the ticket in the
// same step, under the same rules as PATCH. Writing the message itself: outbound-message.ts.
import type { Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { isUuid } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/http/context.js';
import { notFound } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { withFreshInlineUrls } from '../attachments/inline.js';
import { type AttachmentView, attachmentsOfMessages } from '../attachments/service.js';
import { hookMessage } from './hooks.js';
import { cleanBody, insertMessage, type MessageView } from './outbound-message.js';
import { applyPatch } from './patch.js';
import { reload } from './queries.js';
import type { CreateMessageBody, MessageOriginal } from './schemas.js';
import { findVisibleTicket, lockVisibleTicket } from './service.js';

export type { MessageView } from './outbound-message.js';

/** What a message changes on its ticket (the `changes` of the ticket.updated it causes). */
const STAT_CHANGES = ['message_count', 'last_message_at', 'last_message_preview'];

/** POST /v1/tickets/{id}/messages: the message, and the ticket status in the same step. */
export async function createMessage(
  deps: Deps,
  ctx: RequestContext,
  param: string,
  input: Static<typeof CreateMessageBody>,
): Promise<MessageView> {
  const body = cleanBody(input.body_html, (input.attachment_ids?.length ?? 0) > 0);
  return deps.writer.run(ctx.workspaceId, async (u) => {
    const ticket = await lockVisibleTicket(u, ctx, param);
    const { message, event } = await insertMessage(deps, u, ctx.actor, ticket, { ...input, body });
    u.emit(event);
    const after = await reload(u, ticket.id);
    const changes = [...STAT_CHANGES];
    if (input.kind === 'reply' && ticket.first_responded_at === null) changes.push('first_responded_at');
    const { row } = await applyPatch(deps, u, ctx, after, input.status === undefined ? {} : { status: input.status }, {
      extraChanges: changes,
    });
    await deps.ticketHooks.run(deps, u, {
      trigger: input.kind === 'note' ? 'note_added' : 'agent_replied',
      ticket: row,
      before: null,
      changes: [],
      message: hookMessage(message),
      ctx,
    });
    return message;
  });
}

// ---------------------------------------------------------------------------------------------
// Reading

function messageQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('messages as m')
    .leftJoin('users as u', 'u.id', 'm.author_user_id')
    .leftJoin('contacts as c', (j) =>
      j.onRef('c.workspace_id', '=', 'm.workspace_id').onRef('c.id', '=', 'm.author_contact_id'),
    )
    .select([
      'm.id',
      'm.ticket_id',
      'm.kind',
      'm.direction',
      'm.author_type',
      'm.author_user_id',
      'u.name as user_name',
      'u.email as user_email',
      'u.avatar_url as user_avatar_url',
      'm.author_contact_id',
      'c.name as contact_name',
      'c.email as contact_email',
      'c.avatar_url as contact_avatar_url',
      'm.body_html',
      'm.body_text',
      'm.has_quoted',
      'm.subject',
      'm.from_email',
      'm.from_name',
      'm.to',
      'm.cc',
      'm.bcc',
      'm.delivery_status',
      'm.delivery_error',
      'm.reply_to',
      'm.auth_failed',
      'm.form_sender',
      'm.created_at',
    ])
    .where('m.workspace_id', '=', workspaceId);
}

type MessageRow = Awaited<ReturnType<ReturnType<typeof messageQuery>['executeTakeFirstOrThrow']>>;

function presentMessage(r: MessageRow, attachments: AttachmentView[]): MessageView {
  return {
    id: r.id,
    ticket_id: r.ticket_id,
    kind: r.kind,
    direction: r.direction,
    author: {
      type: r.author_type,
      user:
        r.author_user_id !== null && r.user_name !== null
          ? { id: r.author_user_id, name: r.user_name, email: r.user_email ?? '', avatar_url: r.user_avatar_url }
          : null,
      contact:
        r.author_contact_id !== null
          ? { id: r.author_contact_id, name: r.contact_name, email: r.contact_email, avatar_url: r.contact_avatar_url }
          : null,
    },
    // Inline images of inbound mail are stored under stable addresses: give them fresh tokens.
    body_html: withFreshInlineUrls(r.body_html, attachments),
    body_text: r.body_text,
    has_quoted: r.has_quoted,
    subject: r.subject,
    from_email: r.from_email,
    from_name: r.from_name,
    to: r.to,
    cc: r.cc,
    bcc: r.bcc,
    attachments,
    delivery_status: r.delivery_status,
    delivery_error: r.delivery_error,
    reply_to: r.reply_to,
    auth_failed: r.auth_failed,
    form_sender: r.form_sender,
    created_at: iso(r.created_at)!,
  };
}

/** One message as the API shows it (message.updated carries it), or null. */
export async function loadMessageView(
  deps: Deps,
  db: Kysely<DB>,
  workspaceId: string,
  id: string,
): Promise<MessageView | null> {
  const row = await messageQuery(db, workspaceId).where('m.id', '=', id).executeTakeFirst();
  if (!row) return null;
  const files = await attachmentsOfMessages(deps, db, workspaceId, [id]);
  return presentMessage(row, files.get(id) ?? []);
}

/** Every message of a ticket, oldest first (no pages: a conversation is read whole). */
export async function listMessages(deps: Deps, ctx: RequestContext, param: string): Promise<{ data: MessageView[] }> {
  const db = deps.database.db;
  const ticket = await findVisibleTicket(db, ctx, param);
  return { data: await listMessagesOfTicket(deps, db, ctx.workspaceId, ticket.id) };
}

/** Every message of a ticket the caller has already found, oldest first (also the chat widget's). */
export async function listMessagesOfTicket(
  deps: Deps,
  db: Kysely<DB>,
  workspaceId: string,
  ticketId: string,
): Promise<MessageView[]> {
  const rows = await messageQuery(db, workspaceId)
    .where('m.ticket_id', '=', ticketId)
    .orderBy('m.created_at')
    .orderBy('m.id')
    .execute();
  const files = await attachmentsOfMessages(
    deps,
    db,
    workspaceId,
    rows.map((r) => r.id),
  );
  return rows.map((r) => presentMessage(r, files.get(r.id) ?? []));
}

/** GET /v1/messages/{id}/original: the whole original body, quoted history included. */
export async function messageOriginal(
  deps: Deps,
  ctx: RequestContext,
  id: string,
): Promise<Static<typeof MessageOriginal>> {
  if (!isUuid(id)) throw notFound('Message not found.');
  const db = deps.database.db;
  const m = await db
    .selectFrom('messages')
    .select(['id', 'ticket_id', 'body_html', 'body_text', 'original_html', 'original_text', 'has_quoted'])
    .where('workspace_id', '=', ctx.workspaceId)
    .where('id', '=', id.toLowerCase())
    .executeTakeFirst();
  if (!m) throw notFound('Message not found.');
  try {
    await findVisibleTicket(db, ctx, m.ticket_id);
  } catch {
    throw notFound('Message not found.');
  }
  const files = (await attachmentsOfMessages(deps, db, ctx.workspaceId, [m.id])).get(m.id) ?? [];
  return {
    id: m.id,
    ticket_id: m.ticket_id,
    body_html: withFreshInlineUrls(m.original_html ?? m.body_html, files),
    body_text: m.original_text ?? m.body_text,
    has_quoted: m.has_quoted,
  };
}
