// The nodemailer transport a mailbox sends through:
//
// - smtp: the mailbox's own server (connect.ts smtpSettings: TLS on 465, STARTTLS required on
//   587, none only when configured), its password opened from the sealed column, the host
//   resolved now and checked against the private-address guard (MAIL_ALLOW_PRIVATE);
// - system: the service's own mailer (SMTP_URL), the operator's relay; without SMTP_URL, the
//   outbox (src/platform/mail/outbox.ts): the mail is built as it would be sent and kept for the
//   workspace's admins instead (sendOrKeep says which happened);
// - google / microsoft: the provider's SMTP with XOAUTH2 and an access token from the OAuth
//   side of mailboxes (src/modules/mailboxes/oauth.ts).
//
// A problem of configuration (no server, a refused address, no token) is a TransportSetupError:
// permanent, the message fails with its text (a plain clause: the app shows it after "Not
// delivered: ").
import { isIP } from 'node:net';
import type { SendMailOptions, Transporter } from 'nodemailer';
import type { Deps } from '../../deps.js';
import { splitSmtpUrl } from '../../platform/mail/index.js';
import { keepMail, type OutboxMeta, outboxTransport } from '../../platform/mail/outbox.js';
import { RefusedHostError, resolveHost, type ServerSettings, smtpSettings } from '../mailboxes/connect.js';
import { accessTokenFor, OAuthTokenError, oauthServers } from '../mailboxes/oauth.js';
import { mailboxSecrets } from '../mailboxes/service.js';

/** What transportFor needs of a mailbox (a MailboxView has it). */
export interface SendingMailbox {
  id: string;
  email: string;
  outbound_kind: 'smtp' | 'google' | 'microsoft' | 'system';
  config: Record<string, unknown>;
}

export class TransportSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransportSetupError';
  }
}

/** What the OAuth side hands out for XOAUTH2: the account and a fresh access token. */
export interface OAuthSmtpAccess {
  user: string;
  accessToken: string;
  /** The provider's SMTP server; default smtp.gmail.com:465 (tls) / smtp.office365.com:587 (starttls). */
  server?: { host: string; port: number; tls: 'tls' | 'starttls' | 'none' };
}

/**
 * Outbound mail of Google and Microsoft mailboxes: the account, a fresh access token (refreshed
 * by src/modules/mailboxes/oauth.ts) and the provider's SMTP server, for XOAUTH2. A refresh the
 * provider refuses fails the delivery with the reason (reconnect the mailbox).
 */
async function oauthSmtpAccess(
  deps: Deps,
  workspaceId: string,
  mailbox: SendingMailbox,
): Promise<OAuthSmtpAccess | null> {
  if (mailbox.outbound_kind !== 'google' && mailbox.outbound_kind !== 'microsoft') return null;
  const servers = oauthServers(deps, mailbox.outbound_kind, {
    email: mailbox.email,
    config: { oauth_email: typeof mailbox.config.oauth_email === 'string' ? mailbox.config.oauth_email : null },
  });
  if (!servers) throw new TransportSetupError(`${mailbox.outbound_kind} is not configured on this server`);
  try {
    const accessToken = await accessTokenFor(deps, { workspaceId, id: mailbox.id });
    return { user: servers.user, accessToken, server: servers.smtp };
  } catch (err) {
    if (err instanceof OAuthTokenError) throw new TransportSetupError(err.message);
    throw err;
  }
}

const OAUTH_SERVERS = {
  google: { host: 'smtp.gmail.com', port: 465, tls: 'tls' },
  microsoft: { host: 'smtp.office365.com', port: 587, tls: 'starttls' },
} as const;

export interface MailboxTransport {
  transport: Transporter;
  /** Values to scrub from error texts (the password, the token). */
  secrets: Array<string | null>;
  /** system: the service's mailer; outbox: kept, not sent (SMTP_URL unset); otherwise the mailbox's own server. */
  via: 'smtp' | 'system' | 'oauth' | 'outbox';
  close(): void;
}

export interface TransportTimeouts {
  /** Connection, greeting and socket waits (ms). */
  timeoutMs: number;
}

async function smtpTransport(
  s: ServerSettings,
  auth: { user: string; pass: string } | { type: 'OAuth2'; user: string; accessToken: string } | null,
  allowPrivate: boolean,
  timeoutMs: number,
): Promise<Transporter> {
  let address: string;
  try {
    address = await resolveHost(s.host, allowPrivate);
  } catch (err) {
    if (err instanceof RefusedHostError) throw new TransportSetupError(err.message);
    throw err; // DNS trouble: temporary
  }
  const nodemailer = await import('nodemailer'); // loaded on first use, not at start
  return nodemailer.createTransport({
    host: address,
    port: s.port,
    secure: s.tls === 'tls',
    requireTLS: s.tls === 'starttls',
    ignoreTLS: s.tls === 'none',
    ...(auth ? { auth } : {}),
    // The certificate is checked against the configured name, not the resolved address.
    tls: { servername: isIP(s.host) ? undefined : s.host },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    logger: false,
    debug: false,
  });
}

/** The transport of a mailbox's outbound kind; close it after sending. */
export async function transportFor(
  deps: Deps,
  workspaceId: string,
  mailbox: SendingMailbox,
  opts: TransportTimeouts = { timeoutMs: 30_000 },
): Promise<MailboxTransport> {
  const allowPrivate = deps.config.mailAllowPrivate;
  switch (mailbox.outbound_kind) {
    case 'system': {
      const smtpUrl = deps.config.smtpUrl;
      if (!smtpUrl) return { transport: await outboxTransport(), secrets: [], via: 'outbox', close: () => {} };
      const { url } = splitSmtpUrl(smtpUrl);
      let password: string | null = null;
      try {
        password = decodeURIComponent(new URL(url).password) || null;
      } catch {
        // no password in the URL
      }
      const nodemailer = await import('nodemailer');
      const transport = nodemailer.createTransport({
        url,
        connectionTimeout: opts.timeoutMs,
        greetingTimeout: opts.timeoutMs,
        socketTimeout: opts.timeoutMs,
        logger: false,
      });
      return { transport, secrets: [password], via: 'system', close: () => transport.close() };
    }
    case 'smtp': {
      const secrets = await mailboxSecrets(deps, workspaceId, mailbox.id);
      const s = smtpSettings(mailbox.email, mailbox.config, secrets?.smtpPassword ?? null, secrets?.password ?? null);
      if (!s) throw new TransportSetupError('the mailbox has no SMTP server configured (config.smtp_host)');
      const auth = s.username && s.password ? { user: s.username, pass: s.password } : null;
      const transport = await smtpTransport(s, auth, allowPrivate, opts.timeoutMs);
      return { transport, secrets: [s.password], via: 'smtp', close: () => transport.close() };
    }
    case 'google':
    case 'microsoft': {
      const access = await oauthSmtpAccess(deps, workspaceId, mailbox);
      if (!access) {
        throw new TransportSetupError(
          `the ${mailbox.outbound_kind === 'google' ? 'Google' : 'Microsoft'} account of this mailbox is not connected (reconnect it)`,
        );
      }
      const server = access.server ?? OAUTH_SERVERS[mailbox.outbound_kind];
      const s: ServerSettings = { ...server, username: access.user, password: null };
      const transport = await smtpTransport(
        s,
        { type: 'OAuth2', user: access.user, accessToken: access.accessToken },
        // The providers' own servers are public; a stand-in server in tests is on loopback.
        allowPrivate,
        opts.timeoutMs,
      );
      return { transport, secrets: [access.accessToken], via: 'oauth', close: () => transport.close() };
    }
  }
}

/** What sendOrKeep did: sent (nodemailer's info), or kept in the outbox (its id). */
export type SendResult = { kept: false; info: unknown } | { kept: true; outboxId: string };

/**
 * Sends the mail through the transport; through the outbox's (SMTP_URL unset) the mail is kept
 * for the workspace's admins instead, and one line without recipients or body is logged.
 */
export async function sendOrKeep(
  deps: Deps,
  t: MailboxTransport,
  mail: SendMailOptions,
  meta: OutboxMeta,
): Promise<SendResult> {
  if (t.via !== 'outbox') return { kept: false, info: await t.transport.sendMail(mail) };
  const outboxId = await keepMail(deps, t.transport, mail, meta);
  deps.log.info(
    { workspace: meta.workspaceId, kind: meta.kind, outbox: outboxId },
    'mail not sent: SMTP_URL is not set; kept in the outbox',
  );
  return { kept: true, outboxId };
}
