// The rating request: when a ticket becomes solved and the workspace has CSAT on, its customer
// gets an email with the rating link. A ticket hook (nested: a solve an automation makes counts
// too) queues a job once the change commits; the job checks again that the ticket is still solved
// and CSAT still on, then sends through the ticket's mailbox (from the address the customer wrote
// to, the ticket's token in the subject, so an answer threads into the ticket) or, for a ticket
// without a usable mailbox, through the system mailer. Through the system mailer while SMTP_URL is
// unset (a mailbox that sends through it, or none), the request is kept in the workspace's outbox
// instead, and the job's answer says so ('kept'). A job lost between the COMMIT and its
// queueing (a crash in that instant) means no request for that solve, as for invitations.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import { escapeHtml } from '../../platform/html/index.js';
import { type MailMessage, type MailOutcome, systemMailer } from '../../platform/mail/index.js';
import type { OutboxMeta } from '../../platform/mail/outbox.js';
import { buildReplyHeaders, domainOf, safeMailbox } from '../email/outbound-headers.js';
import { classifySendError } from '../email/send-errors.js';
import { ticketTokenFor } from '../email/ticket-token.js';
import { type MailboxTransport, sendOrKeep, transportFor } from '../email/transport.js';
import { loadMailbox } from '../mailboxes/service.js';
import type { TicketHook } from '../tickets/hooks.js';
import { ticketQuery } from '../tickets/queries.js';
import { csatToken, csatUrl } from './service.js';

export const CSAT_MAIL_JOB = 'csat.request';

interface CsatMailJob {
  /** Workspace and ticket. */
  w: string;
  t: string;
}

/** Hook order 50: after automations, assignment, SLA and notifications. */
export const csatHook: TicketHook = {
  name: 'csat',
  order: 50,
  nested: true,
  // Skipped in one statement for workspaces without CSAT.
  probe: (workspaceId) => ({
    ticket_updated: sql<boolean | null>`(
      SELECT CASE WHEN (w.settings->>'csat_enabled')::boolean THEN true END FROM workspaces w WHERE w.id = ${workspaceId})`,
  }),
  async run(deps, u, change) {
    if (change.trigger !== 'ticket_updated' || !change.changes.includes('status')) return false;
    const t = change.ticket;
    if (t.status !== 'solved' || change.before?.status === 'solved' || t.spam || !t.contact_email) return false;
    const job: CsatMailJob = { w: u.workspaceId, t: t.id };
    u.afterCommit(async () => {
      try {
        await deps.jobs.send(CSAT_MAIL_JOB, job);
      } catch (err) {
        deps.log.error({ err: (err as Error).message, ticket: job.t }, 'rating request not queued');
      }
    });
    return false;
  },
};

export function csatMessage(p: { to: string; workspace: string; number: number; subject: string; url: string }) {
  const text = [
    `Your request #${p.number} "${p.subject}" is solved.`,
    '',
    `How did ${p.workspace} do? Rate the help you got (one click, and a comment if you like):`,
    p.url,
    '',
    'If something is still not right, just reply to this email and the request opens again.',
  ].join('\n');
  const html = [
    `<p>Your request #${p.number} “${escapeHtml(p.subject)}” is solved.</p>`,
    `<p>How did ${escapeHtml(p.workspace)} do? <a href="${escapeHtml(p.url)}">Rate the help you got</a> ` +
      '(one click, and a comment if you like).</p>',
    '<p>If something is still not right, just reply to this email and the request opens again.</p>',
  ].join('\n');
  return { text, html, subject: `How did we do? Request #${p.number} is solved` };
}

/**
 * Sends (or, without a mailer, keeps) one rating request; 'skipped' when the ticket is no longer
 * solved, CSAT is off, or the mailbox refused it for good.
 */
export async function sendCsatRequest(deps: Deps, job: CsatMailJob): Promise<MailOutcome | 'skipped'> {
  const db = deps.database.db;
  const ws = await db.selectFrom('workspaces').select(['name', 'settings']).where('id', '=', job.w).executeTakeFirst();
  const settings = (ws?.settings ?? {}) as { csat_enabled?: unknown };
  if (!ws || settings.csat_enabled !== true) return 'skipped';
  const ticket = await ticketQuery(db, job.w).where('t.id', '=', job.t).executeTakeFirst();
  if (!ticket || ticket.deleted_at !== null || ticket.status !== 'solved' || ticket.spam || !ticket.contact_email) {
    return 'skipped';
  }
  const number = Number(ticket.number);
  const url = csatUrl(deps.config.publicUrl, await csatToken(deps, job.w, ticket.id));
  const m = csatMessage({ to: ticket.contact_email, workspace: ws.name, number, subject: ticket.subject, url });

  const meta: OutboxMeta = { workspaceId: job.w, kind: 'csat_request', ticketId: ticket.id };
  const mailbox = ticket.mailbox_id ? await loadMailbox(db, job.w, ticket.mailbox_id) : null;
  if (!mailbox || mailbox.status === 'disabled') {
    const message: MailMessage = { to: ticket.contact_email, subject: m.subject, text: m.text, html: m.html };
    return systemMailer(deps).send(message, meta);
  }
  let transport: MailboxTransport | null = null;
  try {
    const h = buildReplyHeaders({
      domain: domainOf(mailbox.email),
      subject: ticket.subject,
      ticketToken: ticketTokenFor(deps.config, job.w, number),
    });
    transport = await transportFor(deps, job.w, mailbox, { timeoutMs: deps.outboundOptions.timeoutMs });
    const result = await sendOrKeep(
      deps,
      transport,
      {
        from: safeMailbox(mailbox.display_name || mailbox.name, mailbox.email),
        to: ticket.contact_email,
        subject: h.subject,
        messageId: h.messageId,
        // RFC 3834: an automatic message; out-of-office replies should not answer it.
        headers: { 'Auto-Submitted': 'auto-generated', 'X-Auto-Response-Suppress': 'All' },
        html: m.html,
        text: m.text,
      },
      meta,
    );
    return result.kept ? 'kept' : 'sent';
  } catch (err) {
    const failure = classifySendError(err, transport?.secrets ?? []);
    deps.log.warn(
      { workspace: job.w, ticket: job.t, permanent: failure.permanent, err: failure.text },
      'rating request not sent',
    );
    if (!failure.permanent) throw new Error(failure.text);
    return 'skipped';
  } finally {
    (transport as MailboxTransport | null)?.close();
  }
}

/** Registers the rating request worker (called once by runtime.ts when jobs run). */
export async function registerCsatJobs(deps: Deps): Promise<void> {
  await deps.jobs.work<CsatMailJob>(CSAT_MAIL_JOB, async (data) => {
    await sendCsatRequest(deps, data);
  });
}
