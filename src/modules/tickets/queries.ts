// The SQL of tickets: the one select every read uses (ticket, contact, assignee, team privacy),
// how a ticket is named in a path (id, number or #number), and who may see which team's tickets.
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import { isUuid } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { tagRefsJson } from '../tags/sql.js';
import type { Ticket } from './schemas.js';

export type TicketView = Static<typeof Ticket>;

/** A timestamptz as the API writes it (RFC 3339, UTC, milliseconds), like Date#toISOString. */
export const isoSql = (col: string) => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The Ticket object of the API, built by PostgreSQL as JSON text over `tickets t`, `contacts c`
 * and `users a` (joined as in ticketQuery). Lists and GET send this text as it comes, so Node
 * neither parses the row's timestamps nor serialises the page; every other use parses it
 * (presentTicket), so there is one definition of the shape. Only the schema's fields are named
 * here: this is the allow-list a response schema would otherwise be (a test checks each read
 * against the Ticket schema with no extra properties).
 */
export const TICKET_JSON = sql<string>`${sql.raw(`json_build_object(
    'id', t.id, 'number', t.number, 'subject', t.subject, 'status', t.status, 'priority', t.priority,
    'severity', t.severity, 'channel', t.channel, 'mailbox_id', t.mailbox_id,
    'contact', CASE WHEN t.contact_id IS NOT NULL THEN json_build_object(
        'id', t.contact_id, 'name', c.name, 'email', c.email, 'avatar_url', c.avatar_url) END,
    'assignee', CASE WHEN t.assignee_id IS NOT NULL AND a.name IS NOT NULL THEN json_build_object(
        'id', t.assignee_id, 'name', a.name, 'email', coalesce(a.email, ''), 'avatar_url', a.avatar_url) END,
    'team_id', t.team_id,
    'tags', `)}${tagRefsJson('ticket', 't')}${sql.raw(`,
    'sla', CASE WHEN jsonb_typeof(t.sla) = 'object' THEN json_build_object(
        'policy_id', t.sla->'policy_id', 'first_response_due_at', t.sla->'first_response_due_at',
        'next_response_due_at', t.sla->'next_response_due_at', 'resolution_due_at', t.sla->'resolution_due_at', 'breached', coalesce(t.sla->'breached', 'false')) END,
    'first_responded_at', ${isoSql('t.first_responded_at')}, 'solved_at', ${isoSql('t.solved_at')},
    'snoozed_until', ${isoSql('t.snoozed_until')}, 'last_message_at', ${isoSql('t.last_message_at')},
    'last_customer_message_at', ${isoSql('t.last_customer_message_at')},
    'last_message_preview', t.last_message_preview, 'message_count', t.message_count, 'spam', t.spam,
    'csat', CASE WHEN jsonb_typeof(t.csat) = 'object' THEN json_build_object(
        'score', t.csat->'score', 'comment', t.csat->'comment') END,
    'custom', coalesce(t.custom, '{}'::jsonb), 'fields', coalesce(t.fields, '{}'::jsonb),
    'created_at', ${isoSql('t.created_at')}, 'updated_at', ${isoSql('t.updated_at')})::text`)}`;

/** `tickets t` with the contact (`c`), the assignee (`a`) and the team (`tm`) a Ticket shows. */
export function ticketFrom(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('tickets as t')
    .leftJoin('contacts as c', (j) =>
      j.onRef('c.workspace_id', '=', 't.workspace_id').onRef('c.id', '=', 't.contact_id'),
    )
    .leftJoin('users as a', 'a.id', 't.assignee_id')
    .leftJoin('teams as tm', (j) => j.onRef('tm.workspace_id', '=', 't.workspace_id').onRef('tm.id', '=', 't.team_id'))
    .where('t.workspace_id', '=', workspaceId);
}

/**
 * The workspace's tickets with their team only (what the list's filters read), for queries
 * that need no contact or assignee: PostgreSQL drops an unused left join, but still counts its
 * columns as read, which rules out an index-only scan.
 */
export function ticketScope(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('tickets as t')
    .leftJoin('teams as tm', (j) => j.onRef('tm.workspace_id', '=', 't.workspace_id').onRef('tm.id', '=', 't.team_id'))
    .where('t.workspace_id', '=', workspaceId);
}

/** Every column the services use, the private team (null unless private) and the JSON. */
export function ticketQuery(db: Kysely<DB>, workspaceId: string) {
  return ticketFrom(db, workspaceId).select([
    't.id',
    't.number',
    't.subject',
    't.status',
    't.priority',
    't.severity',
    't.channel',
    't.mailbox_id',
    't.contact_id',
    'c.email as contact_email',
    't.assignee_id',
    't.team_id',
    sql<string | null>`case when tm.private then tm.id end`.as('private_team_id'),
    't.sla',
    't.first_responded_at',
    't.solved_at',
    't.snoozed_until',
    't.last_message_at',
    't.last_customer_message_at',
    't.message_count',
    't.spam',
    't.custom',
    't.fields',
    't.merged_into_id',
    't.deleted_at',
    't.created_at',
    't.updated_at',
    TICKET_JSON.as('json'),
  ]);
}

export type TicketRow = Awaited<ReturnType<ReturnType<typeof ticketQuery>['executeTakeFirstOrThrow']>>;

/** The Ticket object of a row (the JSON PostgreSQL built, parsed). */
export function presentTicket(r: { json: string }): TicketView {
  return JSON.parse(r.json) as TicketView;
}

/** How a path names a ticket: a UUID, a number, or `#` + number. */
export type TicketRef = { id: string } | { number: number };

export function parseTicketRef(param: string): TicketRef | null {
  const p = param.trim();
  if (isUuid(p)) return { id: p.toLowerCase() };
  const m = /^#?([1-9][0-9]{0,14})$/.exec(p);
  return m ? { number: Number(m[1]) } : null;
}

/** Live tickets (not spam) of each of these contacts (contacts without tickets are absent). */
export async function ticketCountsOfContacts(
  db: Kysely<DB>,
  workspaceId: string,
  contactIds: string[],
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (contactIds.length === 0) return out;
  const rows = await db
    .selectFrom('tickets')
    .select(['contact_id', sql<number>`count(*)::int`.as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('contact_id', 'in', contactIds)
    .where('deleted_at', 'is', null)
    .where('spam', '=', false)
    .groupBy('contact_id')
    .execute();
  for (const r of rows) out.set(r.contact_id!, Number(r.n));
  return out;
}

/** Open, pending and on-hold tickets (live, not spam) assigned to each of these members. */
export async function openTicketsOfAssignees(
  db: Kysely<DB>,
  workspaceId: string,
  userIds: string[],
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (userIds.length === 0) return out;
  const rows = await db
    .selectFrom('tickets')
    .select(['assignee_id', sql<number>`count(*)::int`.as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('assignee_id', 'in', userIds)
    .where('status', 'in', ['open', 'pending', 'on_hold'])
    .where('deleted_at', 'is', null)
    .where('spam', '=', false)
    .groupBy('assignee_id')
    .execute();
  for (const r of rows) out.set(r.assignee_id!, Number(r.n));
  return out;
}

/** A ticket as it is now inside the unit's transaction. */
export async function reload(u: Unit, id: string): Promise<TicketRow> {
  return ticketQuery(u.trx, u.workspaceId).where('t.id', '=', id).executeTakeFirstOrThrow();
}

/** A live ticket (following merges, at most five), or null (deleted, or a chain too long). */
export async function liveTicket(db: Kysely<DB>, workspaceId: string, id: string): Promise<string | null> {
  let current = id;
  for (let hop = 0; hop < 5; hop++) {
    const t = await db
      .selectFrom('tickets')
      .select(['id', 'merged_into_id', 'deleted_at'])
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', current)
      .executeTakeFirst();
    if (!t) return null;
    if (t.merged_into_id) {
      current = t.merged_into_id;
      continue;
    }
    return t.deleted_at === null ? t.id : null;
  }
  return null;
}
