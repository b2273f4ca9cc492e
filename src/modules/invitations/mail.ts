// The invitation email: a durable job queued after the invitation commits, sent through the
// system mailer (SMTP_URL; when unset, kept in the workspace's outbox and logged without the link). An invitation that was
// revoked, accepted or has expired by the time the job runs is not sent.
import type { Deps } from '../../deps.js';
import { escapeHtml } from '../../platform/html/index.js';
import { type MailMessage, type MailOutcome, systemMailer } from '../../platform/mail/index.js';
import { acceptUrl, INVITATION_MAIL_JOB, tokenSealContext } from './service.js';

interface InvitationMailJob {
  workspace_id: string;
  invitation_id: string;
  sealed_token: string;
}

const ARTICLE: Record<string, string> = { admin: 'an admin', agent: 'an agent', viewer: 'a viewer' };

export function invitationMessage(p: {
  to: string;
  workspace: string;
  inviter: string | null;
  role: string;
  url: string;
  expiresAt: Date;
}): MailMessage {
  const who = p.inviter ? `${p.inviter} invited you` : 'You are invited';
  const as = ARTICLE[p.role] ?? p.role;
  const expires = `${p.expiresAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const text = [
    `${who} to join ${p.workspace} as ${as}.`,
    '',
    'Accept the invitation:',
    p.url,
    '',
    `The link can be used once and expires on ${expires}. Sign in (or create an account) with ${p.to} to accept it.`,
    'If you did not expect this invitation, you can ignore this email.',
  ].join('\n');
  const html = [
    `<p>${escapeHtml(who)} to join <strong>${escapeHtml(p.workspace)}</strong> as ${escapeHtml(as)}.</p>`,
    `<p><a href="${escapeHtml(p.url)}">Accept the invitation</a></p>`,
    `<p>The link can be used once and expires on ${escapeHtml(expires)}. Sign in (or create an account) with ` +
      `${escapeHtml(p.to)} to accept it.</p>`,
    '<p>If you did not expect this invitation, you can ignore this email.</p>',
  ].join('\n');
  return { to: p.to, subject: `Invitation to join ${p.workspace}`, text, html };
}

/** Sends (or, without SMTP_URL, keeps) one invitation email; exported for direct tests. */
export async function sendInvitationMail(deps: Deps, job: InvitationMailJob): Promise<MailOutcome | 'skipped'> {
  const row = await deps.database.db
    .selectFrom('invitations as i')
    .innerJoin('workspaces as w', 'w.id', 'i.workspace_id')
    .leftJoin('users as u', 'u.id', 'i.invited_by')
    .select([
      'i.email',
      'i.role',
      'i.expires_at',
      'i.accepted_at',
      'i.revoked_at',
      'w.name as workspace',
      'u.name as inviter',
    ])
    .where('i.workspace_id', '=', job.workspace_id)
    .where('i.id', '=', job.invitation_id)
    .executeTakeFirst();
  if (!row || row.accepted_at || row.revoked_at || row.expires_at.getTime() <= Date.now()) return 'skipped';
  const token = deps.secrets.open(job.sealed_token, tokenSealContext(job.invitation_id));
  if (token === null) {
    deps.log.warn({ invitation: job.invitation_id }, 'invitation email skipped: token could not be opened');
    return 'skipped';
  }
  return systemMailer(deps).send(
    invitationMessage({
      to: row.email,
      workspace: row.workspace,
      inviter: row.inviter,
      role: row.role,
      url: acceptUrl(deps.config.publicUrl, token),
      expiresAt: row.expires_at,
    }),
    { workspaceId: job.workspace_id, kind: 'invitation' },
  );
}

/** Registers the invitation mail worker (called once by runtime.ts when jobs run). */
export async function registerInvitationJobs(deps: Deps): Promise<void> {
  await deps.jobs.work<InvitationMailJob>(INVITATION_MAIL_JOB, async (data) => {
    await sendInvitationMail(deps, data);
  });
}
