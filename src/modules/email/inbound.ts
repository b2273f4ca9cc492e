// The inbound job: one spooled mail (inbound_emails, ingest.ts) → a message on a ticket.
//
// 1. Parse (parse.ts). Mail mailparser refuses, or that takes longer than a minute, is marked
//    `failed` with the reason; the raw bytes stay. Nothing here throws for a bad mail.
// 2. Delivery reports (bounceOf) mark our outbound message `bounced` (message.updated) and
//    never open a ticket.
// 3. De-duplication: one message per mailbox and Message-ID (dedupe_key: the SHA-256 of the
//    raw bytes for mail without one). Checked first, and enforced by the unique index: the
//    message insert does ON CONFLICT DO NOTHING and a conflict rolls the whole write back, so
//    two copies processed at once still make one message and one ticket.
// 4. Who: the From address (lower-cased) becomes or finds the contact; for a listed
//    trusted_form_sender whose mail passed DMARC at a trusted server (INBOUND_AUTHSERV_IDS),
//    the Reply-To visitor does. auth_failed is a DMARC fail at a trusted server.
// 5. Threading: In-Reply-To and References against every Message-ID stored or sent in the
//    workspace (never another's); then a signed ticket token in the subject or a recipient
//    address; then a bare "[#n]" only when the sender already takes part in ticket n;
//    otherwise a new email ticket in the mailbox's team. A closed ticket gets a follow-up
//    ticket (custom.follow_up_of) instead of the message.
// 6. Status (tickets/inbound.ts): a customer's mail reopens a pending, on_hold or solved
//    ticket; a mail failing sender checks changes nothing and says so in a status_changed
//    activity (reason sender_unverified); automatic mail (autoSubmitted: auto-replies,
//    lists, bulk, no-reply senders) is added without touching the status, so another help
//    desk's auto-responder can never reopen a ticket or ping-pong with us, and it is marked
//    (email_auto_submitted) so it never gets an auto-reply.
// 7. A blocked contact's mail becomes a new ticket marked spam: kept, out of every default
//    list, never threaded into or reopening a real conversation.
// The message, its events and the spool row's `processed` mark commit together.
import { createHash } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import type { Unit } from '../../platform/db/tx.js';
import { inlineSrc } from '../attachments/inline.js';
import { storageKeyOf } from '../attachments/service.js';
import { findOrCreateContactByEmail } from '../contacts/service.js';
import {
  appendInboundMessage,
  createInboundTicket,
  DuplicateInboundMessage,
  type InboundFile,
  type InboundMessage,
  type InboundMode,
  lockTicketById,
  markMessageBounced,
} from '../tickets/inbound.js';
import type { TicketRow } from '../tickets/queries.js';
import { authResults, formSender } from './auth.js';
import { autoSubmitted, bounceOf } from './classify.js';
import type { InboundDelivered } from './delivered.js';
import { INBOUND_JOB, INBOUND_SWEEP_JOB, sweepInbound } from './ingest.js';
import { type InboundMail, parseInbound, rewriteCids } from './parse.js';
import { threadCandidates, ticketTokenOf } from './threading.js';
import { verifyTicketTokenFor } from './ticket-token.js';

/** A row that failed this many times (errors of ours, not of the mail) is marked failed. */
export const MAX_INBOUND_ATTEMPTS = 8;
/** The longest one mail may take to parse before it is marked failed. */
export const PARSE_TIMEOUT_MS = 60_000;

export type InboundResult =
  | 'created' // a new ticket
  | 'appended' // a message on an existing ticket
  | 'follow_up' // a new ticket following a closed one
  | 'spam' // a blocked contact's mail, as a spam ticket
  | 'duplicate' // the mailbox already had this Message-ID
  | 'bounced' // a delivery report marked our message bounced
  | 'ignored' // a delivery report for nothing of ours, or our own mail coming back
  | 'failed' // the mail could not be read (raw kept)
  | 'waiting' // the mail it answers arrived first and is not processed yet: runs again shortly
  | 'skipped'; // nothing to do (already processed, unrouted, gone)

export interface InboundOutcome {
  result: InboundResult;
  ticketId: string | null;
  messageId: string | null;
}

type Listener = (info: InboundDelivered) => Promise<void> | void;
const listeners = new WeakMap<Deps, Listener[]>();

/**
 * Calls `fn` after each inbound mail that became a message has committed (best effort: a
 * listener's failure is logged; durable work should queue a job). The outbound side's
 * auto-reply hangs here.
 */
export function onInboundMessage(deps: Deps, fn: Listener): void {
  const list = listeners.get(deps) ?? [];
  list.push(fn);
  listeners.set(deps, list);
}

const EMAIL_RE = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/;
const isEmail = (s: string | null | undefined): s is string =>
  typeof s === 'string' && s.length <= 320 && EMAIL_RE.test(s);
const short = (s: string, n = 500) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${Math.round(ms / 1000)} s`)), ms);
    timer.unref();
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

async function finish(
  db: Kysely<DB>,
  id: string,
  status: 'processed' | 'failed',
  note: string | null,
  ticketId: string | null = null,
  messageId: string | null = null,
): Promise<void> {
  await db
    .updateTable('inbound_emails')
    .set({
      status,
      error: note === null ? null : short(note, 2000),
      ticket_id: ticketId,
      result_message_id: messageId,
      processed_at: new Date(),
    })
    .where('id', '=', id)
    .where('status', '=', 'received')
    .execute();
}

/** A live ticket (following merges), or null. */
async function liveTicket(db: Kysely<DB>, workspaceId: string, id: string): Promise<string | null> {
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
const PARENT_WAIT_MS = 1000;

/**
 * The mail this one answers (by its Message-IDs) arrived before it in the workspace and is
 * still waiting to be processed, and no message of the workspace has any of those ids yet.
 */
async function parentStillQueued(
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
async function findThread(
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

/** Stores the attachments' bytes (before the transaction: storage is not transactional). */
async function storeFiles(deps: Deps, workspaceId: string, mail: InboundMail): Promise<InboundFile[]> {
  const files: InboundFile[] = [];
  try {
    for (const a of mail.attachments) {
      const id = newId();
      const key = storageKeyOf(workspaceId, id);
      await deps.storage.put(key, a.content, a.content.length, a.content_type);
      files.push({
        id,
        filename: a.filename,
        content_type: a.content_type,
        size_bytes: a.content.length,
        inline: a.inline,
        content_id: a.content_id,
        storage_key: key,
        sha256: createHash('sha256').update(a.content).digest('hex'),
      });
    }
  } catch (err) {
    await dropFiles(deps, files);
    throw err;
  }
  return files;
}

async function dropFiles(deps: Deps, files: InboundFile[]): Promise<void> {
  for (const f of files) await deps.storage.delete(f.storage_key).catch(() => {});
}

export async function processInbound(deps: Deps, id: string): Promise<InboundOutcome> {
  const db = deps.database.db;
  const none = (result: InboundResult): InboundOutcome => ({ result, ticketId: null, messageId: null });
  const row = await db
    .updateTable('inbound_emails')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .where('status', '=', 'received')
    .returning(['workspace_id', 'mailbox_id', 'recipient', 'raw', 'attempts', 'error'])
    .executeTakeFirst();
  if (!row || row.workspace_id === null || row.mailbox_id === null) return none('skipped');
  const workspaceId = row.workspace_id;
  const mailboxId = row.mailbox_id;
  if (row.attempts > MAX_INBOUND_ATTEMPTS) {
    await finish(db, id, 'failed', `gave up after ${MAX_INBOUND_ATTEMPTS} attempts: ${row.error ?? 'unknown error'}`);
    return none('failed');
  }

  let mail: InboundMail;
  try {
    // bytea comes back as a Uint8Array from the embedded database: view it as a Buffer.
    const bytes = row.raw as Uint8Array;
    const raw = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    mail = await withTimeout(parseInbound(raw), PARSE_TIMEOUT_MS, 'parsing');
  } catch (err) {
    await finish(db, id, 'failed', `unreadable mail: ${(err as Error).message}`);
    deps.log.warn({ inbound_id: id, err: short((err as Error).message, 200) }, 'inbound mail could not be parsed');
    return none('failed');
  }

  const mailbox = await db
    .selectFrom('mailboxes')
    .select(['team_id', 'trusted_form_senders'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', mailboxId)
    .executeTakeFirst();
  if (!mailbox) {
    await finish(db, id, 'failed', 'the mailbox was deleted before the mail was processed');
    return none('failed');
  }

  // Delivery reports: mark our message, never a ticket.
  const bounce = bounceOf(mail);
  if (bounce) {
    const ours = bounce.original_message_id
      ? await db
          .selectFrom('messages')
          .select(['id', 'ticket_id'])
          .where('workspace_id', '=', workspaceId)
          .where('email_message_id', '=', bounce.original_message_id)
          .where('direction', '=', 'outbound')
          .executeTakeFirst()
      : undefined;
    if (!ours) {
      await finish(db, id, 'processed', 'ignored: a delivery report about no message of ours');
      return none('ignored');
    }
    if (bounce.failed.length === 0) {
      await finish(
        db,
        id,
        'processed',
        'ignored: a delivery report without a permanent failure',
        ours.ticket_id,
        ours.id,
      );
      return { result: 'ignored', ticketId: ours.ticket_id, messageId: ours.id };
    }
    const why = bounce.failed
      .map((f) => `${f.address}: ${[f.status, f.diagnostic].filter(Boolean).join(' ') || 'failed'}`)
      .join('; ');
    await deps.writer.run(workspaceId, async (u) => {
      await markMessageBounced(deps, u, ours.id, short(why, 1000));
      await markProcessed(u, id, null, ours.ticket_id, ours.id);
    });
    return { result: 'bounced', ticketId: ours.ticket_id, messageId: ours.id };
  }

  // Our own mail coming back (a copy to the mailbox, a forwarding loop): nothing to add.
  if (mail.message_id) {
    const own = await db
      .selectFrom('messages')
      .select(['id', 'ticket_id'])
      .where('workspace_id', '=', workspaceId)
      .where('email_message_id', '=', mail.message_id)
      .where('direction', '=', 'outbound')
      .executeTakeFirst();
    if (own) {
      await finish(db, id, 'processed', 'ignored: our own outbound message', own.ticket_id, own.id);
      return { result: 'ignored', ticketId: own.ticket_id, messageId: own.id };
    }
  }

  const duplicate = () =>
    db
      .selectFrom('messages')
      .select(['id', 'ticket_id'])
      .where('workspace_id', '=', workspaceId)
      .where('mailbox_id', '=', mailboxId)
      .where('email_message_id', '=', mail.dedupe_key)
      .executeTakeFirst();
  const before = await duplicate();
  if (before) {
    await finish(db, id, 'processed', 'duplicate: the mailbox already has this message', before.ticket_id, before.id);
    return { result: 'duplicate', ticketId: before.ticket_id, messageId: before.id };
  }

  // Who wrote it.
  const auto = autoSubmitted(mail.headers);
  const auth = authResults(mail.headers, deps.config.inboundAuthservIds);
  const visitor = formSender(
    mail.from?.address,
    mail.reply_to?.address,
    auth.dmarc === 'pass',
    mailbox.trusted_form_senders ?? [],
  );
  const author = visitor ? (mail.reply_to ?? null) : (mail.from ?? mail.reply_to ?? null);
  const fromEmail = author && isEmail(author.address) ? author.address : '';
  const fromName = (author?.name ?? '').slice(0, 200);
  const replyTo =
    !visitor && mail.reply_to && mail.reply_to.address !== fromEmail && isEmail(mail.reply_to.address)
      ? mail.reply_to.address
      : null;

  // Several workers process mail at once: a reply whose parent arrived earlier but is still
  // queued waits for it (else it would open a ticket of its own). Only earlier mail is waited
  // for, so two mails can never wait for each other; the wait costs no attempt.
  if (await parentStillQueued(db, workspaceId, id, threadCandidates(mail))) {
    await db
      .updateTable('inbound_emails')
      .set((eb) => ({ attempts: eb('attempts', '-', 1) }))
      .where('id', '=', id)
      .execute();
    await deps.jobs.send(
      INBOUND_JOB,
      { id },
      { startAfter: new Date(Date.now() + PARENT_WAIT_MS), retryLimit: 5, retryDelaySeconds: 15 },
    );
    return none('waiting');
  }

  const files = await storeFiles(deps, workspaceId, mail);
  const cids = new Map<string, string>();
  for (const f of files) {
    if (f.content_id) cids.set(f.content_id, inlineSrc(deps.config.publicUrl, f.id));
  }
  const bodyHtml = cids.size > 0 ? rewriteCids(mail.visible_html, cids) : mail.visible_html;
  const message: Omit<InboundMessage, 'contactId'> = {
    mailboxId,
    rawInboundId: id,
    subject: mail.subject,
    fromEmail,
    fromName,
    to: mail.to.map((a) => a.address).slice(0, 100),
    cc: mail.cc.map((a) => a.address).slice(0, 100),
    bodyHtml,
    bodyText: mail.visible_text,
    hasQuoted: mail.has_quoted,
    originalHtml: mail.has_quoted ? (cids.size > 0 ? rewriteCids(mail.html, cids) : mail.html) : null,
    originalText: mail.has_quoted ? mail.text : null,
    replyTo,
    authFailed: auth.auth_failed,
    formSender: visitor ? (mail.from?.address ?? null) : null,
    messageId: mail.dedupe_key,
    messageIdSent: mail.as_sent.message_id,
    inReplyTo: mail.as_sent.in_reply_to[0] ?? null,
    references: mail.as_sent.references,
    autoSubmitted: auto,
    files,
  };

  let delivered: InboundDelivered | null = null;
  let outcome: InboundOutcome;
  try {
    outcome = await deps.writer.run(workspaceId, async (u) => {
      let contactId: string | null = null;
      let blocked = false;
      if (fromEmail) {
        contactId = await findOrCreateContactByEmail(u, fromEmail, fromName || null);
        const c = await u.trx
          .selectFrom('contacts')
          .select('blocked')
          .where('workspace_id', '=', workspaceId)
          .where('id', '=', contactId)
          .executeTakeFirst();
        blocked = c?.blocked === true;
      }
      const m: InboundMessage = { ...message, contactId };
      const subject = mail.subject.trim() === '' ? '(no subject)' : mail.subject;
      const open = async (custom: Record<string, unknown>, spam: boolean, result: InboundResult) => {
        const created = await createInboundTicket(
          deps,
          u,
          { subject, mailboxId, teamId: mailbox.team_id, contactId, spam, custom },
          m,
        );
        return { created, result };
      };

      let done: { ticket: TicketRow; message: { id: string } };
      let result: InboundResult;
      let newTicket = true;
      if (blocked) {
        const r = await open({}, true, 'spam');
        done = r.created;
        result = r.result;
      } else {
        const threadId = await findThread(deps, u.trx, workspaceId, mail, row.recipient, fromEmail || null);
        const ticket = threadId ? await lockTicketById(u, threadId) : null;
        if (!ticket) {
          const r = await open({}, false, 'created');
          done = r.created;
          result = r.result;
        } else if (ticket.status === 'closed' && auto === null) {
          // A customer message on a closed ticket starts a new ticket linked to it (custom.follow_up_of).
          const r = await open({ follow_up_of: { id: ticket.id, number: Number(ticket.number) } }, false, 'follow_up');
          done = r.created;
          result = r.result;
        } else {
          const mode: InboundMode = auth.auth_failed ? 'unverified' : auto !== null ? 'automatic' : 'customer';
          done = await appendInboundMessage(deps, u, ticket, m, mode);
          result = 'appended';
          newTicket = false;
        }
      }
      await markProcessed(u, id, null, done.ticket.id, done.message.id);
      delivered = {
        workspaceId,
        mailboxId,
        ticketId: done.ticket.id,
        messageId: done.message.id,
        newTicket,
        spam: blocked,
        contactId,
        fromEmail,
        autoSubmitted: auto,
        authFailed: auth.auth_failed,
      };
      return { result, ticketId: done.ticket.id, messageId: done.message.id };
    });
  } catch (err) {
    await dropFiles(deps, files);
    if (err instanceof DuplicateInboundMessage) {
      // Another copy won the race (the unique index waited for it to commit).
      const first = await duplicate();
      const [ticketId, messageId] = [first?.ticket_id ?? null, first?.id ?? null];
      await finish(db, id, 'processed', 'duplicate: the mailbox already has this message', ticketId, messageId);
      return { result: 'duplicate', ticketId, messageId };
    }
    throw err;
  }

  const info = delivered as InboundDelivered | null;
  if (info) {
    for (const fn of listeners.get(deps) ?? []) {
      try {
        await fn(info);
      } catch (err) {
        deps.log.warn({ inbound_id: id, err: short((err as Error).message, 200) }, 'inbound listener failed');
      }
    }
  }
  return outcome;
}

async function markProcessed(
  u: Unit,
  id: string,
  note: string | null,
  ticketId: string | null,
  messageId: string | null,
): Promise<void> {
  await u.trx
    .updateTable('inbound_emails')
    .set({
      status: 'processed',
      error: note,
      ticket_id: ticketId,
      result_message_id: messageId,
      processed_at: new Date(),
    })
    .where('id', '=', id)
    .execute();
}

/** The job: process one row; on an error of ours, note it on the row and let the queue retry. */
export async function runInboundJob(deps: Deps, id: string): Promise<void> {
  try {
    await processInbound(deps, id);
  } catch (err) {
    const message = short((err as Error).message ?? String(err), 2000);
    await deps.database.db
      .updateTable('inbound_emails')
      .set({ error: message })
      .where('id', '=', id)
      .where('status', '=', 'received')
      .execute()
      .catch(() => {});
    throw err;
  }
}

export async function registerInboundJobs(deps: Deps): Promise<void> {
  await deps.jobs.work<{ id: string }>(INBOUND_JOB, async (data) => runInboundJob(deps, data.id), { concurrency: 4 });
  await deps.jobs.work(INBOUND_SWEEP_JOB, async () => {
    const n = await sweepInbound(deps);
    if (n > 0) deps.log.info({ inbound: n }, 'inbound mail queued again by the sweep');
  });
  await deps.jobs.schedule(INBOUND_SWEEP_JOB, '* * * * *');
}
