// What the assistant's tools share: the errors the model is told about, who may do what, how a
// ticket is named and shown, and how long text is kept short. Everything a tool reads goes through
// the modules' own service functions with the person's context, so it sees what the API would
// show them and nothing else.
import { Type } from '@sinclair/typebox';
import { type RequestContext, type Role, roleAtLeast, throughAssistant } from '../../../platform/http/context.js';
import { ApiError } from '../../../platform/http/errors.js';
import type { TicketRow, TicketView } from '../../tickets/queries.js';
import { presentTicket } from '../../tickets/queries.js';
import { STATUSES } from '../../tickets/schemas.js';
import { findVisibleTicket } from '../../tickets/service.js';
import { type RefT, type ToolEnv, ToolError } from './types.js';

/** A ticket argument: its id or its number (`#123` too). */
export const TicketArg = Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Integer({ minimum: 1 })], {
  description: 'The ticket: its id, or its number (123 or "#123").',
});

export const StatusArg = Type.Union(
  STATUSES.map((s) => Type.Literal(s)),
  { description: 'open, pending, on_hold, solved or closed' },
);

/**
 * Runs a tool's work, turning the API's refusals (a record not found or not visible, a value the
 * API refuses) into ToolError: the model reads the detail and where it points; nothing changed.
 */
export async function refusalsAsToolErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) {
      const where = err.errors?.map((e) => `${e.location}: ${e.message}`).join('; ');
      throw new ToolError(where ? `${err.detail} (${where})` : err.detail);
    }
    throw err;
  }
}

/** Refuses a person below `min` (viewers read but never write; reports need an agent; automations an admin). */
export function requireRole(ctx: RequestContext, min: Role, what: string): void {
  if (ctx.actor.kind !== 'member' || ctx.role === null || !roleAtLeast(ctx.role, min)) {
    throw new ToolError(`Your role (${ctx.role ?? 'none'}) cannot ${what}: that needs ${min} or higher.`);
  }
}

/** The person's context for an approved write: recorded as actor type ai with them as actor.user. */
export const writerContext = (env: ToolEnv): RequestContext => throughAssistant(env.ctx, env.model);

/** A ticket argument in a step's label, for people: "ticket #123", or "a ticket" for an id. */
export function ticketLabel(ticket: string | number): string {
  const m = /^#?([1-9][0-9]{0,14})$/.exec(String(ticket).trim());
  return m ? `ticket #${m[1]}` : 'a ticket';
}

/** The ticket argument as the API's path names it. */
export const ticketParam = (ticket: string | number): string => String(ticket).trim();

/** A live ticket the person may see, or ToolError "Ticket not found." (missing, another workspace, a hidden team). */
export async function visibleTicket(env: ToolEnv, ticket: string | number): Promise<TicketRow> {
  return refusalsAsToolErrors(() => findVisibleTicket(env.deps.database.db, env.ctx, ticketParam(ticket)));
}

export const ticketRefOf = (t: { id: string; number: number | string; subject: string }): RefT => ({
  kind: 'ticket',
  id: t.id,
  label: t.subject,
  number: Number(t.number),
});

/** The fields of a ticket the model gets (customer-written text stays in its own fields, as data). */
export function ticketFacts(t: TicketView) {
  return {
    id: t.id,
    number: t.number,
    subject: t.subject,
    status: t.status,
    priority: t.priority,
    severity: t.severity,
    channel: t.channel,
    contact: t.contact ? { id: t.contact.id, name: t.contact.name, email: t.contact.email } : null,
    assignee: t.assignee ? { id: t.assignee.id, name: t.assignee.name } : null,
    team_id: t.team_id,
    labels: t.tags.map((x) => x.name),
    sla: t.sla
      ? {
          first_response_due_at: t.sla.first_response_due_at,
          next_response_due_at: t.sla.next_response_due_at,
          resolution_due_at: t.sla.resolution_due_at,
          breached: t.sla.breached,
        }
      : null,
    fields: t.fields,
    message_count: t.message_count,
    last_message_preview: t.last_message_preview,
    last_message_at: t.last_message_at,
    last_customer_message_at: t.last_customer_message_at,
    snoozed_until: t.snoozed_until,
    created_at: t.created_at,
  };
}

export const rowView = (r: TicketRow): TicketView => presentTicket(r);

/** Text cut to `max` characters, saying how much was left out. */
export function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max).trimEnd()} … [${text.length - max} more characters not shown]`;
}

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
