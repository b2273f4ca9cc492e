// A change to a ticket as the workflow hooks see it (src/modules/tickets/hooks.ts). Apart from
// the hooks so that deps.ts can name the hook runner's interface without importing the hooks,
// which take Deps: this file imports no Deps, directly or through another file.
import type { ActingContext } from '../../platform/http/context.js';
import type { TicketRow } from './queries.js';

export type TicketTrigger = 'ticket_created' | 'customer_replied' | 'agent_replied' | 'ticket_updated' | 'note_added';

export interface TicketHookMessage {
  id: string;
  kind: 'reply' | 'note';
  /** Plain text of the body (quoted history included as stored). */
  body_text: string;
  body_html: string;
  from_email: string | null;
}

export interface TicketChange {
  trigger: TicketTrigger;
  /**
   * The ticket as the change and the hooks before this one left it, in the change's
   * transaction (locked or freshly inserted).
   */
  ticket: TicketRow;
  /** The ticket as the change itself left it, before any hook (set by the runner). */
  origin?: TicketRow;
  /** The ticket before the change (ticket_updated only). */
  before: TicketRow | null;
  /** The names of what changed (ticket_updated: the keys of ticket.updated's `changes`). */
  changes: string[];
  /** The message of the event: the first message on creation (if any), the reply or the note. */
  message: TicketHookMessage | null;
  /** Who made the change: a request's caller, the system, or an automation. */
  ctx: ActingContext;
}

/** What a new ticket is before its INSERT: what the hooks' prepareCreated read. */
export interface NewTicketDraft {
  priority: string;
  status: string;
  /** The ticket's created_at (the INSERT writes this very time). */
  created_at: Date;
  /** Set when the first message is an agent's reply. */
  first_responded_at: Date | null;
  spam: boolean;
}

/** Columns a hook gives a new ticket in its INSERT. */
export interface NewTicketColumns {
  sla: string | null;
  due_at: Date | null;
  sla_breach_at: Date | null;
}
