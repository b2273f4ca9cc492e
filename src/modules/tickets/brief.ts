// A ticket as the AI features read it (src/modules/ai/features/context.ts), in one statement: a
// few of its columns, its whole thread (who wrote each message, when, and the start of its
// text), and, when asked, its contact with their company. The full read path (findVisibleTicket,
// then listMessagesOfTicket, getContact and getCompany) takes four to six statements and builds
// the API's JSON of each record, none of which a prompt uses.
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import type { RequestContext } from '../../platform/http/context.js';
import { notFound } from '../../platform/http/errors.js';
import { canSeeTeam } from '../teams/access.js';
import { isoSql, parseTicketRef } from './queries.js';

export interface BriefMessage {
  kind: 'reply' | 'note';
  direction: 'inbound' | 'outbound';
  author_type: 'contact' | 'user' | 'system' | 'api' | 'ai';
  /** The member who wrote it (null: none, or the user is gone). */
  user_name: string | null;
  /** Whether a contact wrote it, and their name and email. */
  contact: { name: string | null; email: string | null } | null;
  from_name: string;
  auth_failed: boolean;
  /** The start of the message's text (`textChars` characters). */
  body_text: string;
  /** RFC 3339, UTC, milliseconds (as the API writes it). */
  created_at: string;
}

export interface BriefPerson {
  name: string | null;
  email: string | null;
  fields: Record<string, unknown>;
  company: { name: string; domain: string | null; fields: Record<string, unknown> } | null;
}

export interface TicketBrief {
  id: string;
  number: number;
  subject: string;
  status: string;
  priority: string;
  channel: string;
  /** Every message, oldest first. */
  thread: BriefMessage[];
  /** The contact and their company (null without a contact, or when not asked for). */
  contact: BriefPerson | null;
}

/** Every message of the ticket `t`, oldest first, as JSON text; `chars` of each text. */
const threadJson = (chars: number) => sql<string>`coalesce((SELECT json_agg(json_build_object(
    'kind', m.kind, 'direction', m.direction, 'author_type', m.author_type,
    'user_name', CASE WHEN m.author_user_id IS NOT NULL THEN u.name END,
    'contact', CASE WHEN m.author_contact_id IS NOT NULL THEN json_build_object('name', mc.name, 'email', mc.email) END,
    'from_name', m.from_name, 'auth_failed', m.auth_failed, 'body_text', left(m.body_text, ${chars}::int),
    'created_at', ${sql.raw(isoSql('m.created_at'))}) ORDER BY m.created_at, m.id)
  FROM messages m
  LEFT JOIN users u ON u.id = m.author_user_id
  LEFT JOIN contacts mc ON mc.workspace_id = m.workspace_id AND mc.id = m.author_contact_id
  WHERE m.workspace_id = t.workspace_id AND m.ticket_id = t.id), '[]')::text`;

/** The contact of the ticket `t` and their company, as JSON text (null without a contact). */
const personJson = sql<string | null>`(SELECT json_build_object(
    'name', c.name, 'email', c.email, 'fields', coalesce(c.fields, '{}'::jsonb),
    'company', CASE WHEN co.id IS NOT NULL THEN json_build_object(
      'name', co.name, 'domain', co.domain, 'fields', coalesce(co.fields, '{}'::jsonb)) END)::text
  FROM contacts c
  LEFT JOIN companies co ON co.workspace_id = c.workspace_id AND co.id = c.company_id
  WHERE c.workspace_id = t.workspace_id AND c.id = t.contact_id)`;

/**
 * Who reads a brief: a request's caller, or the service itself reading as admins do (every team:
 * auto_summarize's job, src/modules/ai/features/auto-summarize.ts).
 */
export type TicketReader = Pick<RequestContext, 'workspaceId' | 'role' | 'teams'>;

/**
 * The live ticket `param` names (id, number or #number) that the reader may see, as a brief;
 * 404 as findVisibleTicket answers it (missing, deleted, another workspace, a hidden team).
 * `textChars`: characters of each message's text read; `people`: the contact and company too.
 */
export async function ticketBrief(
  db: Kysely<DB>,
  ctx: TicketReader,
  param: string,
  opts: { textChars: number; people: boolean },
): Promise<TicketBrief> {
  const ref = parseTicketRef(param);
  if (!ref) throw notFound('Ticket not found.');
  const chars = Math.max(1, Math.floor(opts.textChars));
  const row = await db
    .selectFrom('tickets as t')
    .leftJoin('teams as tm', (j) => j.onRef('tm.workspace_id', '=', 't.workspace_id').onRef('tm.id', '=', 't.team_id'))
    .select([
      't.id',
      't.number',
      't.subject',
      't.status',
      't.priority',
      't.channel',
      't.deleted_at',
      sql<string | null>`case when tm.private then tm.id end`.as('private_team_id'),
      threadJson(chars).as('thread'),
      (opts.people ? personJson : sql<string | null>`null`).as('person'),
    ])
    .where('t.workspace_id', '=', ctx.workspaceId)
    .where((eb) => ('id' in ref ? eb('t.id', '=', ref.id) : eb('t.number', '=', ref.number)))
    .executeTakeFirst();
  if (!row || row.deleted_at !== null || !canSeeTeam(ctx, row.private_team_id)) throw notFound('Ticket not found.');
  return {
    id: row.id,
    number: Number(row.number),
    subject: row.subject,
    status: row.status,
    priority: row.priority,
    channel: row.channel,
    thread: JSON.parse(row.thread) as BriefMessage[],
    contact: row.person ? (JSON.parse(row.person) as BriefPerson) : null,
  };
}
