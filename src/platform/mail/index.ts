// The system mailer (SMTP_URL): invitations and service notices, not a workspace's
// own mailboxes. With SMTP_URL set, mail goes out through nodemailer over SMTP; without it,
// the mail is logged instead of sent: recipient and subject only, never the body, since
// bodies carry secrets such as invitation links.
//
// The sender is the `from` query parameter of SMTP_URL when given
// (`smtp://user:pass@mail.example.com:587?from=Help%20desk%20%3Chelp%40example.com%3E`),
// otherwise `Help desk <no-reply@<host of PUBLIC_URL>>`.
import type { Transporter } from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export interface Mailer {
  /** smtp: really sent; log: written to the log (SMTP_URL unset). */
  readonly kind: 'smtp' | 'log';
  readonly from: string;
  send(message: MailMessage): Promise<void>;
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

export function createMailer(settings: MailSettings, log: MailLogger): Mailer {
  if (!settings.smtpUrl) {
    const from = defaultFrom(settings.publicUrl);
    return {
      kind: 'log',
      from,
      async send(m) {
        log.info({ mail: { to: m.to, subject: oneLine(m.subject) } }, 'mail not sent: SMTP_URL is not set');
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
    },
  };
}

const cache = new WeakMap<object, Mailer>();

/** One mailer per configuration object (the process's settings), built on first use. */
export function systemMailer(config: MailSettings, log: MailLogger): Mailer {
  let m = cache.get(config);
  if (!m) {
    m = createMailer(config, log);
    cache.set(config, m);
  }
  return m;
}
