// Where an inbound mail belongs (step 5 of inbound.ts): the ticket it answers, found by the
// Message-IDs it cites, then by a signed ticket token, then by a bare "[#n]" from someone who
// already takes part; and whether the mail it answers is still waiting in the spool.
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { DB } from '../../platform/db/schema.js';
import { liveTicket } from '../tickets/queries.js';
import type { InboundMail } from './parse.js';
import { threadCandidates, ticketTokenOf } from './threading.js';
import { verifyTicketTokenFor } from './ticket-token.js';

/** Whether an address takes part in a ticket: its contact, or a sender or recipient of one of its messages. */
async function isParticipant(db: Kysely<DB>, workspaceId: string, ticketId: string, email: string): Promise<boolean> {
  const e = email.toLowerCase();
  const r = await sql<{ ok: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM tickets t JOIN contacts c ON c.workspace_id = t.workspace_id AND c.id = t.contact_id
       WHERE t.workspace_id = ${workspaceId} AND t.id = ${ticketId} AND lower(c.email) = ${e}
    ) OR EXISTS (
      SELECT 1 FROM messages m
       WHERE m.workspace_id = ${workspaceId} AND m.ticket_id = ${ticketId}
         AND (lower(m.from_email) = ${e} OR ${e} = ANY (m."to") OR ${e} = ANY (m.cc))
    ) AS ok`.execute(db);
  return r.rows[0]?.ok === true;
}

/** How long a reply waits before looking again for the mail it answers. */
export const PARENT_WAIT_MS = 1000;

/**
 * The mail this one answers (by its Message-IDs) arrived before it in the workspace and is
 * still waiting to be processed, and no message of the workspace has any of those ids yet.
 */
export async function parentStillQueued(
  db: Kysely<DB>,
  workspaceId: string,
  id: string,
  candidates: string[],
): Promise<boolean> {
  if (candidates.length === 0) return false;
  const ids = sql.join(candidates.slice(0, 50));
  const r = await sql<{ one: number }>`
    SELECT 1 AS one FROM inbound_emails p JOIN inbound_emails me ON me.id = ${id}
     WHERE p.workspace_id = ${workspaceId} AND p.status = 'received' AND p.message_id IN (${ids})
       AND (p.received_at, p.id) < (me.received_at, me.id)
       AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.workspace_id = ${workspaceId} AND m.email_message_id IN (${ids}))
     LIMIT 1`.execute(db);
  return r.rows.length > 0;
}

/** The ticket this mail answers, by Message-IDs, then tokens (see the top of the file), or null. */
export async function findThread(
  deps: Deps,
  db: Kysely<DB>,
  workspaceId: string,
  mail: InboundMail,
  recipient: string,
  sender: string | null,
): Promise<string | null> {
  const candidates = threadCandidates(mail);
  if (candidates.length > 0) {
    const rows = await db
      .selectFrom('messages')
      .select(['email_message_id', 'ticket_id'])
      .where('workspace_id', '=', workspaceId)
      .where('email_message_id', 'in', candidates)
      .execute();
    for (const id of candidates) {
      for (const r of rows.filter((x) => x.email_message_id === id)) {
        const live = await liveTicket(db, workspaceId, r.ticket_id);
        if (live) return live;
      }
    }
  }
  const addresses = [...mail.to, ...mail.cc].map((a) => a.address);
  if (recipient) addresses.push(recipient.toLowerCase());
  for (const ref of ticketTokenOf(mail.subject, addresses)) {
    let number: number | null = null;
    if (ref.token !== null) number = verifyTicketTokenFor(deps.config, workspaceId, ref.token);
    else number = ref.number;
    if (number === null) continue;
    const t = await db
      .selectFrom('tickets')
      .select('id')
      .where('workspace_id', '=', workspaceId)
      .where('number', '=', number)
      .executeTakeFirst();
    if (!t) continue;
    const live = await liveTicket(db, workspaceId, t.id);
    if (!live) continue;
    // A bare number is only a hint: follow it for someone already in the conversation.
    if (ref.token === null && (!sender || !(await isParticipant(db, workspaceId, live, sender)))) continue;
    return live;
  }
  return null;
}
