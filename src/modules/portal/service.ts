// What the portal writes and reads for customers (docs/help-center.md "Where customers go").
//
// - The contact form opens a ticket with channel portal: the contact found or made by its email
//   (case-insensitively, as the API and inbound mail do), the message as the customer's first
//   message (inbound, from the contact, public): a customer's message (tickets/customer-message.ts,
//   its portal part the session, none for the form) written by the one write of an email's
//   (writeCustomerMessage), so events, workflow hooks and SLA run the same way, with the contact
//   as the actor. A blocked contact's request is kept as spam, as its mail would be.
// - A signed-in customer sees their own tickets only (not deleted, not spam) and only the
//   public messages of each (replies, never notes). A reply is the customer's message on the
//   ticket under the status rules of inbound mail (a pending, on_hold or solved ticket opens
//   again); on a closed ticket it starts a follow-up ticket (custom.follow_up_of), as mail does.
import { createReadStream } from 'node:fs';
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import type { Unit } from '../../platform/db/tx.js';
import { textToHtml } from '../../platform/html/index.js';
import { type AttachmentView, attachmentsOfMessages, storageKeyOf } from '../attachments/service.js';
import { findOrCreateContactByEmail } from '../contacts/service.js';
import type { CustomerMessage, InboundFile } from '../tickets/customer-message.js';
import { writeCustomerMessage } from '../tickets/inbound.js';
import { liveTicket, type TicketRow, ticketQuery } from '../tickets/queries.js';
import type { FormFile } from './form.js';
import { queueConfirmation } from './mail.js';
import type { PortalSession } from './session.js';

export interface ContactFormInput {
  name: string;
  email: string;
  subject: string;
  message: string;
  files: FormFile[];
}

/** Moves a valid form's files into storage (the rows come with the message). */
async function storeFiles(deps: Deps, workspaceId: string, files: FormFile[]): Promise<InboundFile[]> {
  const stored: InboundFile[] = [];
  try {
    for (const f of files) {
      const id = newId();
      const key = storageKeyOf(workspaceId, id);
      await deps.storage.put(key, createReadStream(f.path), f.size, f.contentType);
      stored.push({
        id,
        filename: f.filename,
        content_type: f.contentType,
        size_bytes: f.size,
        inline: false,
        content_id: null,
        storage_key: key,
        sha256: f.sha256,
      });
    }
  } catch (err) {
    await dropStored(deps, stored);
    throw err;
  }
  return stored;
}

const dropStored = (deps: Deps, files: InboundFile[]) =>
  Promise.all(files.map((f) => deps.storage.delete(f.storage_key).catch(() => {})));

/** A customer's message from the portal: plain text, the form's files; `sessionId` null for the contact form. */
function portalMessage(
  workspaceId: string,
  p: { subject: string; email: string | null; name: string; message: string },
  contactId: string,
  sessionId: string | null,
  files: InboundFile[],
): CustomerMessage {
  return {
    workspaceId,
    contactId,
    subject: p.subject,
    from: { email: p.email, name: p.name },
    body: { html: textToHtml(p.message), text: p.message },
    files,
    uploads: [],
    channel: { kind: 'portal', sessionId },
  };
}

/** Writes files with the unit's work; removes them from storage when the work fails. */
async function withFiles<T>(
  deps: Deps,
  workspaceId: string,
  files: FormFile[],
  work: (stored: InboundFile[]) => Promise<T>,
) {
  const stored = await storeFiles(deps, workspaceId, files);
  try {
    return await work(stored);
  } catch (err) {
    await dropStored(deps, stored);
    throw err;
  }
}

/** The contact form: a new portal ticket; its number. The confirmation mail is queued after COMMIT. */
export async function openPortalTicket(
  deps: Deps,
  workspaceId: string,
  input: ContactFormInput,
): Promise<{ ticketId: string; number: number }> {
  return withFiles(deps, workspaceId, input.files, (stored) =>
    deps.writer.run(workspaceId, async (u) => {
      const contactId = await findOrCreateContactByEmail(u, input.email, input.name || null);
      const contact = await u.trx
        .selectFrom('contacts')
        .select(['blocked', 'email'])
        .where('workspace_id', '=', workspaceId)
        .where('id', '=', contactId)
        .executeTakeFirstOrThrow();
      const form = { ...input, email: contact.email ?? input.email };
      const { ticket } = await writeCustomerMessage(
        deps,
        u,
        portalMessage(workspaceId, form, contactId, null, stored),
        {
          ticket: null,
          open: { subject: input.subject, teamId: null, spam: contact.blocked },
        },
      );
      if (!contact.blocked) queueConfirmation(deps, u, ticket.id);
      return { ticketId: ticket.id, number: Number(ticket.number) };
    }),
  );
}

// --- The customer area ---------------------------------------------------------------------

export interface RequestSummary {
  number: number;
  subject: string;
  status: string;
  /** The latest public message (or the ticket's creation). */
  updatedAt: Date;
}

/** A customer's own tickets, latest public activity first (at most 100). */
export async function listRequests(deps: Deps, s: PortalSession): Promise<RequestSummary[]> {
  const rows = await deps.database.db
    .selectFrom('tickets as t')
    .select([
      't.number',
      't.subject',
      't.status',
      sql<Date>`coalesce((SELECT max(m.created_at) FROM messages m
        WHERE m.workspace_id = t.workspace_id AND m.ticket_id = t.id AND m.kind = 'reply'), t.created_at)`.as(
        'updated',
      ),
    ])
    .where('t.workspace_id', '=', s.workspaceId)
    .where('t.contact_id', '=', s.contactId)
    .where('t.deleted_at', 'is', null)
    .where('t.spam', '=', false)
    // A merged request goes on in the ticket it was merged into (its messages moved there).
    .where('t.merged_into_id', 'is', null)
    .orderBy('updated', 'desc')
    .orderBy('t.number', 'desc')
    .limit(100)
    .execute();
  return rows.map((r) => ({
    number: Number(r.number),
    subject: r.subject,
    status: r.status,
    updatedAt: new Date(r.updated),
  }));
}

export interface RequestMessage {
  id: string;
  /** Written by the customer (the contact). */
  mine: boolean;
  author: string;
  bodyHtml: string;
  createdAt: Date;
  files: AttachmentView[];
}

export interface RequestPage {
  number: number;
  subject: string;
  status: string;
  createdAt: Date;
  followUpOf: number | null;
  /** Merged into another of the customer's requests: its number (the page moves there). */
  movedTo: number | null;
  /** Merged into a request that is not the customer's: its messages went there, no reply here. */
  mergedElsewhere: boolean;
  messages: RequestMessage[];
}

const ownTicket = (db: Deps['database']['db'], s: PortalSession, number: number) =>
  ticketQuery(db, s.workspaceId)
    .where('t.number', '=', number)
    .where('t.contact_id', '=', s.contactId)
    .where('t.deleted_at', 'is', null)
    .where('t.spam', '=', false);

const followUpOf = (custom: unknown): number | null => {
  const f = (custom as { follow_up_of?: { number?: unknown } } | null)?.follow_up_of;
  return typeof f?.number === 'number' ? f.number : null;
};

/**
 * Where a merged ticket of the customer's went: the surviving ticket (following merges) when it
 * is the customer's too; null when it is someone else's (or gone).
 */
async function ownSurvivor(db: Deps['database']['db'], s: PortalSession, ticketId: string, lock: boolean) {
  const id = await liveTicket(db, s.workspaceId, ticketId);
  if (id === null) return null;
  const q = ticketQuery(db, s.workspaceId)
    .where('t.id', '=', id)
    .where('t.contact_id', '=', s.contactId)
    .where('t.deleted_at', 'is', null)
    .where('t.spam', '=', false);
  return (await (lock ? q.forUpdate('t') : q).executeTakeFirst()) ?? null;
}

/** One of the customer's tickets with its public messages; null when it is not theirs. */
export async function loadRequest(deps: Deps, s: PortalSession, number: number): Promise<RequestPage | null> {
  const db = deps.database.db;
  const t = await ownTicket(db, s, number).select('t.custom').executeTakeFirst();
  if (!t) return null;
  if (t.merged_into_id !== null) {
    const survivor = await ownSurvivor(db, s, t.id, false);
    return {
      number: Number(t.number),
      subject: t.subject,
      status: t.status,
      createdAt: new Date(t.created_at),
      followUpOf: followUpOf(t.custom),
      movedTo: survivor ? Number(survivor.number) : null,
      mergedElsewhere: survivor === null,
      messages: [],
    };
  }
  const rows = await db
    .selectFrom('messages as m')
    .leftJoin('users as u', 'u.id', 'm.author_user_id')
    .select(['m.id', 'm.author_type', 'm.author_contact_id', 'm.body_html', 'm.created_at', 'u.name as user_name'])
    .where('m.workspace_id', '=', s.workspaceId)
    .where('m.ticket_id', '=', t.id)
    .where('m.kind', '=', 'reply')
    .orderBy('m.created_at')
    .orderBy('m.id')
    .execute();
  const files = await attachmentsOfMessages(
    deps,
    db,
    s.workspaceId,
    rows.map((r) => r.id),
  );
  return {
    number: Number(t.number),
    subject: t.subject,
    status: t.status,
    createdAt: new Date(t.created_at),
    followUpOf: followUpOf(t.custom),
    movedTo: null,
    mergedElsewhere: false,
    messages: rows.map((r) => {
      const mine = r.author_type === 'contact';
      return {
        id: r.id,
        mine,
        author: mine ? 'You' : (r.user_name ?? 'Support'),
        bodyHtml: r.body_html,
        createdAt: new Date(r.created_at),
        files: (files.get(r.id) ?? []).filter((f) => !f.inline),
      };
    }),
  };
}

async function lockOwnTicket(u: Unit, s: PortalSession, number: number): Promise<TicketRow | null> {
  const row = await ownTicket(u.trx, s, number).forUpdate('t').executeTakeFirst();
  return row ?? null;
}

/**
 * A customer's reply on their ticket: the ticket's number the reply went to (a follow-up's when
 * the ticket was closed, the surviving ticket's when it was merged into another of theirs), or
 * null when the ticket is not theirs, or was merged into someone else's (nothing is stored).
 */
export async function replyToRequest(
  deps: Deps,
  s: PortalSession,
  number: number,
  input: { message: string; files: FormFile[] },
): Promise<{ number: number; followUp: boolean } | null> {
  return withFiles(deps, s.workspaceId, input.files, (stored) =>
    deps.writer.run(s.workspaceId, async (u) => {
      const asked = await lockOwnTicket(u, s, number);
      const ticket = asked?.merged_into_id ? await ownSurvivor(u.trx, s, asked.id, true) : asked;
      if (!ticket) {
        await dropStored(deps, stored);
        return null;
      }
      const reply = {
        subject: ticket.subject,
        email: s.contactEmail,
        name: s.contactName ?? '',
        message: input.message,
      };
      // On a closed ticket: a follow-up in its team (custom.follow_up_of), as mail does.
      const done = await writeCustomerMessage(deps, u, portalMessage(s.workspaceId, reply, s.contactId, s.id, stored), {
        ticket,
        open: { subject: ticket.subject, teamId: ticket.team_id, spam: false },
      });
      return { number: Number(done.ticket.number), followUp: done.result === 'follow_up' };
    }),
  );
}
