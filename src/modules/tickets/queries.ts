// The SQL of tickets: the one select every read uses (ticket, contact, assignee, team privacy),
// how a ticket is named in a path (id, number or #number), and who may see which team's tickets.
import type { Static } from '@sinclair/typebox';
import { type Kysely, sql } from 'kysely';
import { isUuid } from '../../platform/crypto/random.js';
import { microsOf } from '../../platform/db/keyset.js';
import type { DB } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/http/context.js';
import { iso } from '../../platform/http/schemas.js';
import { tagRefsJson } from '../tags/sql.js';
import type { Ticket } from './schemas.js';

export type TicketView = Static<typeof Ticket>;

/** Every column a Ticket shows, plus its private team (null when it has none or it is not private). */
export function ticketQuery(db: Kysely<DB>, workspaceId: string) {
  return db
    .selectFrom('tickets as t')
    .leftJoin('contacts as c', (j) =>
      j.onRef('c.workspace_id', '=', 't.workspace_id').onRef('c.id', '=', 't.contact_id'),
    )
    .leftJoin('users as a', 'a.id', 't.assignee_id')
    .leftJoin('teams as tm', (j) => j.onRef('tm.workspace_id', '=', 't.workspace_id').onRef('tm.id', '=', 't.team_id'))
    .select([
      't.id',
      't.number',
      't.subject',
      't.status',
      't.priority',
      't.severity',
      't.channel',
      't.mailbox_id',
      't.contact_id',
      'c.name as contact_name',
      'c.email as contact_email',
      'c.avatar_url as contact_avatar_url',
      't.assignee_id',
      'a.name as assignee_name',
      'a.email as assignee_email',
      'a.avatar_url as assignee_avatar_url',
      't.team_id',
      sql<string | null>`case when tm.private then tm.id end`.as('private_team_id'),
      't.sla',
      't.first_responded_at',
      't.solved_at',
      't.snoozed_until',
      't.last_message_at',
      't.last_customer_message_at',
      't.last_message_preview',
      't.message_count',
      't.spam',
      't.csat',
      't.custom',
      't.fields',
      't.merged_into_id',
      't.deleted_at',
      't.created_at',
      't.updated_at',
      't.priority_rank',
      't.severity_rank',
      tagRefsJson('ticket', 't').as('tags'),
      microsOf('t.last_message_at').as('last_message_us'),
      microsOf('t.created_at').as('created_us'),
      sql<number>`(extract(epoch from coalesce(t.due_at, 'infinity'::timestamptz)) * 1000000)::float8`.as('due_us'),
    ])
    .where('t.workspace_id', '=', workspaceId);
}

export type TicketRow = Awaited<ReturnType<ReturnType<typeof ticketQuery>['executeTakeFirstOrThrow']>>;

export function presentTicket(r: TicketRow): TicketView {
  return {
    id: r.id,
    number: Number(r.number),
    subject: r.subject,
    status: r.status as TicketView['status'],
    priority: r.priority as TicketView['priority'],
    severity: r.severity as TicketView['severity'],
    channel: r.channel as TicketView['channel'],
    mailbox_id: r.mailbox_id,
    contact:
      r.contact_id === null
        ? null
        : { id: r.contact_id, name: r.contact_name, email: r.contact_email, avatar_url: r.contact_avatar_url },
    assignee:
      r.assignee_id === null || r.assignee_name === null
        ? null
        : {
            id: r.assignee_id,
            name: r.assignee_name,
            email: r.assignee_email ?? '',
            avatar_url: r.assignee_avatar_url,
          },
    team_id: r.team_id,
    tags: r.tags ?? [],
    sla: (r.sla as TicketView['sla']) ?? null,
    first_responded_at: iso(r.first_responded_at),
    solved_at: iso(r.solved_at),
    snoozed_until: iso(r.snoozed_until),
    last_message_at: iso(r.last_message_at)!,
    last_customer_message_at: iso(r.last_customer_message_at),
    last_message_preview: r.last_message_preview,
    message_count: r.message_count,
    spam: r.spam,
    csat: (r.csat as TicketView['csat']) ?? null,
    custom: r.custom ?? {},
    fields: r.fields ?? {},
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}

/** How a path names a ticket: a UUID, a number, or `#` + number. */
export type TicketRef = { id: string } | { number: number };

export function parseTicketRef(param: string): TicketRef | null {
  const p = param.trim();
  if (isUuid(p)) return { id: p.toLowerCase() };
  const m = /^#?([1-9][0-9]{0,14})$/.exec(p);
  return m ? { number: Number(m[1]) } : null;
}

/**
 * Private teams whose tickets the caller may not see: none for admins and owners, every
 * private team for API keys, the private teams a person is not in otherwise.
 */
export async function hiddenTeamIds(db: Kysely<DB>, ctx: RequestContext): Promise<string[]> {
  if (ctx.role === 'admin' || ctx.role === 'owner') return [];
  let q = db.selectFrom('teams').select('id').where('workspace_id', '=', ctx.workspaceId).where('private', '=', true);
  if (ctx.teams.length > 0) q = q.where('id', 'not in', ctx.teams);
  return (await q.execute()).map((r) => r.id);
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
