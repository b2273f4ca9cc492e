// A mail server on loopback that keeps every message the service sends through SMTP_URL (the
// system mailer): recipients, subject and the text as a person reads it (quoted-printable soft
// breaks and escapes undone). For tests of mails the service sends on its own (rating requests,
// the portal's confirmations and sign-in links).
import { SMTPServer } from 'smtp-server';

export interface CaughtMail {
  /** Envelope recipients, as sent. */
  to: string[];
  subject: string;
  text: string;
}

export interface MailCatcher {
  /** Every message so far, oldest first. */
  received: CaughtMail[];
  /** SMTP_URL for the service (`from`: the system mailer's sender). */
  smtpUrl(from?: string): string;
  close(): Promise<void>;
}

/** The mail as a person reads it: quoted-printable soft breaks and escapes undone. */
export const readable = (raw: string) =>
  raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));

export async function startMailCatcher(): Promise<MailCatcher> {
  const received: CaughtMail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const text = readable(Buffer.concat(chunks).toString('utf8'));
        const subject = /^Subject: (.*(?:\r?\n[ \t].*)*)/m.exec(text)?.[1]?.replace(/\r?\n[ \t]/g, ' ') ?? '';
        received.push({ to: session.envelope.rcptTo.map((r) => r.address), subject, text });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  const port = (smtp.server.address() as { port: number }).port;
  return {
    received,
    smtpUrl: (from) => `smtp://127.0.0.1:${port}${from ? `?from=${encodeURIComponent(from)}` : ''}`,
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}
