// "This customer wrote this": one shape for a customer's message from any channel. What every
// channel has (the workspace, the contact, the subject, the sender as shown, the body, files)
// sits on the message; what only one channel has sits in its part (`channel`): an email's
// mailbox, Message-ID, threading headers and sender checks; a chat's visitor; a portal's session.
// A message is written by one function, writeCustomerMessage (tickets/inbound.ts): a new ticket,
// a follow-up of a closed one, or a message on an open one under the status rules of a customer's
// message, with its events and the workflow hooks, the customer or visitor as the actor.
//
// Later channels (the API on a customer's behalf, the AI's chat) add a part of their own.
import { type CustomerActor, SYSTEM_ACTOR, type SystemActor, type VisitorActor } from '../../platform/http/context.js';

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

export interface CustomerMessage {
  /** The workspace it was written to (the write's unit must be this workspace's). */
  workspaceId: string;
  /** The contact who wrote it; null for mail whose sender could not be read. */
  contactId: string | null;
  subject: string;
  /** The sender as the message shows them: an address (none for a chat visitor who gave none) and a name. */
  from: { email: string | null; name: string };
  /** The body as stored: sanitized HTML (or plain text made HTML) and its text. */
  body: { html: string; text: string };
  /** Files whose bytes the channel stored (mail's attachments, the portal form's files). */
  files: InboundFile[];
  /** Uploads already stored and not yet sent (the widget's), claimed by the message. */
  uploads: string[];
  /** What only its channel has; its `kind` is the channel of a ticket it opens. */
  channel: EmailPart | ChatPart | PortalPart;
}

export type CustomerChannel = CustomerMessage['channel']['kind'];

/** A mail (src/modules/email/inbound.ts). */
export interface EmailPart {
  kind: 'email';
  mailboxId: string;
  /** The spooled raw mail (inbound_emails.id). */
  rawInboundId: string;
  to: string[];
  cc: string[];
  /** The whole original (quoted history included) when the body is it without that history. */
  original: { html: string; text: string } | null;
  /** A Reply-To other than the sender, or null. */
  replyTo: string | null;
  /** The form's own address when a trusted form sender relayed a visitor's mail, or null. */
  formSender: string | null;
  /** DMARC failed at a trusted server: the sender is not who the mail says. */
  authFailed: boolean;
  /** Why the mail counts as automatic (auto-replies, lists, bulk), or null for mail a person sent. */
  autoSubmitted: string | null;
  /** The normal form of the Message-ID, or "sha256:<hex>" of mail without one: the de-duplication key. */
  messageId: string;
  /** The Message-ID as sent (case kept), or null. */
  messageIdSent: string | null;
  /** The first In-Reply-To as sent, or null. */
  inReplyTo: string | null;
  /** References as sent, oldest first. */
  references: string[];
}

/** A chat widget's message (src/modules/widget): the visitor who wrote it. */
export interface ChatPart {
  kind: 'chat';
  /** The visitor token's row (widget_visitors.id). */
  visitorId: string;
}

/** The help center's portal (src/modules/portal): the contact form, or a signed-in customer. */
export interface PortalPart {
  kind: 'portal';
  /** The customer's portal session; null for the contact form (no sign-in). */
  sessionId: string | null;
}

/** What a new ticket takes besides the message (its channel, mailbox and contact are the message's). */
export interface NewCustomerTicket {
  subject: string;
  teamId: string | null;
  /** A blocked contact's message: the ticket is spam from the start. */
  spam: boolean;
}

/**
 * How the message counts on an existing ticket (the status rules, gaps.md "Status changes the
 * spec does not show"): a customer's opens a pending, on_hold or solved ticket again; automatic
 * mail changes no status; mail failing sender checks changes none and says so.
 */
export type CustomerMode = 'customer' | 'automatic' | 'unverified';

export function modeOf(m: CustomerMessage): CustomerMode {
  const via = m.channel;
  if (via.kind !== 'email') return 'customer';
  if (via.authFailed) return 'unverified';
  return via.autoSubmitted !== null ? 'automatic' : 'customer';
}

/**
 * Who acts when the message is written: the chat's visitor, the contact (a mail's sender, a
 * portal's customer), or the system when no contact can be named: mail without a readable sender
 * or failing sender checks.
 */
export function actorOfMessage(m: CustomerMessage): VisitorActor | CustomerActor | SystemActor {
  const via = m.channel;
  switch (via.kind) {
    case 'chat':
      return { kind: 'visitor', visitorId: via.visitorId, contactId: m.contactId };
    case 'email':
      if (via.authFailed) return SYSTEM_ACTOR;
      return m.contactId === null ? SYSTEM_ACTOR : { kind: 'customer', contactId: m.contactId };
    case 'portal':
      return m.contactId === null ? SYSTEM_ACTOR : { kind: 'customer', contactId: m.contactId };
    default:
      return unknownChannel(via);
  }
}

function unknownChannel(part: never): never {
  throw new Error(`unknown customer message channel: ${JSON.stringify(part)}`);
}
