// What the chat widget's visitors do (docs/widget.md): open a session (new, resumed, with an
// email and name, or a verified identity), start conversations, read and write their messages,
// upload files, ask for a person.
//
// - A conversation is a chat ticket of the visitor's contact (channel chat); a visitor sees their
//   own chat tickets only (not deleted, not spam) and only their public messages (replies).
// - A visitor's message is a customer's message (tickets/customer-message.ts, its chat part the
//   visitor), written by the one write of an email's or the portal's (writeCustomerMessage), the
//   visitor acting: plain text kept as text (HTML is escaped, never interpreted), the status rules
//   of a customer message (a pending, on_hold or solved ticket opens again; a closed one gets a
//   follow-up ticket with custom.follow_up_of), the workflow hooks, and message.created published
//   to the agents and, being public on a chat ticket, to the visitor's contact topic.
import { createHmac } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import { WIDGET_PATH } from '../../gateway/gateway.js';
import { constantTimeEqual, isUuid } from '../../platform/crypto/random.js';
import type { Unit } from '../../platform/db/tx.js';
import { uniqueOrConflict } from '../../platform/db/unique.js';
import { preview, textToHtml } from '../../platform/html/index.js';
import { asVisitor, type VisitorContext } from '../../platform/http/context.js';
import { ApiError, invalid, notFound, unauthorized } from '../../platform/http/errors.js';
import { iso } from '../../platform/http/schemas.js';
import { createAttachmentFor } from '../attachments/service.js';
import type { Spooled } from '../attachments/upload.js';
import { visitorContact } from '../contacts/service.js';
import { csatToken, csatUrl } from '../csat/service.js';
import { widgetPicture } from '../images/sources.js';
import { gatewayUrl } from '../realtime/routes.js';
import type { CustomerMessage } from '../tickets/customer-message.js';
import { writeCustomerMessage } from '../tickets/inbound.js';
import { listMessagesOfTicket } from '../tickets/messages.js';
import { applyPatch } from '../tickets/patch.js';
import { type TicketRow, ticketQuery } from '../tickets/queries.js';
import { widgetSecret } from '../workspace/service.js';
import { answersOn, notifyHandoff, queueAnswer } from './ai-answers.js';
import { type WidgetMessageView, widgetMessage } from './present.js';
import type { Conversation, SessionBody, WidgetSession } from './schemas.js';
import type { Widget } from './settings.js';
import {
  attachContact,
  findVisitor,
  issueVisitorToken,
  lockVisitor,
  setVisitorEmail,
  setVisitorName,
} from './visitors.js';

export type ConversationView = Static<typeof Conversation>;
type SessionInput = Static<typeof SessionBody>;

const SUBJECT_LENGTH = 80;
const conversationNotFound = () => notFound('Conversation not found.');

// ---------------------------------------------------------------------------------------------
// Sessions

/** Hex HMAC-SHA256 of user_id with the widget secret, as the site's server computes it. */
export const userHashOf = (secret: string, userId: string): string =>
  createHmac('sha256', secret).update(userId, 'utf8').digest('hex');

/** A verified identity's avatar_url: HTTPS (http too where private addresses are allowed, for tests). */
function checkWidgetPictureUrl(deps: Deps, input: SessionInput): void {
  if (input.user_id === undefined) {
    throw invalid('body.avatar_url', 'avatar_url is taken only with a verified identity (user_id and user_hash)');
  }
  let url: URL | null = null;
  try {
    url = new URL(input.avatar_url!);
  } catch {}
  const schemes = deps.config.webhookAllowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!url || !schemes.includes(url.protocol)) throw invalid('body.avatar_url', 'must be an https:// URL');
}

/**
 * The picture a verified identity gave, looked up in a job. Every page of the site opens a session:
 * the same URL for the same contact is fetched again only after a day (per process; a changed URL
 * at once).
 */
const widgetPicturesSeen = new Map<string, number>();
const WIDGET_PICTURE_AGAIN_MS = 24 * 3600_000;
async function queueWidgetPicture(deps: Deps, workspaceId: string, contactId: string, url: string): Promise<void> {
  const key = `${contactId} ${url}`;
  const seen = widgetPicturesSeen.get(key);
  if (seen !== undefined && Date.now() - seen < WIDGET_PICTURE_AGAIN_MS) return;
  if (widgetPicturesSeen.size >= 10_000) widgetPicturesSeen.delete(widgetPicturesSeen.keys().next().value!);
  widgetPicturesSeen.set(key, Date.now());
  await widgetPicture(deps, workspaceId, contactId, url);
}

/**
 * POST /v1/widget/session. Resumes `visitor_token` (401 when it is unknown, revoked or of another
 * workspace) or starts a visitor; with user_id and user_hash (checked in constant time, 401 when
 * wrong, before anything is written) the visitor is the contact holding that external_id, one
 * contact for every device. A fresh widget realtime token comes with every session.
 *
 * A session alone makes no contact (docs/decisions.md "Chat widget"): a visitor without a verified
 * identity becomes one at their first message (startConversation) or when they give an email;
 * until then `contact` is the contact to be: its id (the socket topic's), no email, the name given.
 * An email is a claim (the contact's unverified_email) unless the identity hash covers it: user_id
 * is that address.
 */
export async function openSession(
  deps: Deps,
  widget: Widget,
  input: SessionInput,
): Promise<Static<typeof WidgetSession>> {
  const workspaceId = widget.workspaceId;
  if ((input.user_id === undefined) !== (input.user_hash === undefined)) {
    throw invalid(
      input.user_id === undefined ? 'body.user_id' : 'body.user_hash',
      'user_id and user_hash come together',
    );
  }
  if (input.avatar_url !== undefined) checkWidgetPictureUrl(deps, input);
  if (input.user_id !== undefined) {
    const secret = await widgetSecret(deps, workspaceId);
    const expected = secret ? userHashOf(secret, input.user_id) : '';
    if (!secret || !constantTimeEqual(input.user_hash!.toLowerCase(), expected)) {
      throw unauthorized("user_hash is not the HMAC-SHA256 of user_id with this workspace's widget secret.");
    }
  }
  const resumed = input.visitor_token !== undefined ? await findVisitor(deps, input.visitor_token, workspaceId) : null;
  if (input.visitor_token !== undefined && !resumed) {
    throw unauthorized(
      'The visitor token is unknown, revoked or of another workspace: start a new session without it.',
    );
  }
  const email = input.email?.trim() || null;
  const name = input.name?.trim() || null;
  const verified = input.user_id !== undefined;
  // The hash covers user_id only: it proves an email when user_id is that email.
  const emailVerified = verified && email !== null && input.user_id!.trim().toLowerCase() === email.toLowerCase();
  const session = await uniqueOrConflict(
    { contacts_email_key: 'A contact with this email was just created; try again.' },
    () =>
      deps.writer.run(
        workspaceId,
        async (u): Promise<{ token: string; visitorId: string; contact: SessionContact }> => {
          if (!verified && email === null && (resumed === null || resumed.pending)) {
            // Nobody to make a contact of yet: the visitor's row only (the name kept for later).
            if (resumed) {
              if (name !== null && resumed.name === null) await setVisitorName(u, resumed.id, name);
              const contact = { id: resumed.contactId, email: null, name: resumed.name ?? name, avatar_url: null };
              return { token: input.visitor_token!, visitorId: resumed.id, contact };
            }
            const issued = await issueVisitorToken(u, null, { name });
            return {
              token: issued.token,
              visitorId: issued.id,
              contact: { id: issued.contactId, email: null, name, avatar_url: null },
            };
          }
          const own = !verified && resumed !== null;
          const contact = await visitorContact(u, {
            contactId: own && !resumed.pending ? resumed.contactId : null,
            newId: own && resumed.pending ? resumed.contactId : null,
            externalId: input.user_id ?? null,
            email,
            emailVerified,
            name: name ?? (own && resumed.pending ? resumed.name : null),
          });
          const typed = contact.emailTaken ? email : null;
          // The same visitor, the same contact: keep the token. A verified identity on another
          // contact (the visitor signed in on the site) gets a token of its own.
          let token = input.visitor_token;
          let visitorId = resumed?.id ?? null;
          if (!resumed || resumed.contactId !== contact.id) {
            const issued = await issueVisitorToken(u, contact.id, { email: typed });
            token = issued.token;
            visitorId = issued.id;
          } else {
            if (resumed.pending) await attachContact(u, resumed.id, contact.id);
            if (typed !== null) await setVisitorEmail(u, resumed.id, typed);
          }
          return {
            token: token!,
            visitorId: visitorId!,
            contact: {
              id: contact.id,
              // What the chat knows the visitor by: the contact's address, else the one they gave.
              email: contact.email ?? contact.unverified_email ?? typed ?? (resumed?.email || null),
              name: contact.name,
              avatar_url: contact.avatar_url,
            },
          };
        },
      ),
  );
  if (input.avatar_url !== undefined && input.user_id !== undefined) {
    await queueWidgetPicture(deps, workspaceId, session.contact.id, input.avatar_url);
  }
  const { token: wsToken } = await deps.tokens.sign({
    purpose: 'widget_ws',
    sub: session.contact.id,
    wid: workspaceId,
    // The visitor (token row): signing out or a deleted contact refuses it at the gateway.
    vid: session.visitorId,
  });
  return {
    visitor_token: session.token,
    contact: session.contact,
    ws_token: wsToken,
    gateway_url: `${gatewayUrl(deps.config.publicUrl)}${WIDGET_PATH}`,
    topic: `contact:${workspaceId}:${session.contact.id}`,
  };
}

type SessionContact = Static<typeof WidgetSession>['contact'];

// ---------------------------------------------------------------------------------------------
// Conversations

const presentConversation = (t: TicketRow, csatUrl: string | null = null): ConversationView => ({
  id: t.id,
  number: Number(t.number),
  subject: t.subject,
  status: t.status as ConversationView['status'],
  created_at: iso(t.created_at)!,
  last_message_at: iso(t.last_message_at),
  csat_url: csatUrl,
});

/** A rating link is offered this long after the solve (as long as the emailed one lasts). */
const RATING_DAYS = 30;

/**
 * The rating links of solved conversations (CSAT on, solved within RATING_DAYS): the chat's
 * counterpart of the solved email's link (src/modules/csat). Conversation id → link.
 */
async function ratingLinks(deps: Deps, workspaceId: string, rows: TicketRow[]): Promise<Map<string, string>> {
  const since = Date.now() - RATING_DAYS * 86_400_000;
  const solved = rows.filter(
    (t) => t.status === 'solved' && t.solved_at !== null && new Date(t.solved_at).getTime() > since,
  );
  if (solved.length === 0) return new Map();
  const ws = await deps.database.db
    .selectFrom('workspaces')
    .select('settings')
    .where('id', '=', workspaceId)
    .executeTakeFirst();
  if ((ws?.settings as { csat_enabled?: unknown } | undefined)?.csat_enabled !== true) return new Map();
  const links = new Map<string, string>();
  for (const t of solved) links.set(t.id, csatUrl(deps.config.publicUrl, await csatToken(deps, workspaceId, t.id)));
  return links;
}

/** The visitor's own chat tickets (live, not spam). */
const ownChats = (db: Deps['database']['db'], v: VisitorContext) =>
  ticketQuery(db, v.workspaceId)
    .where('t.contact_id', '=', v.contactId)
    .where('t.channel', '=', 'chat')
    .where('t.deleted_at', 'is', null)
    .where('t.spam', '=', false);

/** GET /v1/widget/conversations: newest first, in pages. */
export async function listConversations(
  deps: Deps,
  v: VisitorContext,
  q: { limit?: number; cursor?: string },
): Promise<{ data: ConversationView[]; next_cursor: string | null }> {
  const limit = q.limit ?? 50;
  const list = `widget-conversations:${v.workspaceId}:${v.contactId}`;
  const after = deps.pager.decode(list, q.cursor, 1);
  let query = ownChats(deps.database.db, v);
  if (after) {
    const n = after[0];
    if (typeof n !== 'number') throw invalid('query.cursor', 'is not a cursor of this list; start again without one');
    query = query.where('t.number', '<', n);
  }
  const rows = await query
    .orderBy('t.number', 'desc')
    .limit(limit + 1)
    .execute();
  const links = await ratingLinks(deps, v.workspaceId, rows);
  return deps.pager.page(
    list,
    rows,
    limit,
    (r) => [Number(r.number)],
    (r) => presentConversation(r, links.get(r.id) ?? null),
  );
}

async function ownChat(deps: Deps, v: VisitorContext, id: string): Promise<TicketRow> {
  if (!isUuid(id)) throw conversationNotFound();
  const row = await ownChats(deps.database.db, v).where('t.id', '=', id.toLowerCase()).executeTakeFirst();
  if (!row) throw conversationNotFound();
  return row;
}

async function lockOwnChat(u: Unit, v: VisitorContext, id: string): Promise<TicketRow> {
  if (!isUuid(id)) throw conversationNotFound();
  const row = await ownChats(u.trx, v).where('t.id', '=', id.toLowerCase()).forUpdate('t').executeTakeFirst();
  if (!row) throw conversationNotFound();
  return row;
}

/**
 * The visitor as the sender of a message: their contact's email (or the address they claimed or
 * typed) and name. `pending`: no contact yet (the visitor's row is locked: two first messages at
 * once make one contact).
 */
async function sender(u: Unit, v: VisitorContext) {
  const wv = await lockVisitor(u, v.visitorId);
  if (!wv) throw unauthorized();
  if (wv.contact_id === null) return { email: wv.email, name: wv.name ?? '', blocked: false, pending: true };
  const c = await u.trx
    .selectFrom('contacts')
    .select(['email', 'unverified_email', 'name', 'blocked'])
    .where('workspace_id', '=', v.workspaceId)
    .where('id', '=', wv.contact_id)
    .executeTakeFirst();
  if (!c) throw unauthorized();
  return { email: c.email ?? c.unverified_email ?? wv.email, name: c.name ?? '', blocked: c.blocked, pending: false };
}

/** A visitor's first message: they become a contact, with the id their session gave them. */
async function becomeContact(u: Unit, v: VisitorContext, name: string): Promise<void> {
  await visitorContact(u, {
    contactId: null,
    newId: v.contactId,
    externalId: null,
    email: null,
    emailVerified: false,
    name: name || null,
  });
  await attachContact(u, v.visitorId, v.contactId);
}

/** The visitor's message: plain text (whatever HTML it holds is escaped and stays text). */
function chatMessage(
  v: VisitorContext,
  from: { email: string | null; name: string },
  subject: string,
  text: string,
  uploads: string[],
): CustomerMessage {
  return {
    workspaceId: v.workspaceId,
    contactId: v.contactId,
    subject,
    from: { email: from.email, name: from.name },
    body: { html: textToHtml(text), text },
    files: [],
    uploads,
    channel: { kind: 'chat', visitorId: v.visitorId },
  };
}

/** Refuses attachment ids that are not this visitor's own unsent uploads (422 at body.attachment_ids). */
async function checkUploads(u: Unit, v: VisitorContext, ids: string[]): Promise<string[]> {
  const wanted = [...new Set(ids.map((id) => id.toLowerCase()))];
  if (wanted.length === 0) return [];
  const rows = await u.trx
    .selectFrom('attachments')
    .select('id')
    .where('workspace_id', '=', v.workspaceId)
    .where('id', 'in', wanted)
    .where('uploaded_by_contact_id', '=', v.contactId)
    .where('message_id', 'is', null)
    .execute();
  const mine = new Set(rows.map((r) => r.id));
  const other = wanted.find((id) => !mine.has(id));
  if (other !== undefined) {
    throw invalid('body.attachment_ids', `${JSON.stringify(other)} is not a file you uploaded for a message`);
  }
  return wanted;
}

const textOf = (body: string) => {
  const text = body.replace(/\r\n?/g, '\n').trim();
  if (text === '') throw invalid('body.body', 'must not be blank');
  return text;
};

/** POST /v1/widget/conversations: a new chat ticket with the visitor's first message. */
export async function startConversation(
  deps: Deps,
  widget: Widget,
  v: VisitorContext,
  input: { body: string; attachment_ids?: string[] },
): Promise<ConversationView> {
  const text = textOf(input.body);
  return deps.writer.run(v.workspaceId, async (u) => {
    const from = await sender(u, v);
    if (widget.settings.require_email && from.email === null) {
      throw new ApiError('validation_failed', 'This chat needs your email first: open a session with your email.', [
        { location: 'body.email', message: 'is required by this workspace before a conversation starts' },
      ]);
    }
    const ids = await checkUploads(u, v, input.attachment_ids ?? []);
    if (from.pending) await becomeContact(u, v, from.name);
    const subject = preview(text, SUBJECT_LENGTH);
    const { ticket, message } = await writeCustomerMessage(deps, u, chatMessage(v, from, subject, text, ids), {
      ticket: null,
      open: { subject, teamId: null, spam: from.blocked },
    });
    // The workspace's assistant may answer it, in a job once this commits (ai-answers.ts).
    queueAnswer(deps, u, ticket.id, message.id);
    return presentConversation(ticket);
  });
}

/** GET /v1/widget/conversations/{id}/messages: the public messages, oldest first. */
export async function conversationMessages(
  deps: Deps,
  v: VisitorContext,
  id: string,
): Promise<{ data: WidgetMessageView[] }> {
  const ticket = await ownChat(deps, v, id);
  const messages = await listMessagesOfTicket(deps, deps.database.db, v.workspaceId, ticket.id);
  return { data: messages.map(widgetMessage).filter((m): m is WidgetMessageView => m !== null) };
}

/**
 * POST /v1/widget/conversations/{id}/messages: the visitor's message under the status rules of a
 * customer's message; on a closed conversation it starts a follow-up (its conversation_id says so).
 */
export async function sendMessage(
  deps: Deps,
  v: VisitorContext,
  id: string,
  input: { body: string; attachment_ids?: string[] },
): Promise<WidgetMessageView> {
  const text = textOf(input.body);
  return deps.writer.run(v.workspaceId, async (u) => {
    const ticket = await lockOwnChat(u, v, id);
    const from = await sender(u, v);
    const ids = await checkUploads(u, v, input.attachment_ids ?? []);
    // On a closed conversation: a follow-up in its team (its conversation_id says so).
    const written = await writeCustomerMessage(deps, u, chatMessage(v, from, ticket.subject, text, ids), {
      ticket,
      open: { subject: ticket.subject, teamId: ticket.team_id, spam: false },
    });
    queueAnswer(deps, u, written.ticket.id, written.message.id);
    return widgetMessage(written.message)!;
  });
}

/**
 * POST /v1/widget/conversations/{id}/handoff: the visitor asks for a person. Recorded on the
 * ticket (custom.handoff_requested_at, ticket.updated) and the conversation opens again if it
 * was waiting or solved, so it is back in the agents' open queue. With the workspace's assistant
 * answering (ai-answers.ts), the first request notifies the agents (ai_handoff) and the assistant
 * answers nothing more in it.
 */
export async function requestHandoff(deps: Deps, v: VisitorContext, id: string): Promise<ConversationView> {
  // With the assistant answering, the first request tells the agents (ai_handoff, once).
  const assistant = await answersOn(deps, v.workspaceId);
  return deps.writer.run(v.workspaceId, async (u) => {
    const ticket = await lockOwnChat(u, v, id);
    if (ticket.status === 'closed') throw invalid('path.id', 'this conversation is closed: start a new one');
    const first = !(ticket.custom as Record<string, unknown> | null)?.handoff_requested_at;
    const reopen = ticket.status === 'pending' || ticket.status === 'on_hold' || ticket.status === 'solved';
    const { row } = await applyPatch(deps, u, asVisitor(v), ticket, {
      custom: {
        handoff_requested_at: new Date().toISOString(),
        ...(assistant && first ? { ai_handoff: 'requested' } : {}),
      },
      ...(reopen ? { status: 'open' as const } : {}),
    });
    if (assistant && first) await notifyHandoff(u, row, 'requested');
    return presentConversation(row);
  });
}

/** POST /v1/widget/attachments: the visitor's upload, only theirs to attach. */
export const uploadForVisitor = (deps: Deps, v: VisitorContext, upload: Spooled) =>
  createAttachmentFor(deps, v.workspaceId, { userId: null, apiKeyId: null, contactId: v.contactId }, upload);
