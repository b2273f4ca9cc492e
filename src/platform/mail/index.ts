// The system mailer (SMTP_URL): invitations, the portal's mail, rating requests of tickets without
// a usable mailbox, notices to admins, and the replies of mailboxes that send through it, not a
// workspace's own mail servers. With SMTP_URL set, mail goes out through nodemailer over SMTP;
// without it, nothing is sent: the mail is kept in the workspace's outbox (outbox.ts) for its
// admins to read, and one line is logged with the recipient and subject only, never the body,
// since bodies carry secrets such as invitation links. send() says which of the two happened,
// so no caller reports as sent a mail that was only kept.
//
// The sender is the `from` query parameter of SMTP_URL when given
// (`smtp://user:pass@mail.example.com:587?from=Help%20desk%20%3Chelp%40example.com%3E`),
// otherwise `Help desk <no-reply@<host of PUBLIC_URL>>`.
import type { Transporter } from 'nodemailer';
import { keepMail, type OutboxDeps, type OutboxMeta, outboxTransport } from './outbox.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

/** What sending did: `sent` to the SMTP server, or `kept` in the outbox (SMTP_URL unset). */
export type MailOutcome = 'sent' | 'kept';

export interface Mailer {
  /** smtp: really sent; outbox: kept in the workspace's outbox (SMTP_URL unset). */
  readonly kind: 'smtp' | 'outbox';
  readonly from: string;
  /** Sends the mail, or keeps it in the outbox of `meta.workspaceId`. */
  send(message: MailMessage, meta: OutboxMeta): Promise<MailOutcome>;
}

export interface MailLogger {
  info(obj: object, msg: string): void;
}

export interface MailSettings {
  smtpUrl: string | null;
  publicUrl: string;
}

/** Header values never carry line breaks (no header injection through a workspace name). */
const oneLine = (s: string) => s.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();

/** SMTP_URL without its `from` parameter, and that parameter (nodemailer does not know it). */
export function splitSmtpUrl(smtpUrl: string): { url: string; from: string | null } {
  const u = new URL(smtpUrl);
  const from = u.searchParams.get('from');
  u.searchParams.delete('from');
  return { url: u.toString(), from: from && from.trim() !== '' ? oneLine(from) : null };
}

export function defaultFrom(publicUrl: string): string {
  let host = 'localhost';
  try {
    host = new URL(publicUrl).hostname.replace(/^\[|\]$/g, '') || host;
  } catch {
    // keep localhost
  }
  return `Help desk <no-reply@${host}>`;
}

/** What the system mailer needs of the process (Deps has it). */
export interface MailDeps extends OutboxDeps {
  config: MailSettings;
  log: MailLogger;
}

export function createMailer(deps: MailDeps): Mailer {
  const settings = deps.config;
  if (!settings.smtpUrl) {
    const from = defaultFrom(settings.publicUrl);
    let transport: Promise<Transporter> | null = null;
    return {
      kind: 'outbox',
      from,
      async send(m, meta) {
        transport ??= outboxTransport({ from });
        const id = await keepMail(
          deps,
          await transport,
          {
            to: m.to,
            subject: oneLine(m.subject),
            text: m.text,
            ...(m.html !== undefined ? { html: m.html } : {}),
          },
          meta,
        );
        deps.log.info(
          { mail: { to: m.to, subject: oneLine(m.subject) }, workspace: meta.workspaceId, outbox: id },
          'mail not sent: SMTP_URL is not set; kept in the outbox',
        );
        return 'kept';
      },
    };
  }
  const { url, from: configured } = splitSmtpUrl(settings.smtpUrl);
  const from = configured ?? defaultFrom(settings.publicUrl);
  // Bounded waits: a stuck server fails the job (which retries) instead of holding it forever.
  // nodemailer is loaded with the first mail, not at start.
  let transport: Promise<Transporter> | null = null;
  return {
    kind: 'smtp',
    from,
    async send(m) {
      transport ??= import('nodemailer').then((nodemailer) =>
        nodemailer.createTransport(
          { url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 },
          { from },
        ),
      );
      await (await transport).sendMail({
        to: m.to,
        subject: oneLine(m.subject),
        text: m.text,
        ...(m.html !== undefined ? { html: m.html } : {}),
      });
      return 'sent';
    },
  };
}

const cache = new WeakMap<object, Mailer>();

/** One mailer per process (its Deps), built on first use. */
export function systemMailer(deps: MailDeps): Mailer {
  let m = cache.get(deps);
  if (!m) {
    m = createMailer(deps);
    cache.set(deps, m);
  }
  return m;
}
