// The outbox of outgoing mail: what the service would have sent through the system mailer while
// SMTP_URL is unset is kept here instead, per workspace, for its owners and admins to read
// (GET /v1/mail/outbox, Settings → Outgoing mail), as developers' mail catchers keep mail.
//
// A mail is built by nodemailer exactly as it would be sent (its JSON transport normalises the
// addresses, the subject, the text and HTML, the attachments), then stored: the headers in plain
// columns, the text and HTML sealed with the secret box (they carry sign-in and invitation links)
// and bound to the workspace and the row, the attachments by name, type and size only (their
// bytes stay in storage). Nothing of a body is ever logged. Kept 30 days (the hourly maintenance
// job), and at most 1,000 mails per workspace (the oldest go as new ones come).
import { type Kysely, sql } from 'kysely';
import type { SendMailOptions, Transporter } from 'nodemailer';
import { newId } from '../crypto/random.js';
import type { SecretBox } from '../crypto/secrets.js';
import type { Database } from '../db/index.js';
import type { DB, MailOutboxKind, OutboxAttachment } from '../db/schema.js';

export const OUTBOX_MAX_PER_WORKSPACE = 1000;
export const OUTBOX_RETENTION_DAYS = 30;

/** What keeping a mail needs of the process (Deps has it). */
export interface OutboxDeps {
  database: { db: Kysely<DB> };
  secrets: SecretBox;
}

/** Who a kept mail belongs to and what it is. */
export interface OutboxMeta {
  workspaceId: string;
  kind: MailOutboxKind;
  ticketId?: string | null;
  messageId?: string | null;
  /** The files, when the mail is given without their bytes (a reply's stay in storage). */
  attachments?: OutboxAttachment[];
}

/** A mail as nodemailer's JSON transport normalises it (the fields read here). */
interface NormalisedAddress {
  name?: string;
  address?: string;
}
interface NormalisedMail {
  from?: NormalisedAddress | NormalisedAddress[];
  to?: NormalisedAddress | NormalisedAddress[];
  cc?: NormalisedAddress | NormalisedAddress[];
  bcc?: NormalisedAddress | NormalisedAddress[];
  subject?: string;
  text?: string;
  html?: string;
  attachments?: Array<{ filename?: string; contentType?: string; content?: string; encoding?: string }>;
}

/** Header values never carry line breaks. */
const oneLine = (s: string) => s.replace(/[\r\n\u2028\u2029]+/g, ' ').trim();

/** `Name <address>` as a mail client shows it (the name quoted when it holds specials). */
export function formatAddress(a: NormalisedAddress): string {
  const address = oneLine(a.address ?? '');
  const name = oneLine(a.name ?? '');
  if (!name) return address;
  return /[",<>@;:()[\]\\]/.test(name) ? `"${name.replace(/["\\]/g, '\\$&')}" <${address}>` : `${name} <${address}>`;
}

const addresses = (v: NormalisedAddress | NormalisedAddress[] | undefined): string[] =>
  (Array.isArray(v) ? v : v ? [v] : []).filter((a) => a.address).map(formatAddress);

const sealContext = (workspaceId: string, id: string) => `mail-outbox:${workspaceId}:${id}`;

/** A nodemailer transport that builds the mail and sends nothing (the outbox's). */
export async function outboxTransport(defaults?: SendMailOptions): Promise<Transporter> {
  const nodemailer = await import('nodemailer'); // loaded on first use, not at start
  return nodemailer.createTransport({ jsonTransport: true, skipEncoding: true }, defaults);
}

/**
 * Builds the mail through `transport` (an outboxTransport) and keeps it; returns the outbox id.
 * The workspace's oldest mails beyond OUTBOX_MAX_PER_WORKSPACE go.
 */
export async function keepMail(
  deps: OutboxDeps,
  transport: Transporter,
  mail: SendMailOptions,
  meta: OutboxMeta,
): Promise<string> {
  const info = (await transport.sendMail(mail)) as { message?: NormalisedMail };
  const m = info.message ?? {};
  const id = newId();
  const attachments: OutboxAttachment[] =
    meta.attachments ??
    (m.attachments ?? []).map((a) => ({
      filename: oneLine(a.filename ?? 'attachment'),
      content_type: a.contentType ?? 'application/octet-stream',
      size_bytes:
        typeof a.content === 'string'
          ? a.encoding === 'base64'
            ? Buffer.byteLength(a.content, 'base64')
            : Buffer.byteLength(a.content)
          : 0,
    }));
  const body = JSON.stringify({ text: m.text ?? '', html: m.html ?? null });
  const db = deps.database.db;
  await db
    .insertInto('mail_outbox')
    .values({
      workspace_id: meta.workspaceId,
      id,
      kind: meta.kind,
      from_address: addresses(m.from)[0] ?? '',
      to_addresses: addresses(m.to),
      cc_addresses: addresses(m.cc),
      bcc_addresses: addresses(m.bcc),
      subject: oneLine(m.subject ?? ''),
      body_enc: deps.secrets.seal(body, sealContext(meta.workspaceId, id)),
      attachments: JSON.stringify(attachments),
      ticket_id: meta.ticketId ?? null,
      message_id: meta.messageId ?? null,
    })
    .execute();
  // The cap: everything older than the newest OUTBOX_MAX_PER_WORKSPACE of this workspace.
  await sql`
    DELETE FROM mail_outbox o
     WHERE o.workspace_id = ${meta.workspaceId}
       AND (o.created_at, o.id) <= (
         SELECT k.created_at, k.id FROM mail_outbox k
          WHERE k.workspace_id = ${meta.workspaceId}
          ORDER BY k.created_at DESC, k.id DESC
         OFFSET ${sql.lit(OUTBOX_MAX_PER_WORKSPACE)} LIMIT 1)`.execute(db);
  return id;
}

/** A kept mail's text and HTML; null when the seal does not open (SECRET_KEY changed). */
export function openOutboxBody(
  secrets: SecretBox,
  row: { workspace_id: string; id: string; body_enc: string },
): { text: string; html: string | null } | null {
  const plain = secrets.open(row.body_enc, sealContext(row.workspace_id, row.id));
  if (plain === null) return null;
  try {
    const b = JSON.parse(plain) as { text?: unknown; html?: unknown };
    return { text: typeof b.text === 'string' ? b.text : '', html: typeof b.html === 'string' ? b.html : null };
  } catch {
    return null;
  }
}

/** Mail kept longer than OUTBOX_RETENTION_DAYS goes (the hourly maintenance job). */
export async function pruneMailOutbox(database: Database): Promise<number> {
  const r = await database.db
    .deleteFrom('mail_outbox')
    .where('created_at', '<', sql<Date>`now() - make_interval(days => ${OUTBOX_RETENTION_DAYS})`)
    .executeTakeFirst();
  return Number(r.numDeletedRows ?? 0);
}
