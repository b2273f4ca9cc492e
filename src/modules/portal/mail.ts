// The portal's mail, sent by a durable job through the system mailer (SMTP_URL; when unset, kept
// in the workspace's outbox, where its admins can read it):
// - the confirmation of a contact form: the ticket's number, and its reply token in the subject
//   ([#<token>]) so that an answer by email threads into the ticket;
// - a sign-in link, asked for on the customer area's page. The page answers the same whether or
//   not the address is a contact's; the job looks the address up, and makes and mails a link
//   only for a contact of the workspace (not blocked), so the answer's timing says nothing either.
// A job that finds the help center off (or the ticket gone) sends nothing.
import { sql } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Unit } from '../../platform/db/tx.js';
import { escapeHtml } from '../../platform/html/index.js';
import { type MailMessage, type MailOutcome, systemMailer } from '../../platform/mail/index.js';
import { ticketTokenFor } from '../email/ticket-token.js';
import { linksOf } from '../help-center/routes.js';
import { findHelpCenterById } from '../help-center/service.js';
import { createSignInLink, LINK_TTL_MS } from './session.js';

export const PORTAL_MAIL_JOB = 'portal.mail';

type PortalMailJob = { kind: 'confirmation'; w: string; t: string } | { kind: 'sign_in'; w: string; email: string };

/** Queues the confirmation of a new portal ticket once the unit commits. */
export function queueConfirmation(deps: Deps, u: Unit, ticketId: string): void {
  const job: PortalMailJob = { kind: 'confirmation', w: u.workspaceId, t: ticketId };
  u.afterCommit(async () => {
    try {
      await deps.jobs.send(PORTAL_MAIL_JOB, job);
    } catch (err) {
      deps.log.error({ err: (err as Error).message, ticket: ticketId }, 'portal confirmation not queued');
    }
  });
}

/** Queues a sign-in link for an address (sent only if it is a contact's; see above). */
export async function queueSignInLink(deps: Deps, workspaceId: string, email: string): Promise<void> {
  const job: PortalMailJob = { kind: 'sign_in', w: workspaceId, email };
  await deps.jobs.send(PORTAL_MAIL_JOB, job, { retryLimit: 3, retryDelaySeconds: 30 });
}

export function confirmationMessage(p: {
  to: string;
  title: string;
  number: number;
  subject: string;
  token: string;
  requestsUrl: string;
}): MailMessage {
  const text = [
    `We received your request #${p.number} "${p.subject}" and will answer as soon as we can.`,
    '',
    'To add something, reply to this email, or follow your requests at:',
    p.requestsUrl,
    '',
    p.title,
  ].join('\n');
  const html = [
    `<p>We received your request #${p.number} “${escapeHtml(p.subject)}” and will answer as soon as we can.</p>`,
    `<p>To add something, reply to this email, or <a href="${escapeHtml(p.requestsUrl)}">follow your requests</a>.</p>`,
    `<p>${escapeHtml(p.title)}</p>`,
  ].join('\n');
  return { to: p.to, subject: `Request #${p.number} received: ${p.subject} [#${p.token}]`, text, html };
}

export function signInMessage(p: { to: string; title: string; url: string }): MailMessage {
  const minutes = LINK_TTL_MS / 60_000;
  const text = [
    `Sign in to see your requests at ${p.title}:`,
    p.url,
    '',
    `The link works once, for ${minutes} minutes. If you did not ask for it, you can ignore this email.`,
  ].join('\n');
  const html = [
    `<p><a href="${escapeHtml(p.url)}">Sign in to see your requests at ${escapeHtml(p.title)}</a></p>`,
    `<p>The link works once, for ${minutes} minutes. If you did not ask for it, you can ignore this email.</p>`,
  ].join('\n');
  return { to: p.to, subject: `Your sign-in link for ${p.title}`, text, html };
}

/** Sends (or keeps) one portal mail; 'skipped' when there is nothing (any more) to send. */
export async function sendPortalMail(deps: Deps, job: PortalMailJob): Promise<MailOutcome | 'skipped'> {
  const db = deps.database.db;
  const hc = await findHelpCenterById(deps, job.w);
  if (!hc) return 'skipped';
  const links = linksOf(deps.config.publicUrl, hc.slug);
  const mailer = systemMailer(deps);
  if (job.kind === 'confirmation') {
    const t = await db
      .selectFrom('tickets as t')
      .innerJoin('contacts as c', (j) =>
        j.onRef('c.workspace_id', '=', 't.workspace_id').onRef('c.id', '=', 't.contact_id'),
      )
      .select(['t.number', 't.subject', 't.deleted_at', 'c.email'])
      .where('t.workspace_id', '=', job.w)
      .where('t.id', '=', job.t)
      .executeTakeFirst();
    if (!t || t.deleted_at !== null || !t.email) return 'skipped';
    const number = Number(t.number);
    return mailer.send(
      confirmationMessage({
        to: t.email,
        title: hc.title,
        number,
        subject: t.subject,
        token: ticketTokenFor(deps.config, job.w, number),
        requestsUrl: links.absolute(links.requests),
      }),
      { workspaceId: job.w, kind: 'portal_confirmation', ticketId: job.t },
    );
  }
  const contact = await db
    .selectFrom('contacts')
    .select(['id', 'email'])
    .where('workspace_id', '=', job.w)
    .where(sql`lower(email)`, '=', job.email.trim().toLowerCase())
    .where('blocked', '=', false)
    .executeTakeFirst();
  if (!contact?.email) return 'skipped';
  const token = await createSignInLink(deps, job.w, contact.id);
  return mailer.send(signInMessage({ to: contact.email, title: hc.title, url: links.absolute(links.signIn(token)) }), {
    workspaceId: job.w,
    kind: 'portal_sign_in',
  });
}

/** Registers the portal's mail worker (called once by runtime.ts when jobs run). */
export async function registerPortalJobs(deps: Deps): Promise<void> {
  await deps.jobs.work<PortalMailJob>(PORTAL_MAIL_JOB, async (data) => {
    await sendPortalMail(deps, data);
  });
}
