// The system mailer's sender as a name and an address (SMTP_URL's `from`, or
// `Help desk <no-reply@<PUBLIC_URL host>>`): the From of replies of a workspace without a mailbox.
import addressparser from 'nodemailer/lib/addressparser';
import type { Deps } from '../../deps.js';
import { systemMailer } from '../../platform/mail/index.js';

export function systemSender(deps: Deps): { name: string; address: string } {
  const from = systemMailer(deps).from;
  const parsed = addressparser(from, { flatten: true })[0];
  const address = parsed && 'address' in parsed && parsed.address ? parsed.address : from;
  return { name: parsed?.name ?? '', address };
}
