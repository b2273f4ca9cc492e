// Ingest: raw inbound mail into the durable spool (inbound_emails), then a job to process it.
// Every way mail arrives goes through ingestRaw: the inbound route (POST /v1/inbound/email,
// inbound-route.ts) and the IMAP / Google / Microsoft pollers.
//
//   ingestRaw(deps, { raw, recipient, mailboxId?, workspaceId?, source, imap? })
//     → { id, status: 'received' | 'unrouted', duplicate }
//
// - raw: the message's bytes exactly as received (RFC 822). At most INBOUND_LIMITS.maxBytes
//   (30 MB): a larger one throws InboundMailError('too_large') and nothing is stored.
// - recipient: the address the mail was delivered for (the route's `to`; a poller passes the
//   mailbox's address). Kept on the row for operators.
// - mailboxId and workspaceId: a poller knows its mailbox: pass both and no routing happens.
//   Without them the recipient is routed through mailbox_addresses (a forwarding address; a
//   "+tag" in its local part is ignored); no match stores the mail as `unrouted`, logged at
//   warn, never lost and never processed (operators find it in inbound_emails).
// - source: 'http' for the route, 'imap' / 'google' / 'microsoft' for pollers.
// - imap: { uidvalidity, uid } of the fetched mail. The same UID in the same UIDVALIDITY of a
//   mailbox is stored once: a second call answers the first row's id with duplicate: true
//   (so a poller that crashed before saving its position may fetch again safely).
//
// When ingestRaw returns, the row is committed: a caller may acknowledge the mail (202, or
// advance its IMAP position). The job is queued after that; if queueing fails or the process
// dies first, the sweep (sweepInbound, every minute) queues rows still `received` after two
// minutes. The job itself is idempotent (inbound.ts), so a row queued twice makes one message.
import { createHash } from 'node:crypto';
import type { Deps } from '../../deps.js';
import { newId } from '../../platform/crypto/random.js';
import { pageLimit } from '../../platform/db/keyset.js';
import { mailboxForAddress } from '../mailboxes/service.js';
import { InboundMailError } from './errors.js';
import { normaliseMessageId } from './message-id.js';
import { INBOUND_LIMITS } from './parse.js';

export const INBOUND_JOB = 'email.inbound';
export const INBOUND_SWEEP_JOB = 'email.inbound-sweep';
/** Rows still `received` this long after arriving are queued again by the sweep. */
export const INBOUND_SWEEP_AFTER_MS = 2 * 60_000;

export type InboundSource = 'http' | 'imap' | 'google' | 'microsoft';

export interface IngestInput {
  raw: Buffer;
  recipient: string;
  mailboxId?: string;
  workspaceId?: string;
  source: InboundSource;
  imap?: { uidvalidity: number; uid: number };
}

export interface IngestResult {
  /** The inbound_emails row. */
  id: string;
  status: 'received' | 'unrouted';
  /** True when this IMAP UID was stored before (id is that row's). */
  duplicate: boolean;
}

/** The Message-ID header of the raw header block (for operators; processing parses properly). */
function messageIdOf(raw: Buffer): string | null {
  const head = raw.subarray(0, Math.min(raw.length, 256 * 1024)).toString('latin1');
  const end = head.search(/\r?\n\r?\n/);
  const block = (end >= 0 ? head.slice(0, end) : head).replace(/\r?\n[ \t]+/g, ' ');
  const m = /^message-id:[ \t]*(.*)$/im.exec(block);
  if (!m) return null;
  const id = /<[^<>]*>/.exec(m[1]!)?.[0] ?? m[1]!.trim();
  return normaliseMessageId(id);
}

/** The mailbox a recipient address is routed to: exact, then without a "+tag". */
export async function routeRecipient(
  deps: Deps,
  recipient: string,
): Promise<{ workspaceId: string; mailboxId: string } | null> {
  const address = recipient.trim().toLowerCase();
  const exact = await mailboxForAddress(deps.database.db, address);
  if (exact) return exact;
  const m = /^([^@+]+)\+[^@]*(@.+)$/.exec(address);
  return m ? mailboxForAddress(deps.database.db, `${m[1]}${m[2]}`) : null;
}

/** What an inbound job carries: the spooled row, and its workspace (the job runs in its scope). */
export interface InboundJobData {
  id: string;
  /** Absent from jobs queued before it was carried: the job then reads it from the row. */
  workspace_id?: string;
}

/** Queues the processing job of a spooled row (a row queued twice is still processed once: inbound.ts). */
export async function queueInbound(deps: Deps, id: string, workspaceId: string): Promise<void> {
  const data: InboundJobData = { id, workspace_id: workspaceId };
  await deps.jobs.send(INBOUND_JOB, data, { retryLimit: 5, retryDelaySeconds: 15 });
}

export async function ingestRaw(deps: Deps, input: IngestInput): Promise<IngestResult> {
  const raw = input.raw;
  if (raw.length > INBOUND_LIMITS.maxBytes) {
    throw new InboundMailError(
      'too_large',
      `the message is ${raw.length} bytes; the limit is ${INBOUND_LIMITS.maxBytes}`,
    );
  }
  const recipient = input.recipient.trim().slice(0, 998);
  let route: { workspaceId: string; mailboxId: string } | null = null;
  if (input.mailboxId && input.workspaceId) route = { workspaceId: input.workspaceId, mailboxId: input.mailboxId };
  else route = await routeRecipient(deps, recipient);

  const id = newId();
  const status = route ? 'received' : 'unrouted';
  const sha256 = createHash('sha256').update(raw).digest('hex');
  const values = {
    id,
    workspace_id: route?.workspaceId ?? null,
    mailbox_id: route?.mailboxId ?? null,
    recipient,
    source: input.source,
    raw,
    size_bytes: raw.length,
    sha256,
    message_id: messageIdOf(raw),
    imap_uidvalidity: input.imap?.uidvalidity ?? null,
    imap_uid: input.imap?.uid ?? null,
    status,
  } as const;
  const db = deps.database.db;
  if (input.imap && route) {
    const inserted = await db
      .insertInto('inbound_emails')
      .values(values)
      .onConflict((oc) =>
        oc
          .columns(['workspace_id', 'mailbox_id', 'imap_uidvalidity', 'imap_uid'])
          .where('imap_uid', 'is not', null)
          .doNothing(),
      )
      .returning('id')
      .executeTakeFirst();
    if (!inserted) {
      const first = await db
        .selectFrom('inbound_emails')
        .select(['id', 'status'])
        .where('workspace_id', '=', route.workspaceId)
        .where('mailbox_id', '=', route.mailboxId)
        .where('imap_uidvalidity', '=', input.imap.uidvalidity)
        .where('imap_uid', '=', input.imap.uid)
        .executeTakeFirstOrThrow();
      return { id: first.id, status: 'received', duplicate: true };
    }
  } else {
    await db.insertInto('inbound_emails').values(values).execute();
  }

  if (!route) {
    // Reported, not lost: the row stays for the operator (docs/api.md "Inbound email").
    deps.log.warn(
      { inbound_id: id, recipient, size_bytes: raw.length, source: input.source },
      'inbound mail for an address that matches no mailbox: stored as unrouted',
    );
    return { id, status: 'unrouted', duplicate: false };
  }
  try {
    await queueInbound(deps, id, route.workspaceId);
  } catch (err) {
    // The row is stored; the sweep queues it later.
    deps.log.warn({ inbound_id: id, err: (err as Error).message }, 'inbound mail stored but not queued yet');
  }
  return { id, status: 'received', duplicate: false };
}

/** Queues rows still `received` INBOUND_SWEEP_AFTER_MS after they arrived; returns how many. */
export async function sweepInbound(deps: Deps, now = new Date(), batch = 500): Promise<number> {
  const rows = await deps.database.db
    .selectFrom('inbound_emails')
    .select(['id', 'workspace_id'])
    .where('status', '=', 'received')
    .where('workspace_id', 'is not', null)
    .where('received_at', '<', new Date(now.getTime() - INBOUND_SWEEP_AFTER_MS))
    .orderBy('received_at')
    .limit(pageLimit(batch))
    .execute();
  for (const r of rows) await queueInbound(deps, r.id, r.workspace_id!);
  return rows.length;
}
