// What the inbound job reports once a mail became a message: the listeners (auto-replies,
// notifications) and the outbound job's auto-reply decision read the same facts. The listeners
// are a field of Deps (deps.inboundListeners), registered at start.

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

export type InboundListener = (info: InboundDelivered) => Promise<void> | void;

/**
 * Called after each inbound mail that became a message has committed (best effort: a
 * listener's failure is logged; durable work should queue a job). The outbound side's
 * auto-reply hangs here.
 */
export class InboundListeners {
  readonly #list: InboundListener[] = [];

  add(fn: InboundListener): void {
    this.#list.push(fn);
  }

  [Symbol.iterator](): Iterator<InboundListener> {
    return this.#list[Symbol.iterator]();
  }
}
