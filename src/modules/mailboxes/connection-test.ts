// POST /v1/mailboxes/{id}/test: a mailbox's servers, really connected to, with its password or
// (Google, Microsoft) a fresh OAuth access token. Apart from service.ts because it uses the
// OAuth side (oauth.ts), which itself uses service.ts.
import type { Static } from '@sinclair/typebox';
import type { Deps } from '../../deps.js';
import type { RequestContext } from '../../platform/http/context.js';
import { type CheckResult, checkImap, checkSmtp, checkSystemMailer, imapSettings, smtpSettings } from './connect.js';
import { accessTokenFor, OAuthTokenError, oauthServers } from './oauth.js';
import type { MailboxTestResult } from './schemas.js';
import { getMailbox, mailboxSecrets } from './service.js';

/**
 * POST /v1/mailboxes/{id}/test: really connects. Inbound: IMAP login and logout (forwarding
 * mailboxes receive through the inbound route: nothing to connect to). Outbound: the SMTP
 * server's greeting and login (nodemailer's verify), or the system mailer's. The mailbox's
 * status is left as it is: a test only reports.
 */
export async function testMailbox(
  deps: Deps,
  ctx: RequestContext,
  id: string,
): Promise<Static<typeof MailboxTestResult>> {
  const m = await getMailbox(deps, ctx, id);
  const secrets = (await mailboxSecrets(deps, ctx.workspaceId, m.id)) ?? { password: null, smtpPassword: null };
  const allowPrivate = deps.config.mailAllowPrivate;
  // Google and Microsoft: their servers, logging in with XOAUTH2 (a fresh access token).
  const checkOAuth = async (kind: 'google' | 'microsoft', what: 'imap' | 'smtp'): Promise<CheckResult> => {
    const servers = oauthServers(deps, kind, m);
    if (!servers) return { ok: false, error: `${kind} is not configured on this server` };
    let accessToken: string;
    try {
      accessToken = await accessTokenFor(deps, { workspaceId: ctx.workspaceId, id: m.id });
    } catch (err) {
      return {
        ok: false,
        error: err instanceof OAuthTokenError ? err.message : 'the access token could not be refreshed',
      };
    }
    const s = { ...servers[what], username: servers.user, password: null, accessToken };
    return what === 'imap' ? checkImap(s, allowPrivate) : checkSmtp(s, allowPrivate);
  };
  const inbound = async (): Promise<CheckResult> => {
    switch (m.inbound_kind) {
      case 'forwarding':
        return { ok: true, error: null };
      case 'imap': {
        const s = imapSettings(m.email, m.config, secrets.password);
        return s ? checkImap(s, allowPrivate) : { ok: false, error: 'no IMAP server is configured' };
      }
      default:
        return checkOAuth(m.inbound_kind, 'imap');
    }
  };
  const outbound = async (): Promise<CheckResult> => {
    switch (m.outbound_kind) {
      case 'system':
        return checkSystemMailer(deps.config.smtpUrl);
      case 'smtp': {
        const s = smtpSettings(m.email, m.config, secrets.smtpPassword, secrets.password);
        return s ? checkSmtp(s, allowPrivate) : { ok: false, error: 'no SMTP server is configured' };
      }
      default:
        return checkOAuth(m.outbound_kind, 'smtp');
    }
  };
  const [inResult, outResult] = await Promise.all([inbound(), outbound()]);
  return { inbound: inResult, outbound: outResult };
}
