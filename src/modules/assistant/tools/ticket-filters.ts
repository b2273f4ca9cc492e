// The ticket list's filters as the assistant's tools take them (search_tickets, and
// bulk_update_tickets when it names its tickets by a search): the same filters as GET /v1/tickets,
// run by the list itself (listTickets) with the person's context, so a search finds exactly what
// their ticket list would: live tickets, spam left out, no private team they are not in.
import { type Static, Type } from '@sinclair/typebox';
import { listTickets } from '../../tickets/list.js';
import type { TicketView } from '../../tickets/queries.js';
import type { ListTicketsQuery } from '../../tickets/schemas.js';
import { PRIORITIES } from '../../tickets/schemas.js';
import { refusalsAsToolErrors, StatusArg } from './common.js';
import { type ToolEnv, ToolError } from './types.js';

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const UUID_RE = new RegExp(UUID_PATTERN);
export const Uuid = (description: string) => Type.String({ pattern: UUID_PATTERN, description });

const PriorityArg = Type.Union(
  PRIORITIES.map((p) => Type.Literal(p)),
  { description: 'low, normal, high or urgent' },
);
const oneOrMany = <T extends ReturnType<typeof Type.Union>>(one: T, description: string) =>
  Type.Union([one, Type.Array(one, { minItems: 1, maxItems: 5, uniqueItems: true })], { description });

/** The filters, as the model may send them (each optional; all must hold). */
export const ticketFilterProperties = {
  query: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        'Words of the subject, the messages, or the contact name or email (partial words match); a number finds that ticket. Empty: no text filter.',
    }),
  ),
  status: Type.Optional(oneOrMany(StatusArg, 'A status or a list of statuses.')),
  priority: Type.Optional(oneOrMany(PriorityArg, 'A priority or a list of priorities.')),
  assignee_id: Type.Optional(
    Type.String({
      pattern: `^(me|none|${UUID_PATTERN.slice(1, -1)})$`,
      description: 'me (the person asking), none (unassigned), or a member’s user id.',
    }),
  ),
  label: Type.Optional(Type.String({ minLength: 1, maxLength: 50, description: 'A label name (any case).' })),
  team_id: Type.Optional(Uuid('A team’s id.')),
  view_id: Type.Optional(Uuid('A saved view’s id (list_views): its filters are added to these.')),
};
const Filters = Type.Object(ticketFilterProperties);
export type TicketFilters = Static<typeof Filters>;

const list = (v: string | string[] | undefined) => (v === undefined ? undefined : Array.isArray(v) ? v : [v]);

/** The filters as GET /v1/tickets's query (each value checked again: the loop's check is not the only one). */
export function listQueryOf(f: TicketFilters, limit: number): Static<typeof ListTicketsQuery> {
  const q: Static<typeof ListTicketsQuery> = { limit };
  const text = f.query?.trim();
  if (text) q.q = text.slice(0, 200);
  const statuses = list(f.status);
  if (statuses) q.status = statuses.join(',');
  const priorities = list(f.priority);
  if (priorities) q.priority = priorities.join(',');
  if (f.assignee_id !== undefined) {
    if (f.assignee_id !== 'me' && f.assignee_id !== 'none' && !UUID_RE.test(f.assignee_id)) {
      throw new ToolError('assignee_id must be me, none or a user id.');
    }
    q.assignee = f.assignee_id;
  }
  if (f.label !== undefined) q.tag = f.label;
  for (const key of ['team_id', 'view_id'] as const) {
    const v = f[key];
    if (v === undefined) continue;
    if (!UUID_RE.test(v)) throw new ToolError(`${key} must be an id.`);
    q[key] = v.toLowerCase();
  }
  return q;
}

/** A page of the tickets the person's list shows for these filters, and whether more match. */
export async function findTickets(
  env: ToolEnv,
  f: TicketFilters,
  limit: number,
): Promise<{ tickets: TicketView[]; more: boolean }> {
  const q = listQueryOf(f, limit);
  const bytes = await refusalsAsToolErrors(() => listTickets(env.deps, env.ctx, q));
  const page = JSON.parse(bytes.toString('utf8')) as { data: TicketView[]; next_cursor: string | null };
  return { tickets: page.data, more: page.next_cursor !== null };
}

/** What the filters say, for labels and summaries ("open, label refund, “printer”"). */
export function describeFilters(f: TicketFilters): string {
  const parts: string[] = [];
  if (f.query?.trim()) parts.push(`“${f.query.trim()}”`);
  const statuses = list(f.status);
  if (statuses) parts.push(statuses.join(' or '));
  const priorities = list(f.priority);
  if (priorities) parts.push(`${priorities.join(' or ')} priority`);
  if (f.assignee_id === 'me') parts.push('assigned to me');
  else if (f.assignee_id === 'none') parts.push('unassigned');
  else if (f.assignee_id) parts.push('assigned to a member');
  if (f.label) parts.push(`label ${f.label}`);
  if (f.team_id) parts.push('of a team');
  if (f.view_id) parts.push('in a view');
  return parts.join(', ');
}
