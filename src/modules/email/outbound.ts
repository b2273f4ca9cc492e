// Outbound email: replies on email tickets, and the send and auto-reply workers.
//
// Replies on email tickets:
// 1. createMessage / createTicket write the reply with delivery_status pending in their
//    transaction; that row is the durable record. After COMMIT a send job is queued
//    (outbound-queue.ts). If the process dies in between, the sweep here queues it again: a
//    pending message past due that no worker holds.
// 2. The job claims the message with a lease (two jobs for one message never both send), picks
//    the mailbox (the ticket's, else the workspace's oldest that is not disabled; a workspace
//    with none sends through the system mailer, From its sender), builds the mail (From the
//    mailbox, To the contact, cc/bcc, Subject "Re: … [#token]", our Message-ID, In-Reply-To /
//    References to the customer's last mail as they wrote them, the signature, the attachments
//    from storage) and sends it through the mailbox's transport.
//    Its Message-ID and threading headers are stored before the first attempt and reused by
//    every retry, so a customer's answer threads back and a repeat is recognisable.
// 3. Accepted: sent + message.updated. Refused for good (5xx, failed login, an invalid
//    address, a mailbox that cannot send): failed with delivery_error + message.updated.
//    Anything else (4xx, connection trouble, timeouts) is retried on a schedule and fails
//    after the last attempt. Through the system mailer while SMTP_URL is unset, nothing is
//    sent: the mail is kept in the workspace's outbox and the reply fails with KEPT_IN_OUTBOX
//    ("saved, not sent"). A failed reply can be sent again (resend.ts).
//
// Auto-replies (auto-reply.ts) are decided after an inbound mail opened a ticket and sent by
// their own job, registered here with the send workers.
import { sql } from 'kysely';
import type { SendMailOptions } from 'nodemailer';
import type { Deps } from '../../deps.js';
import { pageLimit } from '../../platform/db/keyset.js';
import { htmlToText } from '../../platform/html/index.js';
import { attachmentFilesOfMessage } from '../attachments/service.js';
import { describeError } from '../mailboxes/connect.js';
import { defaultMailbox, loadMailbox } from '../mailboxes/service.js';
import { loadMessageView } from '../tickets/messages.js';
import { presentTicket, type TicketRow, ticketQuery } from '../tickets/queries.js';
import { type AutoReplyJob, autoReplyToDelivered, sendAutoReply } from './auto-reply.js';
import { normaliseMessageId } from './message-id.js';
import { buildReplyHeaders, domainOf, headerSafe, replySubject, safeAddress, safeMailbox } from './outbound-headers.js';
import type { OutboundOptions } from './outbound-options.js';
import { AUTO_REPLY_JOB, queueOutbound, SEND_JOB, type SendJob } from './outbound-queue.js';
import { classifySendError, KEPT_IN_OUTBOX, PermanentSendError } from './send-errors.js';
import { systemSender } from './system-sender.js';
import { ticketTokenFor } from './ticket-token.js';
import { type MailboxTransport, type SendingMailbox, sendOrKeep, transportFor } from './transport.js';

// ---------------------------------------------------------------------------------------------
// Sending one reply.

interface Claimed {
  workspace_id: string;
  id: string;
  ticket_id: string;
  body_html: string;
  body_text: string;
  to: string[];
  cc: string[];
  bcc: string[];
  mailbox_id: string | null;
  email_message_id: string | null;
  email_in_reply_to: string | null;
  email_references: string[];
  delivery_attempts: number;
}

/** The signature under the reply: HTML as a block, text after the usual "-- " line. */
export function withSignature(html: string, text: string, signatureHtml: string): { html: string; text: string } {
  const sig = signatureHtml.trim();
  if (sig === '') return { html, text };
  const sigText = htmlToText(sig).trim();
  return {
    html: `${html}<br><div class="signature">${sig}</div>`,
    text: sigText === '' ? text : `${text.replace(/\s+$/, '')}\n\n-- \n${sigText}`,
  };
}

/** Who a reply is sent as: a mailbox, or (a workspace without one) the system mailer. */
interface Sender {
  mailboxId: string | null;
  email: string;
  name: string;
  signatureHtml: string;
  transport: SendingMailbox;
}

/** What nodemailer reports of an accepted mail: recipients the server refused (the others got it). */
interface SendInfo {
  rejected?: string[];
  rejectedErrors?: Array<{ message?: string }>;
}

/** delivery_error of a mail sent to some recipients only; null when every recipient took it. */
function rejectedNote(info: SendInfo | null, secrets: Array<string | null>): string | null {
  if (!info?.rejected?.length) return null;
  const why = info.rejectedErrors?.[0]?.message ?? '';
  return describeError(new Error(`not accepted for ${info.rejected.join(', ')}${why ? `: ${why}` : ''}`), secrets);
}

export class OutboundSender {
  constructor(private readonly deps: Deps) {}

  get opts(): OutboundOptions {
    return this.deps.outboundOptions;
  }

  /** The wait after attempt `attempt` (1-based) failed, with jitter; null after the last. */
  retryDelay(attempt: number, random = Math.random()): number | null {
    const base = this.opts.retryDelaysMs[attempt - 1];
    if (base === undefined) return null;
    return Math.max(0, Math.round(base * (1 + this.opts.jitter * (2 * random - 1))));
  }

  async handle(job: SendJob): Promise<void> {
    const db = this.deps.database.db;
    const leaseMs = 4 * this.opts.timeoutMs + 60_000;
    const claimed: Claimed | undefined = await db
      .updateTable('messages')
      .set({ delivery_lease_until: sql<Date>`now() + ${leaseMs} * interval '1 millisecond'` })
      .where('workspace_id', '=', job.w)
      .where('id', '=', job.m)
      .where('delivery_status', '=', 'pending')
      .where('kind', '=', 'reply')
      .where('direction', '=', 'outbound')
      .where(sql<boolean>`coalesce(delivery_next_at, created_at) <= now() + interval '2 seconds'`)
      .where((eb) => eb.or([eb('delivery_lease_until', 'is', null), eb('delivery_lease_until', '<', sql<Date>`now()`)]))
      .returning([
        'workspace_id',
        'id',
        'ticket_id',
        'body_html',
        'body_text',
        'to',
        'cc',
        'bcc',
        'mailbox_id',
        'email_message_id',
        'email_in_reply_to',
        'email_references',
        'delivery_attempts',
      ])
      .executeTakeFirst();
    if (!claimed) return;
    try {
      await this.#attempt(claimed);
    } catch (err) {
      // Something other than the send failed (the database, most likely): give the lease back at
      // once so the job's retry or the sweep tries again soon, instead of after the lease.
      this.deps.log.warn(
        { message: claimed.id, err: err instanceof Error ? err.message : String(err) },
        'outbound email attempt failed; lease released',
      );
      await db
        .updateTable('messages')
        .set({ delivery_lease_until: null })
        .where('workspace_id', '=', claimed.workspace_id)
        .where('id', '=', claimed.id)
        .where('delivery_status', '=', 'pending')
        .execute()
        .catch(() => {});
      throw err;
    }
  }

  /** One attempt of a claimed message: sent, failed for good, or scheduled again. */
  async #attempt(claimed: Claimed): Promise<void> {
    const db = this.deps.database.db;
    const attempt = claimed.delivery_attempts + 1;
    const held: { transport: MailboxTransport | null } = { transport: null };
    let note: string | null = null;
    let kept = false;
    try {
      const result = await this.#deliver(claimed, held);
      if (result.kept) kept = true;
      else note = rejectedNote(result.info as SendInfo, held.transport?.secrets ?? []);
    } catch (err) {
      const failure = classifySendError(err, held.transport?.secrets ?? []);
      const wait = failure.permanent ? null : this.retryDelay(attempt);
      if (wait === null) {
        const text = failure.permanent ? failure.text : `gave up after ${attempt} attempts: ${failure.text}`;
        await this.#finish(claimed, attempt, 'failed', text.length > 500 ? `${text.slice(0, 497)}...` : text);
      } else {
        const next = new Date(Date.now() + wait);
        await db
          .updateTable('messages')
          .set({
            delivery_attempts: attempt,
            delivery_next_at: next,
            delivery_lease_until: null,
            delivery_last_error: failure.text,
          })
          .where('workspace_id', '=', claimed.workspace_id)
          .where('id', '=', claimed.id)
          .where('delivery_status', '=', 'pending')
          .execute();
        await queueOutbound(this.deps, claimed.workspace_id, claimed.id, next);
      }
      return;
    } finally {
      held.transport?.close();
    }
    // Kept in the outbox (SMTP_URL unset): saved, not sent.
    if (kept) await this.#finish(claimed, attempt, 'failed', KEPT_IN_OUTBOX);
    else await this.#finish(claimed, attempt, 'sent', note);
  }

  /**
   * Builds and sends the mail (or keeps it in the outbox); the transport it opens is left in
   * `held` (the caller closes it).
   */
  async #deliver(
    m: Claimed,
    held: { transport: MailboxTransport | null },
  ): Promise<{ kept: true } | { kept: false; info: unknown }> {
    const db = this.deps.database.db;
    const ticket = await ticketQuery(db, m.workspace_id).where('t.id', '=', m.ticket_id).executeTakeFirst();
    if (!ticket) throw new PermanentSendError('the ticket no longer exists');
    const sender = await this.#senderOf(m, ticket);
    const contact = presentTicket(ticket).contact;
    if (m.to.length === 0) {
      throw new PermanentSendError('the ticket has no contact with an email address to send the reply to');
    }
    const to = m.to.map((a) =>
      safeMailbox(contact?.email && a.toLowerCase() === contact.email.toLowerCase() ? contact.name : '', a),
    );
    const cc = m.cc.map(safeAddress);
    const bcc = m.bcc.map(safeAddress);
    // A mailbox's address is checked; the system mailer's sender is the operator's (SMTP_URL's
    // `from`, or no-reply at PUBLIC_URL's host, which may be `localhost` or an IP address).
    const from = sender.mailboxId
      ? safeMailbox(sender.name, sender.email)
      : { name: headerSafe(sender.name), address: headerSafe(sender.email) };

    const headers = await this.#threading(m, ticket, sender);
    const body = withSignature(m.body_html, m.body_text, sender.signatureHtml);
    const files = await attachmentFilesOfMessage(this.deps, db, m.workspace_id, m.id);
    const transport = await transportFor(this.deps, m.workspace_id, sender.transport, {
      timeoutMs: this.opts.timeoutMs,
    });
    held.transport = transport;
    // The outbox keeps the files' names and sizes; their bytes stay in storage.
    const attachments: NonNullable<SendMailOptions['attachments']> = [];
    if (transport.via !== 'outbox') {
      for (const f of files) {
        const content = await f.open();
        if (!content) throw new PermanentSendError(`the attachment ${f.filename} is missing from storage`);
        attachments.push({
          filename: f.filename,
          content,
          contentType: f.content_type,
          ...(f.inline && f.content_id ? { cid: f.content_id, contentDisposition: 'inline' as const } : {}),
        });
      }
    }
    try {
      const result = await sendOrKeep(
        this.deps,
        transport,
        {
          from,
          to,
          ...(cc.length > 0 ? { cc } : {}),
          ...(bcc.length > 0 ? { bcc } : {}),
          subject: headers.subject,
          messageId: headers.messageId,
          ...(headers.inReplyTo ? { inReplyTo: headers.inReplyTo } : {}),
          ...(headers.references ? { references: headers.references } : {}),
          html: body.html,
          text: body.text,
          attachments,
        },
        {
          workspaceId: m.workspace_id,
          kind: 'reply',
          ticketId: m.ticket_id,
          messageId: m.id,
          attachments: files.map((f) => ({
            filename: f.filename,
            content_type: f.content_type,
            size_bytes: f.size_bytes,
          })),
        },
      );
      return result.kept ? { kept: true } : { kept: false, info: result.info };
    } finally {
      // Streams of attachments not read because the send failed early.
      for (const a of attachments) {
        const c = a.content as { destroy?: () => void } | undefined;
        c?.destroy?.();
      }
    }
  }

  /** The ticket's mailbox, else the workspace's default one, else (none at all) the system mailer. */
  async #senderOf(m: Claimed, ticket: TicketRow): Promise<Sender> {
    const db = this.deps.database.db;
    const id = m.mailbox_id ?? ticket.mailbox_id;
    const mailbox = id ? await loadMailbox(db, m.workspace_id, id) : await defaultMailbox(db, m.workspace_id);
    if (!mailbox) {
      if (id) throw new PermanentSendError('the mailbox of this ticket was deleted');
      const system = systemSender(this.deps);
      return {
        mailboxId: null,
        email: system.address,
        name: system.name,
        signatureHtml: '',
        transport: { id: '', email: system.address, outbound_kind: 'system', config: {} },
      };
    }
    if (mailbox.status === 'disabled') throw new PermanentSendError(`the mailbox ${mailbox.email} is disabled`);
    return {
      mailboxId: mailbox.id,
      email: mailbox.email,
      name: mailbox.display_name || mailbox.name,
      signatureHtml: mailbox.signature_html,
      transport: mailbox,
    };
  }

  /**
   * Subject, Message-ID, In-Reply-To and References. Made once, before the first attempt, and
   * stored on the message (the Message-ID in both of its forms, the others as sent); retries
   * reuse them, so a retry is the same mail.
   */
  async #threading(
    m: Claimed,
    ticket: TicketRow,
    sender: Sender,
  ): Promise<{ subject: string; messageId: string; inReplyTo: string | null; references: string | null }> {
    const db = this.deps.database.db;
    const token = ticketTokenFor(this.deps.config, m.workspace_id, Number(ticket.number));
    if (m.email_message_id) {
      const isReply = m.email_in_reply_to !== null;
      return {
        subject: this.#subject(ticket.subject, token, isReply),
        messageId: `<${m.email_message_id}>`,
        inReplyTo: m.email_in_reply_to ? `<${m.email_in_reply_to}>` : null,
        references: m.email_references.length > 0 ? m.email_references.map((r) => `<${r}>`).join(' ') : null,
      };
    }
    // The customer's latest mail on the ticket; without one, our latest mail on it.
    const parentOf = (direction: 'inbound' | 'outbound') =>
      db
        .selectFrom('messages')
        .select(['email_message_id', 'email_message_id_sent', 'email_references'])
        .where('workspace_id', '=', m.workspace_id)
        .where('ticket_id', '=', m.ticket_id)
        .where('id', '!=', m.id)
        .where('direction', '=', direction)
        .where('email_message_id', 'is not', null)
        .where('email_message_id', 'not like', 'sha256:%')
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(pageLimit(1))
        .executeTakeFirst();
    const parent = (await parentOf('inbound')) ?? (await parentOf('outbound'));
    const h = buildReplyHeaders({
      domain: domainOf(sender.email),
      subject: ticket.subject,
      inReplyTo: parent ? (parent.email_message_id_sent ?? parent.email_message_id) : null,
      references: parent?.email_references ?? [],
      ticketToken: token,
    });
    const sent = normaliseMessageId(h.messageId, { keepCase: true })!;
    const inReplyTo = normaliseMessageId(h.inReplyTo, { keepCase: true });
    const references = h.references ? (h.references.match(/<[^<>]+>/g) ?? []).map((r) => r.slice(1, -1)) : [];
    const stored = await db
      .updateTable('messages')
      .set({
        email_message_id: sent.toLowerCase(),
        email_message_id_sent: sent,
        email_in_reply_to: inReplyTo,
        email_references: references,
        mailbox_id: sender.mailboxId,
        from_email: sender.email,
      })
      .where('workspace_id', '=', m.workspace_id)
      .where('id', '=', m.id)
      .where('email_message_id', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (!stored) throw new Error('the message changed while it was being sent; the next attempt sends it');
    return {
      subject: this.#subject(ticket.subject, token, parent !== undefined),
      messageId: h.messageId,
      inReplyTo: h.inReplyTo,
      references: h.references,
    };
  }

  /** "Re: <subject> [#token]" for a reply to a mail; "<subject> [#token]" for the first mail of a thread. */
  #subject(subject: string, token: string, isReply: boolean): string {
    const s = isReply ? replySubject(subject) : headerSafe(subject);
    return s.toLowerCase().includes(`[#${token}]`) ? s : `${s} [#${token}]`.trim();
  }

  /** The end of a delivery: the status, the error, and message.updated in one transaction. */
  async #finish(m: Claimed, attempt: number, status: 'sent' | 'failed', error: string | null): Promise<void> {
    await this.deps.writer.run(m.workspace_id, async (u) => {
      const row = await u.trx
        .updateTable('messages')
        .set({
          delivery_status: status,
          delivery_error: error,
          delivery_attempts: attempt,
          delivery_next_at: null,
          delivery_lease_until: null,
          delivery_last_error: null,
        })
        .where('workspace_id', '=', m.workspace_id)
        .where('id', '=', m.id)
        .where('delivery_status', '=', 'pending')
        .returning(['ticket_id'])
        .executeTakeFirst();
      if (!row) return;
      const message = await loadMessageView(this.deps, u.trx, m.workspace_id, m.id);
      const ticket = await ticketQuery(u.trx, m.workspace_id).where('t.id', '=', row.ticket_id).executeTakeFirst();
      if (!message) return;
      u.emit({
        type: 'message.updated',
        data: { ticket_id: row.ticket_id, message },
        teamId: ticket?.private_team_id ?? null,
      });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The recovery sweep.

/** Pending replies past due that no worker holds (their job was lost): queued again. */
export async function sweepOutbound(deps: Deps, orphanAfterMs: number): Promise<number> {
  const overdue = new Date(Date.now() - orphanAfterMs);
  const rows = await sql<{ workspace_id: string; id: string }>`
    UPDATE messages m SET delivery_next_at = now()
     WHERE (m.workspace_id, m.id) IN (
       SELECT o.workspace_id, o.id FROM messages o
        WHERE o.delivery_status = 'pending' AND coalesce(o.delivery_next_at, o.created_at) < ${overdue}
          AND (o.delivery_lease_until IS NULL OR o.delivery_lease_until < now())
        ORDER BY coalesce(o.delivery_next_at, o.created_at)
        LIMIT 500
        FOR UPDATE OF o SKIP LOCKED)
    RETURNING m.workspace_id, m.id`.execute(deps.database.db);
  for (const r of rows.rows) await queueOutbound(deps, r.workspace_id, r.id);
  if (rows.rows.length > 0) deps.log.warn({ messages: rows.rows.length }, 'outbound email queued again by the sweep');
  return rows.rows.length;
}

// ---------------------------------------------------------------------------------------------
// Wiring (runtime.ts, when jobs run).

export interface OutboundWorkers {
  sender: OutboundSender;
  /** Runs the recovery sweep once now. */
  sweep(): Promise<number>;
  stop(): Promise<void>;
}

export async function registerOutbound(deps: Deps): Promise<OutboundWorkers> {
  const sender = new OutboundSender(deps);
  const opts = deps.outboundOptions;
  await deps.jobs.work<SendJob>(SEND_JOB, (job) => sender.handle(job), {
    concurrency: opts.workers,
    pollingIntervalSeconds: opts.pollSeconds,
  });
  // No send workers (workers: 0): this process sends no mail at all, auto-replies included.
  await deps.jobs.work<AutoReplyJob>(AUTO_REPLY_JOB, (job) => sendAutoReply(deps, job), {
    concurrency: opts.workers > 0 ? 1 : 0,
    pollingIntervalSeconds: opts.pollSeconds,
  });
  // A customer's mail that opened a ticket gets the mailbox's auto-reply (when it has one).
  deps.inboundListeners.add(async (info) => {
    await autoReplyToDelivered(deps, info);
  });
  const sweep = () => sweepOutbound(deps, deps.outboundOptions.orphanAfterMs);
  let timer: NodeJS.Timeout | null = null;
  let sweeping: Promise<unknown> = Promise.resolve();
  const loop = (ms: number) => {
    timer = setTimeout(() => {
      sweeping = sweep().catch((err) =>
        deps.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'outbound email sweep failed'),
      );
      void sweeping.then(() => {
        if (timer) loop(deps.outboundOptions.sweepMs);
      });
    }, ms);
    timer.unref();
  };
  // The first sweep soon after start: replies a stopped process left pending go out now.
  loop(Math.min(5000, opts.sweepMs));
  return {
    sender,
    sweep,
    async stop() {
      if (timer) clearTimeout(timer);
      timer = null;
      await sweeping;
    },
  };
}
