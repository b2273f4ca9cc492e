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
// 6. Status (writeCustomerMessage, tickets/inbound.ts: the one write of a customer's message,
//    the mail its email part): a customer's mail reopens a pending, on_hold or solved
//    ticket; a mail failing sender checks changes nothing and says so in a status_changed
//    activity (reason sender_unverified); automatic mail (autoSubmitted: auto-replies,
//    lists, bulk, no-reply senders) is added without touching the status, so another help
//    desk's auto-responder can never reopen a ticket or ping-pong with us, and it is marked
//    (email_auto_submitted) so it never gets an auto-reply.
// 7. A blocked contact's mail becomes a new ticket marked spam: kept, out of every default
//    list, never threaded into or reopening a real conversation.
// The message, its events and the spool row's `processed` mark commit together.
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import type { DB } from '../../platform/db/schema.js';
import { withWorkspace } from '../../platform/db/scope.js';
import type { Unit } from '../../platform/db/tx.js';
import { inlineSrc } from '../attachments/inline.js';
import { storageKeyOf } from '../attachments/service.js';
import { findOrCreateContactByEmail } from '../contacts/service.js';
import type { CustomerMessage, InboundFile } from '../tickets/customer-message.js';
import {
  DuplicateInboundMessage,
  lockTicketById,
  markMessageBounced,
  writeCustomerMessage,
} from '../tickets/inbound.js';
import { authResults, formSender } from './auth.js';
import { autoSubmitted, bounceOf } from './classify.js';
import type { InboundDelivered } from './delivered.js';
import { findThread, PARENT_WAIT_MS, parentStillQueued } from './inbound-thread.js';
import { INBOUND_JOB, INBOUND_SWEEP_JOB, type InboundJobData, sweepInbound } from './ingest.js';
import { type InboundMail, parseInbound, rewriteCids } from './parse.js';
import { threadCandidates } from './threading.js';

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

/** The spool row a run works on: claimed, its attempt counted. */
interface Spooled {
  id: string;
  workspaceId: string;
  mailboxId: string;
  recipient: string;
  raw: Uint8Array;
}

/** The mailbox's settings the routing needs. */
interface RoutingMailbox {
  team_id: string | null;
  trusted_form_senders: string[] | null;
}

/** Step 4's answer: who wrote the mail and how far to trust it. */
interface Sender {
  fromEmail: string;
  fromName: string;
  replyTo: string | null;
  /** The form's own address when a trusted form sender relayed a visitor's mail. */
  formSender: string | null;
  auto: string | null;
  authFailed: boolean;
}

const outcomeOf = (result: InboundResult, ticketId: string | null = null, messageId: string | null = null) => ({
  result,
  ticketId,
  messageId,
});

/** Steps 1 to 7 of the header, for one spooled mail. Nothing here throws for a bad mail. */
export async function processInbound(deps: Deps, id: string): Promise<InboundOutcome> {
  const spooled = await claimSpooled(deps, id);
  if (!('raw' in spooled)) return spooled;
  const mail = await parseSpooled(deps, spooled);
  if (!mail) return outcomeOf('failed');
  const mailbox = await routingMailbox(deps, spooled);
  if (!mailbox) return outcomeOf('failed');

  const handled =
    (await deliveryReport(deps, spooled, mail)) ??
    (await ownMailReturning(deps, spooled, mail)) ??
    (await knownDuplicate(deps, spooled, mail));
  if (handled) return handled;

  const sender = senderOf(deps, mail, mailbox);
  if (await waitForParent(deps, spooled, mail)) return outcomeOf('waiting');
  const files = await storeFiles(deps, spooled.workspaceId, mail);
  const message = inboundMessage(deps, spooled, mail, sender, files);
  const delivery = await deliver(deps, spooled, mail, mailbox, sender, message);
  if (delivery.delivered) await tellListeners(deps, id, delivery.delivered);
  return delivery.outcome;
}

/** Takes a received row and counts the attempt; gives up past MAX_INBOUND_ATTEMPTS. */
async function claimSpooled(deps: Deps, id: string): Promise<Spooled | InboundOutcome> {
  const db = deps.database.db;
  const row = await db
    .updateTable('inbound_emails')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', id)
    .where('status', '=', 'received')
    .returning(['workspace_id', 'mailbox_id', 'recipient', 'raw', 'attempts', 'error'])
    .executeTakeFirst();
  if (!row || row.workspace_id === null || row.mailbox_id === null) return outcomeOf('skipped');
  if (row.attempts > MAX_INBOUND_ATTEMPTS) {
    await finish(db, id, 'failed', `gave up after ${MAX_INBOUND_ATTEMPTS} attempts: ${row.error ?? 'unknown error'}`);
    return outcomeOf('failed');
  }
  return {
    id,
    workspaceId: row.workspace_id,
    mailboxId: row.mailbox_id,
    recipient: row.recipient,
    raw: row.raw as Uint8Array,
  };
}

/** Step 1: the parsed mail, or null once the row is marked failed (the raw bytes stay). */
async function parseSpooled(deps: Deps, s: Spooled): Promise<InboundMail | null> {
  try {
    // bytea comes back as a Uint8Array from the embedded database: view it as a Buffer.
    const raw = Buffer.isBuffer(s.raw) ? s.raw : Buffer.from(s.raw.buffer, s.raw.byteOffset, s.raw.byteLength);
    return await withTimeout(parseInbound(raw), PARSE_TIMEOUT_MS, 'parsing');
  } catch (err) {
    await finish(deps.database.db, s.id, 'failed', `unreadable mail: ${(err as Error).message}`);
    deps.log.warn({ inbound_id: s.id, err: short((err as Error).message, 200) }, 'inbound mail could not be parsed');
    return null;
  }
}

async function routingMailbox(deps: Deps, s: Spooled): Promise<RoutingMailbox | null> {
  const mailbox = await deps.database.db
    .selectFrom('mailboxes')
    .select(['team_id', 'trusted_form_senders'])
    .where('workspace_id', '=', s.workspaceId)
    .where('id', '=', s.mailboxId)
    .executeTakeFirst();
  if (!mailbox) await finish(deps.database.db, s.id, 'failed', 'the mailbox was deleted before the mail was processed');
  return mailbox ?? null;
}

/** Step 2: a delivery report marks our message bounced, and never opens a ticket. */
async function deliveryReport(deps: Deps, s: Spooled, mail: InboundMail): Promise<InboundOutcome | null> {
  const bounce = bounceOf(mail);
  if (!bounce) return null;
  const db = deps.database.db;
  const ours = bounce.original_message_id
    ? await db
        .selectFrom('messages')
        .select(['id', 'ticket_id'])
        .where('workspace_id', '=', s.workspaceId)
        .where('email_message_id', '=', bounce.original_message_id)
        .where('direction', '=', 'outbound')
        .executeTakeFirst()
    : undefined;
  if (!ours) {
    await finish(db, s.id, 'processed', 'ignored: a delivery report about no message of ours');
    return outcomeOf('ignored');
  }
  if (bounce.failed.length === 0) {
    const note = 'ignored: a delivery report without a permanent failure';
    await finish(db, s.id, 'processed', note, ours.ticket_id, ours.id);
    return outcomeOf('ignored', ours.ticket_id, ours.id);
  }
  const why = bounce.failed
    .map((f) => `${f.address}: ${[f.status, f.diagnostic].filter(Boolean).join(' ') || 'failed'}`)
    .join('; ');
  await deps.writer.run(s.workspaceId, async (u) => {
    await markMessageBounced(deps, u, ours.id, short(why, 1000));
    await markProcessed(u, s.id, null, ours.ticket_id, ours.id);
  });
  return outcomeOf('bounced', ours.ticket_id, ours.id);
}

/** Our own mail coming back (a copy to the mailbox, a forwarding loop): nothing to add. */
async function ownMailReturning(deps: Deps, s: Spooled, mail: InboundMail): Promise<InboundOutcome | null> {
  if (!mail.message_id) return null;
  const own = await deps.database.db
    .selectFrom('messages')
    .select(['id', 'ticket_id'])
    .where('workspace_id', '=', s.workspaceId)
    .where('email_message_id', '=', mail.message_id)
    .where('direction', '=', 'outbound')
    .executeTakeFirst();
  if (!own) return null;
  await finish(deps.database.db, s.id, 'processed', 'ignored: our own outbound message', own.ticket_id, own.id);
  return outcomeOf('ignored', own.ticket_id, own.id);
}

/** The message this mailbox already has under the mail's de-duplication key, if any. */
const storedCopy = (deps: Deps, s: Spooled, mail: InboundMail) =>
  deps.database.db
    .selectFrom('messages')
    .select(['id', 'ticket_id'])
    .where('workspace_id', '=', s.workspaceId)
    .where('mailbox_id', '=', s.mailboxId)
    .where('email_message_id', '=', mail.dedupe_key)
    .executeTakeFirst();

/** Step 3, checked first (the unique index enforces it again when the message is written). */
async function knownDuplicate(deps: Deps, s: Spooled, mail: InboundMail): Promise<InboundOutcome | null> {
  const copy = await storedCopy(deps, s, mail);
  if (!copy) return null;
  const note = 'duplicate: the mailbox already has this message';
  await finish(deps.database.db, s.id, 'processed', note, copy.ticket_id, copy.id);
  return outcomeOf('duplicate', copy.ticket_id, copy.id);
}

/** Step 4: who wrote it, and the sender checks' verdict. */
function senderOf(deps: Deps, mail: InboundMail, mailbox: RoutingMailbox): Sender {
  const auth = authResults(mail.headers, deps.config.inboundAuthservIds);
  const visitor = formSender(
    mail.from?.address,
    mail.reply_to?.address,
    auth.dmarc === 'pass',
    mailbox.trusted_form_senders ?? [],
  );
  const author = visitor ? (mail.reply_to ?? null) : (mail.from ?? mail.reply_to ?? null);
  const fromEmail = author && isEmail(author.address) ? author.address : '';
  return {
    fromEmail,
    fromName: (author?.name ?? '').slice(0, 200),
    replyTo:
      !visitor && mail.reply_to && mail.reply_to.address !== fromEmail && isEmail(mail.reply_to.address)
        ? mail.reply_to.address
        : null,
    formSender: visitor ? (mail.from?.address ?? null) : null,
    auto: autoSubmitted(mail.headers),
    authFailed: auth.auth_failed,
  };
}

/**
 * Several workers process mail at once: a reply whose parent arrived earlier but is still
 * queued waits for it (else it would open a ticket of its own). Only earlier mail is waited
 * for, so two mails can never wait for each other; the wait costs no attempt.
 */
async function waitForParent(deps: Deps, s: Spooled, mail: InboundMail): Promise<boolean> {
  const db = deps.database.db;
  if (!(await parentStillQueued(db, s.workspaceId, s.id, threadCandidates(mail)))) return false;
  await db
    .updateTable('inbound_emails')
    .set((eb) => ({ attempts: eb('attempts', '-', 1) }))
    .where('id', '=', s.id)
    .execute();
  await deps.jobs.send(INBOUND_JOB, { id: s.id, workspace_id: s.workspaceId } satisfies InboundJobData, {
    startAfter: new Date(Date.now() + PARENT_WAIT_MS),
    retryLimit: 5,
    retryDelaySeconds: 15,
  });
  return true;
}

/** A mail as a customer's message, before its sender's contact is found (in the write's transaction). */
type MailMessage = Omit<CustomerMessage, 'contactId'>;

/** The message to store, its inline images pointing at the stored files. */
function inboundMessage(deps: Deps, s: Spooled, mail: InboundMail, sender: Sender, files: InboundFile[]): MailMessage {
  const cids = new Map<string, string>();
  for (const f of files) {
    if (f.content_id) cids.set(f.content_id, inlineSrc(deps.config.publicUrl, f.id));
  }
  const withFiles = (html: string) => (cids.size > 0 ? rewriteCids(html, cids) : html);
  return {
    workspaceId: s.workspaceId,
    subject: mail.subject,
    from: { email: sender.fromEmail, name: sender.fromName },
    body: { html: withFiles(mail.visible_html), text: mail.visible_text },
    files,
    uploads: [],
    channel: {
      kind: 'email',
      mailboxId: s.mailboxId,
      rawInboundId: s.id,
      to: mail.to.map((a) => a.address).slice(0, 100),
      cc: mail.cc.map((a) => a.address).slice(0, 100),
      original: mail.has_quoted ? { html: withFiles(mail.html), text: mail.text } : null,
      replyTo: sender.replyTo,
      formSender: sender.formSender,
      authFailed: sender.authFailed,
      autoSubmitted: sender.auto,
      messageId: mail.dedupe_key,
      messageIdSent: mail.as_sent.message_id,
      inReplyTo: mail.as_sent.in_reply_to[0] ?? null,
      references: mail.as_sent.references,
    },
  };
}

/**
 * Steps 4 to 7 in one transaction: the contact, then the ticket the mail belongs to (threaded,
 * a follow-up of a closed one, a new one, or spam for a blocked contact), the message, the
 * status rules, and the spool row's `processed` mark. A copy that won a race (the unique index)
 * rolls it all back and is reported as a duplicate.
 */
async function deliver(
  deps: Deps,
  s: Spooled,
  mail: InboundMail,
  mailbox: RoutingMailbox,
  sender: Sender,
  message: MailMessage,
): Promise<{ outcome: InboundOutcome; delivered: InboundDelivered | null }> {
  let delivered: InboundDelivered | null = null;
  try {
    const outcome = await deps.writer.run(s.workspaceId, async (u) => {
      const { contactId, blocked } = await contactOf(u, s.workspaceId, sender);
      const m: CustomerMessage = { ...message, contactId };
      const subject = mail.subject.trim() === '' ? '(no subject)' : mail.subject;
      const open = { subject, teamId: mailbox.team_id, spam: blocked };
      // A blocked contact's mail is never threaded: a new ticket, spam from the start.
      const threadId = blocked
        ? null
        : await findThread(deps, u.trx, s.workspaceId, mail, s.recipient, sender.fromEmail || null);
      const ticket = threadId ? await lockTicketById(u, threadId) : null;
      const done = await writeCustomerMessage(deps, u, m, { ticket, open });
      const result: InboundResult = blocked ? 'spam' : done.result;
      await markProcessed(u, s.id, null, done.ticket.id, done.message.id);
      delivered = {
        workspaceId: s.workspaceId,
        mailboxId: s.mailboxId,
        ticketId: done.ticket.id,
        messageId: done.message.id,
        newTicket: result !== 'appended',
        spam: blocked,
        contactId,
        fromEmail: sender.fromEmail,
        autoSubmitted: sender.auto,
        authFailed: sender.authFailed,
      };
      return outcomeOf(result, done.ticket.id, done.message.id);
    });
    return { outcome, delivered };
  } catch (err) {
    await dropFiles(deps, message.files);
    if (err instanceof DuplicateInboundMessage) {
      // Another copy won the race (the unique index waited for it to commit).
      const first = await storedCopy(deps, s, mail);
      const [ticketId, messageId] = [first?.ticket_id ?? null, first?.id ?? null];
      const note = 'duplicate: the mailbox already has this message';
      await finish(deps.database.db, s.id, 'processed', note, ticketId, messageId);
      return { outcome: outcomeOf('duplicate', ticketId, messageId), delivered: null };
    }
    throw err;
  }
}

/** The sender's contact (found or made) and whether it is blocked. */
async function contactOf(
  u: Unit,
  workspaceId: string,
  sender: Sender,
): Promise<{ contactId: string | null; blocked: boolean }> {
  if (!sender.fromEmail) return { contactId: null, blocked: false };
  const contactId = await findOrCreateContactByEmail(u, sender.fromEmail, sender.fromName || null);
  const c = await u.trx
    .selectFrom('contacts')
    .select('blocked')
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', contactId)
    .executeTakeFirst();
  return { contactId, blocked: c?.blocked === true };
}

/** After the commit: auto-replies and notifications (a listener's failure is logged). */
async function tellListeners(deps: Deps, id: string, info: InboundDelivered): Promise<void> {
  for (const fn of deps.inboundListeners) {
    try {
      await fn(info);
    } catch (err) {
      deps.log.warn({ inbound_id: id, err: short((err as Error).message, 200) }, 'inbound listener failed');
    }
  }
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

/**
 * The job: process one row; on an error of ours, note it on the row and let the queue retry. It
 * runs in the mail's workspace's scope (row-level security's wall, and no switch of the
 * connection's scope between the spool row's statements and the workspace's); a job queued
 * without the workspace reads it from the row first.
 */
export async function runInboundJob(deps: Deps, id: string, workspaceId?: string): Promise<void> {
  const ws = workspaceId ?? (await spooledWorkspace(deps, id));
  if (!ws) return; // gone, or never routed: nothing to process
  return withWorkspace(ws, () => runScoped(deps, id));
}

const spooledWorkspace = async (deps: Deps, id: string) =>
  (await deps.database.db.selectFrom('inbound_emails').select('workspace_id').where('id', '=', id).executeTakeFirst())
    ?.workspace_id ?? null;

async function runScoped(deps: Deps, id: string): Promise<void> {
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
  await deps.jobs.work<InboundJobData>(INBOUND_JOB, async (data) => runInboundJob(deps, data.id, data.workspace_id), {
    concurrency: 4,
  });
  await deps.jobs.work(INBOUND_SWEEP_JOB, async () => {
    const n = await sweepInbound(deps);
    if (n > 0) deps.log.info({ inbound: n }, 'inbound mail queued again by the sweep');
  });
  await deps.jobs.schedule(INBOUND_SWEEP_JOB, '* * * * *');
}
