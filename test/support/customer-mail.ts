// A customer's mail to a mailbox, spooled and processed in the test's own process: what the
// notification and SLA tests need of inbound email without its route or its job.
import { createHash, randomUUID } from 'node:crypto';
import { processInbound } from '../../src/modules/email/inbound.js';
import type { Service, Tenant } from './helpers.js';

/** A mailbox as POST /v1/mailboxes answers it (the fields a mail to it needs). */
export interface MailboxAddress {
  id: string;
  email: string;
  forwarding_address: string;
}

/**
 * Jane Customer's plain-text mail to the mailbox, with `headers` (Message-ID, Subject, …) after
 * From and To. Spooled without queueing its job (ingestRaw would): the job queue is one for the
 * whole database, and another file's service that took the job could process the mail first, so
 * processInbound here would find nothing to do. Returns processInbound's result.
 */
export async function spoolCustomerMail(
  svc: Service,
  t: Tenant,
  mailbox: MailboxAddress,
  headers: string[],
  body: string,
): Promise<Awaited<ReturnType<typeof processInbound>>> {
  const raw = Buffer.from(
    [
      'From: Jane Customer <jane@example.com>',
      `To: ${mailbox.email}`,
      ...headers,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      body,
    ].join('\r\n'),
  );
  const id = randomUUID();
  await svc.rt.deps.database.db
    .insertInto('inbound_emails')
    .values({
      id,
      workspace_id: t.workspaceId,
      mailbox_id: mailbox.id,
      recipient: mailbox.forwarding_address,
      source: 'http',
      raw,
      size_bytes: raw.length,
      sha256: createHash('sha256').update(raw).digest('hex'),
      message_id: null,
    })
    .execute();
  return processInbound(svc.rt.deps, id);
}
