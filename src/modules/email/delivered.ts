// What the inbound job reports once a mail became a message: the listeners (auto-replies,
// notifications) and the outbound job's auto-reply decision read the same facts.

/** What listeners hear after a mail became a message (auto-replies, notifications). */
export interface InboundDelivered {
  workspaceId: string;
  mailboxId: string;
  ticketId: string;
  messageId: string;
  /** True when the mail opened the ticket (a new conversation, a follow-up or spam). */
  newTicket: boolean;
  spam: boolean;
  contactId: string | null;
  /** The address replies go to (the visitor for a trusted form sender). */
  fromEmail: string;
  /** autoSubmitted's reason: never auto-reply when set. */
  autoSubmitted: string | null;
  authFailed: boolean;
}
